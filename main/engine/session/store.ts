// A session on disk, open for appending (or as a read-only snapshot): <root>/<id>/session.json
// (written atomically, never changed) and <root>/<id>/journal.jsonl (append-only, see journal.ts),
// read into variants, results and events; plus summary.json kept fresh for the listing (summary.ts).
// What a record may be is events.ts; how it is written (sources once, by hash) is encoding.ts;
// listing sessions is list.ts.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { EvalResult, VariantRecord } from '../base/types.js';
import { writeFileAtomic, fsyncDir } from '../base/atomic.js';
import { kernelduelHome } from '../base/paths.js';
import { Journal, JournalError, type JournalEntry } from './journal.js';
import { parseSessionEvent, SessionMetaSchema, type SessionEvent, type SessionMeta, type SessionStatus, type StoredSessionEvent, type StoredVariantRecord } from './events.js';
import { encodeSessionEvent, resolveResult } from './encoding.js';
import { computeBest, type BestVariant } from './best.js';
import { bestSummary, confirmedSummary, readSummaryFile, SUMMARY_INTERVAL_MS, writeSummaryFile, type SummaryFile } from './summary.js';
import { confirmReport } from './confirm.js';

export const SESSION_FILE = 'session.json';
export const JOURNAL_FILE = 'journal.jsonl';

/** `$KERNELDUEL_HOME/sessions`, or `~/.kernelduel/sessions`. */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(kernelduelHome(env), 'sessions');
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
        { cause: e },
      );
    }
    throw new Error(`cannot read ${file} (${code ?? String(e)})`, { cause: e });
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
  return p.data;
}

export class Session {
  private readonly journal: Journal<StoredSessionEvent> | null;
  private readonly journalFile: string;
  private tornTail: boolean;
  /** Read-only snapshots: where the complete lines read so far end, how many records they hold, and the file's inode. */
  private readEnd = 0;
  private readSeq = 0;
  private readIno = -1;
  private readTailBytes: Buffer = Buffer.alloc(0);
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
  /** A confirm event was read or appended (summaries then carry the confirmation). */
  private confirmed = false;

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
      let ino = -1;
      try {
        ino = fs.statSync(this.journalFile).ino;
      } catch {
        /* a missing journal reads as empty */
      }
      const r = Journal.readFile<StoredSessionEvent>(this.journalFile, { validate: parseSessionEvent });
      this.journal = null;
      this.tornTail = r.droppedTornTail;
      for (const e of r.entries) this.index(e);
      this.readEnd = r.validBytes;
      this.readSeq = r.entries.length ? r.entries[r.entries.length - 1].seq : 0;
      this.readIno = ino;
      this.readTailBytes = r.tailBytes;
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

  /**
   * A read-only snapshot catches up with what was appended to its journal since it was read, reading
   * only the new lines (a live run's session is re-read on every refresh; its journal can be tens of
   * MB). 'replaced' when the journal is not the file that was read (another inode, cut short, or not
   * ending where the last read ended): open a new snapshot then. A writable session never needs it.
   */
  catchUp(): 'same' | 'grew' | 'replaced' {
    if (this.journal) return 'same';
    if (this.readIno < 0) return 'replaced';
    const t = Journal.readTail<StoredSessionEvent>(this.journalFile, this.readEnd, this.readSeq, this.readIno, { validate: parseSessionEvent, endsWith: this.readTailBytes });
    if (t.replaced) return 'replaced';
    this.readTailBytes = t.endsWith;
    for (const e of t.entries) this.index(e);
    this.tornTail = t.droppedTornTail;
    if (!t.entries.length) return 'same';
    this.readEnd = t.validBytes;
    this.readSeq = t.entries[t.entries.length - 1].seq;
    return 'grew';
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
      case 'confirm':
        resolveResult(ev.result);
        this.confirmed = true;
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
    if (ev.type === 'variant' || ev.type === 'result' || ev.type === 'confirm') journal.check(ev);
    for (const rec of encodeSessionEvent(ev, (h) => this.sources.has(h))) this.appendStored(journal, rec);
  }

  private appendStored(journal: Journal<StoredSessionEvent>, ev: StoredSessionEvent): void {
    journal.append(ev);
    this.index(journal.lastEntry()!);
    this.summaryFresh = false;
    if (ev.type === 'status' || ev.type === 'confirm' || ((ev.type === 'result' || ev.type === 'variant') && Date.now() - this.lastSummaryAt >= SUMMARY_INTERVAL_MS)) {
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
      // Only a session with confirm events has a report: no scan of the journal on every summary of a run.
      ...((c) => (c ? { confirmed: c } : {}))(this.confirmed ? confirmedSummary(confirmReport(this)) : undefined),
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
    throw new Error(`cannot create the sessions folder ${root} (${(e as NodeJS.ErrnoException).code ?? String(e)}); set KERNELDUEL_HOME to a writable folder`, { cause: e });
  }
  const dir = path.join(root, meta.id);
  try {
    fs.mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new Error(`session ${meta.id} already exists at ${dir}; open it instead or choose a new id`, { cause: e });
    throw new Error(`cannot create session folder ${dir} (${code ?? String(e)}); set KERNELDUEL_HOME to a writable folder`, { cause: e });
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
