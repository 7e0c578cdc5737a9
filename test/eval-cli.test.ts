// `kernelduel eval` without a GPU builds what it says it builds: an exported variant with its own
// configuration and flags (export → eval round trip), --config checked against the task's tunables,
// both sides of a --duel, the task's reference, and a signature mismatch explained in the task's
// terms. Run as a child process with a private KERNELDUEL_HOME and no nvidia-smi.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSession, newSessionId } from '../main/engine/session/store.js';
import { exportVariant } from '../main/engine/export/cu.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { explainShimErrors } from '../main/engine/build/signature.js';
import { readExportedBuild } from '../main/engine/export/read.js';
import { sourceDefines, variantConfig } from '../main/engine/task/config.js';
import { compileOnlyResult } from './fixtures/session-data.js';
import { runCli, showRun, type CliRun } from './fixtures/cli.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { DEFAULT_BUFFER_SETS, DEFAULT_DUEL_NOISE, makeEvaluator } from '../main/core/evaluators.js';
import { PRECISE_TIMING, renderPlan } from '../main/engine/measure/harness.js';
import { resumeRunOptions } from '../main/core/run/resume.js';
import { readSessionMeta } from '../main/engine/session/store.js';

let home: string;
let work: string;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-eval-home-'));
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-eval-work-'));
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

const cli = (...args: string[]): Promise<CliRun> => runCli(home, args);
const show = showRun;

interface EvalJson {
  variant: { config: Record<string, string>; configFrom: Record<string, string>; flags: { fastMath?: boolean; maxrregcount?: number }; transforms: string[] };
  result: { build: { ok: boolean; command: string[] }; failure?: { kind: string; reason: string } };
  duel?: { failure?: { reason: string } };
  duelBuild?: { ok: boolean };
  duelNote?: string;
}

