// The one evaluator factory behind every front door: finds nvcc and makes the Evaluator of a task
// on a GPU (or none: compile-only), with the work folder of the environment it serves.
import { findToolchain } from '../engine/platform/toolchain/nvcc.js';
import type { GpuInfo } from '../engine/base/types.js';
import { workRoot } from '../engine/base/paths.js';
import type { Task } from '../engine/task/manifest.js';
import { Evaluator } from '../engine/measure/evaluate.js';
import { CoreError } from './errors.js';

export interface EvaluatorChoice {
  gpu: GpuInfo | null;
  /** nvcc -arch (default: the GPU's, sm_90 when compile-only). */
  arch?: string;
  /** Time cap per size for sampling, ms. */
  maxMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Throws a CoreError (failed) naming what is missing when nvcc cannot be found or run. */
export async function makeEvaluator(task: Task, c: EvaluatorChoice): Promise<Evaluator> {
  const env = c.env ?? process.env;
  const tc = await findToolchain(env);
  if (!tc.nvcc) throw new CoreError('failed', tc.problems.join(' ') || 'nvcc not found: install the CUDA toolkit to build variants');
  return new Evaluator({ task, toolchain: tc, gpu: c.gpu, arch: c.arch, timing: c.maxMs ? { maxMs: c.maxMs } : undefined, workRoot: workRoot(env) });
}
