// Sessions on disk: <root>/<id>/session.json (written atomically, never changed),
// <root>/<id>/journal.jsonl (append-only SessionEvent records, see journal.ts) and
// <root>/<id>/summary.json (counts, status and best for listSessions; a cache, rewritten atomically).
//
// Kernel sources are stored once per session: the first variant using a source is preceded by a
// {type:'source', hash, source} event and variant events carry `sourceHash` instead of `source`.
// Session.variants()/variant()/events() give variants with `source` filled in, as before; journals
// written before (variant events carrying `source`) read unchanged.
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { DuelResult, EvalResult, VariantRecord } from '../base/types.js';
import { writeFileAtomic, fsyncDir } from '../base/atomic.js';
import { Journal, JournalError, type JournalEntry } from './journal.js';
import { runState } from './running.js';
import { kernelduelHome } from '../base/paths.js';
import { isTimedSuccess } from '../measure/verdict.js';

export const SESSION_FILE = 'session.json';
export const JOURNAL_FILE = 'journal.jsonl';
export const SUMMARY_FILE = 'summary.json';

/** `$KERNELDUEL_HOME/sessions`, or `~/.kernelduel/sessions`. */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(kernelduelHome(env), 'sessions');
}

// ---------------------------------------------------------------------------------------------- schemas

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SOURCE_HASH = /^[0-9a-f]{16,64}$/;

export const SessionMetaSchema = z.object({
  id: z.string().regex(SESSION_ID, 'use letters, digits, ., - and _'),
  task: z.object({ name: z.string(), dir: z.string(), manifestHash: z.string() }),
  gpu: z.object({ name: z.string(), uuid: z.string().optional(), arch: z.string() }).nullable(),
  settings: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  kernelduelVersion: z.string(),
});

export interface SessionMeta {
  /** Sortable: UTC date-time + random suffix, see newSessionId(). Also the folder name. */
  id: string;
  task: { name: string; dir: string; manifestHash: string };
  gpu: { name: string; uuid?: string; arch: string } | null;
  settings: Record<string, unknown>;
  createdAt: string;
  kernelduelVersion: string;
}

const FailureSchema = z.looseObject({ kind: z.string(), reason: z.string() });

export const VariantRecordSchema = z.looseObject({
  id: z.string().min(1),
  source: z.string(),
  config: z.record(z.string(), z.number()),
  flags: z.looseObject({}),
  transforms: z.array(z.string()).optional(),
  origin: z.string(),
  parents: z.array(z.string()),
  createdAt: z.string(),
});

export const EvalResultSchema = z.looseObject({
  build: z.looseObject({ ok: z.boolean(), arch: z.string(), command: z.array(z.string()) }),
  check: z.looseObject({ ok: z.boolean() }).optional(),
  timing: z.array(z.looseObject({ size: z.number(), medianMs: z.number() })).optional(),
  failure: FailureSchema.optional(),
  source: z.looseObject({ kind: z.string() }),
  compileOnly: z.boolean().optional(),
});

export const DuelResultSchema = z.looseObject({
  size: z.number(),
  aMs: z.array(z.number()),
  bMs: z.array(z.number()),
  ratio: z.number(),
  verdict: z.string(),
  pairs: z.number(),
});

/** A variant as journaled: `source` inline (older journals) or `sourceHash` naming a source event. */
const StoredVariantSchema = VariantRecordSchema.extend({
  source: z.string().optional(),
  sourceHash: z.string().regex(SOURCE_HASH, 'a hex sha256 prefix').optional(),
}).refine((v) => typeof v.source === 'string' || typeof v.sourceHash === 'string', {
  message: 'a variant needs source or sourceHash',
  path: ['source'],
});

/** A preference model's prediction for a duel's pair, recorded before the duel was measured. */
export interface PairPredictionRecord {
  pAFaster: number;
  model: string;
}

