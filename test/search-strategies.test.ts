// Baseline strategies (random, annealing, genetic, exhaustive) and the action space: seeded and
// deterministic, only valid variants (restrictions and, on a replay, the recording), never the
// same variant twice; exhaustive covers the whole space.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import { ReplayMeasurer } from '../main/engine/measure/replay.js';
import { ActionSpace, defaultFlagChoices } from '../main/engine/search/actions.js';
import { makeStrategy, type StrategyName } from '../main/engine/search/strategies.js';
import { simulate } from '../main/engine/search/simulate.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';

const transpose = loadTask(join(builtinTasksDir(), 'transpose'));
const rec = syntheticSpace(transpose, { seed: 11, flags: [{ flags: { opt: 3 }, factor: 1 }, { flags: { opt: 3, dlcm: 'cg' }, factor: 0.97 }] });

async function run(name: StrategyName, seed: number, budget = 60) {
  const m = new ReplayMeasurer(transpose, rec, { seed });
  const space = ActionSpace.fromRecording(transpose, m);
  const strat = makeStrategy(name, space, seed);
  const r = await simulate(strat, m, budget);
  return { r, m };
}

describe('action space', () => {
  it('a recording decides the dimensions: tunables plus only the flags it varies', () => {
    const space = ActionSpace.fromRecording(transpose, new ReplayMeasurer(transpose, rec));
    expect(space.dims.map((d) => d.name)).toEqual([...Object.keys(transpose.manifest.tunables!), 'dlcm']);
    expect(space.dims.find((d) => d.name === 'dlcm')!.values).toEqual([null, 'cg']);
  });
  it('fast math is offered only where the manifest allows it', () => {
    expect(defaultFlagChoices(transpose).fastMath).toBe(false);
    const names = new ActionSpace(transpose, { flags: defaultFlagChoices(transpose) }).dims.map((d) => d.name);
    expect(names).not.toContain('fastMath');
    expect(names).toEqual(expect.arrayContaining(['opt', 'dlcm']));
    const fm = { ...transpose, manifest: { ...transpose.manifest, fast_math: true } };
    expect(new ActionSpace(fm, { flags: defaultFlagChoices(fm) }).dims.map((d) => d.name)).toContain('fastMath');
  });
  it('-maxrregcount is a dimension only where a kernel of the baseline lacks __launch_bounds__ (nvcc ignores it for one with bounds)', () => {
    // Every built-in kernel has bounds: the flag would rebuild the same kernel.
    for (const name of ['axpy', 'histogram', 'layernorm', 'matmul', 'reduce_sum', 'softmax', 'stencil2d', 'transpose']) {
      const t = loadTask(join(builtinTasksDir(), name));
      expect(defaultFlagChoices(t).maxrregcount, name).toEqual([]);
      expect(new ActionSpace(t, { flags: defaultFlagChoices(t) }).dims.map((d) => d.name), name).not.toContain('maxrregcount');
    }
    // One kernel of transpose without its bounds: the flag is searched again.
    const unbounded = transpose.baselineSource.replace(/__launch_bounds__\(TR_THREADS\)/, '');
    expect(unbounded).not.toBe(transpose.baselineSource);
    const t = { ...transpose, baselineSource: unbounded };
    expect(defaultFlagChoices(t).maxrregcount).toEqual([32, 64, 128]);
    expect(new ActionSpace(t, { flags: defaultFlagChoices(t) }).dims.find((d) => d.name === 'maxrregcount')!.values).toEqual([null, 32, 64, 128]);
  });
  it('decode/encode round-trip and restrictions are enforced', () => {
    const space = new ActionSpace(transpose, { flags: defaultFlagChoices(transpose) });
    const rng = (() => { let s = 1; return () => ((s = (s * 16807) % 2147483647) / 2147483647); })();
    for (let i = 0; i < 50; i++) {
      const a = space.sample(rng)!;
      const p = space.decode(a);
      expect(isValidConfig(transpose, p.config)).toBe(true);
      expect(space.encode(p)).toEqual(a);
    }
    const bad = space.encode({ config: { USE_SMEM: 0, TILE_X: 16, TILE_Y: 128, BLOCK_ROWS: 1, PAD: 0 } })!;
    expect(space.isValid(bad)).toBe(false);
  });
});

describe.each(['random', 'anneal', 'genetic', 'exhaustive'] as const)('%s', (name) => {
  it('is deterministic for a seed', async () => {
    const a = await run(name, 4, 40);
    const b = await run(name, 4, 40);
    expect(a.r.steps.map((s) => s.medianMs)).toEqual(b.r.steps.map((s) => s.medianMs));
  });
  it('proposes only recorded, valid variants and never one twice', async () => {
    const { r, m } = await run(name, 2, 80);
    expect(r.steps).toHaveLength(80);
    expect(r.steps.filter((s) => s.failure === 'constraints')).toHaveLength(0);
    expect(m.evaluations).toBe(81);
  });
});

describe('exhaustive', () => {
  it('measures every recorded variant once, then stops', async () => {
    const n = rec.entries.length - 1; // minus the baseline
    const { r } = await run('exhaustive', 1, n + 10);
    expect(r.steps).toHaveLength(n);
    expect(new Set(r.steps.map((s) => s.medianMs)).size).toBeGreaterThan(n * 0.9);
    expect(enumerateSpace(transpose).length * 2).toBe(rec.entries.length);
  });
});

describe('search beats chance', () => {
  it('annealing and the genetic algorithm find better variants than random at 40 evaluations (median of 5 seeds, synthetic space)', async () => {
    const bestAt = async (name: StrategyName): Promise<number> => {
      const xs: number[] = [];
      for (let s = 1; s <= 5; s++) xs.push((await run(name, s, 40)).r.steps[39].bestMs!);
      return xs.sort((a, b) => a - b)[2];
    };
    const rnd = await bestAt('random');
    expect(await bestAt('anneal')).toBeLessThanOrEqual(rnd);
    expect(await bestAt('genetic')).toBeLessThanOrEqual(rnd);
  });
});
