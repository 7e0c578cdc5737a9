// `--resume <id>` continues a session with its own settings: strategy, budget, seed, backend (a
// REPLAY stays a REPLAY of its recording, a compile-only session stays compile-only, a GPU session
// stays on its GPU), flags and transforms, and the contrastive policy's state; options given on
// the command line that differ are refused with a message. Unlike test/kill-resume.test.ts (the
// same flags on every run), the CLI here is given the id alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resumeRunOptions, ResumeConflict } from '../main/core/run/resume.js';
import { prepareRun } from '../main/core/run/prepare.js';
import { runLoop } from '../main/engine/search/loop.js';
import { openSession, openSessionReadOnly, readSessionMeta } from '../main/engine/session/store.js';
import type { SessionMeta } from '../main/engine/session/events.js';
import { readPolicyState } from '../main/engine/session/policy-state.js';
import type { ContrastiveState } from '../main/engine/search/contrastive.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { cliEnv, runCli, KERNELDUEL_BIN, REPO, type CliRun } from './fixtures/cli.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { kernelTunerCacheToSpace, parseKernelTunerCache } from '../main/engine/interop/kernel-tuner.js';
import { writeJsonFile } from '../main/engine/interop/files.js';

const RECORDING = path.join(REPO, 'bench', 'spaces', 'h200', 'softmax.json');
const SOFTMAX = path.join(builtinTasksDir(), 'softmax');
// The sessions that really replay use stencil2d: softmax's kernel and tunables changed (issue 17)
// after bench/spaces/h200/softmax.json was recorded, so its baseline is no longer in that recording.
const STENCIL_RECORDING = path.join(REPO, 'bench', 'spaces', 'h200', 'stencil2d.json');
const STENCIL = path.join(builtinTasksDir(), 'stencil2d');

let home: string;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-resume-'));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function meta(settings: Record<string, unknown>, gpu: SessionMeta['gpu'] = null): SessionMeta {
  return { id: 'S1', task: { name: 'softmax', dir: SOFTMAX, manifestHash: 'x' }, gpu, settings, createdAt: '', kernelduelVersion: 'test' };
}

describe('resumeRunOptions (what a resume continues with)', () => {
  const replay = meta({ strategy: 'contrastive', budget: 200, seed: 7, backend: { kind: 'replay', recording: RECORDING, seed: 7 }, flags: true, transforms: true });

  it('with nothing given: the session\'s strategy, budget, seed, REPLAY backend, flags and transforms', () => {
    expect(resumeRunOptions(replay, {})).toEqual({ strategy: 'contrastive', budget: 200, seed: 7, backend: { kind: 'replay', recording: RECORDING, seed: 7 }, flags: true, transforms: true });
    // The same values given again are not a conflict.
    expect(resumeRunOptions(replay, { strategy: 'contrastive', budget: 200, seed: 7, replay: RECORDING, taskDir: SOFTMAX }).budget).toBe(200);
  });

  it('refuses every option that differs, naming it and the session\'s value', () => {
    let err: unknown;
    try {
      resumeRunOptions(replay, { strategy: 'random', budget: 50, seed: 1, tunablesOnly: true, gpu: 0, taskDir: path.join(builtinTasksDir(), 'axpy') });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ResumeConflict);
    const m = (err as Error).message;
    for (const want of ['--strategy random: the session has contrastive', '--budget 50: the session has 200', '--seed 1: the session has 7', '--tunables-only', '--gpu 0: the session is a REPLAY', 'the session is of task softmax']) expect(m).toContain(want);
    expect(m).toMatch(/leave them out to resume it \(`kernelduel optimize --resume S1`\)/);
  });

  it('a compile-only session stays compile-only; a GPU session stays on its GPU; neither takes a recording', () => {
    const co = meta({ strategy: 'random', budget: 10, seed: 1, backend: { kind: 'gpu', arch: 'sm_80', compileOnly: true }, flags: false, transforms: false });
    expect(resumeRunOptions(co, {}).backend).toEqual({ kind: 'gpu', noGpu: true, arch: 'sm_80' });
    expect(resumeRunOptions(co, {}).flags).toBe(false);
    expect(() => resumeRunOptions(co, { gpu: 0 })).toThrow(/--gpu 0: the session is compile-only/);
    expect(() => resumeRunOptions(co, { arch: 'sm_90' })).toThrow(/--arch sm_90: the session has sm_80/);
    const gpu = meta({ strategy: 'random', budget: 10, seed: 1, backend: { kind: 'gpu', arch: 'sm_90' } }, { name: 'NVIDIA H200', uuid: 'GPU-abc', arch: 'sm_90' });
    expect(resumeRunOptions(gpu, {}).backend).toEqual({ kind: 'gpu', uuid: 'GPU-abc', gpuName: 'NVIDIA H200', arch: 'sm_90' });
    expect(() => resumeRunOptions(gpu, { replay: RECORDING })).toThrow(/measures on GPU NVIDIA H200, not a REPLAY/);
  });

  it('a session made before flags were kept takes --tunables-only from the command line; LLM flags must match', () => {
    const old = meta({ strategy: 'llm', budget: 5, seed: 2, backend: { kind: 'gpu' }, llm: { baseURL: 'http://127.0.0.1:11434/v1', model: 'm1' } });
    expect(resumeRunOptions(old, { tunablesOnly: true })).toMatchObject({ flags: false, transforms: false, backend: { kind: 'gpu', noGpu: true } });
    expect(resumeRunOptions(old, {})).toMatchObject({ flags: true, transforms: true });
    expect(() => resumeRunOptions(old, { llm: { model: 'm2' } })).toThrow(/--llm-model m2: the session has m1/);
  });
});

