// Sweeps: check and time many variants of one task, for recording whole search spaces. Builds run in
// parallel (one per core); every built variant then goes through the evaluator's pipeline (capture,
// then the judge, which stays up between variants and keeps the reference outputs on the GPU).
// Each outcome is handed to onResult as soon as it exists, so a caller that appends them to a file
// loses nothing on a crash or a kill; a variant that crashes or hangs is recorded with its failure
// and the sweep goes on (the judge starts a new executor, or a new judge, for the next one).
import type { BuildResult, EvalResult, VariantSpec } from '../base/types.js';
import type { Evaluator } from './evaluate.js';
import type { TimingSettings } from './harness.js';

/** Shorter sampling for recordings: 1% noise target, at most 0.4 s per variant (give it to the Evaluator). */
export const SWEEP_TIMING: Partial<TimingSettings> = { warmupMs: 20, minSamples: 10, maxSamples: 1000, targetRelNoise: 0.01, minMs: 20, maxMs: 400 };

export interface SweepOptions {
  signal?: AbortSignal;
  onResult?: (id: string, result: EvalResult, done: number, total: number) => void;
}

export async function sweep(ev: Evaluator, items: Array<{ id: string; spec: Pick<VariantSpec, 'source' | 'config' | 'flags'> }>, o: SweepOptions = {}): Promise<Map<string, EvalResult>> {
  if (!ev.gpu) throw new Error('a sweep needs a GPU');
  const results = new Map<string, EvalResult>();
  const source = { kind: 'gpu' as const, gpu: ev.gpu.name, uuid: ev.gpu.uuid };
  const total = items.length;
  const done = (id: string, r: EvalResult): void => {
    results.set(id, r);
    o.onResult?.(id, r, results.size, total);
  };
  const builds = new Map<string, BuildResult>();
  await Promise.all(
    items.map(async ({ id, spec }) => {
      const b = await ev.build(spec, o.signal);
      builds.set(id, b);
      if (!b.ok || !b.libPath) done(id, { build: b, failure: b.failure, source });
    }),
  );
  for (const { id, spec } of items) {
    if (results.has(id)) continue;
    if (o.signal?.aborted) break;
    done(id, await ev.evaluate(spec, { signal: o.signal }));
  }
  return results;
}
