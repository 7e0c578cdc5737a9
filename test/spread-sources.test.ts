// bench/lib/spread-sources.ts: splits the spread of a variant's times over processes into what its
// buffer sets explain and an offset each process shares.
import { describe, expect, it } from 'vitest';
import { spreadSources } from '../bench/lib/spread-sources.js';
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