const cli = (...args: string[]): Promise<CliRun> => runCli(home, args);

describe('kernelduel optimize --resume <id> alone', () => {
  let id = '';

  it('a contrastive REPLAY session stopped part-way continues as contrastive REPLAY with its budget, and finishes at it', async () => {
    // Started (as `optimize stencil2d --strategy contrastive --budget 40 --seed 5 --replay …` would) and stopped after 25.
    const run = await prepareRun({ task: 'stencil2d', strategy: 'contrastive', budget: 40, seed: 5, backend: { kind: 'replay', recording: STENCIL_RECORDING, seed: 5 }, sessionsRoot: path.join(home, 'sessions') });
    id = run.session.meta.id;
    const ac = new AbortController();
    await runLoop({ session: run.session, evaluator: run.measurer, strategy: run.strategy, budget: 40, signal: ac.signal, onEvent: (e) => e.type === 'result' && e.index >= 25 && ac.abort() });
    const stoppedState = run.strategy.saveState!() as ContrastiveState;
    run.session.close();
    expect(readPolicyState(path.join(home, 'sessions', id))?.state).toEqual(stoppedState);
    expect(stoppedState.logits.flat().some((x) => x !== 0)).toBe(true); // the policy has learned something to keep

    const r = await cli('optimize', '--resume', id);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/resumed, stencil2d, contrastive, budget 40, seed 5, REPLAY of /);
    expect(r.stderr).not.toMatch(/compile-only/);
    const s = openSession(path.join(home, 'sessions'), id);
    try {
      const measured = s.variants().filter((v) => v.origin !== 'baseline' && s.resultOf(v.id));
      expect(measured).toHaveLength(40);
      for (const v of s.variants()) expect(s.resultOf(v.id)?.source.kind, v.id).toBe('replay');
      expect(s.status()).toMatchObject({ status: 'finished', budgetUsed: 40 });
      expect(s.variants().slice(26).every((v) => /^(random|policy|anneal arm|trust region)/.test(v.origin))).toBe(true); // the contrastive policy's (or its annealing arm's, or its trust region's, on by default since issue 18's fourteenth round), not random search's
    } finally {
      s.close();
    }
  }, 150_000);

  it('the resumed policy starts from the state it was stopped with (logits, stage, random stream)', async () => {
    const root = path.join(home, 'policy');
    const first = await prepareRun({ task: 'stencil2d', strategy: 'contrastive', budget: 40, seed: 9, backend: { kind: 'replay', recording: STENCIL_RECORDING, seed: 9 }, sessionsRoot: root });
    const sid = first.session.meta.id;
    const ac = new AbortController();
    await runLoop({ session: first.session, evaluator: first.measurer, strategy: first.strategy, budget: 40, signal: ac.signal, onEvent: (e) => e.type === 'result' && e.index >= 20 && ac.abort() });
    const stopped = first.strategy.saveState!() as ContrastiveState;
    first.session.close();
    // Resumed as the CLI resumes it, with no budget left to spend: all it has is what runLoop gave back.
    const again = await prepareRun({ task: STENCIL, resume: sid, sessionsRoot: root, ...resumeRunOptions(readSessionMeta(root, sid), {}) });
    expect(again.strategy.name).toBe('contrastive');
    await runLoop({ session: again.session, evaluator: again.measurer, strategy: again.strategy, budget: 20 });
    again.session.close();
    const resumed = again.strategy.saveState!() as ContrastiveState;
    expect(resumed.logits).toEqual(stopped.logits);
    expect(resumed.draws).toBe(stopped.draws);
    expect(resumed.tunablesOnly).toBe(stopped.tunablesOnly);
  }, 60_000);

  it('options that differ from the session\'s are refused, and nothing is run', async () => {
    const before = fs.readFileSync(path.join(home, 'sessions', id, 'journal.jsonl'));
    const r = await cli('optimize', 'stencil2d', '--resume', id, '--budget', '60', '--strategy', 'random');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--budget 60: the session has 40/);
    expect(r.stderr).toMatch(/--strategy random: the session has contrastive/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.readFileSync(path.join(home, 'sessions', id, 'journal.jsonl')).equals(before)).toBe(true);
  });

  it('sessions lists the strategy, the REPLAY label, the results against the budget and the status', async () => {
    const r = await cli('sessions');
    expect(r.code, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith(id));
    expect(line).toMatch(new RegExp(`^${id}  stencil2d  contrastive  REPLAY  41 results \\(budget 40\\)  finished  best .*× \\[REPLAY\\]$`));
  });
});

