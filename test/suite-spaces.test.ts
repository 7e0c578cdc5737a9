// The suite spaces of issue 17: the expert configurations the GPU check and bench:vs-pytorch
// --configs use are inside the spaces, the baselines stay the naive kernels, and the spaces stay
// small enough for a budget-100 search. (Builds of the spaces: test/build.test.ts; outputs on the
// awkward sizes: scripts/cpu-emu/run.py, no GPU, and scripts/device-expert-check.sh on a GPU.)
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveTask } from '../main/engine/task/resolve.js';
import { configKey, defaultConfig, enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import type { Config } from '../main/engine/base/types.js';

const experts = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'bench', 'expert-configs.json'), 'utf8')) as { tasks: Record<string, Config[]> }).tasks;
const SUITE = ['softmax', 'layernorm', 'transpose', 'reduce_sum', 'matmul'];

describe('suite spaces (issue 17)', () => {
  it('every expert configuration names each tunable of its task once and is inside the space', () => {
    expect(Object.keys(experts).sort()).toEqual([...SUITE].sort());
    for (const name of SUITE) {
      const task = resolveTask(name);
      const tunables = Object.keys(task.manifest.tunables ?? {}).sort();
      expect(experts[name].length).toBeGreaterThan(0);
      for (const c of experts[name]) {
        expect(Object.keys(c).sort(), `${name} ${configKey(c)}`).toEqual(tunables);
        for (const [k, v] of Object.entries(c)) expect(task.manifest.tunables![k], `${name} ${k}=${v}`).toContain(v);
        expect(isValidConfig(task, c), `${name} ${configKey(c)}`).toBe(true);
      }
    }
  });

  it('the baselines keep the naive kernels: no cached rows, vectors, swizzle, last-block pass or warp tiles', () => {
    const naive: Record<string, Config> = {
      softmax: { TPR: 1, VEC: 1, CACHE: 0, ONLINE: 0 },
      layernorm: { TPR: 1, VEC: 1, CACHE: 0, STATS: 0 },
      transpose: { USE_SMEM: 0, VEC: 1, SWIZZLE: 0, PAD: 0 },
      reduce_sum: { VEC: 1, ITEMS: 1, GRID_MULT: 0, SHUFFLE: 0, FINAL: 0 },
      matmul: { TILED: 0, TM: 1, TN: 1, PIPE: 0 },
    };
    for (const name of SUITE) {
      const task = resolveTask(name);
      const d = defaultConfig(task);
      expect(d, name).toMatchObject(naive[name]);
      expect(isValidConfig(task, d), name).toBe(true);
    }
  });

  it('each space holds at most 1,100 configurations (a budget-100 search sees about a tenth or more)', () => {
    for (const name of SUITE) expect(enumerateSpace(resolveTask(name)).length, name).toBeLessThanOrEqual(1100);
  });

  it('cached rows are offered wherever the timed row fits, one step from the streaming configurations', () => {
    // softmax and layernorm: CACHE=1 holds the row in at most 64 floats per thread (the kernel picks
    // the fewest registers at launch), so it is offered wherever the timed row fits in 64 * TPR
    // floats, for every value of the other tunables: one step from any streaming configuration with
    // TPR >= 128. (softmax's CACHE counted vectors per thread until 2026-12-04: 19 configurations,
    // none one step from a streaming one, and a seed-2 search on the H200 never tried one.)
    for (const [name, other] of [['softmax', 'ONLINE'], ['layernorm', 'STATS']] as const) {
      const task = resolveTask(name);
      const cols = task.manifest.sizes[task.timed[0]].cols;
      const space = enumerateSpace(task);
      const cached = space.filter((c) => Number(c.CACHE) === 1);
      expect(cached.length, name).toBeGreaterThan(0);
      expect(space.every((c) => Number(c.CACHE) === 0 || Number(c.CACHE) === 1), name).toBe(true);
      for (const c of cached) expect(64 * Number(c.TPR), `${name} ${configKey(c)}`).toBeGreaterThanOrEqual(cols);
      for (const c of space.filter((c) => Number(c.CACHE) === 0 && 64 * Number(c.TPR) >= cols)) {
        expect(isValidConfig(task, { ...c, CACHE: 1 }), `${name} ${configKey(c)}`).toBe(true);
      }
      expect(new Set(cached.map((c) => `${c.VEC},${c[other]}`)).size, name).toBe(6);
    }
  });
});
