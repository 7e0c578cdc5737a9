// Helpers shared by the strategies that work on an ActionSpace.
import type { EvalResult } from '../base/types.js';
import { isTimedSuccess } from '../measure/verdict.js';
import { ActionSpace, type Action, type Proposal } from './actions.js';

/** log of the timed median, or null for a failure (lower is better). */
export function costOf(r: EvalResult): number | null {
  return isTimedSuccess(r) ? Math.log(r.timing[0].medianMs) : null;
}

/** Remembers what was proposed so no strategy proposes a variant twice (the baseline counts as seen). */
export class Seen {
  private readonly keys = new Set<string>();
  constructor(private readonly space: ActionSpace) {
    const b = space.baseline();
    if (b) this.keys.add(space.key(b));
  }
  has(a: Action): boolean {
    return this.keys.has(this.space.key(a));
  }
  add(a: Action): void {
    this.keys.add(this.space.key(a));
  }
  get size(): number {
    return this.keys.size;
  }
}

/** A proposal of action `a`; `parents` are the ids of the variants it was derived from (default: the baseline). */
export function proposal(space: ActionSpace, a: Action, origin: string, parents?: string[]): Proposal {
  const p = parents?.filter(Boolean);
  return { ...space.decode(a), origin, ...(p?.length ? { parents: p } : {}) };
}

/** A valid unseen action drawn uniformly (null when none is found). */
export function randomUnseen(space: ActionSpace, seen: Seen, rng: () => number, tries = 4000): Action | null {
  for (let t = 0; t < tries; t++) {
    const a = space.sample(rng, 50);
    if (a && !seen.has(a)) return a;
  }
  // Small or nearly exhausted spaces: walk them.
  const rest: Action[] = [];
  for (const a of space.enumerate()) if (!seen.has(a)) rest.push(a);
  return rest.length ? rest[Math.floor(rng() * rest.length)] : null;
}
