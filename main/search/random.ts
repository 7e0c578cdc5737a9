// Random search over the task's tunables: the baseline strategy kernel engineers use today.
import type { Strategy } from './loop.js';
import type { Task } from '../task/manifest.js';
import { configKey, defaultConfig, enumerateSpace } from '../task/space.js';
import { mulberry32, shuffle } from '../common/random.js';

export function randomSearch(task: Task, seed: number): Strategy {
  const rng = mulberry32(seed);
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
