// Shared set-up of the GPU suite: a real GPU, the real toolchain, a fresh work folder.
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectGpus } from '../../main/engine/platform/gpu/detect.js';
import type { GpuInfo } from '../../main/engine/base/types.js';
import { findToolchain } from '../../main/engine/platform/toolchain/nvcc.js';
import { Evaluator, type EvaluatorOptions } from '../../main/engine/measure/evaluate.js';
import type { Task } from '../../main/engine/task/manifest.js';

/** Fixture folder: next to this file in a checkout; `$KERNELDUEL_TEST_DATA/gpu/fixtures` in the GPU bundle. */
export function fixture(name: string): string {
  const candidates = [
    process.env.KERNELDUEL_TEST_DATA ? join(process.env.KERNELDUEL_TEST_DATA, 'gpu', 'fixtures', name) : '',
    process.env.KERNELDUEL_TEST_DATA ? join(process.env.KERNELDUEL_TEST_DATA, 'fixtures', name) : '',
    join(dirname(fileURLToPath(import.meta.url)), 'fixtures', name),
  ].filter(Boolean);
  const p = candidates.find((c) => existsSync(c));
  if (!p) throw new Error(`GPU test fixture ${name} not found (looked in ${candidates.join(', ')})`);
  return readFileSync(p, 'utf8');
}

/** A variant of the benchmarks (bench/variants; `$KERNELDUEL_BENCH_DATA/variants` in the GPU bundle). */
export function benchVariant(name: string): string {
  const candidates = [
    process.env.KERNELDUEL_BENCH_DATA ? join(process.env.KERNELDUEL_BENCH_DATA, 'variants', name) : '',
    join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'variants', name),
  ].filter(Boolean);
  const p = candidates.find((c) => existsSync(c));
  if (!p) throw new Error(`benchmark variant ${name} not found (looked in ${candidates.join(', ')})`);
  return readFileSync(p, 'utf8');
}

export async function gpuOrThrow(): Promise<GpuInfo> {
  const det = await detectGpus();
  const g = det.gpus.find((x) => x.arch);
  if (!g) throw new Error(`the GPU suite needs an NVIDIA GPU: ${det.problems.join(' ')}`);
  return g;
}

export const workRoot = mkdtempSync(join(tmpdir(), 'kd-gpu-'));

export async function evaluatorFor(task: Task, extra: Partial<EvaluatorOptions> = {}): Promise<Evaluator> {
  const [toolchain, gpu] = await Promise.all([findToolchain(), gpuOrThrow()]);
  return new Evaluator({ task, toolchain, gpu, workRoot, ...extra });
}
