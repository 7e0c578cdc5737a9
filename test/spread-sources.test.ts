// bench/lib/spread-sources.ts: splits the spread of a variant's times over processes into what its
// buffer sets explain and an offset each process shares.
import { describe, expect, it } from 'vitest';
import { normalCdf, probRangeWithin, relSdPct, spreadSources } from '../bench/lib/spread-sources.js';
import { mulberry32 } from '../main/engine/base/random.js';

const gauss = (rng: () => number): number => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());

describe('spreadSources', () => {
  it('placement alone: the between-process sd is about the per-set sd over sqrt(sets)', () => {
    const rng = mulberry32(3);
    const procs = Array.from({ length: 400 }, () => Array.from({ length: 4 }, () => 100 * (1 + 0.004 * gauss(rng))));
    const s = spreadSources(procs)!;
    expect(s.sets).toBe(4);
    expect(s.withinSdPct).toBeGreaterThan(0.37);
    expect(s.withinSdPct).toBeLessThan(0.43);
    expect(s.betweenSdPct / s.expectedFromSetsPct).toBeGreaterThan(0.85);
    expect(s.betweenSdPct / s.expectedFromSetsPct).toBeLessThan(1.15);
  });
  it('an offset per process shows as a between-process sd well above what the sets explain', () => {
    const rng = mulberry32(4);
    const procs = Array.from({ length: 400 }, () => {
      const off = 0.003 * gauss(rng);
      return Array.from({ length: 4 }, () => 100 * (1 + off + 0.001 * gauss(rng)));
    });
    const s = spreadSources(procs)!;
    expect(s.betweenSdPct).toBeGreaterThan(0.27);
    expect(s.betweenSdPct / s.expectedFromSetsPct).toBeGreaterThan(4);
  });
  it('needs two processes of two sets or more', () => {
    expect(spreadSources([[1, 2]])).toBeNull();
    expect(spreadSources([[1], [2]])).toBeNull();
    expect(spreadSources([[1, 2], []])).toBeNull();
  });
});

describe('probRangeWithin', () => {
  it('two draws: |X1 - X2| has sd sqrt(2), so P(range <= w) = 2 Phi(w / sqrt 2) - 1', () => {
    for (const w of [0.5, 1, 2, 3]) expect(probRangeWithin(2, w)).toBeCloseTo(2 * normalCdf(w / Math.SQRT2) - 1, 4);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
  });
  it('five draws: agrees with a simulation, and grows with w', () => {
    const rng = mulberry32(9);
    const trials = 40000;
    let within = 0;
    for (let t = 0; t < trials; t++) {
      const xs = Array.from({ length: 5 }, () => gauss(rng));
      if (Math.max(...xs) - Math.min(...xs) <= 2.5) within++;
    }
    expect(probRangeWithin(5, 2.5)).toBeCloseTo(within / trials, 1);
    expect(Math.abs(probRangeWithin(5, 2.5) - within / trials)).toBeLessThan(0.01);
    expect(probRangeWithin(5, 4)).toBeGreaterThan(probRangeWithin(5, 2.5));
    expect(probRangeWithin(1, 0)).toBe(1);
  });
  it('relSdPct: the sample sd of medians as a percentage of their median', () => {
    expect(relSdPct([100, 101, 99])).toBeCloseTo(1, 6);
  });
});
