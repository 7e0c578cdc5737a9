// The preference model (Bradley–Terry, pairwise logistic loss + L2) and the contrastive strategy
// that uses it: it learns a ranking from decided comparisons only, reports held-out accuracy, and
// the strategy reaches the optimum of a synthetic space in fewer evaluations than random search.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { PreferenceModel, sigmoid } from '../main/engine/search/preference.js';
import { ReplayMeasurer, TunablesOnlyReplay } from '../main/engine/measure/replay.js';
import { ActionSpace, type Proposal } from '../main/engine/search/actions.js';
import { contrastiveSearch, type ContrastiveState } from '../main/engine/search/contrastive.js';
import { liveActionSpace, makeStrategy } from '../main/engine/search/strategies.js';
import { simulate } from '../main/engine/search/simulate.js';
import { FeatureEncoder, staticCodeFeatures } from '../main/engine/search/features.js';
import { mulberry32 } from '../main/engine/base/random.js';
import type { DuelResult, VariantRecord } from '../main/engine/base/types.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';
import { importSpaceBytes } from '../main/engine/interop/files.js';
import { spaceTask } from '../main/engine/measure/space-task.js';

const softmax = loadTask(join(builtinTasksDir(), 'softmax'));
const rec = syntheticSpace(softmax, { seed: 21 });

describe('features', () => {
  it('encode powers of two on a log2 scale in [0, 1], one-hot the value, and count code features', () => {
    const space = ActionSpace.fromRecording(softmax, new ReplayMeasurer(softmax, rec));
    const enc = new FeatureEncoder(space, { crosses: true });
    const a = space.encode({ config: { BLOCK: 256, TPR: 32, VEC: 2, ONLINE: 1 } })!;
    const x = enc.encode(a);
    const at = (n: string): number => x[enc.names.indexOf(n)];
    expect(at('BLOCK:scaled')).toBeCloseTo(3 / 5); // log2 256 = 8 in [5, 10]
    expect(at('TPR:scaled')).toBeCloseTo(5 / 10);
    expect(at('BLOCK=256')).toBe(1);
    expect(at('BLOCK=128')).toBe(0);
    expect(at('BLOCK*TPR')).toBeCloseTo(0.3);
    expect(staticCodeFeatures(softmax.baselineSource).launchBounds).toBe(1);
  });
});

describe('PreferenceModel', () => {
  it('recovers a hidden linear ranking from noisy decided pairs, with held-out accuracy', () => {
    const rng = mulberry32(3);
    const dim = 6;
    const wTrue = [2, -1, 0.5, 0, 3, -2];
    const m = new PreferenceModel(dim, { seed: 1 });
    for (let i = 0; i < 300; i++) {
      const a = Float64Array.from({ length: dim }, () => rng());
      const b = Float64Array.from({ length: dim }, () => rng());
      const z = wTrue.reduce((s, w, k) => s + w * (a[k] - b[k]), 0);
      const aFaster = rng() < sigmoid(4 * z);
      m.add({ faster: aFaster ? a : b, slower: aFaster ? b : a, from: 'duel' });
    }
    m.train();
    expect(m.stats().heldOutAccuracy).toBeGreaterThan(0.8);
    expect(m.stats().heldOutPairs).toBe(60);
    // The sign pattern of the learned weights matches the hidden one where it matters.
    const w = m.weights;
    expect(w[0]).toBeGreaterThan(0);
    expect(w[4]).toBeGreaterThan(w[0]);
    expect(w[5]).toBeLessThan(0);
    const hi = Float64Array.from([1, 0, 1, 0, 1, 0]);
    const lo = Float64Array.from([0, 1, 0, 0, 0, 1]);
    expect(m.prob(hi, lo)).toBeGreaterThan(0.9);
    expect(m.prob(hi, lo) + m.prob(lo, hi)).toBeCloseTo(1);
  });
});

