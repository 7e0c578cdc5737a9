// The numbers behind Compare's distributions and the plots (issue 16): quartiles and ECDFs of timing
// samples, when two ranges call for a log axis, 1-2-5 ticks, parameter importance, a run's pace, and
// the rate formatting the roofline's tooltip uses (GFLOP/s scaled and rounded, not 1205.7448745…).
import { describe, expect, it } from 'vitest';
import type { FullVariantRow } from '../main/contract/api.js';
import { axisTicks, boxStats, ecdf, fmtTick, pace, paramImportance, timeSpent, wantsLogAxis } from '../renderer/src/analysis.js';
import { fmtRate } from '../renderer/src/store.js';

const row = (id: string, config: Record<string, number>, speedup: number | null): FullVariantRow => ({
  id, parents: [], origin: 'random', config, flags: { opt: 3 }, transforms: [], createdAt: '', status: speedup === null ? 'failed' : 'timed', failure: null,
  medianMs: speedup ? 1 / speedup : null, ciLowMs: null, ciHighMs: null, speedup, registers: null, sharedBytes: null, spillBytes: null, source: 'replay', label: null, evalIndex: null,
});

describe('renderer analysis', () => {
  it('box stats and ECDF of samples', () => {
    expect(boxStats([5, 1, 3, 2, 4])).toEqual({ n: 5, min: 1, q1: 2, median: 3, q3: 4, max: 5 });
    expect(boxStats([])).toBeNull();
    expect(ecdf([3, 1, 2]).map((p) => [p.x, p.p])).toEqual([[1, 1 / 3], [2, 2 / 3], [3, 1]]);
  });

  it('log axis only when the ranges are far apart; ticks 1-2-5 per decade', () => {
    expect(wantsLogAxis([0.1, 0.11, 0.5, 0.52], 3)).toBe(true);
    expect(wantsLogAxis([0.1, 0.11, 0.12], 3)).toBe(false);
    expect(axisTicks(0.08, 6, true)).toEqual([0.1, 0.2, 0.5, 1, 2, 5]);
    const lin = axisTicks(0, 1, false);
    expect(lin[0]).toBe(0);
    expect(lin.at(-1)).toBe(1);
    expect(lin.length).toBeGreaterThanOrEqual(4);
    expect(fmtTick(1205.7448745398974)).toBe('1210');
    expect(fmtTick(25_000)).toBe('25k');
  });

  it('formats rates with their unit scaled', () => {
    expect(fmtRate(1205.7448745398974, 'FLOP/s')).toBe('1.21 TFLOP/s');
    expect(fmtRate(45.6, 'B/s')).toBe('45.6 GB/s');
    expect(fmtRate(null, 'B/s')).toBe('-');
  });

  it('parameter importance: the tunable that moves the speedup explains the variance', () => {
    const rows: FullVariantRow[] = [];
    for (const b of [64, 128, 256, 512]) for (const u of [1, 2, 4]) rows.push(row(`v${rows.length + 1}`, { BLOCK: b, UNROLL: u }, b / 64 + u * 0.01));
    rows.push(row('vx', { BLOCK: 64, UNROLL: 1 }, null));
    const imp = paramImportance(rows);
    expect(imp[0].param).toBe('BLOCK');
    expect(imp[0].importance).toBeGreaterThan(0.95);
    expect(imp.reduce((a, x) => a + x.importance, 0)).toBeCloseTo(1);
    expect(paramImportance(rows.slice(0, 2))).toEqual([]);
  });

  it('pace: evaluations per minute from the start time', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    expect(pace('2026-01-01T00:00:00Z', 30, t0 + 60_000)).toEqual({ elapsedS: 60, perMin: 30 });
    expect(pace('2026-01-01T00:00:00Z', 0, t0 + 500).perMin).toBeNull();
  });
});