describe('kernelduel sessions after a kill', () => {
  it.skipIf(NO_NVCC)('shows the killed session as interrupted, with the results its journal holds (not a stale summary)', async () => {
    const h = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-killed-'));
    try {
      const child = spawn(process.execPath, [KERNELDUEL_BIN, 'optimize', 'axpy', '--budget', '50', '--tunables-only'], { cwd: REPO, env: cliEnv(h), stdio: 'ignore' });
      const sessions = path.join(h, 'sessions');
      const measured = (): number => {
        const ids = fs.existsSync(sessions) ? fs.readdirSync(sessions) : [];
        if (!ids.length || !fs.existsSync(path.join(sessions, ids[0], 'journal.jsonl'))) return 0;
        const s = openSessionReadOnly(sessions, ids[0]);
        return s.events().filter((e) => e.type === 'result').length;
      };
      const t0 = Date.now();
      while (measured() < 3 && Date.now() - t0 < 100_000) await new Promise((res) => setTimeout(res, 200));
      child.kill('SIGKILL');
      await new Promise((res) => child.on('exit', res));
      const n = measured();
      expect(n).toBeGreaterThanOrEqual(3);
      const r = await runCli(h, ['sessions', '--json']);
      const [s] = JSON.parse(r.stdout) as Array<{ results: number; status: string }>;
      expect(s.status).toBe('interrupted');
      expect(s.results).toBe(n);
    } finally {
      fs.rmSync(h, { recursive: true, force: true });
    }
  }, 150_000);
});

describe('a session of a replayed space without kernel source', () => {
  it('resumes with its own task name given again (it names no folder), and finishes at its budget', async () => {
    // A small Kernel Tuner cache: 4 × 4 configurations, time smallest at x=64, y=2.
    const cache: Record<string, unknown> = {};
    for (const x of [16, 32, 64, 128]) {
      for (const y of [1, 2, 4, 8]) {
        const ms = 1 + Math.abs(Math.log2(x / 64)) * 0.4 + Math.abs(Math.log2(y / 2)) * 0.2;
        cache[`${x},${y}`] = { x, y, time: ms, times: [ms * 1.01, ms * 0.99, ms, ms], compile_time: 1, verification_time: 0, benchmark_time: 1, strategy_time: 0, framework_time: 0, timestamp: '2023-12-22 09:50:00.000000+00:00' };
      }
    }
    const kt = { device_name: 'NVIDIA Synthetic GPU', kernel_name: 'toy', problem_size: [1024], tune_params_keys: ['x', 'y'], tune_params: { x: [16, 32, 64, 128], y: [1, 2, 4, 8] }, objective: 'time', cache };
    const { space } = kernelTunerCacheToSpace(parseKernelTunerCache(JSON.stringify(kt), 'toy.json'), { name: 'toyspace', file: 'toy.json', sha256: 'abc', command: 'test', importedAt: '2026-12-01T00:00:00.000Z' });
    const file = path.join(home, 'toyspace.json');
    writeJsonFile(file, space);
    const root = path.join(home, 'sessions');
    const run = await prepareRun({ task: 'toyspace', strategy: 'contrastive', budget: 12, seed: 3, backend: { kind: 'replay', recording: file, seed: 3 }, sessionsRoot: root });
    const sid = run.session.meta.id;
    const ac = new AbortController();
    await runLoop({ session: run.session, evaluator: run.measurer, strategy: run.strategy, budget: 12, signal: ac.signal, onEvent: (e) => e.type === 'result' && e.index >= 5 && ac.abort() });
    run.session.close();
    const named = await cli('optimize', 'toyspace', '--resume', sid);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).not.toMatch(/no task "toyspace"/);
    // Nothing to export as .cu: the closing lines say so rather than suggest `kernelduel export`.
    expect(named.stderr).toMatch(/the recording has no kernel source: the configuration above is the result/);
    expect(named.stderr).not.toMatch(/export it with/);
    const s = openSession(root, sid);
    try {
      expect(s.variants().filter((v) => v.origin !== 'baseline' && s.resultOf(v.id))).toHaveLength(12);
      expect(s.status()).toMatchObject({ status: 'finished', budgetUsed: 12 });
    } finally {
      s.close();
    }
    // Another task's name is still refused, naming the session's task.
    const other = await cli('optimize', 'softmax', '--resume', sid);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/the session is of task toyspace/);
  }, 120_000);
});
