import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../main/engine/base/random.js';
import { chooseTimer, duelStats, intervalWithPlacements, mean, median, medianCI, placementsInterval, quantile, setSpread, verdictOf } from '../main/engine/measure/stats.js';

const rng = mulberry32;
/** n samples around `center` with uniform relative noise of ±`rel`. */
function samples(center: number, rel: number, n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => center * (1 + rel * (2 * r() - 1)));
}

describe('median, mean and medianCI', () => {
  it('median of odd and even counts, unsorted input untouched', () => {
    const xs = [5, 1, 3];
    expect(median(xs)).toBe(3);
    expect(xs).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(mean([1, 2, 3, 6])).toBe(3);
  });
  it('quantile interpolates between order statistics (the benchmarks\' medians and quartiles)', () => {
    const xs = [10, 1, 4, 7];
    expect(quantile(xs, 0.5)).toBe(median(xs));
    expect(quantile(xs, 0)).toBe(1);
    expect(quantile(xs, 1)).toBe(10);
    expect(quantile(xs, 0.25)).toBeCloseTo(3.25, 12); // 1 + 0.75 * (4 - 1)
    expect(xs).toEqual([10, 1, 4, 7]);
    expect(quantile([], 0.5)).toBeNaN();
  });
  it('gives the order-statistic 95% interval of the median', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, reversed
    const ci = medianCI(xs);
    expect(ci.median).toBe(50.5);
    // n/2 ± 0.98·√n = 50 ± 9.8 -> ranks 40 and 60 (0-based) -> values 41 and 61.
    expect(ci.low).toBe(41);
    expect(ci.high).toBe(61);
    expect(ci.relNoise).toBeCloseTo(20 / (2 * 50.5), 10);
  });
  it('narrows as samples grow and stays within the data', () => {
    const small = medianCI(samples(1, 0.1, 20, 1));
    const big = medianCI(samples(1, 0.1, 2000, 1));
    expect(big.relNoise).toBeLessThan(small.relNoise);
    expect(big.low).toBeLessThanOrEqual(big.median);
    expect(big.high).toBeGreaterThanOrEqual(big.median);
    expect(small.low).toBeGreaterThanOrEqual(0.9);
    expect(small.high).toBeLessThanOrEqual(1.1);
  });
  it('handles one sample and none', () => {
    expect(medianCI([2])).toEqual({ median: 2, low: 2, high: 2, relNoise: 0 });
    const none = medianCI([]);
    expect(none.median).toBeNaN();
    expect(none.relNoise).toBe(Infinity);
  });
});

describe('chooseTimer', () => {
  it("picks 'wall' when wall time is far above event time (work escaped to a second stream)", () => {
    const r = chooseTimer(samples(1, 0.01, 50, 1), samples(2, 0.01, 50, 2));
    expect(r.timer).toBe('wall');
    expect(r.note).toMatch(/outside the default stream/);
  });
  it("picks 'events' when wall time is event time plus overhead", () => {
    expect(chooseTimer(samples(1, 0.01, 50, 1), samples(1.05, 0.01, 50, 2))).toEqual({ timer: 'events' });
    // Tiny kernels: 10 µs events, 40 µs wall is launch + sync overhead, not escaped work.
    expect(chooseTimer(samples(0.01, 0.01, 50, 1), samples(0.04, 0.01, 50, 2)).timer).toBe('events');
  });
  it('scales the allowed overhead with the measured empty-call wall time', () => {
    const ev = samples(0.1, 0.01, 50, 1);
    const wall = samples(0.3, 0.01, 50, 2);
    expect(chooseTimer(ev, wall, 0.01).timer).toBe('wall');
    expect(chooseTimer(ev, wall, 0.1).timer).toBe('events');
  });
});

describe('chooseTimer for the executor (all of the rebuilt work between its events)', () => {
  // Measured on the H200 (2026-12-01, 5 evals beside each other's builds): reduce_sum 0.073 ms by
  // events, 2.49 ms by the host clock; the wall fallback reported the honest kernel 34x slower.
  it('keeps the events when the host clock saw more, and says why', () => {
    const r = chooseTimer(samples(0.073, 0.01, 50, 1), samples(2.49, 0.02, 50, 2), 0.02, { eventsBracketAll: true });
    expect(r.timer).toBe('events');
    expect(r.note).toMatch(/host delay.*events are used/);
  });
  it('a duel of two executors keeps the events too', () => {
    const d = duelStats(0, samples(0.1, 0.01, 30, 1), samples(3, 0.01, 30, 2), samples(0.2, 0.01, 30, 3), samples(0.2, 0.01, 30, 4), 0.02, { eventsBracketAll: true });
    expect(d.timer).toBe('events');
    expect(d.ratio).toBeGreaterThan(1.8);
  });
});

