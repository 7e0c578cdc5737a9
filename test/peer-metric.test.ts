// The metric of Kernel Tuner's strategy comparisons (main/engine/search/peer-metric.ts): evaluations are
// unique configurations in first-visit order with the baseline as evaluation 1 and failures
// counted; unreached counts as budget + 1 in the median; best@N; duels are counted, not evaluations.
import { describe, expect, it } from 'vitest';
import { bestAt, curveOf, duelsBy, evaluationsTo, formatReach, reachOf } from '../main/engine/search/peer-metric.js';
import type { SimResult, SimStep } from '../main/engine/search/simulate.js';
import type { DuelResult } from '../main/engine/base/types.js';
import { goalLabel, to98GoalMet } from '../bench/peer-kernel-tuner.js';

const step = (index: number, key: string, medianMs: number | null, bestMs: number | null): SimStep => ({ index, id: `v${index}`, key, medianMs, bestMs, ...(medianMs === null ? { failure: 'runtime' } : {}) });
const duel = {} as DuelResult;

/** Baseline 10 ms; then 8, a failure, a revisit of the 8 ms configuration, 5, 4. */
const run: SimResult = {
  baselineMs: 10,
  baselineKey: 'b',
  steps: [step(1, 'x', 8, 8), step(2, 'f', null, 8), step(3, 'x', 8, 8), step(4, 'y', 5, 5), step(5, 'z', 4, 4)],
  duels: [{ a: 'v1', b: 'v0', result: duel }, { a: 'v4', b: 'v1', result: duel }, { a: 'v5', b: 'v4', result: duel }],
  model: null,
  modelAt: new Map(),
};

describe("Kernel Tuner's metric", () => {
  it('counts unique configurations in first-visit order: the baseline is evaluation 1, a failure counts, a revisit does not', () => {
    const c = curveOf(run);
    expect(c.best).toEqual([10, 8, 8, 5, 4]);
    expect(c.stepIndex).toEqual([0, 1, 2, 4, 5]);
  });

  it('evaluations to q and best@N', () => {
    const c = curveOf(run);
    expect(evaluationsTo(c, 4, 1)).toBe(5);
    expect(evaluationsTo(c, 4, 0.8)).toBe(4); // 4/5 = 0.8
    expect(evaluationsTo(c, 3, 0.98)).toBeNull();
    expect(evaluationsTo(c, 10, 1)).toBe(1); // the baseline itself
    expect(bestAt(c, 4, 2)).toBeCloseTo(0.5);
    expect(bestAt(c, 4, 100)).toBe(1); // past the end: the last best
    expect(bestAt({ best: [null, null], stepIndex: [0, 1] }, 4, 2)).toBe(0);
  });

  it('a seed that never reached the target counts as budget + 1 in the median', () => {
    const r = reachOf([3, null, 5, null, null], 200);
    expect(r.median).toBe(201);
    expect(r.reached).toBe(2);
    expect(formatReach(r, 200)).toBe('>200 (2/5)');
    expect(formatReach(reachOf([3, 4, null], 200), 200)).toBe('4 (2/3)');
  });

  it('duels are counted up to an evaluation (each would be an extra measurement in a live run), never as evaluations', () => {
    const c = curveOf(run);
    expect(duelsBy(run, c, 2)).toBe(1);
    expect(duelsBy(run, c, 4)).toBe(2);
    expect(duelsBy(run, c, null)).toBe(3);
  });
});

describe('issue 18 goal check (bench/peer-kernel-tuner.ts)', () => {
  it('scales "18 of 20 seeds" to the seed count: 76 of 100 seeds is not 18 of 20', () => {
    const goal = { to98: 152, minReached: 18 };
    expect(to98GoalMet(goal, { median: 148.5, reached: 76, seeds: 100 })).toBe(false);
    expect(to98GoalMet(goal, { median: 148.5, reached: 90, seeds: 100 })).toBe(true);
    expect(to98GoalMet(goal, { median: 98, reached: 18, seeds: 20 })).toBe(true);
    expect(to98GoalMet(goal, { median: 98, reached: 17, seeds: 20 })).toBe(false);
    expect(to98GoalMet(goal, { median: 153, reached: 20, seeds: 20 })).toBe(false);
    expect(goalLabel(goal, 20)).toBe('≤ 152 with ≥ 18/20');
    expect(goalLabel(goal, 100)).toBe('≤ 152 with ≥ 18/20 (90/100)');
    expect(goalLabel({ to98: 4, minReached: 0 }, 100)).toBe('≤ 4');
  });
});