export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('variant'), variant: StoredVariantSchema }),
  z.object({ type: z.literal('source'), hash: z.string().regex(SOURCE_HASH, 'a hex sha256 prefix'), source: z.string() }),
  z.object({ type: z.literal('result'), variantId: z.string().min(1), result: EvalResultSchema }),
  z.object({
    type: z.literal('duel'), a: z.string().min(1), b: z.string().min(1), result: DuelResultSchema,
    /** What the strategy's preference model predicted for the pair before the duel was measured. */
    prediction: z.object({ pAFaster: z.number().min(0).max(1), model: z.string() }).optional(),
  }),
  z.object({ type: z.literal('note'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
  z.object({
    type: z.literal('status'),
    status: z.enum(['running', 'paused', 'stopped', 'finished']),
    budgetUsed: z.number().optional(),
  }),
]);

export type SessionStatus = 'running' | 'paused' | 'stopped' | 'finished';

/** Events as callers see them (variants with their source). */
export type SessionEvent =
  | { type: 'variant'; variant: VariantRecord }
  | { type: 'result'; variantId: string; result: EvalResult }
  | { type: 'duel'; a: string; b: string; result: DuelResult; prediction?: PairPredictionRecord }
  | { type: 'note'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'status'; status: SessionStatus; budgetUsed?: number };

/** A variant record as journaled: its source inline (older journals) or by hash. */
export type StoredVariantRecord = Omit<VariantRecord, 'source'> & { source?: string; sourceHash?: string };

/** Events as they are in the journal. */
export type StoredSessionEvent =
  | Exclude<SessionEvent, { type: 'variant' }>
  | { type: 'variant'; variant: StoredVariantRecord }
  | { type: 'source'; hash: string; source: string };

/** The id of a kernel source in a session: a sha256 prefix (16 hex digits). */
export function sourceHash(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex').slice(0, 16);
}

/** A timing's samplesMs is always its eventMs or its wallMs: journaled as that name instead of a third copy. */
const SAMPLE_REFS = ['eventMs', 'wallMs'] as const;

function sameNumbers(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] || typeof a[i] !== 'number') return false;
  return true;
}

function storedResult(r: EvalResult): EvalResult {
  if (!Array.isArray(r.timing)) return r;
  let changed = false;
  const timing = r.timing.map((t) => {
    const x = t as unknown as Record<string, unknown>;
    if (!x || typeof x !== 'object' || !Array.isArray(x.samplesMs)) return t;
    const order = x.timer === 'wall' ? (['wallMs', 'eventMs'] as const) : SAMPLE_REFS;
    const ref = order.find((k) => sameNumbers(x.samplesMs, x[k]));
    if (!ref) return t;
    changed = true;
    return { ...t, samplesMs: ref as unknown as number[] };
  });
  return changed ? { ...r, timing } : r;
}

/** Undoes storedResult in place: samplesMs given by name becomes that array again. */
function resolveResult(r: EvalResult): void {
  if (!Array.isArray(r.timing)) return;
  for (const t of r.timing) {
    const x = t as unknown as Record<string, unknown>;
    if (x && (x.samplesMs === 'eventMs' || x.samplesMs === 'wallMs') && Array.isArray(x[x.samplesMs])) x.samplesMs = x[x.samplesMs];
  }
}

/**
 * The journal records for one event, as Session.append writes them: a variant's source goes into a
 * source event (unless `hasSource` says the session has it) and the variant names it by hash; a
 * result's samplesMs names the timer's array it duplicates. Exported for tools writing journals in bulk.
 */
export function encodeSessionEvent(ev: SessionEvent, hasSource: (hash: string) => boolean): StoredSessionEvent[] {
  if (ev.type === 'variant' && ev.variant && typeof ev.variant.source === 'string') {
    const { source, ...rest } = ev.variant;
    const hash = sourceHash(source);
    const v: StoredSessionEvent = { type: 'variant', variant: { ...rest, sourceHash: hash } };
    return hasSource(hash) ? [v] : [{ type: 'source', hash, source }, v];
  }
  if (ev.type === 'result' && ev.result) return [{ ...ev, result: storedResult(ev.result) }];
  return [ev];
}

