// The measured ceilings of a GPU (copy bandwidth, FP32 SGEMM rate) for the roofline, from the
// foundation benchmark's results (bench/results/<gpu>-foundation.json, written by
// `npm run bench:foundation` on that GPU). Matched by the GPU's name; never guessed.
import fs from 'node:fs';
import path from 'node:path';
import { normaliseGpuName } from './detect.js';

export { normaliseGpuName };

export interface MeasuredLimits {
  /** Device-to-device copy bandwidth, GB/s (the memory roof). */
  peakGbps: number | null;
  /** cuBLAS SGEMM (FP32, no TF32) rate, GFLOP/s (the compute roof). */
  peakGflops: number | null;
  /** Where the figures come from (a path relative to the checkout), or null. */
  limitsSource: string | null;
  /** Why there are no limits, when there are none. */
  note?: string;
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : null);

/** The ceilings in one foundation results file, or null when it holds none. */
export function limitsOfResults(json: unknown): { gpuName: string; peakGbps: number | null; peakGflops: number | null } | null {
  if (!json || typeof json !== 'object') return null;
  const j = json as { gpu?: { name?: unknown }; ceilings?: { copy?: { bandwidthTBs?: unknown }; sgemmFp32NoTf32?: { tflops?: unknown } } };
  if (typeof j.gpu?.name !== 'string') return null;
  const tbs = num(j.ceilings?.copy?.bandwidthTBs);
  const tflops = num(j.ceilings?.sgemmFp32NoTf32?.tflops);
  if (tbs === null && tflops === null) return null;
  return { gpuName: j.gpu.name, peakGbps: tbs === null ? null : tbs * 1000, peakGflops: tflops === null ? null : tflops * 1000 };
}

export const NO_LIMITS_NOTE = 'no measured limits for this GPU';

/** Picks the results whose GPU name matches `gpuName` (pure: the files are given). */
export function pickLimits(files: Array<{ name: string; json: unknown }>, gpuName: string | null): MeasuredLimits {
  const none = (note: string): MeasuredLimits => ({ peakGbps: null, peakGflops: null, limitsSource: null, note });
  if (!gpuName) return none('no GPU: nothing was timed');
  const want = normaliseGpuName(gpuName);
  for (const f of files) {
    const l = limitsOfResults(f.json);
    if (l && normaliseGpuName(l.gpuName) === want) return { peakGbps: l.peakGbps, peakGflops: l.peakGflops, limitsSource: `bench/results/${f.name}` };
  }
  return none(`${NO_LIMITS_NOTE} (${gpuName.trim()}): run \`npm run bench:foundation\` on it`);
}

/** Reads bench/results/*-foundation.json under `resultsDir` and picks the session GPU's ceilings. */
export function measuredLimits(resultsDir: string, gpuName: string | null): MeasuredLimits {
  const files: Array<{ name: string; json: unknown }> = [];
  let names: string[];
  try {
    names = fs.readdirSync(resultsDir).filter((f) => f.endsWith('-foundation.json')).sort();
  } catch {
    names = [];
  }
  for (const name of names) {
    try {
      files.push({ name, json: JSON.parse(fs.readFileSync(path.join(resultsDir, name), 'utf8')) });
    } catch {
      // Not a results file we can read.
    }
  }
  return pickLimits(files, gpuName);
}
