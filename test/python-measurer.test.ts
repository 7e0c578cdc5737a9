// The Python-candidate backend's pure parts (main/core/python-measurer.ts): how a runner outcome
// becomes an EvalResult (a fallback and wrong outputs fail; CPU results are `cpu`, GPU results name
// the GPU; the label, share and guarantee level travel along), the eager baseline as a candidate,
// and the duel's interval from few fresh-process pairs. No torch needed: outcomes are written here
// as the runner writes them (the CPU runs are test/python-optimize.test.ts).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eagerBaselineSource, logRatioCI, PER_CALL_PROMPT, PythonMeasurer, pythonCandidateTask, toEvalResult } from '../main/core/python-measurer.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { writePythonTask } from './fixtures/python-task.js';
import type { CandidateOutcome, MeasureFile } from '../main/engine/pytorch/candidate.js';
import { isTimedSuccess } from '../main/engine/measure/verdict.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { resumeRunOptions } from '../main/core/run/resume.js';
import type { SessionMeta } from '../main/engine/session/events.js';

const GUARANTEE = { level: 'python-in-process' as const, holds: [], doesNotHold: [] };
const TIME = { medianMs: 0.5, meanMs: 0.51, minMs: 0.49, rsd: 0.01, samples: 12, samplesMs: [0.49, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.51, 0.51, 0.52, 0.5, 0.5], eventMedianMs: 0.5, wallMedianMs: 0.52, floorMs: 0.01, timer: 'events' as const, wallExceedsEvents: false, verifiedCalls: 2, inputSets: 2 };

function outcome(file: Partial<MeasureFile>, o: Partial<CandidateOutcome> = {}): CandidateOutcome {
  const f: MeasureFile = { ok: true, protocol: 'kd-candidate/1', command: 'measure', device: 'cuda:0', torch: '2.11.0', guarantee: GUARANTEE, stage: 'done', loads: [], ...file };
  return {
    guarantee: 'python-in-process', label: f.label ?? 'failed', correct: f.correct ?? null, correct1e2: f.correct1e2 ?? null, customShare: f.customShare ?? null,
    time: f.time ?? null, failure: f.failure, file: f, process: { sandboxed: true, exitCode: 0, timedOut: false, durationMs: 1000, tail: '' }, ...o,
  };
}
const GPU = { device: 'cuda' as const, deviceName: 'NVIDIA H200', torch: '2.11.0' };