// Cheap structural checks, each a sufficient condition for SessionEventSchema to accept the event
// unchanged. Events that fail one (unfamiliar or malformed) go through zod, which accepts them or
// gives the precise error.
type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
const isStrArr = (x: unknown): boolean => Array.isArray(x) && x.every(isStr);
const isNumArr = (x: unknown): boolean => Array.isArray(x) && x.every(isNum);
/** `o` has no own keys beyond `n` known ones (zod's plain objects drop unknown keys; the fast path keeps none). */
function keyCount(o: Obj): number {
  let n = 0;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) n++;
  return n;
}

function quickVariant(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (!(isStr(v.id) && v.id.length > 0 && isStr(v.origin) && isStr(v.createdAt) && isStrArr(v.parents) && isObj(v.flags))) return false;
  if (v.source !== undefined && !isStr(v.source)) return false;
  if (v.sourceHash !== undefined && !(isStr(v.sourceHash) && SOURCE_HASH.test(v.sourceHash))) return false;
  if (v.source === undefined && v.sourceHash === undefined) return false;
  if (v.transforms !== undefined && !isStrArr(v.transforms)) return false;
  const c = v.config;
  if (!isObj(c)) return false;
  for (const k in c) if (!isNum(c[k])) return false;
  return true;
}

function quickResult(r: unknown): boolean {
  if (!isObj(r)) return false;
  const b = r.build;
  if (!(isObj(b) && isBool(b.ok) && isStr(b.arch) && isStrArr(b.command))) return false;
  if (r.check !== undefined && !(isObj(r.check) && isBool(r.check.ok))) return false;
  if (r.timing !== undefined) {
    if (!Array.isArray(r.timing)) return false;
    for (const t of r.timing) if (!(isObj(t) && isNum(t.size) && isNum(t.medianMs))) return false;
  }
  if (r.failure !== undefined && !(isObj(r.failure) && isStr(r.failure.kind) && isStr(r.failure.reason))) return false;
  if (!(isObj(r.source) && isStr(r.source.kind))) return false;
  if (r.compileOnly !== undefined && !isBool(r.compileOnly)) return false;
  return true;
}

function quickEvent(x: unknown): boolean {
  if (!isObj(x)) return false;
  switch (x.type) {
    case 'variant':
      return keyCount(x) === 2 && quickVariant(x.variant);
    case 'result':
      return keyCount(x) === 3 && isStr(x.variantId) && x.variantId.length > 0 && quickResult(x.result);
    case 'source':
      return keyCount(x) === 3 && isStr(x.hash) && SOURCE_HASH.test(x.hash) && isStr(x.source);
    case 'duel': {
      const r = x.result;
      return (
        (keyCount(x) === 4 || (keyCount(x) === 5 && isObj(x.prediction) && isNum(x.prediction.pAFaster) && x.prediction.pAFaster >= 0 && x.prediction.pAFaster <= 1 && isStr(x.prediction.model))) &&
        isStr(x.a) && x.a.length > 0 && isStr(x.b) && x.b.length > 0 && isObj(r) &&
        isNum(r.size) && isNumArr(r.aMs) && isNumArr(r.bMs) && isNum(r.ratio) && isStr(r.verdict) && isNum(r.pairs)
      );
    }
    case 'note':
      return keyCount(x) === 3 && (x.level === 'info' || x.level === 'warn' || x.level === 'error') && isStr(x.message);
    case 'status':
      return (
        keyCount(x) === (x.budgetUsed === undefined ? ('budgetUsed' in x ? 3 : 2) : 3) &&
        (x.status === 'running' || x.status === 'paused' || x.status === 'stopped' || x.status === 'finished') &&
        (x.budgetUsed === undefined || isNum(x.budgetUsed))
      );
    default:
      return false;
  }
}

/**
 * Validates one journal record: a cheap structural check, and zod for anything that does not pass it
 * (which then either accepts it or throws a zod error naming the field).
 */
