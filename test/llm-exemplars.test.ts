// Exemplar sampling: buckets, the temperature softmax, the pair distribution (chi-square over many
// draws), seeding, and the bandit's adaptation.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../main/engine/base/random.js';
import { ExemplarSettingsSchema, PairBandit, banditReward, bucketWeights, bucketize, pairPrior, sampleExemplars, type Candidate } from '../main/engine/llm/exemplars.js';

const cands: Candidate[] = [0.8, 0.9, 1.0, 1.1, 1.5, 1.6, 2.05, 2.2, 3.0, 3.2].map((s, i) => ({ id: `v${i + 1}`, speedup: s }));
const settings = ExemplarSettingsSchema.parse({ buckets: 4, temperature: 0.5, banditRate: 0 });

describe('exemplars', () => {
  it('buckets by equal speed ranges, slowest first, with means', () => {
    const b = bucketize(cands, 4);
    expect(b.map((x) => x.members.map((m) => m.id))).toEqual([['v1', 'v2', 'v3', 'v4'], ['v5', 'v6'], ['v7', 'v8'], ['v9', 'v10']]);
    expect(b[3].mean).toBeCloseTo(3.1);
  });
  it('softmax weights favour fast buckets more at low temperature', () => {
    const b = bucketize(cands, 4);
    const hot = bucketWeights(b, 10);
    const cold = bucketWeights(b, 0.2);
    expect(hot.reduce((a, x) => a + x, 0)).toBeCloseTo(1);
    expect(cold[3]).toBeGreaterThan(hot[3]);
    expect(cold[3]).toBeGreaterThan(cold[0]);
  });
  it('draws two exemplars from two different buckets, distributed as the softmax pair prior (chi-square)', () => {
    const b = bucketize(cands, 4);
    const prior = pairPrior(bucketWeights(b, settings.temperature));
    const rng = mulberry32(42);
    const N = 20000;
    const counts = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const d = sampleExemplars(cands, settings, rng);
      expect(d.exemplars).toHaveLength(2);
      expect(new Set(d.buckets).size).toBe(2);
      expect(d.exemplars[0].speedup).toBeLessThanOrEqual(d.exemplars[1].speedup);
      counts.set(d.arm!, (counts.get(d.arm!) ?? 0) + 1);
    }
    let chi2 = 0;
    for (const [arm, p] of prior) chi2 += ((counts.get(arm) ?? 0) - N * p) ** 2 / (N * p);
    // 6 arms -> 5 degrees of freedom; the 99.9% quantile is 20.5.
    expect(chi2).toBeLessThan(20.5);
    expect([...prior.values()].reduce((a, x) => a + x, 0)).toBeCloseTo(1);
  });
  it('members within a bucket are drawn uniformly', () => {
    const rng = mulberry32(7);
    const hits = new Map<string, number>();
    const only = cands.slice(0, 3); // one bucket when all are close? force by 1 bucket
    for (let i = 0; i < 3000; i++) {
      const d = sampleExemplars(only, { ...settings, buckets: 1, count: 1 }, rng);
      hits.set(d.exemplars[0].id, (hits.get(d.exemplars[0].id) ?? 0) + 1);
    }
    for (const id of ['v1', 'v2', 'v3']) expect(Math.abs((hits.get(id) ?? 0) - 1000)).toBeLessThan(120);
  });
  it('is reproducible for a seed, and copes with tiny pools', () => {
    const a = Array.from({ length: 5 }, ((r) => () => sampleExemplars(cands, settings, r).exemplars.map((e) => e.id))(mulberry32(3)));
    const b = Array.from({ length: 5 }, ((r) => () => sampleExemplars(cands, settings, r).exemplars.map((e) => e.id))(mulberry32(3)));
    expect(a).toEqual(b);
    expect(sampleExemplars([], settings, mulberry32(1)).exemplars).toEqual([]);
    expect(sampleExemplars([cands[0]], settings, mulberry32(1)).exemplars.map((e) => e.id)).toEqual(['v1']);
  });
  it('the bandit moves probability towards the bucket pair that earns rewards', () => {
    const b = bucketize(cands, 4);
    const prior = pairPrior(bucketWeights(b, 0.5));
    const bandit = new PairBandit(0.5, 0.1);
    const p0 = bandit.probabilities(prior).get('0-1')!;
    for (let i = 0; i < 30; i++) {
      const ps = bandit.probabilities(prior);
      bandit.update('0-1', 1, ps.get('0-1')!);
      bandit.update('2-3', 0, ps.get('2-3')!);
    }
    const p1 = bandit.probabilities(prior).get('0-1')!;
    expect(p1).toBeGreaterThan(p0 * 2);
    expect([...bandit.probabilities(prior).values()].reduce((a, x) => a + x, 0)).toBeCloseTo(1);
    expect(banditReward(null, [2])).toBe(0);
    expect(banditReward(4, [2])).toBe(1);
    expect(banditReward(2, [2])).toBe(0.5);
  });
});
