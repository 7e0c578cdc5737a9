// What a variant achieved and what the GPU could hold of it, for the variant detail and Compare:
// threads per block (the manifest's metrics.threads, else the source's launch), theoretical
// occupancy from its build's registers and shared memory and the SM's limits, achieved GB/s and
// GFLOP/s at the timed size from the task's metrics, and the share of the measured roofline.
// Pure: the task, the limits and the result are read by the caller.
import type { VariantPerfDTO } from '../contract/api.js';
import type { EvalResult, VariantRecord } from '../engine/base/types.js';
import { evalExpr } from '../engine/base/expr.js';
import { timedMedianMs } from '../engine/measure/verdict.js';
import { launchThreads } from '../engine/source/launch.js';
import { occupancy, smLimits } from '../engine/platform/gpu/occupancy.js';
import { sizeLayout, type Task } from '../engine/task/manifest.js';

export interface PerfInput {
  task: Task | null;
  variant: VariantRecord;
  result: EvalResult | undefined;
  /** The session's GPU architecture (sm_90), else the build's. */
  arch: string | null;
  peakGbps: number | null;
  peakGflops: number | null;
  limitsSource: string | null;
  limitsNote: string | null;
}

function threadsOf(p: PerfInput): { n: number | null; from: string } {
  const scope = { ...(p.task?.manifest.sizes[p.result?.timing?.[0]?.size ?? 0] ?? {}), ...p.variant.config };
  const declared = p.task?.manifest.metrics?.threads;
  if (declared !== undefined) {
    try {
      return { n: evalExpr(declared, scope), from: `the manifest's metrics.threads (${declared})` };
    } catch (e) {
      return { n: null, from: `the manifest's metrics.threads does not evaluate: ${(e as Error).message}` };
    }
  }
  const l = launchThreads(p.variant.source, p.variant.config);
  return l ? { n: l.threads, from: `the kernel launch's block argument (${l.expr})` } : { n: null, from: 'no <<<grid, block>>> launch with a block size that can be worked out (state it as metrics.threads in task.yaml)' };
}

export function variantPerf(p: PerfInput): VariantPerfDTO {
  const t = threadsOf(p);
  const arch = p.arch || p.result?.build.arch || null;
  const lim = arch ? smLimits(arch) : null;
  const k = p.result?.build.resources?.[0];
  let occ: VariantPerfDTO['occupancy'] = null;
  let occupancyNote: string | null;
  if (!k) occupancyNote = p.result ? 'the build reported no kernel resources (ptxas -v)' : 'not built yet';
  else if (!lim) occupancyNote = `no SM limits known for ${arch ?? 'this GPU'}`;
  else if (t.n === null) occupancyNote = `threads per block unknown: ${t.from}`;
  else {
    const o = occupancy(k, t.n, lim);
    occ = { value: o.occupancy, blocksPerSm: o.blocksPerSm, warpsPerSm: o.warpsPerSm, maxWarpsPerSm: o.maxWarpsPerSm, limiter: o.limiter, limits: o.limits, cc: o.cc, kernel: k.name };
    occupancyNote = `${o.blocksPerSm} blocks of ${t.n} threads per SM (compute capability ${o.cc}), limited by ${o.limiter}; static shared memory only${(p.result?.build.resources.length ?? 0) > 1 ? `; kernel ${k.name} of ${p.result!.build.resources.length}` : ''}`;
  }
  const ms = timedMedianMs(p.result);
  let achievedGbps: number | null = null;
  let achievedGflops: number | null = null;
  let intensity: number | null = null;
  if (ms !== null && p.task) {
    try {
      const w = sizeLayout(p.task, p.result!.timing![0].size);
      if (w.bytes) achievedGbps = w.bytes / (ms / 1000) / 1e9;
      if (w.flops) achievedGflops = w.flops / (ms / 1000) / 1e9;
      if (w.bytes && w.flops) intensity = w.flops / w.bytes;
    } catch {
      /* a size the task no longer has */
    }
  }
  let roofGflops: number | null = null;
  let pctOfRoof: number | null = null;
  let bound: VariantPerfDTO['bound'] = null;
  if (intensity !== null && achievedGflops !== null && (p.peakGbps || p.peakGflops)) {
    const mem = p.peakGbps ? p.peakGbps * intensity : Infinity;
    const comp = p.peakGflops ?? Infinity;
    roofGflops = Math.min(mem, comp);
    bound = mem <= comp ? 'memory' : 'compute';
    pctOfRoof = achievedGflops / roofGflops;
  } else if (achievedGbps !== null && p.peakGbps && intensity === null) {
    roofGflops = null;
    bound = 'memory';
    pctOfRoof = achievedGbps / p.peakGbps;
  }
  const roofNote = p.limitsSource ? `roofs measured on this GPU (${p.limitsSource})` : (p.limitsNote ?? 'no measured limits for this GPU');
  return { threadsPerBlock: t.n, threadsFrom: t.from, occupancy: occ, occupancyNote, achievedGbps, achievedGflops, intensity, roofGflops, pctOfRoof, bound, roofNote };
}