export function parseSessionEvent(x: unknown): StoredSessionEvent {
  if (quickEvent(x)) return x as StoredSessionEvent;
  return SessionEventSchema.parse(x) as unknown as StoredSessionEvent;
}

// ---------------------------------------------------------------------------------------------- ids

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** `YYYYMMDD-HHMMSS-xxxxxx` (UTC): sorts by creation time, unique thanks to the random suffix. */
export function newSessionId(now: Date = new Date()): string {
  const d = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const t = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `${d}-${t}-${randomBytes(3).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------------- best

export interface BestVariant {
  variant: VariantRecord;
  result: EvalResult;
  medianMs: number;
  /** Baseline median / this median (>1 is faster), null when no baseline was timed. */
  speedup: number | null;
  /** The baseline the speedup is relative to. */
  baseline?: { variantId: string; medianMs: number };
}

/** Lowest median of timing[0] among correct, timed variants; speedup vs the first timed 'baseline' variant. */
export function computeBest(variants: VariantRecord[], resultOf: (id: string) => EvalResult | undefined): BestVariant | null {
  let best: BestVariant | null = null;
  for (const v of variants) {
    const r = resultOf(v.id);
    if (!isTimedSuccess(r)) continue;
    const m = r.timing[0].medianMs;
    if (!best || m < best.medianMs) best = { variant: v, result: r, medianMs: m, speedup: null };
  }
  if (!best) return null;
  const size = best.result.timing![0].size;
  for (const v of variants) {
    if (v.origin !== 'baseline') continue;
    const r = resultOf(v.id);
    if (!r || r.failure || !r.timing || r.timing.length === 0) continue;
    const t = r.timing.find((x) => x.size === size) ?? r.timing[0];
    if (!(t.medianMs > 0)) continue;
    best.speedup = t.medianMs / best.medianMs;
    best.baseline = { variantId: v.id, medianMs: t.medianMs };
    break;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------- Session

/** A session's session.json (validated), without reading its journal: `readSessionMeta(root, id)`. */
export function readSessionMeta(root: string, id: string): SessionMeta {
  return readMeta(path.join(root, id));
}

function readMeta(dir: string): SessionMeta {
  const file = path.join(dir, SESSION_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new Error(
        fs.existsSync(dir)
          ? `session folder ${dir} has no ${SESSION_FILE}: it is not a KernelDuel session or its creation was interrupted; move it aside`
          : `no session at ${dir}: the folder does not exist (list sessions with \`kernelduel sessions\`)`,
      );
    }
    throw new Error(`cannot read ${file} (${code ?? String(e)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON: the file was edited or the disk corrupted it; move the session folder aside`);
  }
  const p = SessionMetaSchema.safeParse(json);
  if (!p.success) {
    const issue = p.error.issues[0];
    throw new Error(
      `${file} is not a valid session description (${issue.path.join('.') || '(root)'}: ${issue.message}); move the session folder aside`,
    );
  }
  return p.data as SessionMeta;
}

/** How often a running session rewrites summary.json (at most; also on status events and on close). */
export const SUMMARY_INTERVAL_MS = 2000;

/** summary.json: what listSessions shows, with the journal position it describes. */
interface SummaryFile {
  v: 1;
  /** The journal's last seq and byte length when this was written. */
  journalSeq: number;
  journalBytes: number;
  variants: number;
  results: number;
  status?: SessionStatus;
  budgetUsed?: number;
  best?: { variantId: string; medianMs: number; speedup: number | null };
  writtenAt: string;
}

const STATUSES = new Set(['running', 'paused', 'stopped', 'finished']);
const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;

