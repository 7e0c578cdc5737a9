// The contrastive strategy's bandit portfolio (issue 18, tenth round; an option, off by default:
// see contrastive.ts, `bandit`): once the model ranks proposals, each pick goes to the model, a
// genetic child of the fastest measured variants or a step of the annealing walk, chosen by UCB1
// or Thompson sampling on how often each arm's picks improved the best by 0.5%. These tests fail if
// the option is ignored, proposes a variant twice or an invalid one, stops crediting arms, starves
// the model arm, or changes the default run. Checked on a SYNTHETIC recorded space through the
// benchmark's simulation.
import { describe, expect, it } from 'vitest';
import { ReplayMeasurer } from '../main/engine/measure/replay.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { contrastiveSearch, type ContrastiveOptions, type ContrastiveStrategy } from '../main/engine/search/contrastive.js';
import { simulate } from '../main/engine/search/simulate.js';
import type { ObservedSpec, Strategy } from '../main/engine/search/loop.js';
import type { EvalResult } from '../main/engine/base/types.js';
import { isTimedSuccess } from '../main/engine/measure/verdict.js';
import { traceContrastive as run, transpose, rec } from './fixtures/contrastive-trace.js';

const isGenetic = (o: string): boolean => o.startsWith('genetic child');
// The portfolio was built and measured with the trust region off (its default until issue 18's
// fourteenth round); its picks would take two of each round's four and the best's improvements, so
// these tests of the arms keep it off.
const NO_TRUST = { trust: 0 } as const;
const isAnneal = (o: string): boolean => o.startsWith('anneal arm');

/** Runs with the option, keeping for each result its origin and the best before it, and the strategy's own count per arm. */
async function credited(budget: number, seed: number, opts: ContrastiveOptions): Promise<{ results: Array<{ origin: string; ms: number | null; bestBefore: number; top: boolean }>; stats: ReturnType<ContrastiveStrategy['banditStats']> }> {
  const m = new ReplayMeasurer(transpose, rec, { seed });
  const space = ActionSpace.fromRecording(transpose, m);
  const inner = contrastiveSearch(space, seed, opts);
  const results: Array<{ origin: string; ms: number | null; bestBefore: number; top: boolean }> = [];
  const times: number[] = []; // successful results so far, the baseline's included
  let best = Infinity;
  const wrapped: Strategy = Object.assign(Object.create(inner) as Strategy, {
    observe: (spec: ObservedSpec, r: EvalResult) => {
      const ms = isTimedSuccess(r) ? r.timing[0].medianMs : null;
      if (ms !== null) times.push(ms);
      // Among the fastest 10% of the variants measured so far (itself included in the count).
      const top = ms !== null && times.filter((x) => x < ms).length < Math.max(1, Math.ceil(0.1 * times.length));
      if (spec.origin !== 'baseline') results.push({ origin: spec.origin ?? '', ms, bestBefore: best, top });
      if (ms !== null && ms < best) best = ms;
      inner.observe?.(spec, r);
    },
  });
  await simulate(wrapped, m, budget);
  return { results, stats: inner.banditStats() };
}

