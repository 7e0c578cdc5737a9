// summary.json, a session's listing cache: counts, status and best, with the journal position
// (last seq, byte length) it describes, so `kernelduel sessions` need not read every journal.
// Rewritten atomically by a running session (at most every SUMMARY_INTERVAL_MS, on status events and
// on close) and by the listing after it had to read a journal. Missing or unreadable means "read the
// journal", never an error.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EvalResult, VariantRecord } from '../base/types.js';
import { writeFileAtomic } from '../base/atomic.js';
import type { SessionEvent, SessionStatus, StoredSessionEvent, StoredVariantRecord } from './events.js';
import type { JournalEntry } from './journal.js';
import { confirmReport, type ConfirmReport } from './confirm.js';
import { computeBest, type BestVariant } from './best.js';

export const SUMMARY_FILE = 'summary.json';

/** How often a running session rewrites summary.json (at most; also on status events and on close). */
export const SUMMARY_INTERVAL_MS = 2000;

const Count = z.number().int().min(0);

const SummaryFileSchema = z.object({
  v: z.literal(1),
  /** The journal's last seq and byte length when this was written. */
  journalSeq: Count,
  journalBytes: Count,
  variants: Count,
  results: Count,
  status: z.enum(['running', 'paused', 'stopped', 'finished']).optional(),
  budgetUsed: z.number().optional(),
  best: z.object({ variantId: z.string(), medianMs: z.number(), speedup: z.number().nullable() }).optional(),
  /** The session's confirmation (kernelduel confirm): its best and that best's precise speedup. */
  confirmed: z.object({ variantId: z.string(), speedup: z.number().nullable() }).optional(),
  writtenAt: z.string(),
});
export type SummaryFile = z.infer<typeof SummaryFileSchema>;

/** What a summary says about a session (without the journal position it describes). */
export type SummaryCounts = Omit<SummaryFile, 'v' | 'journalSeq' | 'journalBytes' | 'writtenAt'>;

/** summary.json of a session folder with its mtime, or null when missing or not what we write. */
export function readSummaryFile(dir: string): { data: SummaryFile; mtimeMs: number } | null {
  try {
    const file = path.join(dir, SUMMARY_FILE);
    const st = fs.statSync(file);
    const p = SummaryFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return p.success ? { data: p.data, mtimeMs: st.mtimeMs } : null;
  } catch {
    return null;
  }
}

/** Best effort: summary.json is a cache, listSessions falls back to the journal without it. */
export function writeSummaryFile(dir: string, data: SummaryFile): boolean {
  try {
    writeFileAtomic(path.join(dir, SUMMARY_FILE), JSON.stringify(data) + '\n');
    return true;
  } catch {
    return false;
  }
}

export function bestSummary(b: BestVariant | null): SummaryFile['best'] {
  return b ? { variantId: b.variant.id, medianMs: b.medianMs, speedup: b.speedup } : undefined;
}

/** A confirmation report's best for summary.json. */
export function confirmedSummary(r: ConfirmReport | null): SummaryFile['confirmed'] {
  const best = r?.variants.find((l) => l.variantId === r.bestId);
  return best ? { variantId: best.variantId, speedup: best.speedup } : undefined;
}

/** Counts, status, best and confirmation of a session from its journal entries (listSessions without a usable summary). */
export function summarize(entries: JournalEntry<StoredSessionEvent>[]): SummaryCounts {
  const records = entries.map((e) => e.rec);
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
  // confirmReport reads ids, origins, results and the confirm events' medians: stored records do.
  const confirmed = confirmedSummary(confirmReport({ entries: () => entries as JournalEntry<SessionEvent>[], variant: (id) => variants.get(id) as VariantRecord | undefined, resultOf: (id) => results.get(id) }));
  return { variants: variants.size, results: n, ...(status ? { status, budgetUsed } : {}), ...(best ? { best } : {}), ...(confirmed ? { confirmed } : {}) };
}
