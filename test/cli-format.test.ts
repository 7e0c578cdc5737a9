// The CLI's eval report (main/doors/cli/format.ts): what it says about a timing's buffer sets.
import { describe, expect, it } from 'vitest';
import { describeResult } from '../main/doors/cli/format.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import type { EvalResult, TimingResult } from '../main/engine/base/types.js';

const timing = (extra: Partial<TimingResult>): TimingResult => ({
  size: 0, samplesMs: [0.15, 0.151, 0.149, 0.15], eventMs: [0.15, 0.151, 0.149, 0.15], wallMs: [0.2, 0.2, 0.2, 0.2], timer: 'events',
  medianMs: 0.15, meanMs: 0.15, minMs: 0.149, ciLowMs: 0.1497, ciHighMs: 0.1503, relNoise: 0.002, converged: true, warmupCalls: 3, l2FlushBytes: 1 << 26, ...extra,
});
const result = (t: TimingResult): EvalResult => ({
  build: { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 1 },
  timing: [t], source: { kind: 'gpu', gpu: 'NVIDIA H200' },
});

describe('describeResult: the check', () => {
  const check = (ok: boolean): EvalResult['check'] => ({ ok, durationMs: 1, checks: [{ buffer: 'y', size: 0, seed: 1, elements: 64, mismatches: ok ? 0 : 2, maxAbsErr: 2.4e-7, maxRelErr: 66, relL2: 1.2e-7 }] });
  it('leads with the relative L2 error and says a large element relative error of a passing check lies near zero', () => {
    const text = describeResult(resolveTask('softmax'), { ...result(timing({})), check: check(true) });
    expect(text).toContain('check: ok (1 buffer checks over sizes and seeds; worst relative L2 error 1.20e-7, largest element error 2.40e-7 absolute, 6.60e+1 relative (on an element whose expected value is near zero: within the absolute tolerance))');
    expect(describeResult(resolveTask('softmax'), { ...result(timing({})), check: check(false) })).not.toContain('near zero');
  });
  it("says where the judge got the check's executor, where it reports it", () => {
    const text = describeResult(resolveTask('softmax'), { ...result(timing({})), check: { ...check(true)!, executor: { from: 'spare-starting', ms: 171.4 } } });
    expect(text).toContain('  its executor: started ahead, still making its CUDA context, ready in 171 ms');
    expect(describeResult(resolveTask('softmax'), { ...result(timing({})), check: check(true) })).not.toContain('its executor');
  });
});

describe('describeResult: buffer sets', () => {
  it('names each set\'s median and their mean\'s sd, and says more samples do not shrink it', () => {
    const text = describeResult(resolveTask('softmax'), result(timing({ bufferSets: 4, perSetMedianMs: [0.15, 0.1506, 0.1495, 0.1512], setRelSd: 0.00243 })));
    expect(text).toMatch(/on 4 buffer sets/);
    expect(text).toMatch(/buffer sets: medians .*; their mean's sd 0\.24% of the median \(placement: more samples do not shrink it, more sets do\)/);
  });
  it('says how many executors a timing rotated over when more than one (the precise timing)', () => {
    expect(describeResult(resolveTask('softmax'), result(timing({ bufferSets: 16, contexts: 4 })))).toMatch(/on 16 buffer sets in 4 executors/);
    expect(describeResult(resolveTask('softmax'), result(timing({ bufferSets: 4 })))).not.toMatch(/executors/);
  });
  it('says nothing of sets for a timing on one set', () => {
    const text = describeResult(resolveTask('softmax'), result(timing({})));
    expect(text).not.toMatch(/buffer sets/);
  });
});

describe("describeResult: where the timing's wall time went", () => {
  it('says set-up, sampling and the verifying within it where the judge reports them, nothing otherwise', () => {
    const text = describeResult(resolveTask('softmax'), result(timing({ setupMs: 96.4, timedMs: 316.2, verifyMs: 121.3, verifiedCalls: 19 })));
    expect(text).toContain('  wall time 413 ms: 96 set-up (buffer sets, warm-up), 316 sampling, of which 121 verifying 19 calls against the reference');
    expect(describeResult(resolveTask('softmax'), result(timing({ verifiedCalls: 19 })))).not.toContain('wall time');
  });
});