describe('verdictOf', () => {
  it('is same within ±1%, faster/slower when the CI excludes 1, unsure otherwise', () => {
    expect(verdictOf(0.995, 1.005)).toBe('same');
    expect(verdictOf(1.05, 1.15)).toBe('faster');
    expect(verdictOf(0.8, 0.95)).toBe('slower');
    expect(verdictOf(0.9, 1.1)).toBe('unsure');
    expect(verdictOf(1.001, 1.02)).toBe('faster');
    expect(verdictOf(0.97, 1.03, 0.05)).toBe('same');
  });
});

describe('duelStats', () => {
  const N = 200;
  it("A 10% faster than B gives 'faster' with a ratio near 1.1", () => {
    const aEv = samples(1, 0.005, N, 1);
    const bEv = samples(1.1, 0.005, N, 2);
    const d = duelStats(0, aEv, aEv.map((x) => x + 0.01), bEv, bEv.map((x) => x + 0.01));
    expect(d.verdict).toBe('faster');
    expect(d.ratio).toBeCloseTo(1.1, 2);
    expect(d.ratioLow).toBeGreaterThan(1);
    expect(d.ratioLow).toBeLessThanOrEqual(d.ratio);
    expect(d.ratioHigh).toBeGreaterThanOrEqual(d.ratio);
    expect(d.timer).toBe('events');
    expect(d.pairs).toBe(N);
    expect(d.size).toBe(0);
    expect(d.aMs).toBe(aEv);
  });
  it("B 10% faster than A gives 'slower'", () => {
    const aEv = samples(1.1, 0.005, N, 3);
    const bEv = samples(1, 0.005, N, 4);
    const d = duelStats(1, aEv, aEv, bEv, bEv);
    expect(d.verdict).toBe('slower');
    expect(d.ratio).toBeCloseTo(1 / 1.1, 2);
  });
  it("identical kernels give 'same'", () => {
    const aEv = samples(1, 0.002, N, 5);
    const bEv = samples(1, 0.002, N, 6);
    const d = duelStats(0, aEv, aEv, bEv, bEv);
    expect(d.verdict).toBe('same');
    expect(Math.abs(d.ratio - 1)).toBeLessThan(0.005);
  });
  it("very noisy samples give 'unsure'", () => {
    const aEv = samples(1, 0.5, N, 7);
    const bEv = samples(1.02, 0.5, N, 8);
    const d = duelStats(0, aEv, aEv, bEv, bEv);
    expect(d.verdict).toBe('unsure');
    expect(d.ratioLow).toBeLessThan(1);
    expect(d.ratioHigh).toBeGreaterThan(1);
  });
  it('uses wall time for both sides when either side escaped the events', () => {
    // B's events miss half its work; its wall time shows it. On events B would look 2x faster.
    const aEv = samples(1, 0.005, N, 9);
    const bWall = samples(2, 0.005, N, 10);
    const bEv = bWall.map((x) => x / 4);
    const d = duelStats(0, aEv, aEv.map((x) => x + 0.01), bEv, bWall);
    expect(d.timer).toBe('wall');
    expect(d.bMs).toBe(bWall);
    expect(d.verdict).toBe('faster');
    expect(d.ratio).toBeCloseTo(2, 1);
  });
});

describe('setSpread: the buffer sets\' share of a median\'s uncertainty', () => {
  it('finds set offsets that the order-statistics CI of many samples does not show, and is null where it cannot say', () => {
    // 4 sets (call i on set i mod 4) whose placements run 0%, +0.4%, -0.3%, +0.8% from 0.150 ms,
    // 400 samples with ±0.05% noise each.
    const off = [0, 0.004, -0.003, 0.008];
    const noise = samples(1, 0.0005, 400, 3);
    const xs = noise.map((e, i) => 0.15 * (1 + off[i % 4]) * e);
    const s = setSpread(xs, 4)!;
    expect(s.perSetMedianMs).toHaveLength(4);
    s.perSetMedianMs.forEach((m, k) => expect(m / (0.15 * (1 + off[k]))).toBeCloseTo(1, 3));
    // sd of the offsets (0.4865%) / √4 = 0.243% of the median
    expect(s.setRelSd).toBeGreaterThan(0.0022);
    expect(s.setRelSd).toBeLessThan(0.0027);
    // The CI that takes the 400 samples as independent claims more than the sets allow.
    expect(medianCI(xs).relNoise).toBeLessThan(s.setRelSd);
    // Without set offsets the sets' share is small.
    expect(setSpread(noise.map((e) => 0.15 * e), 4)!.setRelSd).toBeLessThan(0.0003);
    expect(setSpread(xs, 1)).toBeNull();
    expect(setSpread(xs.slice(0, 7), 4)).toBeNull();
  });
});

