// Exhaustive search: every valid variant of the action space, in a fixed (lexicographic) order.
import type { Strategy } from './loop.js';
import type { ActionSpace } from './actions.js';
import { Seen, proposal } from './common.js';

export function exhaustiveSearch(space: ActionSpace): Strategy {
  const it = space.enumerate();
  const seen = new Seen(space);
  return {
    name: 'exhaustive',
    propose(n) {
      const out = [];
      while (out.length < n) {
        const r = it.next();
        if (r.done) break;
        if (seen.has(r.value)) continue;
        seen.add(r.value);
        out.push(proposal(space, r.value, 'exhaustive'));
      }
      return out;
    },
  };
}