/** summary.json of a session folder with its mtime, or null when missing or not what we write. */
function readSummaryFile(dir: string): { data: SummaryFile; mtimeMs: number } | null {
  try {
    const file = path.join(dir, SUMMARY_FILE);
    const st = fs.statSync(file);
    const d = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    if (!isObj(d) || d.v !== 1 || !isCount(d.journalSeq) || !isCount(d.journalBytes) || !isCount(d.variants) || !isCount(d.results)) return null;
    if (d.status !== undefined && !STATUSES.has(d.status as string)) return null;
    if (d.budgetUsed !== undefined && !isNum(d.budgetUsed)) return null;
    const b = d.best;
    if (b !== undefined && !(isObj(b) && isStr(b.variantId) && isNum(b.medianMs) && (b.speedup === null || isNum(b.speedup)))) return null;
    return { data: d as unknown as SummaryFile, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

/** Best effort: summary.json is a cache, listSessions falls back to the journal without it. */
function writeSummaryFile(dir: string, data: SummaryFile): boolean {
  try {
    writeFileAtomic(path.join(dir, SUMMARY_FILE), JSON.stringify(data) + '\n');
    return true;
  } catch {
    return false;
  }
}

function bestSummary(b: BestVariant | null): SummaryFile['best'] {
  return b ? { variantId: b.variant.id, medianMs: b.medianMs, speedup: b.speedup } : undefined;
}

export class Session {
  private readonly journal: Journal<StoredSessionEvent> | null;
  private readonly journalFile: string;
  private readonly tornTail: boolean;
  private readonly evs: JournalEntry<SessionEvent>[];
  private readonly variantMap = new Map<string, VariantRecord>();
  private readonly resultMap = new Map<string, { result: EvalResult; at: string }>();
  /** Kernel sources by hash (source events). */
  private readonly sources = new Map<string, string>();
  private readonly issuedIds = new Set<string>();
  private nextVariantNo = 1;
  private lastStatus: { status: SessionStatus; budgetUsed?: number } | undefined;
  /** summary.json describes the journal as it is now. */
  private summaryFresh = false;
  private lastSummaryAt = 0;

  constructor(
    readonly dir: string,
    readonly meta: SessionMeta,
    opts: { readOnly?: boolean } = {},
  ) {
    this.evs = [];
    this.journalFile = path.join(dir, JOURNAL_FILE);
    if (opts.readOnly) {
      // A snapshot for readers while another thread or process appends: nothing is opened for writing
      // or truncated (a torn last line may just be a line being written).
      const r = Journal.readFile<StoredSessionEvent>(this.journalFile, { validate: parseSessionEvent });
      this.journal = null;
      this.tornTail = r.droppedTornTail;
      for (const e of r.entries) this.index(e);
    } else {
      this.journal = Journal.open<StoredSessionEvent>(this.journalFile, { validate: parseSessionEvent });
      this.tornTail = this.journal.droppedTornTail;
      try {
        for (const e of this.journal.entries()) this.index(e);
      } catch (e) {
        this.journal.close();
        throw e;
      }
      const sum = readSummaryFile(dir);
      this.summaryFresh = !!sum && sum.data.journalSeq === this.journal.lastSeq && sum.data.journalBytes === this.journal.bytes;
    }
  }

  /** A read-only snapshot (openSessionReadOnly): append() refuses. */
  get readOnly(): boolean {
    return this.journal === null;
  }

  get id(): string {
    return this.meta.id;
  }

  /** A torn last journal line (from a crash) was dropped when the session was opened. */
  get recoveredFromCrash(): boolean {
    return this.tornTail;
  }

  private index(e: JournalEntry<StoredSessionEvent>): void {
    const ev = e.rec;
    switch (ev.type) {
      case 'source':
        if (!this.sources.has(ev.hash)) this.sources.set(ev.hash, ev.source);
        return;
      case 'variant': {
        const v = this.resolve(ev.variant, e.seq);
        this.evs.push(v === ev.variant ? (e as JournalEntry<SessionEvent>) : { seq: e.seq, t: e.t, rec: { type: 'variant', variant: v } });
        if (!this.variantMap.has(v.id)) this.variantMap.set(v.id, v);
        this.noteId(v.id);
        return;
      }
      case 'result':
        resolveResult(ev.result);
        this.resultMap.set(ev.variantId, { result: ev.result, at: e.t });
        break;
      case 'status':
        this.lastStatus = { status: ev.status, budgetUsed: ev.budgetUsed };
        break;
    }
    this.evs.push(e as JournalEntry<SessionEvent>);
  }

  /** The variant with its source (from the source event its sourceHash names). */
  private resolve(v: StoredVariantRecord, seq: number): VariantRecord {
    if (v.sourceHash === undefined) return v as VariantRecord;
    const { sourceHash: hash, ...rest } = v;
    if (typeof v.source === 'string') return rest as VariantRecord;
    const source = this.sources.get(hash);
    if (source === undefined) {
      throw new JournalError(
        `journal ${this.journalFile} line ${seq} holds variant ${v.id} whose source ${hash} is not recorded before it: ` +
          'the file was edited or the disk corrupted it; move the session folder aside (or restore it from a backup) and start a new session',
        this.journalFile,
        'corrupt',
        seq,
      );
    }
    return { ...rest, source } as VariantRecord;
  }

  private noteId(id: string): void {
    const m = /^v(\d+)$/.exec(id);
    if (m) this.nextVariantNo = Math.max(this.nextVariantNo, Number(m[1]) + 1);
  }

  /**
   * Durably appends one event (validated first), encoded by encodeSessionEvent: a variant's source is
   * journaled once per session (a source event before the first variant using it, the variant names it by
   * hash), a result's samplesMs by the name of the array it duplicates.
   */
  append(ev: SessionEvent): void {
    const journal = this.journal;
    if (!journal) throw new Error(`session ${this.meta.id} was opened read-only`);
    // Checked as given first: an invalid variant leaves nothing behind, not even its source.
    if (ev.type === 'variant' || ev.type === 'result') journal.check(ev);
    for (const rec of encodeSessionEvent(ev, (h) => this.sources.has(h))) this.appendStored(journal, rec);
  }

  private appendStored(journal: Journal<StoredSessionEvent>, ev: StoredSessionEvent): void {
    journal.append(ev);
    this.index(journal.lastEntry()!);
    this.summaryFresh = false;
    if (ev.type === 'status' || ((ev.type === 'result' || ev.type === 'variant') && Date.now() - this.lastSummaryAt >= SUMMARY_INTERVAL_MS)) {
      this.writeSummary();
    }
  }

  /** Rewrites summary.json (best effort; never throws). */
  private writeSummary(): void {
    if (!this.journal) return;
    this.lastSummaryAt = Date.now();
    let results = 0;
    for (const id of this.variantMap.keys()) if (this.resultMap.has(id)) results++;
    const st = this.lastStatus;
    const data: SummaryFile = {
      v: 1,
      journalSeq: this.journal.lastSeq,
      journalBytes: this.journal.bytes,
      variants: this.variantMap.size,
      results,
      ...(st ? { status: st.status, ...(st.budgetUsed !== undefined ? { budgetUsed: st.budgetUsed } : {}) } : {}),
      best: bestSummary(this.best()),
      writtenAt: new Date().toISOString(),
    };
    this.summaryFresh = writeSummaryFile(this.dir, data);
  }

  /** Events in journal order, variants with their source (source records themselves are not events). */
  events(): SessionEvent[] {
    return this.evs.map((e) => e.rec);
  }

  /** Events with their journal sequence numbers and append times. */
  entries(): JournalEntry<SessionEvent>[] {
    return this.evs.slice();
  }

  /** Variants in the order they were proposed (first record wins for a repeated id). */
  variants(): VariantRecord[] {
    return [...this.variantMap.values()];
  }

  variant(id: string): VariantRecord | undefined {
    return this.variantMap.get(id);
  }

  /** The last result recorded for a variant. */
  resultOf(id: string): EvalResult | undefined {
    return this.resultMap.get(id)?.result;
  }

  /** When the last result for a variant was recorded (ISO time). */
  measuredAt(id: string): string | undefined {
    return this.resultMap.get(id)?.at;
  }

  best(): BestVariant | null {
    return computeBest(this.variants(), (id) => this.resultOf(id));
  }

  /** Variants that already have a result: a resumed run skips them. */
  completedIds(): Set<string> {
    return new Set([...this.variantMap.keys()].filter((id) => this.resultMap.has(id)));
  }

  /** The last status event, if any. */
  status(): { status: SessionStatus; budgetUsed?: number } | undefined {
    return this.lastStatus ? { ...this.lastStatus } : undefined;
  }

  /** Short ids unique within the session: v1, v2, ... (never reissued, even before the variant is appended). */
  newVariantId(): string {
    for (;;) {
      const id = `v${this.nextVariantNo++}`;
      if (!this.variantMap.has(id) && !this.issuedIds.has(id)) {
        this.issuedIds.add(id);
        return id;
      }
    }
  }

  close(): void {
    if (!this.journal) return;
    if (!this.summaryFresh) this.writeSummary();
    this.journal.close();
  }
}

/** Creates `<root>/<meta.id>/` with session.json and an empty journal. */
export function createSession(root: string, meta: SessionMeta): Session {
  const p = SessionMetaSchema.safeParse(meta);
  if (!p.success) {
    const issue = p.error.issues[0];
    throw new Error(`invalid session description (${issue.path.join('.') || '(root)'}: ${issue.message})`);
  }
  try {
    fs.mkdirSync(root, { recursive: true });
  } catch (e) {
    throw new Error(`cannot create the sessions folder ${root} (${(e as NodeJS.ErrnoException).code ?? String(e)}); set KERNELDUEL_HOME to a writable folder`);
  }
  const dir = path.join(root, meta.id);
  try {
    fs.mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new Error(`session ${meta.id} already exists at ${dir}; open it instead or choose a new id`);
    throw new Error(`cannot create session folder ${dir} (${code ?? String(e)}); set KERNELDUEL_HOME to a writable folder`);
  }
  fsyncDir(root);
  writeFileAtomic(path.join(dir, SESSION_FILE), JSON.stringify(meta, null, 2) + '\n');
  return new Session(dir, meta);
}

/** Opens a session: `openSession(root, id)` or `openSession(sessionDir)`. */
export function openSession(rootOrDir: string, id?: string): Session {
  const dir = id === undefined ? path.resolve(rootOrDir) : path.join(rootOrDir, id);
  const meta = readMeta(dir);
  return new Session(dir, meta);
}

/** A read-only snapshot of a session (safe while a run appends to it elsewhere). */
export function openSessionReadOnly(rootOrDir: string, id?: string): Session {
  const dir = id === undefined ? path.resolve(rootOrDir) : path.join(rootOrDir, id);
  return new Session(dir, readMeta(dir), { readOnly: true });
}

export interface SessionSummary {
  id: string;
  dir: string;
  meta?: SessionMeta;
  variants: number;
  results: number;
  /**
   * The last status journaled, or what the run mark says (main/engine/session/running.ts): `running` while
   * a run appends, `interrupted` when its run was killed (or never recorded an end).
   */
  status?: SessionStatus | 'interrupted';
  budgetUsed?: number;
  best?: { variantId: string; medianMs: number; speedup: number | null };
  /** The journal ends in a torn line (a crash); it is repaired when the session is opened. */
  tornTail?: boolean;
  /** Why the session could not be read; the other fields are then partial. */
  error?: string;
}

/** The journal changed this recently: a run may be appending to it (its summary then lags a little). */
const SUMMARY_LIVE_MS = 10_000;
/** How far a live session's summary may lag its journal's last modification. */
const SUMMARY_LAG_MS = SUMMARY_INTERVAL_MS + 1000;

/** Counts, status and best of a session from its journal records (listSessions without a usable summary). */
function summarize(records: StoredSessionEvent[]): Omit<SummaryFile, 'v' | 'journalSeq' | 'journalBytes' | 'writtenAt'> {
  const variants = new Map<string, StoredVariantRecord>();
  const results = new Map<string, EvalResult>();
  let status: SessionStatus | undefined;
  let budgetUsed: number | undefined;
  for (const ev of records) {
    if (ev.type === 'variant') {
      if (!variants.has(ev.variant.id)) variants.set(ev.variant.id, ev.variant);
    } else if (ev.type === 'result') results.set(ev.variantId, ev.result);
    else if (ev.type === 'status') {
      status = ev.status;
      budgetUsed = ev.budgetUsed;
    }
  }
  let n = 0;
  for (const id of variants.keys()) if (results.has(id)) n++;
  // computeBest reads only ids, origins and results: stored variants (source by hash) do.
  const best = bestSummary(computeBest([...variants.values()] as VariantRecord[], (id) => results.get(id)));
  return { variants: variants.size, results: n, ...(status ? { status, budgetUsed } : {}), ...(best ? { best } : {}) };
}

/**
 * One session's summary. summary.json is used when it describes the journal as it is (same last seq and
 * length; every journal line is still checked for damage, cheaply: envelope, seq and crc, no parsing), or
 * when a run is appending right now (its mark names a live process) and it lags by at most a few seconds;
 * otherwise the journal is read (and summary.json refreshed for the next listing). The status says
 * `running` or `interrupted` when a run's mark says so.
 */
function summarizeSession(dir: string, s: SessionSummary): void {
  readCounts(dir, s);
  // Killed: the run's mark is left with its process gone; no end was ever journaled.
  const run = runState(dir);
  if (run) s.status = run;
  else if (s.status === undefined && s.variants > 0) s.status = 'interrupted';
}

function readCounts(dir: string, s: SessionSummary): void {
  const jf = path.join(dir, JOURNAL_FILE);
  let mtimeMs = 0;
  try {
    mtimeMs = fs.statSync(jf).mtimeMs;
  } catch {
    /* a missing journal reads as empty below */
  }
  const buf = Journal.readBytes(jf);
  const sum = readSummaryFile(dir);
  if (sum && sum.data.journalBytes <= buf.length) {
    const scan = Journal.scanBuffer(jf, buf);
    const d = sum.data;
    const exact = scan.lastSeq === d.journalSeq && scan.validBytes === d.journalBytes;
    // Behind the journal: trusted only while a run is appending right now (it lags by at most a few
    // seconds); a killed run's summary is stale for good, so its journal is read.
    const live = !exact && d.journalSeq <= scan.lastSeq && Date.now() - mtimeMs < SUMMARY_LIVE_MS && sum.mtimeMs >= mtimeMs - SUMMARY_LAG_MS && runState(dir) === 'running';
    if (exact || live) {
      s.variants = d.variants;
      s.results = d.results;
      if (d.status) s.status = d.status;
      if (d.budgetUsed !== undefined) s.budgetUsed = d.budgetUsed;
      if (d.best) s.best = { ...d.best };
      if (scan.droppedTornTail) s.tornTail = true;
      return;
    }
  }
  const j = Journal.parseBuffer<StoredSessionEvent>(jf, buf, { validate: parseSessionEvent });
  const r = summarize(j.records);
  s.variants = r.variants;
  s.results = r.results;
  if (r.status) {
    s.status = r.status;
    s.budgetUsed = r.budgetUsed;
  }
  if (r.best) s.best = r.best;
  if (j.droppedTornTail) s.tornTail = true;
  else if (buf.length > 0) {
    writeSummaryFile(dir, { v: 1, journalSeq: j.entries.length, journalBytes: buf.length, ...r, writtenAt: new Date().toISOString() });
  }
}

/** Lists sessions under `root`, newest first. Never throws for a damaged session: it gets an `error`. */
export function listSessions(root: string): SessionSummary[] {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(root, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`cannot list sessions in ${root} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const out: SessionSummary[] = [];
  for (const d of names) {
    if (!d.isDirectory() || d.name.startsWith('.')) continue;
    const dir = path.join(root, d.name);
    const s: SessionSummary = { id: d.name, dir, variants: 0, results: 0 };
    try {
      s.meta = readMeta(dir);
      s.id = s.meta.id;
      summarizeSession(dir, s);
    } catch (e) {
      s.error = e instanceof Error ? e.message : String(e);
    }
    out.push(s);
  }
  out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return out;
}