describe('duelStats with the judge\'s sets', () => {
  it('reports the sets\' share of the ratio, and leaves the verdict to the CI', () => {
    // Pair i on set i mod 4; B's set 1 runs 1% slower than A's (a placement), the rest alike.
    const a = samples(0.15, 0.0005, 200, 5);
    const b = a.map((x, i) => x * (i % 4 === 1 ? 1.01 : 1));
    const d = duelStats(0, a, a, b, b, undefined, { eventsBracketAll: true, sets: 4 });
    expect(d.sets).toBe(4);
    // per-set median ratios 1, 1.01, 1, 1: sd 0.5% / √4 = 0.25%
    expect(d.setRelSd!).toBeGreaterThan(0.0023);
    expect(d.setRelSd!).toBeLessThan(0.0027);
    expect(d.verdict).toBe(duelStats(0, a, a, b, b, undefined, { eventsBracketAll: true }).verdict);
    expect(duelStats(0, a, a, b, b).setRelSd).toBeUndefined();
    // It carries the interval over the pairs and the placements, wider than the pairs' own.
    const w = intervalWithPlacements(d.ratio, d.ratioLow, d.ratioHigh, d.setRelSd);
    expect(d.placementsLow).toBe(w.low);
    expect(d.placementsHigh).toBe(w.high);
    expect(d.placementsLow!).toBeLessThan(d.ratioLow);
    expect(d.placementsHigh!).toBeGreaterThan(d.ratioHigh);
    expect(duelStats(0, a, a, b, b).placementsLow).toBeUndefined();
  });
});

describe('placementsInterval', () => {
  it('is the duel\'s own, else computed from an older journal\'s setRelSd, else null', () => {
    const old = { ratio: 0.9948, ratioLow: 0.9936, ratioHigh: 0.9954, setRelSd: 0.0092 };
    expect(placementsInterval(old)).toEqual(intervalWithPlacements(0.9948, 0.9936, 0.9954, 0.0092));
    expect(placementsInterval({ ...old, placementsLow: 0.97, placementsHigh: 1.02 })).toEqual({ low: 0.97, high: 1.02 });
    expect(placementsInterval({ ratio: 1, ratioLow: 0.99, ratioHigh: 1.01 })).toBeNull();
  });
});

describe('intervalWithPlacements', () => {
  it('is the pairs\' interval without a placements\' share, and widens each side by it in quadrature on the log scale', () => {
    expect(intervalWithPlacements(1.002, 1.001, 1.003, undefined)).toEqual({ low: 1.001, high: 1.003 });
    expect(intervalWithPlacements(1.002, 1.001, 1.003, 0)).toEqual({ low: 1.001, high: 1.003 });
    // The twins of an H100 (bench/results/h100-gpu-tests-01d9021.log): 0.9948x, pairs 0.9936-0.9954, placements' sd 0.92%.
    const w = intervalWithPlacements(0.9948, 0.9936, 0.9954, 0.0092);
    expect(w.low).toBeCloseTo(0.9948 * Math.exp(-Math.hypot(Math.log(0.9948 / 0.9936), 1.96 * 0.0092)), 12);
    expect(w.high).toBeCloseTo(0.9948 * Math.exp(Math.hypot(Math.log(0.9954 / 0.9948), 1.96 * 0.0092)), 12);
    expect(w.low).toBeLessThan(1);
    expect(w.high).toBeGreaterThan(1);
    // A zero-width interval still widens.
    const z = intervalWithPlacements(1, 1, 1, 0.001);
    expect(z.low).toBeCloseTo(Math.exp(-0.00196), 12);
    expect(z.high).toBeCloseTo(Math.exp(0.00196), 12);
  });
});
