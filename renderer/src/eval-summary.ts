// What Tasks' Evaluate found, as lines (no React, no DOM; unit-tested in test/renderer-eval-summary.test.ts):
// the check, each timed size's median with its interval, samples, buffer sets and executors, the
// sets' share of the uncertainty, the clocks, and why nothing was timed when nothing was.
import type { VariantDetail } from '../../main/contract/api.js';
import { fmtMs, fmtPct } from './store.js';
import { executorWords, timingWallWords } from '../../main/contract/timing-words.js';

type EvalResult = NonNullable<VariantDetail['result']>;

export interface EvalLine {
  text: string;
  tone: 'ok' | 'bad' | 'note';
}

export function evalSummary(r: EvalResult): EvalLine[] {
  const lines: EvalLine[] = [];
  if (r.check) {
    const sizes = new Set(r.check.checks.map((c) => c.size)).size;
    const l2 = r.check.checks.reduce((m, c) => Math.max(m, Number(c.relL2) || 0), 0);
    lines.push({ tone: r.check.ok ? 'ok' : 'bad', text: `check: ${r.check.ok ? 'passed' : 'FAILED'} (${r.check.checks.length} buffer checks over ${sizes} size${sizes === 1 ? '' : 's'}; worst relative L2 error ${l2.toExponential(1)})` });
    if (r.check.executor) lines.push({ tone: 'note', text: `  ${executorWords(r.check.executor)}` });
  }
  for (const t of r.timing ?? []) {
    const where = [t.bufferSets && t.bufferSets > 1 ? `${t.bufferSets} buffer sets` : '', t.contexts && t.contexts > 1 ? `${t.contexts} executors` : ''].filter(Boolean).join(' in ');
    lines.push({
      tone: 'ok',
      text: `time (size ${t.size}): median ${fmtMs(t.medianMs)} [${fmtMs(t.ciLowMs)}, ${fmtMs(t.ciHighMs)}] ±${fmtPct(t.relNoise, 2)} over ${t.samplesMs.length} samples${where ? ` on ${where}` : ''} (${t.timer})`,
    });
    if (t.cutoffMs !== undefined) lines.push({ tone: 'note', text: `  stopped early: the interval passed the cutoff ${t.cutoffMs.toFixed(4)} ms (a multiple of the best's median), so this variant is decidedly slower and needs no precise time` });
    else if (!t.converged) lines.push({ tone: 'note', text: `  not converged: the interval stayed wider than the timing's target within its time cap` });
    if (t.setRelSd !== undefined) lines.push({ tone: 'note', text: `  the buffer sets' medians: their mean's sd is ${fmtPct(t.setRelSd, 2)} of the median (placement, which the interval leaves out)` });
    const wall = timingWallWords(t);
    if (wall) lines.push({ tone: 'note', text: `  ${wall}` });
    if (t.timerNote) lines.push({ tone: 'note', text: `  ${t.timerNote}` });
    if (t.clocksStart) lines.push({ tone: 'note', text: `  clocks: SM ${t.clocksStart.smMHz ?? '?'}→${t.clocksEnd?.smMHz ?? '?'} MHz, memory ${t.clocksStart.memMHz ?? '?'}→${t.clocksEnd?.memMHz ?? '?'} MHz` });
  }
  if (r.compileOnly) lines.push({ tone: 'note', text: 'compile-only: no GPU, so built but not checked or timed' });
  if (r.failure) lines.push({ tone: 'bad', text: `${r.failure.kind}: ${r.failure.reason}` });
  return lines;
}
