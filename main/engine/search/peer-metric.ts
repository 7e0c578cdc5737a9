// The metric Kernel Tuner's strategy comparisons use, for comparing KernelDuel's strategies with
// its: evaluations are the unique configurations visited, in first-visit order, failed ones
// included (a revisit is free, as a cache hit is in Kernel Tuner); KernelDuel's baseline is
// evaluation 1. "Evaluations to q" is the first evaluation whose best-so-far is within q of the
// optimum (optimum / best >= q); over seeds, the median counts a seed that never got there as
// budget + 1. best@N is optimum / best after N evaluations. Pure functions of a SimResult.
import { quantile } from '../measure/stats.js';
import type { SimResult } from './simulate.js';

export interface Curve {
  /** Best-so-far time (ms) after each evaluation (index 0 = evaluation 1 = the baseline); null until one was timed. */
  best: Array<number | null>;
  /** The SimResult step index (1..) of each evaluation after the baseline (to match duels to evaluations). */
  stepIndex: number[];
}

/** A run's best-so-far curve over unique configurations in first-visit order. */
export function curveOf(r: SimResult): Curve {
  const seen = new Set<string>([r.baselineKey]);
  const best: Array<number | null> = [r.baselineMs];
  const stepIndex: number[] = [0];
  let b = r.baselineMs;
  for (const s of r.steps) {
    if (seen.has(s.key)) continue;
    seen.add(s.key);
    if (s.medianMs !== null && (b === null || s.medianMs < b)) b = s.medianMs;
    best.push(b);
    stepIndex.push(s.index);
  }
  return { best, stepIndex };
}

/** The first evaluation (1-based) at which optimum / best >= q, or null when the run never got there. */
export function evaluationsTo(c: Curve, optimumMs: number, q: number): number | null {
  const i = c.best.findIndex((b) => b !== null && optimumMs / b >= q - 1e-12);
  return i < 0 ? null : i + 1;
}

/** optimum / best after n evaluations (the run's last when it made fewer); 0 when nothing was timed. */
export function bestAt(c: Curve, optimumMs: number, n: number): number {
  const b = c.best[Math.min(n, c.best.length) - 1];
  return b ? optimumMs / b : 0;
}

export interface Reach {
  /** Median over seeds, a seed that never reached it counting as budget + 1 (so it may be budget + 1). */
  median: number;
  p25: number;
  p75: number;
  /** Seeds that reached it within the budget. */
  reached: number;
  seeds: number;
}

export function reachOf(evals: ReadonlyArray<number | null>, budget: number): Reach {
  const xs = evals.map((e) => e ?? budget + 1);
  return { median: quantile(xs, 0.5), p25: quantile(xs, 0.25), p75: quantile(xs, 0.75), reached: evals.filter((e) => e !== null).length, seeds: evals.length };
}

/** "127 (13/20)", or ">200 (9/20)" when the median seed did not reach it. */
export function formatReach(r: Reach, budget: number): string {
  return `${r.median > budget ? `>${budget}` : String(r.median)} (${r.reached}/${r.seeds})`;
}

/** Duels a run had held by the evaluation given: each is a re-measurement of two configurations already measured, extra GPU time in a live run (no new configuration). */
export function duelsBy(r: SimResult, c: Curve, evaluation: number | null): number {
  const upto = evaluation === null ? Infinity : c.stepIndex[Math.min(evaluation, c.stepIndex.length) - 1];
  const idx = new Map(r.steps.map((s) => [s.id, s.index]));
  return r.duels.filter((d) => (idx.get(d.a) ?? Infinity) <= upto).length;
}