describe('a Python runner outcome as an EvalResult', () => {
  it('a correct custom candidate on a GPU is a timed success measured on that GPU, with its label and share', () => {
    const r = toEvalResult(outcome({ label: 'custom', correct: true, correct1e2: true, customShare: 0.8, own: ['relu_kernel'], time: TIME, checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] }), 0, GPU);
    expect(isTimedSuccess(r)).toBe(true);
    expect(r.source).toEqual({ kind: 'gpu', gpu: 'NVIDIA H200' });
    expect(r.python).toMatchObject({ guarantee: 'python-in-process', label: 'custom', customShare: 0.8, ownKernels: ['relu_kernel'], device: 'NVIDIA H200' });
    expect(r.timing![0]).toMatchObject({ medianMs: 0.5, timer: 'events', l2FlushBytes: 256 << 20, verifiedCalls: 2 });
    expect(r.timing![0].ciLowMs).toBeLessThanOrEqual(0.5);
    expect(r.timing![0].ciHighMs).toBeGreaterThanOrEqual(0.5);
  });

  it('carries the GPU\'s own time, the host\'s call time, the first-use time and a constant reference along', () => {
    const time = { ...TIME, hostCallMedianMs: 0.3, gated: { deviceMedianMs: 0.05, gateMs: 1.2, samples: 10, starved: 0 }, firstUse: { medianMs: 0.52, minMs: 0.5, samplesMs: [0.5, 0.52, 0.55, 0.51, 0.53], samples: 5 } };
    const r = toEvalResult(outcome({ label: 'pytorch-only', correct: true, correct1e2: true, time, referenceConstant: { constant: true, uniform: [0] }, checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] }), 0, GPU);
    expect(r.python).toMatchObject({ gpuMs: 0.05, hostCallMs: 0.3, firstUseMs: 0.5, referenceConstant: true });
    const plain = toEvalResult(outcome({ label: 'pytorch-only', correct: true, correct1e2: true, time: TIME, checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] }), 0, GPU);
    expect(plain.python && ['gpuMs', 'hostCallMs', 'firstUseMs', 'referenceConstant'].filter((k) => k in (plain.python as object))).toEqual([]);
  });

  it('per-call (a run\'s default on a GPU): the timing is the gated samples\' per-call costs, KernelBench\'s one-call figure beside it; one-call keeps the one-call samples', () => {
    // a host-bound forward: one-call 0.5 ms; the GPU works 0.05 ms, the host issues the call in 0.2-0.3 ms
    const perCallSamplesMs = [0.21, 0.2, 0.22, 0.3, 0.21, 0.2, 0.23, 0.21, 0.2, 0.25];
    const time = { ...TIME, hostCallMedianMs: 0.21, perCallMs: 0.21, gated: { deviceMedianMs: 0.05, gateMs: 1, samples: 10, starved: 0, verifiedCalls: 3, samplesMs: perCallSamplesMs.map(() => 0.05), perCallSamplesMs } };
    const file = { label: 'pytorch-only' as const, correct: true, correct1e2: true, time, checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] };
    const r = toEvalResult(outcome(file), 0, { ...GPU, figure: 'per-call' });
    expect(r.timing![0]).toMatchObject({ medianMs: 0.21, minMs: 0.2, samplesMs: perCallSamplesMs, timer: 'events', verifiedCalls: 5 });
    expect(r.timing![0].timerNote).toMatch(/^per-call: each of 10 gated samples is the larger of the GPU's own time .* KernelBench's one-call median 0\.5000 ms$/);
    expect(r.python).toMatchObject({ figure: 'per-call', oneCallMs: 0.5, gpuMs: 0.05 });
    const one = toEvalResult(outcome(file), 0, { ...GPU, figure: 'one-call' });
    expect(one.timing![0]).toMatchObject({ medianMs: 0.5, samplesMs: TIME.samplesMs });
    expect(one.python?.figure).toBe('one-call');
    expect(one.python && 'oneCallMs' in one.python).toBe(false);
    // a runner without gated samples (an older one, or torch without _sleep) gives the one-call figure, said so
    const older = toEvalResult(outcome({ ...file, time: TIME }), 0, { ...GPU, figure: 'per-call' });
    expect([older.timing![0].medianMs, older.python?.figure]).toEqual([0.5, 'one-call']);
  });

  it('on the CPU the same result is a CPU time, never a GPU\'s', () => {
    const r = toEvalResult(outcome({ device: 'cpu', torch: '1.13.0a0', label: 'pytorch-only', correct: true, correct1e2: true, time: { ...TIME, timer: 'wall', eventMedianMs: null }, checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] }), 0, { device: 'cpu', torch: '1.13.0a0' });
    expect(r.source).toEqual({ kind: 'cpu', what: 'CPU, torch 1.13.0a0' });
    expect(r.python?.device).toBe('cpu');
    expect(r.timing![0].l2FlushBytes).toBe(0);
  });

  it('a fallback is a failed build, never a timed custom kernel, even when it was correct and timed', () => {
    const r = toEvalResult(outcome({ label: 'fallback', correct: true, correct1e2: true, time: TIME, loads: [{ kind: 'load_inline', name: 'ext', ok: false, error: 'nvcc: error\nmore' }], checks: [{ check: 0, ok: true, ok1e2: true, why: null, outputs: [] }] }), 0, GPU);
    expect(isTimedSuccess(r)).toBe(false);
    expect(r.failure).toMatchObject({ kind: 'compile' });
    expect(r.failure!.reason).toContain('fallback: its extension build failed (ext: nvcc: error)');
    expect(r.build.ok).toBe(false);
    expect(r.timing).toBeUndefined();
  });

  it('wrong at KernelBench\'s tolerance is a correctness failure (right at 1e-2 is said), and the runner\'s failures keep their stage', () => {
    const wrong = toEvalResult(outcome({ label: 'pytorch-only', correct: false, correct1e2: true, time: TIME, checks: [{ check: 0, ok: false, ok1e2: true, why: 'output 0: max abs error 3e-4', outputs: [] }] }), 0, GPU);
    expect(wrong.failure).toEqual({ kind: 'correctness', reason: "output 0: max abs error 3e-4 (at KernelBench's tolerance; right at 1e-2)" });
    expect(wrong.check?.ok).toBe(false);
    expect(wrong.build.ok).toBe(true);
    const imp = toEvalResult(outcome({ ok: false, stage: 'import', label: 'failed', failure: { kind: 'import', message: 'SyntaxError: invalid syntax' } }), 0, GPU);
    expect(imp.failure).toMatchObject({ kind: 'compile', reason: '[import] SyntaxError: invalid syntax' });
    expect(imp.build.ok).toBe(false);
    const late = toEvalResult(outcome({ ok: false, stage: 'time', label: 'custom', correct: true, correct1e2: true, failure: { kind: 'correctness', message: 'timed call 9: output 0 wrong' } }), 0, GPU);
    expect(late.failure).toMatchObject({ kind: 'correctness', reason: '[correctness] timed call 9: output 0 wrong' });
    const none = toEvalResult({ ...outcome({}), file: null, process: { sandboxed: false, exitCode: null, timedOut: true, durationMs: 300_000, tail: '' }, failure: { kind: 'timeout', message: 'the candidate runner passed its time limit (300 s)' } }, 0, GPU);
    expect(none.failure?.kind).toBe('timeout');
  });
});