describe('export → eval', () => {
  it.skipIf(NO_NVCC)('an exported variant is built with its own configuration and flags, not the task defaults', async () => {
    const task = resolveTask('softmax');
    const config = { BLOCK: 512, TPR: 32, VEC: 4, ONLINE: 1, CACHE: 0 };
    // The variant refuses to build with any other configuration.
    const source = `${task.baselineSource}\n#if BLOCK != 512 || TPR != 32 || VEC != 4 || ONLINE != 1\n#error "built with another configuration than the exported one"\n#endif\n`;
    const s = createSession(path.join(home, 'sessions'), { id: newSessionId(), task: { name: 'softmax', dir: task.dir, manifestHash: task.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: 'test' });
    s.append({ type: 'variant', variant: { id: 'v1', source, config, flags: { opt: 3, fastMath: true, maxrregcount: 64 }, transforms: ['restrict:x'], origin: 'random', parents: [], createdAt: new Date().toISOString() } });
    s.append({ type: 'result', variantId: 'v1', result: compileOnlyResult() });
    const file = path.join(work, 'exported.cu');
    exportVariant(s, 'v1', file);
    s.close();
    expect(readExportedBuild(fs.readFileSync(file, 'utf8'))).toEqual({ flags: { opt: 3, fastMath: true, maxrregcount: 64 }, transforms: ['restrict:x'] });

    const r = await cli('eval', 'softmax', file, '--json');
    expect(r.code, show(r)).toBe(0);
    const j = JSON.parse(r.stdout) as EvalJson;
    expect(j.result.build.ok).toBe(true);
    expect(j.variant.config).toEqual({ BLOCK: '512', TPR: '32', VEC: '4', ONLINE: '1', CACHE: '0' });
    expect(Object.values(j.variant.configFrom)).toEqual(['the file', 'the file', 'the file', 'the file', 'the file']);
    expect(j.variant.flags).toMatchObject({ fastMath: true, maxrregcount: 64 });
    expect(j.result.build.command).toContain('--use_fast_math');
    expect(j.result.build.command.filter((a) => a.startsWith('-D'))).toEqual([]);

    // The text output echoes what was built.
    const t = await cli('eval', 'softmax', file);
    expect(t.code, show(t)).toBe(0);
    expect(t.stderr).toContain("configuration: BLOCK=512 TPR=32 VEC=4 ONLINE=1 CACHE=0 (the file's #defines)");
    expect(t.stderr).toMatch(/flags: -O3 -Xptxas -O3 --use_fast_math -maxrregcount=64 \(the file's KernelDuel header\)/);
    expect(t.stderr).toContain("transforms: restrict:x (already in the file's code)");

    // --config still wins over the file's #ifndef-guarded values (and here trips its #error).
    const c = await cli('eval', 'softmax', file, '--config', 'BLOCK=256');
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('configuration: BLOCK=256 (--config), TPR=32 VEC=4 ONLINE=1 CACHE=0 (the file\'s #defines)');
  }, 170_000);

  it('sourceDefines / variantConfig: the file\'s values, guarded or not; defaults only for the rest', () => {
    const src = '#ifndef A\n#define A 4 // four\n#endif\n#define B (2*8)\n';
    expect([...sourceDefines(src, ['A', 'B', 'C'])]).toEqual([['A', { value: '4', guarded: true }], ['B', { value: '(2*8)', guarded: false }]]);
    const task = resolveTask('softmax');
    const v = variantConfig(task, '#ifndef BLOCK\n#define BLOCK 64\n#endif\n#define VEC 2\n', { VEC: 4 }, { fromFile: true });
    expect(v.defines).toEqual({ TPR: 1, VEC: 4, ONLINE: 0, CACHE: 0 });
    expect(v.effective).toEqual([
      { name: 'BLOCK', value: '64', from: 'the file' },
      { name: 'TPR', value: '1', from: 'task defaults' },
      { name: 'VEC', value: '2', from: 'the file' },
      { name: 'ONLINE', value: '0', from: 'task defaults' },
      { name: 'CACHE', value: '0', from: 'task defaults' },
    ]);
    expect(v.overridden[0]).toMatch(/^VEC=4 \(the file's own #define VEC 2 has no #ifndef/);
    // The baseline keeps the task's defaults as -D, as the optimiser builds it.
    expect(variantConfig(task, task.baselineSource, {}, { fromFile: false }).defines).toEqual(task.manifest.defaults);
  });
});

describe('--config', () => {
  it.skipIf(NO_NVCC)('refuses an unknown tunable and a value off its list, naming the valid ones; --allow-off-list lets a value through and says so', async () => {
    const unknown = await cli('eval', 'softmax', '--config', 'NOPE=3');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--config NOPE=3: task softmax has no tunable NOPE \(its tunables: BLOCK, TPR, VEC, ONLINE, CACHE\)/);
    const off = await cli('eval', 'softmax', '--config', 'BLOCK=100');
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/BLOCK=100 is not one of BLOCK's values \(32, 64, 128, 256, 512, 1024\).*--allow-off-list/);
    const allowed = await cli('eval', 'softmax', '--config', 'BLOCK=96', '--allow-off-list');
    expect(allowed.code, show(allowed)).toBe(0);
    expect(allowed.stderr).toMatch(/note: --allow-off-list: BLOCK=96 is not one of BLOCK's values .*built anyway/);
    expect(allowed.stderr).toContain('configuration: BLOCK=96 (--config), TPR=1 VEC=1 ONLINE=0 CACHE=0 (task defaults)');
  }, 120_000);
});

describe('--buffer-sets', () => {
  it('refuses a number of buffer sets outside 1-64, naming the flag and the value', async () => {
    for (const bad of ['0', '65', '2.5', 'many']) {
      const r = await cli('eval', 'softmax', '--buffer-sets', bad);
      expect(r.code, show(r)).toBe(1);
      expect(r.stderr).toMatch(/--buffer-sets must be a whole number from 1 to 64 \(got (0|65|2\.5|NaN)\)/);
    }
  }, 60_000);
  it.skipIf(NO_NVCC)('reaches the evaluator\'s timing settings (the plan the judge reads); the default is 8', async () => {
    const task = resolveTask('axpy');
    const ev = await makeEvaluator(task, { gpu: null, bufferSets: 16, maxMs: 500 });
    expect(ev.timing).toMatchObject({ bufferSets: 16, maxMs: 500 });
    const plain = await makeEvaluator(task, { gpu: null });
    expect(plain.timing.bufferSets).toBe(DEFAULT_BUFFER_SETS);
    expect(DEFAULT_BUFFER_SETS).toBe(8);
    ev.close();
    plain.close();
  });
  it.skipIf(NO_NVCC)('takes one inside it (compile-only here: the variant is built)', async () => {
    const r = await cli('eval', 'axpy', '--buffer-sets', '16');
    expect(r.code, show(r)).toBe(0);
  }, 120_000);
});

describe('--precise', () => {
  it('refuses --max-ms and --buffer-sets beside it, naming both', async () => {
    for (const extra of [['--max-ms', '500'], ['--buffer-sets', '8']]) {
      const r = await cli('eval', 'softmax', '--precise', ...extra);
      expect(r.code, show(r)).toBe(1);
      expect(r.stderr).toMatch(/--precise sets its own time and buffer sets: leave out --max-ms and --buffer-sets with it/);
    }
  }, 60_000);
  it.skipIf(NO_NVCC)('gives the evaluator the precise timing (4 executors, at least 2.5 s), which reaches the judge\'s plan as timectx 4', async () => {
    const task = resolveTask('axpy');
    const ev = await makeEvaluator(task, { gpu: null, precise: true });
    expect(ev.timing).toMatchObject({ ...PRECISE_TIMING, bufferSets: DEFAULT_BUFFER_SETS });
    expect(PRECISE_TIMING).toMatchObject({ timingContexts: 4, minMs: 2500 });
    expect(renderPlan({ task, sizes: [0], seeds: [1], timed: [0], timing: ev.timing }, 'n')).toMatch(/^timectx 4$/m);
    ev.close();
    await expect(makeEvaluator(task, { gpu: null, precise: true, maxMs: 100 })).rejects.toThrow(/leave out maxMs and bufferSets/);
  });
  it.skipIf(NO_NVCC)('runs compile-only here (no GPU: the variant is built, nothing timed)', async () => {
    const r = await cli('eval', 'axpy', '--precise');
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/compile-only/);
  }, 120_000);
});

/** A budget-0 session started with `flag value` keeps it in its settings, resumes with it and refuses another value on --resume. */
async function keptOnResume(flag: string, key: 'duelNoise' | 'duelSkip' | 'timeCutoff', value: number, other: number): Promise<void> {
  const r = await cli('optimize', 'axpy', flag, String(value), '--budget', '0');
  expect(r.code, show(r)).toBe(0);
  const id = /session (\S+) /.exec(r.stderr + r.stdout)?.[1];
  expect(id, show(r)).toBeTruthy();
  const meta = readSessionMeta(path.join(home, 'sessions'), id!);
  expect(meta.settings?.backend).toMatchObject({ kind: 'gpu', [key]: value });
  expect(resumeRunOptions(meta, {}).backend).toMatchObject({ kind: 'gpu', [key]: value });
  expect(() => resumeRunOptions(meta, { [key]: other })).toThrow(new RegExp(flag));
}

/** `optimize --flag bad` exits 1 with `message` for each bad value, and `--flag good` with `replayMessage` beside --replay. */
async function refusesFlag(flag: string, bads: string[], message: RegExp, good: string, replayMessage: RegExp): Promise<void> {
  for (const bad of bads) {
    const r = await cli('optimize', 'softmax', flag, bad, '--budget', '0');
    expect(r.code, show(r)).toBe(1);
    expect(r.stderr).toMatch(message);
  }
  const replay = await cli('optimize', 'softmax', flag, good, '--replay', path.join(import.meta.dirname, '..', 'bench', 'spaces', 'h200', 'softmax.json'), '--budget', '1');
  expect(replay.code, show(replay)).toBe(1);
  expect(replay.stderr).toMatch(replayMessage);
}

describe('optimize --duel-noise', () => {
  it('refuses a value outside (0, 0.05] and a REPLAY, naming the flag', async () => {
    await refusesFlag('--duel-noise', ['0', '0.2', 'x'], /--duel-noise must be a fraction above 0 and at most 0\.05 \(got (0|0\.2|NaN)\)/, '0.005', /--duel-noise applies to duels measured on a GPU/);
  }, 60_000);
  it.skipIf(NO_NVCC)('reaches the judge\'s plan, is kept in the session and resumed with; another value on --resume is refused', async () => {
    const task = resolveTask('axpy');
    const ev = await makeEvaluator(task, { gpu: null, duelNoise: 0.005 });
    expect(ev.timing.duelTargetRelNoise).toBe(0.005);
    ev.close();
    expect(DEFAULT_DUEL_NOISE).toBe(0.0025);
    await keptOnResume('--duel-noise', 'duelNoise', 0.005, 0.01);
  }, 120_000);
});

describe('optimize --duel-skip', () => {
  it('refuses a value outside [0.01, 1] and a REPLAY, naming the flag', async () => {
    await refusesFlag('--duel-skip', ['0.001', '2', 'x'], /--duel-skip must be a fraction from 0\.01 to 1 \(got (0\.001|2|NaN)\)/, '0.05', /--duel-skip applies to duels measured on a GPU/);
  }, 60_000);
  it.skipIf(NO_NVCC)('is kept in the session and resumed with; another value on --resume is refused', async () => {
    await keptOnResume('--duel-skip', 'duelSkip', 0.05, 0.1);
  }, 120_000);
});

describe('optimize --time-cutoff', () => {
  it('refuses a value that is neither 0 nor from 1.5 to 1000, and a REPLAY, naming the flag', async () => {
    await refusesFlag('--time-cutoff', ['1.2', '-1', 'x'], /--time-cutoff must be 0 \(off\) or a multiple of the best's median from 1\.5 to 1000 \(got (1\.2|-1|NaN)\)/, '3', /--time-cutoff applies to timings measured on a GPU/);
  }, 60_000);
  it.skipIf(NO_NVCC)('is kept in the session and resumed with (0, off, too); another value on --resume is refused', async () => {
    await keptOnResume('--time-cutoff', 'timeCutoff', 5, 3);
    await keptOnResume('--time-cutoff', 'timeCutoff', 0, 3);
  }, 180_000);
});

describe('--duel without a GPU', () => {
  it.skipIf(NO_NVCC)('builds the other variant too: a broken one fails eval, a good one is built and the duel is said to need a GPU', async () => {
    const task = resolveTask('axpy');
    const broken = path.join(work, 'axpy-broken.cu');
    fs.writeFileSync(broken, task.baselineSource.replace(/\{/, '{ int q = ;'));
    const good = path.join(work, 'axpy-copy.cu');
    fs.writeFileSync(good, task.baselineSource);
    const r = await cli('eval', 'axpy', '--duel', broken, '--json');
    expect(r.code, show(r)).toBe(2);
    expect((JSON.parse(r.stdout) as EvalJson).duel?.failure?.reason).toMatch(/error/);
    const g = await cli('eval', 'axpy', '--duel', good);
    expect(g.code, show(g)).toBe(0);
    expect(g.stdout).toMatch(/duel: .*axpy-copy\.cu builds too; timing the duel needs a GPU/);
  }, 120_000);
});

describe('compile-only builds the reference', () => {
  it.skipIf(NO_NVCC)('a task whose reference.cu does not compile fails eval without a GPU, naming the reference', async () => {
    const dir = path.join(work, 'axpy-badref');
    fs.cpSync(path.join(builtinTasksDir(), 'axpy'), dir, { recursive: true });
    fs.appendFileSync(path.join(dir, 'reference.cu'), '\nthis is not C++;\n');
    const r = await cli('eval', dir);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toMatch(/FAILED \[compile\]: the reference of task axpy \(.*reference\.cu\) does not build/);
  }, 120_000);
});

describe('a signature mismatch', () => {
  it.skipIf(NO_NVCC)('names the expected signature from task.yaml and the argument that differs', async () => {
    const task = resolveTask('axpy');
    const sig = /void axpy\(([^)]*)\)/.exec(task.baselineSource)![1];
    const f = path.join(work, 'axpy-sig.cu');
    fs.writeFileSync(f, task.baselineSource.replace(`void axpy(${sig})`, `void axpy(${sig.replace(/const float\*/, 'float*')})`));
    const r = await cli('eval', 'axpy', f);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toMatch(/FAILED \[compile\]: the entry point does not match the task's signature: expected void axpy\(.*\) \(the args of task\.yaml\); line \d+: parameter \d \(x\) is "float\* x", expected const float\*/);
    expect(r.stdout).not.toMatch(/FAILED \[compile\]: shim\.cu/);
  }, 120_000);

  it('falls back to the argument nvcc points at when the source looks right', () => {
    const task = resolveTask('axpy');
    const log = 'shim.cu(5): error: argument of type "float *" is incompatible with parameter of type "double *"\n    axpy((const float*)a[0], (float*)a[1], *(const float*)a[2], *(const int*)a[3]);\n                             ^\n';
    const m = explainShimErrors(task, task.baselineSource, log);
    expect(m).toMatch(/expected void axpy\(const float\* x, float\* y, float a, int n\) \(the args of task\.yaml\); argument 2 \(y\) differs \(nvcc: argument of type "float \*" is incompatible/);
    expect(explainShimErrors(task, task.baselineSource, 'variant.cu(3): error: oops')).toBeNull();
  });
});
