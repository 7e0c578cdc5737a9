// Genetic algorithm over the action space: the first generation is random; afterwards each child
// comes from two parents chosen by tournament among the best measured variants (uniform
// crossover per dimension), mutated per dimension with probability 1/#dims (a neighbouring value,
// sometimes any value). Invalid or already-measured children are redrawn; failures never breed.
import type { Strategy } from './loop.js';
import type { Action, ActionSpace } from './actions.js';
import { mulberry32 } from '../base/random.js';
import { Seen, costOf, proposal, randomUnseen } from './common.js';

export interface GeneticOptions {
  population?: number;
  tournament?: number;
  /** Per-dimension mutation probability (default 1/#dims, at least 0.1). */
  mutation?: number;
}

export function geneticAlgorithm(space: ActionSpace, seed: number, o: GeneticOptions = {}): Strategy {
  const rng = mulberry32(seed);
  const seen = new Seen(space);
  const pop = o.population ?? 16;
  const k = o.tournament ?? 3;
  const pm = o.mutation ?? Math.max(0.1, 1 / Math.max(1, space.dims.length));
  const measured: Array<{ a: Action; cost: number }> = [];
  let proposed = 0;

  const pick = (elite: Array<{ a: Action; cost: number }>): Action => {
    let best = elite[Math.floor(rng() * elite.length)];
    for (let i = 1; i < k; i++) {
      const c = elite[Math.floor(rng() * elite.length)];
      if (c.cost < best.cost) best = c;
    }
    return best.a;
  };

  const child = (): Action | null => {
    const elite = [...measured].sort((x, y) => x.cost - y.cost).slice(0, pop);
    if (proposed < pop || elite.length < 2) return randomUnseen(space, seen, rng);
    for (let t = 0; t < 100; t++) {
      const p1 = pick(elite);
      const p2 = pick(elite);
      const c = p1.map((v, i) => (rng() < 0.5 ? v : p2[i]));
      space.dims.forEach((d, i) => {
        if (rng() >= pm || d.values.length < 2) return;
        c[i] = rng() < 0.7 ? Math.min(d.values.length - 1, Math.max(0, c[i] + (rng() < 0.5 ? -1 : 1))) : Math.floor(rng() * d.values.length);
      });
      if (space.isValid(c) && !seen.has(c)) return c;
    }
    return randomUnseen(space, seen, rng);
  };

  return {
    name: 'genetic',
    propose(n) {
      const out = [];
      for (let i = 0; i < n; i++) {
        const a = child();
        if (!a) break;
        seen.add(a);
        proposed++;
        out.push(proposal(space, a, 'genetic'));
      }
      return out;
    },
    observe(spec, result) {
      const a = space.encode(spec);
      const c = costOf(result);
      if (a && c !== null) measured.push({ a, cost: c });
    },
  };
}
