// Random search over the task's tunables: the baseline strategy kernel engineers use today.
// With an ActionSpace it samples that space instead (flags and transforms too, or a recording's
// variants), uniformly and without repeats.
import type { Strategy } from './loop.js';
import type { Task } from '../task/manifest.js';
import { configKey, defaultConfig, enumerateSpace } from '../task/space.js';
import { mulberry32, shuffle } from '../base/random.js';
import type { ActionSpace } from './actions.js';
import { Seen, proposal, randomUnseen } from './common.js';

export function randomSearch(task: Task, seed: number, space?: ActionSpace): Strategy {
  const rng = mulberry32(seed);
  if (space) {
    const seen = new Seen(space);
    return {
      name: 'random',
      propose(n) {
        const out = [];
        for (let i = 0; i < n; i++) {
          const a = randomUnseen(space, seen, rng);
          if (!a) break;
          seen.add(a);
          out.push(proposal(space, a, 'random'));
        }
        return out;
      },
    };
  }
  const base = configKey(defaultConfig(task));
  const order = shuffle(enumerateSpace(task).filter((c) => configKey(c) !== base), rng);
  let i = 0;
  return {
    name: 'random',
    propose(n) {
      const out = order.slice(i, i + n).map((config) => ({ source: task.baselineSource, config, flags: { opt: 3 as const }, origin: 'random' }));
      i += out.length;
      return out;
    },
  };
}
