// The variant detail's derived facts (issue 16): the effective source (the -D values where the
// template declares its defaults), threads per block read from the launch, theoretical occupancy
// from registers, shared memory and the SM's limits, achieved rates and the share of the roof, and
// the run log rebuilt from a journal.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { defaultConfig } from '../main/engine/task/space.js';
import { effectiveSource } from '../main/engine/source/effective.js';
import { launchThreads } from '../main/engine/source/launch.js';
import { occupancy, smLimits } from '../main/engine/platform/gpu/occupancy.js';
import { variantPerf } from '../main/core/perf.js';
import { journalLog } from '../main/core/run/log.js';
import type { EvalResult } from '../main/engine/base/types.js';

const TASKS = ['axpy', 'histogram', 'layernorm', 'matmul', 'reduce_sum', 'softmax', 'stencil2d', 'transpose'];
const task = (n: string) => loadTask(join(builtinTasksDir(), n));

describe('effective source', () => {
  it('writes each -D value where the template defines its default, keeping every other line', () => {
    const t = task('softmax');
    const src = effectiveSource(t.baselineSource, { BLOCK: 512, TPR: 32, VEC: 4, ONLINE: 1 });
    expect(src).toMatch(/#define BLOCK 512 {2}\/\/ -DBLOCK=512 \(template default: 128\)/);
    expect(src).toMatch(/#define VEC 4 /);
    expect(src.split('\n').length).toBe(t.baselineSource.split('\n').length);
  });
  it('prepends a tunable the template does not define', () => {
    expect(effectiveSource('__global__ void k() {}\n', { N: 3 })).toBe('#define N 3  // -DN=3\n__global__ void k() {}\n');
  });
});

describe('threads per block from the launch', () => {
  it('works for every built-in task at its defaults', () => {
    for (const n of TASKS) {
      const t = task(n);
      const l = launchThreads(t.baselineSource, defaultConfig(t));
      expect(l, n).not.toBeNull();
      expect(l!.threads, n).toBeGreaterThanOrEqual(32);
    }
  });
  it('expands dim3 declarations and macros with the tunables', () => {
    expect(launchThreads(task('transpose').baselineSource, { USE_SMEM: 0, TILE_X: 32, TILE_Y: 32, BLOCK_ROWS: 8, PAD: 0 })!.threads).toBe(256);
    expect(launchThreads(task('matmul').baselineSource, { TILED: 1, BM: 64, BN: 64, BK: 8, TM: 4, TN: 4 })!.threads).toBe(256);
    expect(launchThreads(task('stencil2d').baselineSource, { ...defaultConfig(task('stencil2d')), BX: 32, BY: 4 })!.threads).toBe(128);
  });
});

describe('occupancy', () => {
  const h100 = smLimits('sm_90')!;
  it('a light kernel fills the SM: warps limit it', () => {
    const o = occupancy({ registers: 32, sharedBytes: 0 }, 256, h100);
    expect(o.occupancy).toBe(1);
    expect(o.blocksPerSm).toBe(8);
  });
  it('registers limit a heavy kernel (128 regs x 256 threads: 2 blocks, 25%)', () => {
    const o = occupancy({ registers: 128, sharedBytes: 0 }, 256, h100);
    expect(o.limiter).toBe('registers');
    expect(o.blocksPerSm).toBe(2);
    expect(o.occupancy).toBeCloseTo(0.25);
  });
  it('shared memory limits a kernel with a big static tile (48 KB + 1 KB reserved: 4 blocks on sm_90)', () => {
    const o = occupancy({ registers: 32, sharedBytes: 48 * 1024 }, 128, h100);
    expect(o.limiter).toBe('shared memory');
    expect(o.blocksPerSm).toBe(4);
  });
  it('knows the architectures by sm_XX and compute capability', () => {
    expect(smLimits('sm_86')!.maxThreadsPerSm).toBe(1536);
    expect(smLimits('8.0')!.cc).toBe('8.0');
    expect(smLimits('sm_42')).toBeNull();
  });
});

describe('variant performance', () => {
  const t = task('softmax');
  const timed = (ms: number, registers: number): EvalResult => ({
    build: { ok: true, arch: 'sm_90', command: [], log: '', durationMs: 0, resources: [{ name: 'softmax_kernel', registers, sharedBytes: 0, constantBytes: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0 }] },
    check: { ok: true, checks: [], durationMs: 0 },
    timing: [{ size: 0, samplesMs: [ms], eventMs: [ms], wallMs: [ms], timer: 'events', medianMs: ms, meanMs: ms, minMs: ms, ciLowMs: ms, ciHighMs: ms, relNoise: 0, converged: true, warmupCalls: 0, l2FlushBytes: 0 }],
    source: { kind: 'replay', recording: 'x' },
  });
  it('achieved bandwidth and the share of the memory roof at the timed size', () => {
    const v = { id: 'v2', source: t.baselineSource, config: { BLOCK: 256, TPR: 32, VEC: 4, ONLINE: 1 }, flags: {}, origin: 'x', parents: [], createdAt: '' };
    const p = variantPerf({ task: t, variant: v, result: timed(0.16, 40), arch: 'sm_90', peakGbps: 4000, peakGflops: 50000, limitsSource: 'bench/results/x.json', limitsNote: null });
    // 2 * 8192 * 8192 * 4 bytes in 0.16 ms
    expect(p.achievedGbps).toBeCloseTo((2 * 8192 * 8192 * 4) / 0.16e-3 / 1e9, 3);
    expect(p.bound).toBe('memory');
    expect(p.pctOfRoof).toBeCloseTo(p.achievedGbps! / 4000, 6);
    expect(p.threadsPerBlock).toBe(256);
    expect(p.occupancy!.value).toBe(0.75); // 40 registers x 256 threads: 6 blocks of 8 warps
    expect(p.occupancy!.limiter).toBe('registers');
  });
  it('says why there is no occupancy for a variant that was not built', () => {
    const v = { id: 'v2', source: t.baselineSource, config: defaultConfig(t), flags: {}, origin: 'x', parents: [], createdAt: '' };
    const p = variantPerf({ task: t, variant: v, result: undefined, arch: 'sm_90', peakGbps: null, peakGflops: null, limitsSource: null, limitsNote: 'no measured limits' });
    expect(p.occupancy).toBeNull();
    expect(p.occupancyNote).toBe('not built yet');
    expect(p.roofNote).toBe('no measured limits');
  });
});

describe('the run log from a journal', () => {
  it('tells the session, every result and the end, as the live run did', () => {
    const meta = { id: 's1', task: { name: 'softmax', dir: '/t', manifestHash: 'h' }, gpu: { name: 'REPLAY NVIDIA H200', arch: 'sm_90' }, settings: { strategy: 'random', budget: 2 }, createdAt: '2026-01-01T00:00:00Z', kernelduelVersion: 't' };
    const v = (id: string, origin: string) => ({ seq: 0, t: '2026-01-01T00:00:01Z', rec: { type: 'variant' as const, variant: { id, origin, source: '', config: {}, flags: {}, parents: [], createdAt: '' } } });
    const r = (id: string, ms: number) => ({ seq: 0, t: '2026-01-01T00:00:02Z', rec: { type: 'result' as const, variantId: id, result: timedResult(ms) } });
    const timedResult = (ms: number) => ({ build: { ok: true, arch: 'sm_90', command: [], log: '', durationMs: 0, resources: [] }, check: { ok: true, checks: [], durationMs: 0 }, timing: [{ size: 0, samplesMs: [ms], eventMs: [], wallMs: [], timer: 'events' as const, medianMs: ms, meanMs: ms, minMs: ms, ciLowMs: ms, ciHighMs: ms, relNoise: 0, converged: true, warmupCalls: 0, l2FlushBytes: 0 }], source: { kind: 'replay' as const, recording: 'x' } });
    const log = journalLog(meta, [v('v1', 'baseline'), r('v1', 2), v('v2', 'random'), r('v2', 1), { seq: 0, t: '2026-01-01T00:00:03Z', rec: { type: 'status', status: 'finished', budgetUsed: 1 } }]);
    expect(log.map((l) => l.message)).toEqual([
      'session s1: softmax, random, budget 2, REPLAY NVIDIA H200 (from the journal)',
      '[0/2] v1 2.000 ms, 1.00x the baseline (REPLAY)',
      '[1/2] v2 1.000 ms, 2.00x the baseline (REPLAY)',
      'finished: 1 evaluated, best v2 2.00x',
    ]);
  });
});
