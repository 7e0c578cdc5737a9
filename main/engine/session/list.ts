// Listing the sessions of a folder (`kernelduel sessions`, the workbench's session list): each
// one's task, counts, status and best, from its summary.json when that describes its journal, else
// from the journal itself. A killed run's session shows as `interrupted`.
import fs from 'node:fs';
import path from 'node:path';
import { Journal } from './journal.js';
import { parseSessionEvent, type SessionMeta, type SessionStatus, type StoredSessionEvent } from './events.js';
import { JOURNAL_FILE, readSessionMeta } from './store.js';
import { readSummaryFile, summarize, SUMMARY_INTERVAL_MS, writeSummaryFile } from './summary.js';
import { runState } from './running.js';

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
  /** The session's confirmation (kernelduel confirm): its best and that best's precise speedup. */
  confirmed?: { variantId: string; speedup: number | null };
  /** The journal ends in a torn line (a crash); it is repaired when the session is opened. */
  tornTail?: boolean;
  /** Why the session could not be read; the other fields are then partial. */
  error?: string;
}

/** The journal changed this recently: a run may be appending to it (its summary then lags a little). */
const SUMMARY_LIVE_MS = 10_000;
/** How far a live session's summary may lag its journal's last modification. */
const SUMMARY_LAG_MS = SUMMARY_INTERVAL_MS + 1000;

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
      if (d.confirmed) s.confirmed = { ...d.confirmed };
      if (scan.droppedTornTail) s.tornTail = true;
      return;
    }
  }
  const j = Journal.parseBuffer<StoredSessionEvent>(jf, buf, { validate: parseSessionEvent });
  const r = summarize(j.entries);
  s.variants = r.variants;
  s.results = r.results;
  if (r.status) {
    s.status = r.status;
    s.budgetUsed = r.budgetUsed;
  }
  if (r.best) s.best = r.best;
  if (r.confirmed) s.confirmed = r.confirmed;
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
    throw new Error(`cannot list sessions in ${root} (${(e as NodeJS.ErrnoException).code ?? String(e)})`, { cause: e });
  }
  const out: SessionSummary[] = [];
  for (const d of names) {
    if (!d.isDirectory() || d.name.startsWith('.')) continue;
    const s: SessionSummary = { id: d.name, dir: path.join(root, d.name), variants: 0, results: 0 };
    try {
      s.meta = readSessionMeta(root, d.name);
      s.id = s.meta.id;
      summarizeSession(s.dir, s);
    } catch (e) {
      s.error = e instanceof Error ? e.message : String(e);
    }
    out.push(s);
  }
  out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return out;
}
