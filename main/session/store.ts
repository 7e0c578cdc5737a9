// Sessions on disk: <root>/<id>/session.json (written atomically, never changed) and
// <root>/<id>/journal.jsonl (append-only SessionEvent records, see journal.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { DuelResult, EvalResult, VariantRecord } from '../common/types.js';
import { writeFileAtomic, fsyncDir } from '../common/atomic.js';
import { Journal, type JournalEntry } from './journal.js';

export const SESSION_FILE = 'session.json';
export const JOURNAL_FILE = 'journal.jsonl';

/** `$KERNELDUEL_HOME/sessions`, or `~/.kernelduel/sessions`. */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.KERNELDUEL_HOME;
  if (home && home.trim() !== '') return path.join(path.resolve(home), 'sessions');
  return path.join(os.homedir(), '.kernelduel', 'sessions');
}

// ---------------------------------------------------------------------------------------------- schemas

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

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

export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('variant'), variant: VariantRecordSchema }),
  z.object({ type: z.literal('result'), variantId: z.string().min(1), result: EvalResultSchema }),
  z.object({ type: z.literal('duel'), a: z.string().min(1), b: z.string().min(1), result: DuelResultSchema }),
  z.object({ type: z.literal('note'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
  z.object({
    type: z.literal('status'),
    status: z.enum(['running', 'paused', 'stopped', 'finished']),
    budgetUsed: z.number().optional(),
  }),
]);

export type SessionStatus = 'running' | 'paused' | 'stopped' | 'finished';

export type SessionEvent =
  | { type: 'variant'; variant: VariantRecord }
  | { type: 'result'; variantId: string; result: EvalResult }
  | { type: 'duel'; a: string; b: string; result: DuelResult }
  | { type: 'note'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'status'; status: SessionStatus; budgetUsed?: number };

/** Validates one journal record (throws a zod error when it does not fit). */
export function parseSessionEvent(x: unknown): SessionEvent {
  return SessionEventSchema.parse(x) as unknown as SessionEvent;
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

/** A result that counts as a successful timed measurement. */
export function isTimedSuccess(r: EvalResult | undefined): r is EvalResult & { timing: NonNullable<EvalResult['timing']> } {
  return !!r && !r.failure && r.build.ok && r.check?.ok === true && !!r.timing && r.timing.length > 0 && Number.isFinite(r.timing[0].medianMs);
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

export class Session {
  private readonly journal: Journal<SessionEvent>;
  private readonly evs: JournalEntry<SessionEvent>[];
  private readonly variantMap = new Map<string, VariantRecord>();
  private readonly resultMap = new Map<string, { result: EvalResult; at: string }>();
  private readonly issuedIds = new Set<string>();
  private nextVariantNo = 1;

  constructor(
    readonly dir: string,
    readonly meta: SessionMeta,
  ) {
    this.journal = Journal.open<SessionEvent>(path.join(dir, JOURNAL_FILE), { validate: parseSessionEvent });
    this.evs = [];
    for (const e of this.journal.entries()) this.index(e);
  }

  get id(): string {
    return this.meta.id;
  }

  /** A torn last journal line (from a crash) was dropped when the session was opened. */
  get recoveredFromCrash(): boolean {
    return this.journal.droppedTornTail;
  }

  private index(e: JournalEntry<SessionEvent>): void {
    this.evs.push(e);
    const ev = e.rec;
    if (ev.type === 'variant') {
      if (!this.variantMap.has(ev.variant.id)) this.variantMap.set(ev.variant.id, ev.variant);
      this.noteId(ev.variant.id);
    } else if (ev.type === 'result') {
      this.resultMap.set(ev.variantId, { result: ev.result, at: e.t });
    }
  }

  private noteId(id: string): void {
    const m = /^v(\d+)$/.exec(id);
    if (m) this.nextVariantNo = Math.max(this.nextVariantNo, Number(m[1]) + 1);
  }

  /** Durably appends one event (validated first). */
  append(ev: SessionEvent): void {
    this.journal.append(ev);
    const entries = this.journal.entries();
    this.index(entries[entries.length - 1]);
  }

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
    for (let i = this.evs.length - 1; i >= 0; i--) {
      const ev = this.evs[i].rec;
      if (ev.type === 'status') return { status: ev.status, budgetUsed: ev.budgetUsed };
    }
    return undefined;
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

export interface SessionSummary {
  id: string;
  dir: string;
  meta?: SessionMeta;
  variants: number;
  results: number;
  status?: SessionStatus;
  budgetUsed?: number;
  best?: { variantId: string; medianMs: number; speedup: number | null };
  /** The journal ends in a torn line (a crash); it is repaired when the session is opened. */
  tornTail?: boolean;
  /** Why the session could not be read; the other fields are then partial. */
  error?: string;
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
      const j = Journal.readFile<SessionEvent>(path.join(dir, JOURNAL_FILE), { validate: parseSessionEvent });
      const variants = new Map<string, VariantRecord>();
      const results = new Map<string, EvalResult>();
      for (const ev of j.records) {
        if (ev.type === 'variant' && !variants.has(ev.variant.id)) variants.set(ev.variant.id, ev.variant);
        else if (ev.type === 'result') results.set(ev.variantId, ev.result);
        else if (ev.type === 'status') {
          s.status = ev.status;
          s.budgetUsed = ev.budgetUsed;
        }
      }
      s.variants = variants.size;
      s.results = [...variants.keys()].filter((id) => results.has(id)).length;
      const b = computeBest([...variants.values()], (id) => results.get(id));
      if (b) s.best = { variantId: b.variant.id, medianMs: b.medianMs, speedup: b.speedup };
      if (j.droppedTornTail) s.tornTail = true;
    } catch (e) {
      s.error = e instanceof Error ? e.message : String(e);
    }
    out.push(s);
  }
  out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return out;
}
