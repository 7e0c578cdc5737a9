// The one evaluator factory behind every front door: finds nvcc and makes the Evaluator of a task
// on a GPU (or none: compile-only), with the work folder of the environment it serves. A
// PyTorch-reference task's evaluator also gets the way to compute its reference data (PyTorch on
// the evaluator's GPU, before any variant runs: docs/PYTHON-CANDIDATES.md).
import { findToolchain } from '../engine/platform/toolchain/nvcc.js';
import { findPython } from '../engine/platform/toolchain/python.js';
import { cudaDeviceSelector } from '../engine/platform/gpu/detect.js';
import type { GpuInfo } from '../engine/base/types.js';
import { workRoot } from '../engine/base/paths.js';
import type { Task } from '../engine/task/manifest.js';
import { Evaluator, type CaptureShare, type ReferenceDataHandle, type ReferenceDataRequest } from '../engine/measure/evaluate.js';
import { DEFAULT_TIMING, PRECISE_TIMING } from '../engine/measure/harness.js';
import { computeReferenceData } from '../engine/pytorch/reference-data.js';
import { CoreError } from './errors.js';

/** Sets of buffers timed calls rotate over unless a front door asks for another number. */
export const DEFAULT_BUFFER_SETS = DEFAULT_TIMING.bufferSets;
/** A duel's noise target unless `--duel-noise` asks for another: the timing's own. */
export const DEFAULT_DUEL_NOISE = DEFAULT_TIMING.duelTargetRelNoise ?? DEFAULT_TIMING.targetRelNoise;
/** `optimize --time-cutoff`'s default (engine/search/loop.ts). */
export { DEFAULT_TIME_CUTOFF } from '../engine/search/loop.js';

export interface EvaluatorChoice {
  gpu: GpuInfo | null;
  /** nvcc -arch (default: the GPU's, sm_90 when compile-only). */
  arch?: string;
  /** Time cap per size for sampling, ms. */
  maxMs?: number;
  /** Sets of buffers the timed calls rotate over (default DEFAULT_TIMING's). */
  bufferSets?: number;
  /** A duel's own noise target (TimingSettings.duelTargetRelNoise; default: the timing's). */
  duelNoise?: number;
  /** The precise timing (PRECISE_TIMING: ~2.5 s over 4 executors) instead of the search's; maxMs and bufferSets do not combine with it. */
  precise?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Captures shared with the other evaluators of one pool run (one per GPU; see CaptureShare). */
  captureShare?: CaptureShare;
}

/** Timing samples a PyTorch task's timed calls rotate over (KERNELDUEL_REFERENCE_TIMING_SAMPLES, default 8). */
export function referenceTimingSamples(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.KERNELDUEL_REFERENCE_TIMING_SAMPLES ?? 8);
  return Number.isInteger(n) && n >= 1 && n <= 256 ? n : 8;
}

/**
 * The reference data of a PyTorch task on one GPU: Python with CUDA-enabled torch is required (the
 * error says what is missing and what still works); the data is written under
 * KERNELDUEL_REFERENCE_DIR when set, else /dev/shm where it fits, else the temporary folder.
 */
export function pytorchReferenceData(task: Task, env: NodeJS.ProcessEnv = process.env): (r: ReferenceDataRequest) => Promise<ReferenceDataHandle> {
  return async (r) => {
    const py = await findPython(env);
    if (!py.python || !py.torch) throw new Error(`task ${task.manifest.name} has a PyTorch reference: checking its CUDA variants needs Python with torch (${py.problems.join(' ') || 'not found'})`);
    if (!py.can.gpuReference) throw new Error(`task ${task.manifest.name} has a PyTorch reference: checking its CUDA variants needs torch with CUDA on this GPU, and ${py.python} has torch ${py.torch} without it (${py.problems.join(' ')}); Python candidates can still be checked on the CPU (kernelduel eval ${task.manifest.name} candidate.py --device cpu)`);
    return computeReferenceData({
      task, python: py.python, device: 'cuda', env: { ...env, CUDA_VISIBLE_DEVICES: cudaDeviceSelector(r.gpu) },
      checks: r.checks, checksBySize: r.checksBySize, timing: referenceTimingSamples(env), root: env.KERNELDUEL_REFERENCE_DIR || undefined,
    });
  };
}

/** Throws a CoreError (failed) naming what is missing when nvcc cannot be found or run. */
export async function makeEvaluator(task: Task, c: EvaluatorChoice): Promise<Evaluator> {
  const env = c.env ?? process.env;
  const tc = await findToolchain(env);
  if (c.precise && (c.maxMs || c.bufferSets)) throw new CoreError('failed', 'the precise timing sets its own time and placements: leave out maxMs and bufferSets with it');
  if (!tc.nvcc) throw new CoreError('failed', tc.problems.join(' ') || 'nvcc not found: install the CUDA toolkit to build variants');
  const timing = c.precise ? { ...PRECISE_TIMING } : { ...(c.maxMs ? { maxMs: c.maxMs } : {}), ...(c.bufferSets ? { bufferSets: c.bufferSets } : {}) };
  return new Evaluator({
    task, toolchain: tc, gpu: c.gpu, arch: c.arch, timing: { ...timing, ...(c.duelNoise ? { duelTargetRelNoise: c.duelNoise } : {}) }, workRoot: workRoot(env),
    ...(task.pytorch ? { referenceData: pytorchReferenceData(task, env) } : {}),
    ...(c.captureShare ? { captureShare: c.captureShare } : {}),
  });
}