describe('contrastive strategy', () => {
  const variant = (id: string, config: Record<string, number>): VariantRecord => ({ id, source: '', config, flags: { opt: 3 }, origin: 'policy', parents: [], createdAt: '' });
  it('trains only on decided duels: unsure and same verdicts are not comparisons', async () => {
    const m = new ReplayMeasurer(softmax, rec, { seed: 1 });
    const s = contrastiveSearch(ActionSpace.fromRecording(softmax, m), 1, { medianPairs: false });
    const ok = rec.entries.filter((e) => e.medianMs !== null).slice(0, 2);
    const [va, vb] = ok.map((e, i) => variant(`v${i + 1}`, e.config));
    for (const v of [va, vb]) s.observe!(v, await m.evaluate(v));
    const duel = (verdict: DuelResult['verdict']): DuelResult => ({ size: 0, aMs: [1], bMs: [1], ratio: 1.1, ratioLow: 0.9, ratioHigh: 1.2, verdict, timer: 'events', pairs: 1 });
    s.observeDuel!(va, vb, duel('unsure'));
    s.observeDuel!(va, vb, duel('same'));
    expect(s.model.decided).toBe(0);
    s.observeDuel!(va, vb, duel('faster'));
    s.observeDuel!(va, vb, duel('slower'));
    expect(s.model.decided).toBe(2);
  });

  it('reaches 98% of the optimum in fewer evaluations than random search (median of 5 seeds, synthetic space) and its model ranks held-out pairs well', async () => {
    const evalsTo98 = async (name: 'contrastive' | 'random'): Promise<{ e: number; acc: number[] }> => {
      const es: number[] = [];
      const acc: number[] = [];
      for (let seed = 1; seed <= 5; seed++) {
        const m = new ReplayMeasurer(softmax, rec, { seed });
        const opt = m.optimumMs();
        const r = await simulate(makeStrategy(name, ActionSpace.fromRecording(softmax, m), seed), m, 60);
        es.push(r.steps.find((x) => x.bestMs !== null && opt / x.bestMs >= 0.98)?.index ?? 61);
        if (r.model?.heldOutAccuracy != null) acc.push(r.model.heldOutAccuracy);
      }
      return { e: es.sort((a, b) => a - b)[2], acc };
    };
    const c = await evalsTo98('contrastive');
    const r = await evalsTo98('random');
    expect(c.e).toBeLessThan(r.e);
    expect(c.acc).toHaveLength(5);
    expect(c.acc.sort()[2]).toBeGreaterThan(0.8);
  });

  it('the policy concentrates: entropy falls as it learns', async () => {
    const m = new ReplayMeasurer(softmax, rec, { seed: 1 });
    const s = contrastiveSearch(ActionSpace.fromRecording(softmax, m), 1);
    const H = (): number => s.policy().reduce((acc, p) => acc - p.reduce((a, q) => a + (q > 0 ? q * Math.log(q) : 0), 0), 0);
    const h0 = H();
    await simulate(s, m, 60);
    expect(H()).toBeLessThan(h0);
  });

  describe('staged: tunables first, then flags and transforms', () => {
    const liveSpace = () => liveActionSpace(softmax);

    it('a live space holds fixed tunables at their values instead of searching them', async () => {
      const all = await liveSpace();
      const held = await liveActionSpace(softmax, { fixed: { VEC: 1 } });
      expect(all.dims.some((d) => d.name === 'VEC')).toBe(true);
      expect(held.dims.some((d) => d.name === 'VEC')).toBe(false);
      expect(held.dims.length).toBe(all.dims.length - 1);
      expect(held.decode(held.sample(mulberry32(5))!).config.VEC).toBe(1);
    });
    const plain = (p: Proposal): boolean => !p.transforms?.length && (p.flags?.opt ?? 3) === 3 && !p.flags?.maxrregcount && !p.flags?.dlcm && !p.flags?.fastMath;

    it('keeps flags and transforms at their defaults until the best stops improving, then varies them', async () => {
      const space = await liveSpace();
      expect(space.dims.some((d) => d.kind === 'transform')).toBe(true);
      const m = new TunablesOnlyReplay(softmax, rec, { seed: 3 });
      const s = contrastiveSearch(space, 3, { stageMin: 30, stageMax: 60, stagePatience: 15, stageCycle: 0 });
      const proposals: Proposal[] = [];
      const recorded = { ...s, propose: (n: number) => { const p = s.propose(n); proposals.push(...p); return p; } };
      await simulate(recorded, m, 100);
      const firstVaried = proposals.findIndex((p) => !plain(p));
      // The baseline is measured first: proposal k is the (k+2)-th measured variant.
      expect(firstVaried).toBeGreaterThanOrEqual(29);
      expect(firstVaried).toBeLessThanOrEqual(60);
      expect(proposals.slice(firstVaried).filter((p) => !plain(p)).length).toBeGreaterThan(10);
      // The origin says which stage proposed a variant (the history tree shows and filters it).
      expect(proposals.slice(0, firstVaried).every((p) => p.origin?.endsWith('(tunables)'))).toBe(true);
      expect(proposals.slice(firstVaried).every((p) => !p.origin?.includes('tunables'))).toBe(true);
      // Not staged: flags and transforms vary from the first proposal on.
      expect(s.staged).toBe(true);
      const u = contrastiveSearch(space, 3, { staged: false });
      expect(u.staged, 'results files label the policy from this').toBe(false);
      const early = u.propose(8);
      expect(early.some((p) => !plain(p))).toBe(true);
    });

    it('stages in turn (stageCycle): when flags and transforms stop gaining, the tunables are searched again around the best\'s flags and transforms, and a saved state keeps the stage', async () => {
      const space = await liveSpace();
      const m = new TunablesOnlyReplay(softmax, rec, { seed: 3 });
      const s = contrastiveSearch(space, 3, { stageMin: 30, stageMax: 60, stagePatience: 15, stageCycle: 10 });
      const proposals: Proposal[] = [];
      const recorded = { ...s, propose: (n: number) => { const p = s.propose(n); proposals.push(...p); return p; } };
      await simulate(recorded, m, 120);
      const stage2 = proposals.findIndex((p) => !p.origin?.includes('tunables'));
      expect(stage2).toBeGreaterThan(0);
      const again = proposals.findIndex((p, i) => i > stage2 && p.origin?.endsWith('(tunables)'));
      expect(again, 'stage 1 was re-entered').toBeGreaterThan(stage2);
      // The re-entered stage varies tunables only: its flags and transforms are one pinned choice.
      let end = again;
      while (end < proposals.length && proposals[end].origin?.endsWith('(tunables)')) end++;
      const block = proposals.slice(again, end);
      const rest = (p: Proposal): string => JSON.stringify([p.flags ?? {}, p.transforms ?? []]);
      expect(new Set(block.map(rest)).size).toBe(1);
      expect(new Set(block.map((p) => JSON.stringify(p.config))).size).toBe(block.length);
      // A run resumed from its saved state is in the same stage with the same pinned values.
      const st = s.saveState!() as ContrastiveState;
      expect(st.stage).toBeDefined();
      const r = contrastiveSearch(space, 3, { stageCycle: 10 });
      expect(r.restoreState!(JSON.parse(JSON.stringify(st)))).toBeNull();
      const back = r.saveState!() as ContrastiveState;
      expect(back.stage).toEqual(st.stage);
      expect(back.tunablesOnly).toBe(st.tunablesOnly);
      // The default (15) goes back too; with stageCycle 0 a run never does.
      expect(contrastiveSearch(space, 3).saveState!()).toMatchObject({ tunablesOnly: true });
      const d = contrastiveSearch(space, 3, { stageMin: 30, stageMax: 60, stagePatience: 15, stageCycle: 0 });
      const dp: Proposal[] = [];
      await simulate({ ...d, propose: (n: number) => { const p = d.propose(n); dp.push(...p); return p; } }, new TunablesOnlyReplay(softmax, rec, { seed: 3 }), 120);
      const d2 = dp.findIndex((p) => !p.origin?.includes('tunables'));
      expect(dp.slice(d2).some((p) => p.origin?.includes('tunables'))).toBe(false);
    });

    it('flags and transforms that change nothing cost the staged policy fewer evaluations to 98% than the unstaged one (COUNTERFACTUAL replay, median of 5 seeds)', async () => {
      const space = await liveSpace();
      const evalsTo98 = async (staged: boolean): Promise<number> => {
        const es: number[] = [];
        for (let seed = 1; seed <= 5; seed++) {
          const m = new TunablesOnlyReplay(softmax, rec, { seed });
          const opt = m.optimumMs();
          const r = await simulate(contrastiveSearch(space, seed, { staged }), m, 100);
          es.push(r.steps.find((x) => x.bestMs !== null && opt / x.bestMs >= 0.98)?.index ?? 101);
        }
        return es.sort((a, b) => a - b)[2];
      };
      const staged = await evalsTo98(true);
      const unstaged = await evalsTo98(false);
      expect(staged).toBeLessThan(unstaged);
    });
  });
});

