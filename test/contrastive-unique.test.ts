// The contrastive strategy never proposes a variant twice: every source of a round's picks (the
// model, boundary moves, sweeps, far picks, the trust region, the arms) shares one record of what
// was proposed, so a pick another source already took is not the model's to take again. Before
// that rule a boundary move that was also the model's best candidate was proposed twice (~1% of a
// run's steps on the recorded spaces: a wasted evaluation, and a live run measured it again).
// Checked on a SYNTHETIC recorded space through the benchmark's simulation.
import { describe, expect, it } from 'vitest';
import { traceContrastive as run } from './fixtures/contrastive-trace.js';
import type { ContrastiveOptions } from '../main/engine/search/contrastive.js';

const cases: Array<[string, ContrastiveOptions]> = [
  ['the default options', {}],
  ['boundary moves after every round', { boundary: 2, boundaryStall: 0 }],
  ['boundary moves and the trust region', { boundary: 1, boundaryStall: 0, trust: 2 }],
  ['sweeps and far picks', { sweep: 1, sweepStall: 0, far: 1, boundaryStall: 0 }],
];

describe('contrastive: no variant proposed twice', () => {
  it.each(cases)('%s', async (_, opts) => {
    for (const seed of [1, 2]) {
      const { steps, space } = await run(120, seed, opts);
      const keys = steps.map((s) => space.key(s.a));
      const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
      expect(twice, `seed ${seed}: proposed again: ${twice.join(' | ')}`).toEqual([]);
      expect(keys).not.toContain(space.key(space.baseline()!));
    }
  }, 60_000);
});
