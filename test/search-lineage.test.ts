// Lineage: every strategy records the variant(s) each proposal was derived from (issue 16), so the
// workbench can draw a real tree: contrastive the elite it mutated or the best at proposal time,
// annealing the walk's current state, genetic both parents; random and exhaustive derive from the
// baseline. Checked on a recorded space through the same simulation the strategy benchmark uses.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { ReplayMeasurer } from '../main/engine/measure/replay.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { makeStrategy, type StrategyName } from '../main/engine/search/strategies.js';
import { simulate } from '../main/engine/search/simulate.js';
import type { Strategy } from '../main/engine/search/loop.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';

const transpose = loadTask(join(builtinTasksDir(), 'transpose'));
const rec = syntheticSpace(transpose, { seed: 5 });

/** Runs a strategy for `budget` proposals and returns each proposal's parents by its simulated id (v1, v2, ...). */
async function parentsOf(name: StrategyName, budget: number): Promise<Map<string, string[]>> {
  const m = new ReplayMeasurer(transpose, rec, { seed: 3 });
  const inner = makeStrategy(name, ActionSpace.fromRecording(transpose, m), 3);
  const out = new Map<string, string[]>();
  let n = 0;
  const wrapped: Strategy = Object.assign(Object.create(inner) as Strategy, {
    propose: (k: number) => {
      const ps = inner.propose(k);
      for (const p of ps) out.set(`v${++n}`, p.parents ?? ['v0']);
      return ps;
    },
  });
  await simulate(wrapped, m, budget);
  return out;
}

function depthOf(id: string, parents: Map<string, string[]>): number {
  let d = 0;
  for (let cur = id; cur !== 'v0' && d < 1000; d++) cur = parents.get(cur)?.[0] ?? 'v0';
  return d;
}

describe('lineage recorded by the strategies', () => {
  it('contrastive: proposals derive from measured variants (elites or the best), so the tree is deeper than one level', async () => {
    const p = await parentsOf('contrastive', 80);
    const ids = [...p.keys()];
    for (const [id, ps] of p) for (const q of ps) expect(q === 'v0' || Number(q.slice(1)) < Number(id.slice(1))).toBe(true);
    expect(Math.max(...ids.map((id) => depthOf(id, p)))).toBeGreaterThan(1);
  });
  it('annealing: each step derives from the walk\'s current variant', async () => {
    const p = await parentsOf('anneal', 40);
    expect([...p.values()].filter((ps) => ps[0] !== 'v0').length).toBeGreaterThan(20);
  });
  it('genetic: a child after the first generation names both its parents', async () => {
    const p = await parentsOf('genetic', 60);
    const bred = [...p.entries()].filter(([id]) => Number(id.slice(1)) > 16).map(([, ps]) => ps);
    expect(bred.some((ps) => ps.length === 2 && ps.every((x) => x !== 'v0'))).toBe(true);
  });
  it('random search derives every variant from the baseline', async () => {
    const p = await parentsOf('random', 20);
    expect([...p.values()].every((ps) => ps.length === 1 && ps[0] === 'v0')).toBe(true);
  });
});
