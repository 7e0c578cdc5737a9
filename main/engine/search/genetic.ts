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
  const measured: Array<{ a: Action; cost: number; id?: string }> = [];
  let proposed = 0;

  const pick = (elite: Array<{ a: Action; cost: number; id?: string }>): { a: Action; id?: string } => {
    let best = elite[Math.floor(rng() * elite.length)];
    for (let i = 1; i < k; i++) {
      const c = elite[Math.floor(rng() * elite.length)];
      if (c.cost < best.cost) best = c;
    }
    return best;
  };

  /** A child and the ids of its parents (none for a random one). */
  const child = (): { a: Action; parents?: string[] } | null => {
    const elite = [...measured].sort((x, y) => x.cost - y.cost).slice(0, pop);
    const random = (): { a: Action } | null => {
      const a = randomUnseen(space, seen, rng);
      return a ? { a } : null;
    };
    if (proposed < pop || elite.length < 2) return random();
    for (let t = 0; t < 100; t++) {
      const m1 = pick(elite);
      const m2 = pick(elite);
      const [p1, p2] = [m1.a, m2.a];
      const c = p1.map((v, i) => (rng() < 0.5 ? v : p2[i]));
      space.dims.forEach((d, i) => {
        if (rng() >= pm || d.values.length < 2) return;
        c[i] = rng() < 0.7 ? Math.min(d.values.length - 1, Math.max(0, c[i] + (rng() < 0.5 ? -1 : 1))) : Math.floor(rng() * d.values.length);
      });
      if (space.isValid(c) && !seen.has(c)) return { a: c, parents: [...new Set([m1.id, m2.id].filter((x): x is string => !!x))] };
    }
    return random();
  };

  return {
    name: 'genetic',
    propose(n) {
      const out = [];
      for (let i = 0; i < n; i++) {
        const c = child();
        if (!c) break;
        seen.add(c.a);
        proposed++;
        out.push(proposal(space, c.a, 'genetic', c.parents));
      }
      return out;
    },
    observe(spec, result) {
      const a = space.encode(spec);
      const c = costOf(result);
      if (a && c !== null) measured.push({ a, cost: c, id: spec.id });
    },
  };
}
