// The contrastive strategy's boundary moves (issue 18; see contrastive.ts, `boundary`): once the
// best has not improved for `boundaryStall` measured variants, a pick of each round is the model's
// best among the best variant's boundary moves — one or two searched dimensions jumped to their
// smallest or largest value. These tests fail if the option is ignored, acts before a stall, or
// proposes anything but a boundary move of the best. Checked on a SYNTHETIC recorded space through
// the benchmark's simulation.
import { describe, expect, it } from 'vitest';
import { traceContrastive as run, type Step, actionsById } from './fixtures/contrastive-trace.js';

const isBoundary = (s: Step): boolean => s.origin.startsWith('boundary');

describe('contrastive: boundary moves', () => {
  it('with no stall gate, one pick of each trained round is a boundary move of the best: one or two dimensions jumped to a bound', async () => {
    const { steps, space } = await run(80, 3, { boundary: 1, boundaryStall: 0 });
    const byId = actionsById(steps, space);
    const moves = steps.filter(isBoundary);
    expect(moves.length).toBeGreaterThanOrEqual(10);
    for (const s of moves) {
      expect(s.parents).toHaveLength(1);
      const parent = byId.get(s.parents[0])!;
      const changed = s.a.map((v, i) => i).filter((i) => s.a[i] !== parent[i]);
      expect(changed.length).toBeGreaterThanOrEqual(1);
      expect(changed.length).toBeLessThanOrEqual(2);
      for (const i of changed) expect([0, space.dims[i].values.length - 1]).toContain(s.a[i]);
    }
    // Without pairs, one dimension only.
    const single = await run(80, 3, { boundary: 1, boundaryStall: 0, boundaryPairs: false });
    const byId1 = actionsById(single.steps, single.space);
    const m1 = single.steps.filter(isBoundary);
    expect(m1.length).toBeGreaterThanOrEqual(3); // fewer: a small space's single jumps run out
    for (const s of m1) expect(s.a.filter((v, i) => v !== byId1.get(s.parents[0])![i]).length).toBe(1);
  });

  it('with the stall gate, none before the best has stalled for that many measured variants; none with boundary 0', async () => {
    const { steps, best } = await run(120, 4, { boundary: 1, boundaryStall: 10 });
    const at = steps.map((s, k) => ({ s, k })).filter(({ s }) => isBoundary(s));
    expect(at.length).toBeGreaterThan(0);
    // A boundary move is a round's first pick, planned with the results up to the one before it
    // (best[k - 1]); no improvement by 0.5% in the 10 before that.
    for (const { k } of at) {
      expect(k).toBeGreaterThanOrEqual(10);
      expect(best[k - 11]! / best[k - 1]!).toBeLessThanOrEqual(1.005);
    }
    const off = await run(120, 4, { boundary: 0 });
    expect(off.steps.filter(isBoundary).length).toBe(0);
  });

  it('boundaryTries caps the moves per best variant', async () => {
    const { steps } = await run(120, 3, { boundary: 1, boundaryStall: 0, boundaryTries: 2 });
    const per = new Map<string, number>();
    for (const s of steps.filter(isBoundary)) per.set(s.parents[0], (per.get(s.parents[0]) ?? 0) + 1);
    expect(per.size).toBeGreaterThan(0);
    for (const n of per.values()) expect(n).toBeLessThanOrEqual(2);
  });
});

// Far picks (`far`, off by default): once stalled (the same gate, `boundaryStall`), a pick of each
// round is the model's best among random variants that differ from the best in at least half the
// searched dimensions.
describe('contrastive: far picks', () => {
  it('one pick of each trained round is far from the best (half the searched dimensions or more changed); none with far 0', async () => {
    const { steps, space } = await run(80, 3, { far: 1, boundaryStall: 0 });
    const byId = actionsById(steps, space);
    const searched = space.dims.filter((d) => d.values.length > 1).length;
    const moves = steps.filter((s) => s.origin.startsWith('far'));
    expect(moves.length).toBeGreaterThanOrEqual(10);
    for (const s of moves) {
      const parent = byId.get(s.parents[0])!;
      expect(s.a.filter((v, i) => v !== parent[i]).length).toBeGreaterThanOrEqual(Math.ceil(searched / 2));
    }
    const off = await run(80, 3, { far: 0, boundaryStall: 0 });
    expect(off.steps.filter((s) => s.origin.startsWith('far')).length).toBe(0);
  });
});

// The coordinate sweep (`sweep`, off by default): once stalled for `sweepStall` measured variants,
// picks are the model's best among the best variant's unmeasured one-dimension moves.
describe('contrastive: coordinate sweep', () => {
  it('moves exactly one searched dimension of the best, only after the stall, and never with sweep 0', async () => {
    const { steps, space, best } = await run(120, 4, { sweep: 1, sweepStall: 10, boundary: 0 });
    const byId = actionsById(steps, space);
    const at = steps.map((s, k) => ({ s, k })).filter(({ s }) => s.origin === 'sweep');
    expect(at.length).toBeGreaterThan(0);
    for (const { s, k } of at) {
      expect(s.a.filter((v, i) => v !== byId.get(s.parents[0])![i]).length).toBe(1);
      expect(k).toBeGreaterThanOrEqual(10);
      expect(best[k - 11]! / best[k - 1]!).toBeLessThanOrEqual(1.005);
    }
    const off = await run(120, 4, { boundary: 0 });
    expect(off.steps.filter((s) => s.origin === 'sweep').length).toBe(0);
  });
});
