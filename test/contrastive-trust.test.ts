// The contrastive strategy's trust region (issue 18, thirteenth round; see contrastive.ts, `trust`,
// off by default): once the model ranks, picks of each round are the model's best among variants in
// a box around the best measured variant, in each searched dimension's ordered values; the box's
// side halves after misses in a row and restarts once too small. These tests fail if the option is
// ignored, proposes outside the box, acts before its stall gate, or never shrinks its side. Checked
// on a SYNTHETIC recorded space through the benchmark's simulation.
import { describe, expect, it } from 'vitest';
import { ReplayMeasurer } from '../main/engine/measure/replay.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { contrastiveSearch } from '../main/engine/search/contrastive.js';
import { simulate } from '../main/engine/search/simulate.js';
import type { Strategy, ObservedSpec } from '../main/engine/search/loop.js';
import type { DuelResult, EvalResult, VariantRecord } from '../main/engine/base/types.js';
import { traceContrastive as run, rec, transpose, actionsById } from './fixtures/contrastive-trace.js';

const isTrust = (origin: string): boolean => origin.startsWith('trust region');

describe('contrastive: trust region', () => {
  it('its picks change at least one searched dimension of the best, each within the first box (side 0.8) of it; none with trust 0', async () => {
    const { steps, space } = await run(80, 3, { trust: 1, boundary: 0, trustSide: 0.8, trustFail: 1e9 });
    const byId = actionsById(steps, space);
    const picks = steps.filter((s) => isTrust(s.origin));
    expect(picks.length).toBeGreaterThanOrEqual(10);
    for (const s of picks) {
      expect(s.parents).toHaveLength(1);
      const centre = byId.get(s.parents[0])!;
      const changed = s.a.map((_, i) => i).filter((i) => s.a[i] !== centre[i]);
      expect(changed.length).toBeGreaterThanOrEqual(1);
      // The side never grows past 1 nor shrinks (trustFail too large): within ±max(1, round(side·(n−1)/2)) at side ≤ 1.
      for (const i of changed) expect(Math.abs(s.a[i] - centre[i])).toBeLessThanOrEqual(Math.max(1, Math.round((space.dims[i].values.length - 1) / 2)));
    }
    const off = await run(80, 3, { trust: 0 });
    expect(off.steps.filter((s) => isTrust(s.origin)).length).toBe(0);
  });

  it('misses in a row halve the side (one place each way at the smallest), and it restarts once below trustMin', async () => {
    const { steps, space } = await run(120, 4, { trust: 2, boundary: 0, trustFail: 2, trustSucc: 1e9, trustSide: 0.25, trustMin: 0.1 });
    const byId = actionsById(steps, space);
    const picks = steps.filter((s) => isTrust(s.origin));
    expect(picks.length).toBeGreaterThanOrEqual(10);
    // Side 0.25 and 0.125 on these dimensions (at most 8 values): every move is one place.
    for (const s of picks) {
      const centre = byId.get(s.parents[0])!;
      for (let i = 0; i < s.a.length; i++) if (s.a[i] !== centre[i]) expect(Math.abs(s.a[i] - centre[i])).toBeLessThanOrEqual(Math.max(1, Math.round((0.25 * (space.dims[i].values.length - 1)) / 2)));
    }
    const m = new ReplayMeasurer(transpose, rec, { seed: 4 });
    const st = contrastiveSearch(ActionSpace.fromRecording(transpose, m), 4, { trust: 2, boundary: 0, trustFail: 2, trustSucc: 1e9, trustSide: 0.25, trustMin: 0.1 });
    await simulate(st, m, 120);
    const ts = st.trustStats();
    expect(ts.picks).toBeGreaterThanOrEqual(10);
    expect(ts.halvings).toBeGreaterThanOrEqual(2);
    expect(ts.restarts).toBeGreaterThanOrEqual(1);
    expect(ts.restarts).toBeLessThanOrEqual(ts.halvings);
  });

  it('with the stall gate, none before the best has stalled for that many measured variants', async () => {
    const { steps, best } = await run(120, 4, { trust: 1, trustStall: 10, boundary: 0 });
    const at = steps.map((s, k) => ({ s, k })).filter(({ s }) => isTrust(s.origin));
    expect(at.length).toBeGreaterThan(0);
    for (const { k } of at) {
      expect(k).toBeGreaterThanOrEqual(10);
      expect(best[k - 11]! / best[k - 1]!).toBeLessThanOrEqual(1.005);
    }
  });

  it('trustStall 0 (the default) gates nothing; a gate of 15 leaves fewer trust-region picks, the first of them later', async () => {
    const open = await run(120, 4, { trust: 2, boundary: 0 });
    const gated = await run(120, 4, { trust: 2, trustStall: 15, boundary: 0 });
    const first = (st: typeof open.steps): number => st.findIndex((s) => isTrust(s.origin));
    const count = (st: typeof open.steps): number => st.filter((s) => isTrust(s.origin)).length;
    expect(first(open.steps)).toBeGreaterThanOrEqual(0);
    expect(first(gated.steps)).toBeGreaterThanOrEqual(15);
    expect(first(gated.steps)).toBeGreaterThan(first(open.steps));
    expect(count(gated.steps)).toBeGreaterThan(0);
    expect(count(gated.steps)).toBeLessThan(count(open.steps));
  });

  it('a resumed run rebuilds the region from the journal: its picks, halvings, restarts and side as the run left them', async () => {
    const opts = { trust: 2, boundary: 0, trustFail: 2, trustSucc: 1e9, trustSide: 0.25, trustMin: 0.1 };
    const m = new ReplayMeasurer(transpose, rec, { seed: 4 });
    const first = contrastiveSearch(ActionSpace.fromRecording(transpose, m), 4, opts);
    // What the session's journal would hold: every observed variant with its result, and the duels.
    const observed: Array<[ObservedSpec, EvalResult]> = [];
    const duels: Array<[VariantRecord, VariantRecord, DuelResult]> = [];
    const journaled: Strategy = Object.assign(Object.create(first) as Strategy, {
      observe: (v: ObservedSpec, r: EvalResult) => {
        observed.push([v, r]);
        first.observe!(v, r);
      },
      observeDuel: (a: VariantRecord, b: VariantRecord, d: DuelResult) => {
        duels.push([a, b, d]);
        first.observeDuel!(a, b, d);
      },
    });
    await simulate(journaled, m, 120);
    const before = first.trustStats();
    expect(before.halvings).toBeGreaterThanOrEqual(2);
    // A fresh strategy told the journal as the loop tells it on a resume: every result, then every duel.
    const resumed = contrastiveSearch(ActionSpace.fromRecording(transpose, new ReplayMeasurer(transpose, rec, { seed: 4 })), 4, opts);
    for (const [v, r] of observed) resumed.observe!(v, r);
    for (const [a, b, d] of duels) resumed.observeDuel!(a, b, d);
    const after = resumed.trustStats();
    expect(after.picks).toBe(before.picks);
    expect(after.halvings).toBe(before.halvings);
    expect(after.restarts).toBe(before.restarts);
    expect(after.side).toBe(before.side);
  });
});
