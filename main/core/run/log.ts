// The run log's wording, once: the lines a live run writes as it goes (main/core/run/runs.ts) and
// the same lines rebuilt from a session's journal, so a session opened after its run (or after a
// reload of the page) shows what its run said. Pure.
import { describeBaselines } from '../pytorch-baselines.js';
import type { DuelResult, EvalResult } from '../../engine/base/types.js';
import type { JournalEntry } from '../../engine/session/journal.js';
import type { SessionEvent, SessionMeta } from '../../engine/session/events.js';
import { timedMedianMs } from '../../engine/measure/verdict.js';
import { pythonDeviceOf } from '../../engine/session/run-settings.js';
import type { LogLineDTO } from '../../contract/api.js';

/** A result in one line of the run's log. */
export function resultLine(index: number, budget: number, variantId: string, r: EvalResult, medianMs: number | null, speedup: number | null): string {
  const what = r.failure
    ? `FAILED ${r.failure.kind}: ${r.failure.reason}`
    : r.compileOnly
      ? 'built (compile-only: not checked or timed)'
      : medianMs !== null
        ? `${medianMs.toPrecision(4)} ms${speedup ? `, ${speedup.toFixed(2)}x the baseline` : ''}${r.source.kind === 'replay' ? ' (REPLAY)' : r.source.kind === 'cpu' ? ' (CPU)' : ''}${r.python ? ` [${r.python.label}, ${r.python.guarantee}]` : ''}`
        : 'done';
  return `[${index}/${budget}] ${variantId} ${what}`;
}

export function duelLine(a: string, b: string, d: DuelResult): string {
  return `duel ${a} vs ${b}: ${d.verdict}, ${d.ratio.toFixed(3)}x [${d.ratioLow.toFixed(3)}, ${d.ratioHigh.toFixed(3)}]`;
}

export function doneLine(evaluated: number, bestId: string | null, bestSpeedup: number | null): string {
  return `done: ${evaluated} evaluated${bestSpeedup ? `, best ${bestId} ${bestSpeedup.toFixed(2)}x` : ''}`;
}

/** The log of a session from its journal: its start, every result, duel, note and its end (the last `max` lines). */
export function journalLog(meta: SessionMeta, entries: Array<JournalEntry<SessionEvent>>, max = 2000): LogLineDTO[] {
  const out: LogLineDTO[] = [];
  const st = meta.settings;
  const budget = typeof st.budget === 'number' ? st.budget : 0;
  out.push({ at: meta.createdAt, level: 'info', message: `session ${meta.id}: ${meta.task.name}, ${String(st.strategy ?? '?')}, budget ${budget}, ${whereOf(meta)} (from the journal)` });
  const origin = new Map<string, string>();
  let baselineMs: number | null = null;
  let index = 0;
  let best: { id: string; ms: number } | null = null;
  const seen = new Set<string>();
  for (const e of entries) {
    const r = e.rec;
    if (r.type === 'variant') origin.set(r.variant.id, r.variant.origin);
    else if (r.type === 'result') {
      const ms = timedMedianMs(r.result);
      const isBase = origin.get(r.variantId) === 'baseline';
      if (isBase && baselineMs === null) baselineMs = ms;
      if (ms !== null && (!best || ms < best.ms)) best = { id: r.variantId, ms };
      const i = isBase ? 0 : seen.has(r.variantId) ? index : ++index;
      seen.add(r.variantId);
      out.push({ at: e.t, level: r.result.failure ? 'warn' : 'info', message: resultLine(i, budget, r.variantId, r.result, ms, ms !== null && baselineMs ? baselineMs / ms : null) });
    } else if (r.type === 'duel') out.push({ at: e.t, level: 'info', message: duelLine(r.a, r.b, r.result) });
    else if (r.type === 'note') out.push({ at: e.t, level: r.level, message: r.message });
    else if (r.type === 'pytorch-baselines') out.push({ at: e.t, level: r.baselines.eager ? 'info' : 'warn', message: describeBaselines(r.baselines) });
    else if (r.type === 'status') {
      const bs = best && baselineMs ? baselineMs / best.ms : null;
      out.push({ at: e.t, level: 'info', message: `${r.status}: ${doneLine(r.budgetUsed ?? index, best?.id ?? null, bs).slice('done: '.length)}` });
    }
  }
  return out.slice(-max);
}

/** Where a session measured, in words: a GPU, the CPU (Python candidates: CPU times) or none (compile-only). */
function whereOf(meta: SessionMeta): string {
  const py = pythonDeviceOf(meta.settings);
  if (py === 'cpu') return 'Python candidates on the CPU (CPU times, not a GPU\'s)';
  if (py === 'cuda') return `Python candidates on ${meta.gpu?.name ?? 'the GPU'}`;
  return meta.gpu ? meta.gpu.name : 'no GPU (compile-only)';
}