describe('the figure a Python run ranks by', () => {
  it('per-call on a GPU unless one-call is asked for, one-call on the CPU; said in the run\'s label, with 20 gated samples unless the timing options name a count', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-pyfig-'));
    try {
      const task = loadTask(writePythonTask(dir));
      const at = (o: Partial<ConstructorParameters<typeof PythonMeasurer>[1]>) => new PythonMeasurer(task, { python: 'python3', torch: '2.11.0', device: 'cuda', deviceName: 'NVIDIA H200', workRoot: dir, ...o });
      expect(at({}).figure).toBe('per-call');
      expect(at({}).label).toMatch(/ranked by per-call time \(the larger of the GPU's own time and the host's time to issue the call/);
      expect(at({ figure: 'one-call' }).figure).toBe('one-call');
      expect(at({ figure: 'one-call' }).label).toMatch(/ranked by KernelBench's one-call time/);
      expect(at({ device: 'cpu' }).figure).toBe('one-call');
      expect(at({ timingArgs: ['--min-samples', '5'] }).runnerTimingArgs).toEqual(['--min-samples', '5', '--gated-samples', '20']);
      expect(at({ timingArgs: ['--gated-samples', '40'] }).runnerTimingArgs).toEqual(['--gated-samples', '40']);
      expect(at({ device: 'cpu', timingArgs: ['--min-samples', '5'] }).runnerTimingArgs).toEqual(['--min-samples', '5']);
      expect(PER_CALL_PROMPT).toMatch(/^; each time is one forward's cost when forwards follow each other/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the eager baseline and the duel interval', () => {
  it('the baseline candidate is the reference file with ModelNew = Model; a CUDA task has none', () => {
    expect(() => pythonCandidateTask(resolveTask('softmax'))).toThrow(/Python candidates \(ModelNew\) need a PyTorch-reference task/);
    const fake = { ...resolveTask('softmax'), referenceSource: 'class Model:\n    pass\n' };
    expect(eagerBaselineSource(fake)).toMatch(/^class Model:\n {4}pass\n[\s\S]*class ModelNew\(Model\):\n {4}pass\n$/);
  });

  it('gives a 95% t-interval on log ratios; one pair gives none', () => {
    const one = logRatioCI([1.2]);
    expect(one.ratio).toBeCloseTo(1.2, 12);
    expect(Number.isNaN(one.low)).toBe(true);
    const tight = logRatioCI([1.2, 1.21, 1.19]);
    expect(tight.ratio).toBeCloseTo(1.2, 2);
    expect(tight.low).toBeGreaterThan(1.1);
    expect(tight.high).toBeLessThan(1.3);
    // Two pairs that disagree in direction: the interval spans 1 widely.
    const loose = logRatioCI([0.8, 1.3]);
    expect(loose.low).toBeLessThan(0.2);
    expect(loose.high).toBeGreaterThan(5);
  });
});

describe('resuming a Python-candidate session', () => {
  const meta = (device: 'cpu' | 'cuda'): SessionMeta => ({
    id: 'P1', task: { name: 'py', dir: '/tmp/py-task', manifestHash: 'x' }, gpu: device === 'cuda' ? { name: 'NVIDIA H200', arch: 'torch' } : null,
    settings: { strategy: 'llm', budget: 6, seed: 1, backend: { kind: 'python', device, python: '/usr/bin/python3', torch: '1.13', duelRounds: 2 }, flags: false, transforms: false, llm: { model: 'm' } },
    createdAt: '', kernelduelVersion: 'test',
  });
  it('continues on its own device (a CPU session stays on the CPU), with its duel rounds', () => {
    expect(resumeRunOptions(meta('cpu'), {})).toMatchObject({ strategy: 'llm', budget: 6, backend: { kind: 'python', device: 'cpu', duelRounds: 2 } });
    // a session from before the per-call figure keeps ranking by what its results hold
    expect(resumeRunOptions(meta('cuda'), {}).backend).toEqual({ kind: 'python', device: 'cuda', figure: 'one-call', duelRounds: 2 });
    const perCall = meta('cuda');
    perCall.settings.backend = { ...(perCall.settings.backend as object), figure: 'per-call' };
    expect(resumeRunOptions(perCall, {}).backend).toMatchObject({ figure: 'per-call' });
  });
  it('refuses GPU and replay options, naming where the session measures', () => {
    expect(() => resumeRunOptions(meta('cpu'), { gpu: 0 })).toThrow(/--gpu 0: the session measures Python candidates on the CPU/);
    expect(() => resumeRunOptions(meta('cuda'), { replay: '/x.json' })).toThrow(/--replay \/x\.json: the session measures Python candidates on GPU NVIDIA H200/);
  });
});