describe('alignment features (option align)', () => {
  // SYNTHETIC: a Kernel Tuner cache of 6 x 3 configurations, times from a formula (measured on no GPU).
  const cache: Record<string, unknown> = {};
  for (const x of [16, 32, 48, 64, 80, 96]) for (const y of [1, 2, 4]) cache[`${x},${y}`] = { block_size_x: x, block_size_y: y, time: 1 + x / 100 + y / 10 };
  const text = JSON.stringify({ device_name: 'SYNTHETIC', kernel_name: 'k', problem_size: [1], tune_params_keys: ['block_size_x', 'block_size_y'], tune_params: { block_size_x: [16, 32, 48, 64, 80, 96], block_size_y: [1, 2, 4] }, objective: 'time', cache });
  const { space: recKt } = importSpaceBytes(Buffer.from(text), 'align.json', { format: 'kernel-tuner', command: 'test' });
  const task = spaceTask(recKt, 'align.json');
  const space = ActionSpace.fromRecording(task, new ReplayMeasurer(task, recKt));

  it('give a tunable whose values differ in alignment the power of two that divides each value, scaled over its values; not a dimension of powers of two', () => {
    const enc = new FeatureEncoder(space, { crosses: true, align: true });
    expect(enc.names).toContain('align(block_size_x)');
    expect(enc.names).not.toContain('align(block_size_y)'); // all powers of two: log2 scaling says it already
    const at = (x: number, y: number): number => enc.encode(space.encode({ config: { block_size_x: x, block_size_y: y } })!)[enc.names.indexOf('align(block_size_x)')];
    // 16 = 2^4 ... 64 = 2^6: alignments 4, 5, 4, 6, 4, 5 scaled over [4, 6].
    expect([16, 32, 48, 64, 80, 96].map((x) => at(x, 1))).toEqual([0, 0.5, 0, 1, 0, 0.5]);
    expect(new FeatureEncoder(space, { crosses: true }).names.some((n) => n.startsWith('align('))).toBe(false);
  });
});
