// What Tasks' Evaluate shows (renderer/src/eval-summary.ts). The results below are FIXTURES written
// by hand to exercise the wording (no GPU ran): a precise timing over 4 executors, a failed check,
// and a compile-only evaluation.
import { describe, expect, it } from 'vitest';
import type { VariantDetail } from '../main/contract/api.js';
import { evalSummary } from '../renderer/src/eval-summary.js';

type EvalResult = NonNullable<VariantDetail['result']>;
const build: EvalResult['build'] = { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 1 };
const check = (ok: boolean): NonNullable<EvalResult['check']> => ({
  ok, durationMs: 5,
  checks: [0, 1].flatMap((size) => [1, 2].map((seed) => ({ buffer: 'y', size, seed, elements: 16, mismatches: ok ? 0 : 3, maxAbsErr: 0, maxRelErr: 0, relL2: size ? 3e-7 : 1e-7 }))),
});

describe('evalSummary (FIXTURE results)', () => {
  it('says the check, the median with its interval, samples, buffer sets and executors, the sets\' share and the clocks', () => {
    const lines = evalSummary({
      build, check: check(true), source: { kind: 'gpu', gpu: 'FIXTURE' },
      timing: [{
        size: 1, samplesMs: Array(686).fill(2.909), eventMs: [], wallMs: [], timer: 'events', medianMs: 2.909, meanMs: 2.909, minMs: 2.9, ciLowMs: 2.908, ciHighMs: 2.91, relNoise: 0.0002,
        converged: true, warmupCalls: 12, bufferSets: 16, contexts: 4, setRelSd: 0.0001, l2FlushBytes: 1 << 26,
        clocksStart: { smMHz: 1980, memMHz: 3201, tempC: 40, powerW: 130 }, clocksEnd: { smMHz: 1980, memMHz: 3201, tempC: 44, powerW: 300 },
      }],
    });
    const text = lines.map((l) => l.text).join('\n');
    expect(lines[0]).toEqual({ tone: 'ok', text: 'check: passed (4 buffer checks over 2 sizes; worst relative L2 error 3.0e-7)' });
    expect(text).toContain('time (size 1): median 2.909 ms [2.908 ms, 2.910 ms] ±0.02% over 686 samples on 16 buffer sets in 4 executors (events)');
    expect(text).toContain("their mean's sd is 0.01% of the median");
    expect(text).toContain('clocks: SM 1980→1980 MHz, memory 3201→3201 MHz');
    expect(text).not.toContain('not converged');
    expect(text).not.toContain('wall time'); // a judge before 2026-12-08 did not say
    expect(text).not.toContain('its executor'); // nor before 2026-12-08 01:00 where the check's executor came from
  });
  it("says where the judge got the check's executor where it reports it", () => {
    const lines = evalSummary({ build, check: { ...check(true), executor: { from: 'spare-starting', ms: 168.2 } }, source: { kind: 'gpu', gpu: 'FIXTURE' } });
    expect(lines[1]).toEqual({ tone: 'note', text: '  its executor: started ahead, still making its CUDA context, ready in 168 ms' });
  });
  it("says where the timing's wall time went where the judge reports it: most of a fast variant's can be the reference's runs", () => {
    const t = { size: 0, samplesMs: Array(156).fill(0.1213), eventMs: [], wallMs: [], timer: 'events' as const, medianMs: 0.1213, meanMs: 0.1213, minMs: 0.12, ciLowMs: 0.1212, ciHighMs: 0.1214, relNoise: 0.0008, converged: true, warmupCalls: 16, l2FlushBytes: 1 << 26 };
    const lines = evalSummary({ build, check: check(true), source: { kind: 'gpu', gpu: 'FIXTURE' }, timing: [{ ...t, setupMs: 40, timedMs: 1240.6, verifyMs: 1101, verifiedCalls: 1 }] });
    expect(lines).toContainEqual({ tone: 'note', text: '  wall time 1281 ms: 40 set-up (buffer sets, warm-up), 1241 sampling, of which 1101 verifying 1 call against the reference' });
  });
  it('says a timing stopped at its cutoff (optimize --time-cutoff) as such, not as unconverged', () => {
    const t = { size: 0, samplesMs: Array(15).fill(69), eventMs: [], wallMs: [], timer: 'events' as const, medianMs: 69, meanMs: 69, minMs: 68.9, ciLowMs: 68.95, ciHighMs: 69.05, relNoise: 0.0007, converged: false, warmupCalls: 16, l2FlushBytes: 1 << 26 };
    const cut = evalSummary({ build, check: check(true), source: { kind: 'gpu', gpu: 'FIXTURE' }, timing: [{ ...t, cutoffMs: 0.366 }] }).map((l) => l.text).join('\n');
    expect(cut).toContain('stopped early: the interval passed the cutoff 0.3660 ms');
    expect(cut).not.toContain('not converged');
    const capped = evalSummary({ build, check: check(true), source: { kind: 'gpu', gpu: 'FIXTURE' }, timing: [t] }).map((l) => l.text).join('\n');
    expect(capped).toContain('not converged');
    expect(capped).not.toContain('stopped early');
  });

  it('says a failed check and the failure, and compile-only when nothing was timed', () => {
    const failed = evalSummary({ build, check: check(false), source: { kind: 'gpu', gpu: 'FIXTURE' }, failure: { kind: 'correctness', reason: 'y[3]: expected 1, got 2' } });
    expect(failed.map((l) => l.tone)).toEqual(['bad', 'bad']);
    expect(failed[1].text).toBe('correctness: y[3]: expected 1, got 2');
    const compileOnly = evalSummary({ build, source: { kind: 'gpu', gpu: 'none' }, compileOnly: true });
    expect(compileOnly).toEqual([{ tone: 'note', text: 'compile-only: no GPU, so built but not checked or timed' }]);
  });
});
