// Simulated annealing over the action space: a walk that moves to a neighbour (one dimension one
// step, sometimes a random value) and accepts a slower one with probability exp(-Δ/T), Δ in
// log-time, T cooling geometrically. Failures are never accepted. When every neighbour has been
// measured it jumps to a random unseen variant.
import type { Strategy } from './loop.js';
import type { Action, ActionSpace } from './actions.js';
import { mulberry32 } from '../base/random.js';
import { Seen, costOf, proposal, randomUnseen } from './common.js';

export interface AnnealOptions {
  /** Initial temperature in log-time units (0.1: a 10% slower move is accepted ~37% of the time). */
  t0?: number;
  /** Multiplied into T after every observation. */
  cooling?: number;
  tMin?: number;
  /** Probability of a random value instead of a neighbouring one in the chosen dimension. */
  jump?: number;
}

export function simulatedAnnealing(space: ActionSpace, seed: number, o: AnnealOptions = {}): Strategy {
  const rng = mulberry32(seed);
  const seen = new Seen(space);
  let T = o.t0 ?? 0.1;
  const cooling = o.cooling ?? 0.97;
  const tMin = o.tMin ?? 0.002;
  const jump = o.jump ?? 0.2;
  let cur: Action | null = space.baseline();
  let curCost: number | null = null;
  let curId: string | undefined; // the variant the walk is at: the parent of its next steps

  const step = (a: Action): Action | null => {
    const free = space.dims.map((d, i) => (d.values.length > 1 ? i : -1)).filter((i) => i >= 0);
    for (let t = 0; t < 60; t++) {
      const b = [...a];
      const i = free[Math.floor(rng() * free.length)];
      const nv = space.dims[i].values.length;
      if (rng() < jump) b[i] = Math.floor(rng() * nv);
      else b[i] = Math.min(nv - 1, Math.max(0, b[i] + (rng() < 0.5 ? -1 : 1)));
      if (space.isValid(b) && !seen.has(b)) return b;
    }
    const nb = space.neighbours(a).filter((x) => !seen.has(x));
    return nb.length ? nb[Math.floor(rng() * nb.length)] : null;
  };

  return {
    name: 'anneal',
    propose(n) {
      const out = [];
      for (let k = 0; k < n; k++) {
        const a = (cur && step(cur)) ?? randomUnseen(space, seen, rng);
        if (!a) break;
        seen.add(a);
        out.push(proposal(space, a, 'anneal', curId ? [curId] : undefined));
      }
      return out;
    },
    observe(spec, result) {
      const a = space.encode(spec);
      if (!a) return;
      const c = costOf(result);
      if (spec.origin === 'baseline') {
        if (c !== null) [cur, curCost, curId] = [a, c, spec.id];
        return;
      }
      if (c !== null && (curCost === null || c <= curCost || rng() < Math.exp(-(c - curCost) / T))) [cur, curCost, curId] = [a, c, spec.id];
      T = Math.max(tMin, T * cooling);
    },
  };
}