describe('contrastive: the bandit portfolio', () => {
  for (const rule of ['ucb', 'thompson'] as const) {
    it(`${rule}: every pick is a valid variant proposed once; the arms' picks come only once the model ranks; the model keeps at least half of them`, async () => {
      const { steps, space } = await run(150, 3, { ...NO_TRUST, bandit: rule });
      const keys = steps.map((s) => space.key(s.a));
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).not.toContain(space.key(space.baseline()!));
      for (const s of steps) expect(space.isValid(s.a)).toBe(true);
      const gen = steps.filter((s) => isGenetic(s.origin));
      const ann = steps.filter((s) => isAnneal(s.origin));
      expect(gen.length + ann.length).toBeGreaterThan(5);
      // Before the model is trained the picks are random ones.
      const firstArm = steps.findIndex((s) => isGenetic(s.origin) || isAnneal(s.origin));
      expect(steps.slice(0, firstArm).some((s) => s.origin.startsWith('random'))).toBe(true);
      // The model is never starved: from the first arm pick on, at least half of the non-boundary picks are the model's.
      const after = steps.slice(firstArm).filter((s) => !s.origin.startsWith('boundary'));
      const modelPicks = after.filter((s) => s.origin.startsWith('policy')).length;
      expect(modelPicks).toBeGreaterThanOrEqual(Math.floor(after.length / 2) - 1);
      // A genetic child has two (or one, when both are the same) measured parents; an annealing step one.
      for (const s of gen) expect(s.parents.length).toBeGreaterThanOrEqual(1);
      for (const s of ann) expect(s.parents).toHaveLength(1);
    });
  }

  it('each arm is credited with the picks it made and the ones that improved the best by 0.5% or more', async () => {
    for (const rule of ['ucb', 'thompson'] as const) {
      const { results, stats } = await credited(150, 4, { ...NO_TRUST, bandit: rule });
      const of = (f: (o: string) => boolean): { picks: number; wins: number } => {
        const xs = results.filter((x) => f(x.origin));
        return { picks: xs.length, wins: xs.filter((x) => x.ms !== null && x.bestBefore / x.ms > 1.005).length };
      };
      const gen = of(isGenetic);
      const ann = of(isAnneal);
      expect(gen.picks + ann.picks).toBeGreaterThan(5);
      expect(stats.genetic.wins).toBe(gen.wins);
      expect(stats.anneal.wins).toBe(ann.wins);
      // Tries are counted when picked: a round's last picks may be left unmeasured when the budget ends.
      expect(stats.genetic.tries - gen.picks).toBeGreaterThanOrEqual(0);
      expect(stats.genetic.tries - gen.picks).toBeLessThanOrEqual(4);
      expect(stats.anneal.tries - ann.picks).toBeGreaterThanOrEqual(0);
      expect(stats.anneal.tries - ann.picks).toBeLessThanOrEqual(4);
      // The model arm is credited with its own picks once the bandit acts, and holds at least half of its picks.
      expect(stats.model.tries).toBeGreaterThanOrEqual(stats.genetic.tries + stats.anneal.tries);
      expect(stats.model.wins + stats.genetic.wins + stats.anneal.wins).toBeGreaterThan(0);
    }
    // The denser reward: a pick among the fastest 10% measured so far.
    const top = await credited(120, 4, { bandit: 'thompson', banditReward: 'top' });
    for (const [arm, f] of [['genetic', isGenetic], ['anneal', isAnneal]] as const) {
      expect(top.stats[arm].wins).toBe(top.results.filter((x) => f(x.origin) && x.top).length);
    }
    expect(top.stats.model.wins).toBeGreaterThanOrEqual(top.results.filter((x) => x.origin.startsWith('policy') && x.ms !== null && x.bestBefore / x.ms > 1.005).length);
    // Off: nothing counted.
    const off = await credited(60, 4, {});
    expect(off.stats.model.tries + off.stats.genetic.tries + off.stats.anneal.tries).toBe(0);
  });

  it('only the arms named take picks; with a floor of 1 the model takes every pick (the default run but for the bookkeeping)', async () => {
    const g = await run(120, 3, { bandit: 'ucb', banditArms: ['genetic'] });
    expect(g.steps.some((s) => isGenetic(s.origin))).toBe(true);
    expect(g.steps.some((s) => isAnneal(s.origin))).toBe(false);
    const keys = async (opts?: ContrastiveOptions): Promise<string[]> => {
      const { steps, space } = await run(100, 2, opts);
      return steps.map((s) => space.key(s.a) + s.origin);
    };
    const def = await keys();
    expect(await keys({ bandit: 'ucb', banditFloor: 1 })).toEqual(def);
    expect(await keys({ bandit: 'off' })).toEqual(def);
    const ucb = await keys({ bandit: 'ucb' });
    expect(ucb.filter((k, i) => k !== def[i]).length).toBeGreaterThan(5);
  });

  it('banditStall keeps the arms out until the best has stalled that long', async () => {
    const { steps, best } = await run(150, 4, { bandit: 'ucb', banditStall: 15 });
    const at = steps.map((s, k) => ({ s, k })).filter(({ s }) => isGenetic(s.origin) || isAnneal(s.origin));
    expect(at.length).toBeGreaterThan(0);
    // A pick at position p of its round (4 picks) was planned with the results before k - p: no gain of 0.5% in the 15 before that.
    for (const { k } of at) {
      expect([0, 1, 2, 3].some((p) => k - p - 16 >= 0 && best[k - p - 16]! / best[k - p - 1]! <= 1.005)).toBe(true);
    }
    const early = await run(150, 4, { bandit: 'ucb' });
    const firstEarly = early.steps.findIndex((s) => isGenetic(s.origin) || isAnneal(s.origin));
    expect(firstEarly).toBeLessThan(at[0].k);
  });
});
