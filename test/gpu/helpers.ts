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

const open = new Set<Evaluator>();

export async function evaluatorFor(task: Task, extra: Partial<EvaluatorOptions> = {}): Promise<Evaluator> {
  const [toolchain, gpu] = await Promise.all([findToolchain(), gpuOrThrow()]);
  const ev = new Evaluator({ task, toolchain, gpu, workRoot, ...extra });
  open.add(ev);
  return ev;
}

/** Closes every evaluator evaluatorFor made (each judge holds a task's reference outputs in GPU memory: a file of
 *  many tests that never closed theirs ran out of memory on an 80 GB H100). For `afterEach`. */
export function closeEvaluators(): void {
  for (const ev of open) ev.close();
  open.clear();
}

/** One case of the hostile corpus (test/hostile/cases.json; `$KERNELDUEL_TEST_DATA/hostile` in the GPU bundle). */
export interface HostileCase {
  case: string;
  file: string;
  expected: string;
  reason: string;
  /** The task the case is written for (default: the manifest's). */
  task?: string;
  sideEffect?: { kind: 'file'; path: string } | { kind: 'tcp'; port: number } | { kind: 'processes' };
  /** A regular expression the failure's reason must match (the outcome must come for the stated reason). */
  detail?: string;
  /** After its own evaluation the case is duelled (as A) against this file of the corpus (as B), which computes the same kernel. */
  duel?: string;
  /** A hole that is still open, in a sentence. The case runs and is recorded but does not fail the suite (a todo). */
  knownGap?: string;
}

/** The hostile corpus: its manifest and a reader of its files. */
export function hostileCorpus(): { dir: string; manifest: { task: string; cases: HostileCase[] }; source: (file: string) => string } {
  const c = [process.env.KERNELDUEL_TEST_DATA ? join(process.env.KERNELDUEL_TEST_DATA, 'hostile') : '', join(dirname(fileURLToPath(import.meta.url)), '..', 'hostile')].filter(Boolean);
  const dir = c.find((x) => existsSync(join(x, 'cases.json')));
  if (!dir) throw new Error(`hostile corpus not found (looked in ${c.join(', ')})`);
  const manifest = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as { task: string; cases: HostileCase[] };
  return { dir, manifest, source: (file) => readFileSync(join(dir, file), 'utf8') };
}

/**
 * The hostile corpus's evaluator limits: the capture process (the only one that runs a variant's
 * host code) gets 30 s, so a hang costs that; check and time have their own. Sources are screened.
 */
export const hostileEvaluatorOptions: Partial<EvaluatorOptions> = { screen: true, captureTimeoutMs: 30_000, checkTimeoutMs: 45_000, timeTimeoutMs: 60_000, timing: { maxMs: 600, minMs: 50 } };

/** A CUDA variant of a source, as the corpus evaluates it (no tunables, -O3). */
export const cudaSpec = (source: string) => ({ source, config: {}, flags: { opt: 3 as const } });
