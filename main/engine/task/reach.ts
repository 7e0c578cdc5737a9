// Which configurations of a task's space one-tunable steps reach from its baseline.
//
// A local move of the optimiser (the staged walk, annealing's neighbours, boundary moves, a
// trust region of small side) changes one tunable to the next or previous of its listed values.
// Restrictions that couple tunables can cut the space into islands no such step enters: softmax's
// cached rows, while CACHE counted vectors per thread (valid only where CACHE * TPR * VEC held the
// timed row exactly, and with ONLINE 0), were 19 configurations in 9 islands, and a seed-2 search
// on the H200 never tried one (bench/results/h200-vs-pytorch-seed2-9f0cc96.md). Only random and
// model-ranked picks land in an island; a task author can usually reparametrise instead (softmax's
// CACHE became 0/1 with the register count picked at launch).
import type { Config } from '../base/types.js';
import type { Task } from './manifest.js';
import { configKey, defaultConfig, enumerateSpace } from './space.js';

export interface SpaceIsland {
  /** Configurations in it. */
  size: number;
  /** Per tunable, the values its configurations take (ascending). */
  values: Record<string, number[]>;
}

export interface SpaceReach {
  /** Valid configurations. */
  configs: number;
  /** Connected components of the one-step graph. */
  components: number;
  /** Configurations in the baseline's component (the largest one when the baseline is not valid). */
  reached: number;
  /** The other components, largest first. */
  islands: SpaceIsland[];
}

/** The space's components under one-tunable steps (a tunable to its neighbouring listed value), from the baseline's. */
export function spaceReach(task: Task, configs: Config[] = enumerateSpace(task)): SpaceReach {
  const tunables = task.manifest.tunables ?? {};
  const names = Object.keys(tunables);
  const index = new Map(configs.map((c, i) => [configKey(c), i]));
  const parent = configs.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) [i, parent[i]] = [parent[i], parent[parent[i]]];
    return i;
  };
  configs.forEach((c, i) => {
    for (const n of names) {
      // One direction suffices: the step back is the other configuration's step forward.
      const next = tunables[n][tunables[n].indexOf(c[n]) + 1];
      if (next === undefined) continue;
      const j = index.get(configKey({ ...c, [n]: next }));
      if (j !== undefined) parent[find(i)] = find(j);
    }
  });
  const groups = new Map<number, number[]>();
  configs.forEach((_, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(i);
    else groups.set(r, [i]);
  });
  const dc = defaultConfig(task);
  const base: Config = {};
  for (const n of names) base[n] = dc[n] ?? tunables[n][0];
  const bi = index.get(configKey(base));
  const sorted = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
  const home = bi !== undefined ? find(bi) : sorted[0]?.[0];
  const islands = sorted.filter(([r]) => r !== home).map(([, members]) => ({
    size: members.length,
    values: Object.fromEntries(names.map((n) => [n, [...new Set(members.map((i) => configs[i][n]))].sort((a, b) => a - b)])),
  }));
  return { configs: configs.length, components: groups.size, reached: home === undefined ? 0 : groups.get(home)!.length, islands };
}

/**
 * One line on the islands (null when every configuration is reached): how many configurations lie
 * outside the baseline's component, and for each tunable of which the islands take fewer than all
 * values, the values they take.
 */
export function describeReach(task: Task, r: SpaceReach): string | null {
  if (!r.islands.length) return null;
  const outside = r.configs - r.reached;
  const tunables = task.manifest.tunables ?? {};
  const islandValues = (n: string): number[] => [...new Set(r.islands.flatMap((i) => i.values[n]))].sort((a, b) => a - b);
  const only = Object.keys(tunables).flatMap((n) => {
    const vals = islandValues(n);
    return vals.length < tunables[n].length ? [`${n}=${vals.join('/')}`] : [];
  });
  const what = only.length ? ` (${only.join(' ')})` : '';
  return `${outside} of ${r.configs} configurations${what} lie in ${r.islands.length} island${r.islands.length === 1 ? '' : 's'} that no step of one tunable to a neighbouring value reaches from the baseline's configurations: one-step moves (the staged walk, annealing's neighbours) never enter them, only picks that change several tunables at once`;
}