describe("a variant's evaluation time (the variant panel)", () => {
  const build = { ok: true, arch: 'sm_90', command: [], resources: [], log: '', durationMs: 2100 };
  const phases = { captureStartMs: 11, captureContextMs: 176, captureLockdownMs: 0, captureRuntimeCodeMs: 17, captureLoadMs: 0, captureBuffersMs: 1, captureCallsMs: 5, captureWriteMs: 1, captureExitMs: 65 };
  it('lists the stages in order and the capture process\'s phases largest first; a capture inside the evaluation is not "ahead"', () => {
    const t = timeSpent({ build, stages: { queuedMs: 0, captureMs: 278, checkMs: 22, timeMs: 336, ...phases } })!;
    expect(t.parts.map((p) => [p.label, p.ms])).toEqual([['build', 2100], ['queued for the GPU', 0], ['capture', 278], ['check', 22], ['timing', 336]]);
    expect(t.capture.slice(0, 3).map((p) => p.label)).toEqual(['CUDA context', 'exit (teardown)', 'runtime-code recorder']);
    expect(t.captureAhead).toBe(false);
  });
  it('a capture that ran ahead (the evaluation waited for little of it) says so; no stages, nothing to show', () => {
    expect(timeSpent({ build, stages: { queuedMs: 90, captureMs: 0, checkMs: 54, timeMs: 285, ...phases } })!.captureAhead).toBe(true);
    const old = timeSpent({ build, stages: { queuedMs: 90, captureMs: 0, checkMs: 54, timeMs: 285 } })!; // a result from before the phases
    expect(old.capture).toEqual([]);
    expect(old.captureAhead).toBe(false);
    expect(timeSpent({ build })).toBeNull();
  });
  it('a gated capture shows its wait for a place (off the GPU) as a phase, which is not counted as the capture\'s work', () => {
    const gated = { ...phases, captureWaitMs: 500 };
    const t = timeSpent({ build, stages: { queuedMs: 0, captureMs: 150, checkMs: 22, timeMs: 336, ...gated } })!;
    expect(t.capture[0]).toEqual({ label: 'gated: waiting for its place (off the GPU)', ms: 500 });
    // 150 ms waited of 276 ms of work: more than half, so not "ahead" (with the wait counted it would read as ahead).
    expect(t.captureAhead).toBe(false);
    expect(timeSpent({ build, stages: { queuedMs: 0, captureMs: 0, checkMs: 22, timeMs: 336, ...phases, captureWaitMs: 0 } })!.capture.map((p) => p.label)).not.toContain('gated: waiting for its place (off the GPU)');
  });
  it("splits the timing into set-up, verifying and samples where the judge reports them; says nothing of them otherwise", () => {
    const t = timeSpent({ build, stages: { queuedMs: 0, captureMs: 0, checkMs: 22, timeMs: 1100, timeSetupMs: 60, timeVerifyMs: 800 } })!;
    expect(t.timing).toEqual([{ label: 'set-up (buffer sets, warm-up)', ms: 60 }, { label: 'verifying against the reference', ms: 800 }, { label: 'samples', ms: 240 }]);
    expect(timeSpent({ build, stages: { queuedMs: 0, captureMs: 0, checkMs: 22, timeMs: 336 } })!.timing).toEqual([]);
  });
  it("splits the check into getting an executor and the checks, and counts the wait for spare executors in the timing, where the judge reports them", () => {
    const t = timeSpent({ build, stages: { queuedMs: 0, captureMs: 0, checkMs: 190, timeMs: 1100, timeSetupMs: 60, timeVerifyMs: 800, checkExecMs: 168, timeSparesWaitMs: 40 } })!;
    expect(t.check).toEqual([{ label: 'getting an executor', ms: 168 }, { label: 'every size and seed', ms: 22 }]);
    expect(t.timing).toEqual([{ label: "waiting for the judge's spare executors", ms: 40 }, { label: 'set-up (buffer sets, warm-up)', ms: 60 }, { label: 'verifying against the reference', ms: 800 }, { label: 'samples', ms: 200 }]);
    expect(timeSpent({ build, stages: { queuedMs: 0, captureMs: 0, checkMs: 22, timeMs: 336 } })!.check).toEqual([]);
  });
});
