// A PyTorch-reference task's eager / torch.compile baselines, from the journal event to what the
// workbench decodes: the record made from the runner's file (a missing torch.compile time carries
// its reason, a failed measurement its failure, never a made-up time), the event journaled and read
// back, the session payload placing each baseline on the "speedup vs baseline" axis, an older journal
// without the event still opening (no baselines), and a malformed payload refused by its schema.
// No Python here: the runner's answers are given (python-optimize.test.ts runs the real one).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baselineFigureMs, decodeSession, type SessionPayload } from '../main/contract/api.js';
import { SessionViews } from '../main/core/sessions.js';
import { baselinesFromFile, describeBaselines, measurePytorchBaselines, skippedBaselines } from '../main/core/pytorch-baselines.js';
import { PytorchBaselinesSchema } from '../main/engine/base/pytorch-baselines.js';
import { createSession, openSessionReadOnly } from '../main/engine/session/store.js';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import type { BaselineFile, PyTiming } from '../main/engine/pytorch/candidate.js';
import { writePythonTask } from './fixtures/python-task.js';
import { baselinesSummary } from '../main/doors/cli/format.js';
import { makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

let home = '';
let task: Task;
const root = (): string => path.join(home, 'sessions');

const timing = (medianMs: number, timer: 'events' | 'wall' = 'events'): PyTiming => ({
  medianMs, meanMs: medianMs, minMs: medianMs, rsd: 0.01, samples: 3, samplesMs: [medianMs, medianMs, medianMs], eventMedianMs: timer === 'events' ? medianMs : null,
  wallMedianMs: medianMs, floorMs: 0, timer, wallExceedsEvents: false, verifiedCalls: 1, inputSets: 2,
});
const file = (over: Partial<BaselineFile>): BaselineFile => ({ ok: true, command: 'baseline', device: 'cuda:0', torch: '2.5.1', ...over });
const GPU = { device: 'cuda' as const, deviceName: 'NVIDIA H200', torch: '2.5.1' };

/** A session whose baseline variant was timed at `baseMs`, with these events after it. */
function session(id: string, baseMs: number, extra: (s: ReturnType<typeof createSession>) => void): void {
  const s = createSession(root(), makeMeta(id, { task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash } }));
  s.append({ type: 'variant', variant: makeVariant('v0', { origin: 'baseline' }) });
  s.append({ type: 'result', variantId: 'v0', result: timedResult(baseMs) });
  s.append({ type: 'variant', variant: makeVariant('v1') });
  s.append({ type: 'result', variantId: 'v1', result: timedResult(baseMs / 4) });
  extra(s);
  s.close();
}

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-ptbase-'));
  task = loadTask(writePythonTask(home));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('PyTorch baselines: the record', () => {
  it('keeps eager and torch.compile medians, timers, samples and compile time', () => {
    const b = baselinesFromFile(task, GPU, file({ eager: timing(2), compiled: { ...timing(1, 'wall'), ok: true, compileS: 31.5, matchesEager: true, matchesEager1e2: true } }), undefined, 'now');
    expect(b).toEqual({
      size: task.timed[0], device: 'cuda', deviceName: 'NVIDIA H200', torch: '2.5.1', guarantee: 'trusted-python',
      eager: { medianMs: 2, timer: 'events', samples: 3 }, compile: { medianMs: 1, timer: 'wall', samples: 3, compileS: 31.5 }, compileNote: null, failure: null, measuredAt: 'now',
    });
  });

  it("keeps the GPU's own time and the host's call time, and says when the one-call figure is mostly the host's", () => {
    // A short forward on the H200 (2026-12-01): 0.1 ms by one call, 0.004 ms of it the GPU's work.
    const short = { ...timing(0.1), hostCallMedianMs: 0.06, gated: { deviceMedianMs: 0.004, gateMs: 1, samples: 10, starved: 0 } };
    const long = { ...timing(2), hostCallMedianMs: 0.05, gated: { deviceMedianMs: 1.95, gateMs: 1, samples: 10, starved: 0 } };
    const b = baselinesFromFile(task, GPU, file({ eager: short, compiled: { ...long, ok: true, compileS: 3, matchesEager: true, matchesEager1e2: true } }), undefined, 'now');
    expect(b.eager).toEqual({ medianMs: 0.1, timer: 'events', samples: 3, gpuMs: 0.004, hostCallMs: 0.06 });
    expect(b.compile).toMatchObject({ medianMs: 2, gpuMs: 1.95, hostCallMs: 0.05 });
    const text = describeBaselines(b);
    expect(text).toMatch(/eager 0\.1000 ms \(events, 3 samples; GPU's own time 0\.00400 ms, host issues the call in 0\.0600 ms; HOST-BOUND: the GPU works 4% of it\)/);
    expect(text).toMatch(/torch\.compile 2\.000 ms \(events, 3 samples; GPU's own time 1\.95 ms, host issues the call in 0\.0500 ms\), compiled/);
    expect(PytorchBaselinesSchema.parse(b)).toEqual(b);
  });

  it('says why torch.compile has no time, and why eager has none, never inventing one', () => {
    const old = baselinesFromFile(task, { ...GPU, device: 'cpu', deviceName: 'cpu' }, file({ torch: '1.13.0', eager: timing(0.5, 'wall'), compiled: { ok: false, why: 'torch 1.13.0 has no torch.compile' } }), undefined);
    expect(old.compile).toBeNull();
    expect(old.compileNote).toBe('torch 1.13.0 has no torch.compile');
    expect(describeBaselines(old)).toMatch(/^PyTorch baselines \[CPU\] \(CPU times, not a GPU's, torch 1\.13\.0.*eager 0\.5000 ms \(wall, 3 samples\); torch\.compile none — torch 1\.13\.0 has no torch\.compile$/);
    const failed = baselinesFromFile(task, GPU, null, { kind: 'timeout', message: 'the baseline passed its time limit (600 s)\nmore' });
    expect(failed).toMatchObject({ eager: null, compile: null, compileNote: 'not run: the eager baseline failed', failure: '[timeout] the baseline passed its time limit (600 s)' });
    const skipped = skippedBaselines(task, { skip: 'compile-only run (no GPU): nothing is timed here', device: 'cuda', deviceName: 'none', torch: null });
    expect(skipped).toMatchObject({ eager: null, compile: null, failure: 'not measured: compile-only run (no GPU): nothing is timed here' });
  });

  it("the optimize summary: each baseline's time and the best's speedup over it, or why there is none", () => {
    const b = baselinesFromFile(task, GPU, file({ eager: timing(2), compiled: { ok: false, why: 'BackendCompilerFailed: no triton' } }), undefined);
    expect(baselinesSummary(b, 0.5)).toBe('PyTorch baselines on NVIDIA H200, guarantee level trusted-python: eager 2.000 ms → best 4.00× vs it; torch.compile none (BackendCompilerFailed: no triton)');
    const skipped = skippedBaselines(task, { skip: 'compile-only run (no GPU): nothing is timed here', device: 'cuda', deviceName: 'none', torch: null });
    expect(baselinesSummary(skipped, null)).toBe('PyTorch baselines: not measured: compile-only run (no GPU): nothing is timed here');
  });

  it('a runner that throws gives a record with the reason, not an exception (the session goes on)', async () => {
    const b = await measurePytorchBaselines(task, { ...GPU, python: '/nonexistent/python' }, {
      workRoot: path.join(home, 'work'),
      measure: () => Promise.reject(new Error('spawn /nonexistent/python ENOENT')),
    });
    expect(b).toMatchObject({ eager: null, failure: '[runtime] spawn /nonexistent/python ENOENT', device: 'cuda' });
  });
});

describe('PyTorch baselines: journal -> session payload -> workbench', () => {
  it('places each baseline on the speedup-vs-baseline axis, and decodes through its schema', () => {
    const b = baselinesFromFile(task, GPU, file({ eager: timing(2), compiled: { ...timing(0.5), ok: true, compileS: 12, matchesEager: true, matchesEager1e2: true } }), undefined);
    session('with', 1, (s) => s.append({ type: 'pytorch-baselines', baselines: b }));
    const s = openSessionReadOnly(root(), 'with');
    expect(s.events().filter((e) => e.type === 'pytorch-baselines')).toEqual([{ type: 'pytorch-baselines', baselines: b }]);
    s.close();
    const views = new SessionViews(root(), () => null);
    const payload = JSON.parse(JSON.stringify(views.payload('with'))) as SessionPayload;
    const d = decodeSession(payload);
    expect(d.pytorchBaselines).toMatchObject({ eager: { medianMs: 2 }, compile: { medianMs: 0.5, compileS: 12 }, guarantee: 'trusted-python', eagerSpeedup: 0.5, compileSpeedup: 2 });
    expect(d.pytorchBaselines!.guaranteeTitle).toMatch(/no candidate code runs in that process/);
    // The session log says it too.
    expect(views.log('with').map((l) => l.message).join('\n')).toMatch(/PyTorch baselines \(NVIDIA H200.*eager 2\.000 ms \(events, 3 samples\); torch\.compile 0\.5000 ms/);
  });

  it('a per-call Python session compares its variants with the baselines\' per-call times, not their one-call figures', () => {
    // per gated sample, the larger of the GPU's time and the host's call time: eager 0.4 ms per call, 2 ms one-call
    const eager = { ...timing(2), hostCallMedianMs: 0.3, perCallMs: 0.4, gated: { deviceMedianMs: 0.1, gateMs: 1.2, samples: 5, starved: 0, perCallSamplesMs: [0.4, 0.39, 0.41, 0.4, 0.5] } };
    const b = baselinesFromFile(task, GPU, file({ eager, compiled: { ...timing(0.5), ok: true, compileS: 3, matchesEager: true, matchesEager1e2: true } }), undefined);
    expect(b.eager).toMatchObject({ medianMs: 2, perCallMs: 0.4 });
    const py = { guarantee: 'python-in-process' as const, label: 'pytorch-only' as const, correct: true, correct1e2: true, customShare: 0, device: 'NVIDIA H200', torch: '2.11.0', ownKernels: [], topKernels: [], failedBuilds: [], flagsChanged: [], sandboxed: true, figure: 'per-call' as const, oneCallMs: 2.1 };
    const s = createSession(root(), makeMeta('percall', { task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash } }));
    s.append({ type: 'variant', variant: makeVariant('v0', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v0', result: timedResult(0.2, { python: py }) });
    s.append({ type: 'pytorch-baselines', baselines: b });
    s.close();
    const d = decodeSession(JSON.parse(JSON.stringify(new SessionViews(root(), () => null).payload('percall'))) as SessionPayload);
    // the session's baseline 0.2 ms per call over eager's 0.4 ms per call; torch.compile has no per-call time: no line
    expect(d.pytorchBaselines).toMatchObject({ figure: 'per-call', eagerSpeedup: 0.5, compileSpeedup: null });
    expect(baselineFigureMs(d.pytorchBaselines!, d.pytorchBaselines!.eager)).toBe(0.4);
    expect(baselineFigureMs({}, d.pytorchBaselines!.eager)).toBe(2);
    expect(baselinesSummary(b, 0.1, 'per-call')).toBe('PyTorch baselines on NVIDIA H200, guarantee level trusted-python: eager 400.00 µs per call (one-call 2.000 ms) → best 4.00× vs it per call; torch.compile 500.00 µs one-call, no per-call time to compare the best\'s with');
  });

  it('an older journal without the event opens, with no baselines', () => {
    session('old', 1, () => undefined);
    const d = decodeSession(new SessionViews(root(), () => null).payload('old'));
    expect(d.pytorchBaselines).toBeNull();
    expect(d.variants.map((r) => r.speedup)).toEqual([1, 4]);
  });

  it('a payload whose baselines do not hold together is refused, naming the field', () => {
    const p = new SessionViews(root(), () => null).payload('with');
    expect(() => decodeSession({ ...p, pytorchBaselines: { ...p.pytorchBaselines!, eager: { medianMs: -1, timer: 'events', samples: 3 } } })).toThrow(/pytorchBaselines\.eager\.medianMs/);
    expect(() => decodeSession({ ...p, pytorchBaselines: { ...p.pytorchBaselines!, compile: null, compileNote: null } })).toThrow(/pytorchBaselines\.compileNote: torch\.compile has neither a time nor a note/);
  });
});
