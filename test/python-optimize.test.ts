// `kernelduel optimize` on a PyTorch-reference task with Python candidates (ModelNew), end to end as
// a child process on the CPU (Debian's torch, no GPU), the LLM policy answered by the local fake
// OpenAI-compatible server: the prompt carries the PyTorch reference; every answer is judged by the
// trusted runner and journaled with its label and guarantee level; a correct rewrite is timed and
// duelled; wrong outputs, a fallback, an import error and an answer without ModelNew fail, each with
// its reason; every time is labelled CPU (source `cpu`, `[CPU]` in the output), never a GPU's.
// What a GPU run adds (custom kernels, custom share, GPU times) is in docs/GPU-RUNS.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeServer, type FakeServer } from './fixtures/llm/server.js';
import { PY_CANDIDATES, PY_PROBLEM, pyAnswer, writePythonTask } from './fixtures/python-task.js';
import { kernelduelCli } from './fixtures/cli.js';
import { openSessionReadOnly, sessionsRoot } from '../main/engine/session/store.js';
import { llmInfoOf } from '../main/engine/llm/variant-info.js';
import type { EvalResult } from '../main/engine/base/types.js';
import { TORCH_MAJOR, TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';

let srv: FakeServer;
let home = '';
let taskDir = '';

const cli = (args: string[]): ReturnType<typeof kernelduelCli> => kernelduelCli(home, TORCH_PYTHON ?? '/usr/bin/python3', args);

const ORDER = ['good', 'wrong', 'fallback', 'syntax', 'noModelNew', 'good2'] as const;

describe.skipIf(!TORCH_PYTHON)(`kernelduel optimize with Python candidates on the CPU (${TORCH_SKIP_REASON})`, () => {
  let run: { code: number | null; stdout: string; stderr: string };
  let sessionId = '';
  beforeAll(async () => {
    srv = await startFakeServer();
    srv.handler = (_body, i) => ({ type: 'ok', text: pyAnswer(PY_CANDIDATES[ORDER[i % ORDER.length]], `answer ${i}`), chunk: 200 });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-pyopt-'));
    taskDir = writePythonTask(home);
    run = await cli(['optimize', taskDir, '--strategy', 'llm', '--budget', String(ORDER.length), '--duel-rounds', '2', '--llm-base-url', srv.url, '--llm-model', 'fake-model']);
    sessionId = /session (\S+) \(/.exec(run.stderr)?.[1] ?? '';
  }, 300_000);
  afterAll(async () => {
    await srv?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('runs to the end, says the candidates are Python and that every time is a CPU time', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("its kernel.cu is the import's placeholder, so the candidates are Python (ModelNew) files");
    expect(run.stderr).toContain("CPU: Python candidates are checked and timed on the CPU; every time below is a CPU time, not a GPU's");
    expect(run.stderr).toMatch(/\[\d\/6\] \[CPU\] v\d+ /);
    expect(run.stderr).toMatch(/best \[CPU\]: v\d+.*× the eager baseline on the CPU; label PYTORCH-ONLY, guarantee level python-in-process/);
    expect(run.stderr).not.toMatch(/compile-only/);
  });

  it('times the PyTorch baselines once before the search: eager on the CPU, and why not torch.compile', () => {
    const s = openSessionReadOnly(sessionsRoot({ KERNELDUEL_HOME: home }), sessionId);
    try {
      const events = s.events();
      const at = events.findIndex((e) => e.type === 'pytorch-baselines');
      expect(events.filter((e) => e.type === 'pytorch-baselines')).toHaveLength(1);
      // Before any LLM candidate was proposed (only the baseline variant came before it).
      expect(events.slice(0, at).filter((e) => e.type === 'variant' && e.variant.origin === 'llm')).toHaveLength(0);
      const b = events[at].type === 'pytorch-baselines' ? events[at].baselines : null;
      expect(b).toMatchObject({ device: 'cpu', deviceName: 'cpu', guarantee: 'trusted-python', failure: null, compile: null });
      expect(b!.eager!.medianMs).toBeGreaterThan(0);
      expect(b!.eager!.timer).toBe('wall');
      expect(b!.eager!.samples).toBeGreaterThanOrEqual(10);
      if (TORCH_MAJOR < 2) expect(b!.compileNote).toMatch(/^torch \S+ has no torch\.compile$/);
    } finally {
      s.close();
    }
    expect(run.stderr).toMatch(/PyTorch baselines \[CPU\] \(CPU times, not a GPU's, torch \S+, size \d+, guarantee level trusted-python\): eager [0-9.]+ ms \(wall, \d+ samples\)/);
    // The summary: the best's speedup vs eager, and torch.compile's reason.
    expect(run.stderr).toMatch(/PyTorch baselines \[CPU\] \(CPU times, not a GPU's\), guarantee level trusted-python: eager [0-9.]+ (ms|µs) → best [0-9.]+× vs it; torch\.compile (none \(.+\)|[0-9.]+ (ms|µs) → best)/);
  });

  it('journals every candidate with its outcome: timed rewrites, wrong outputs, fallback, import error, no ModelNew', () => {
    const s = openSessionReadOnly(sessionsRoot({ KERNELDUEL_HOME: home }), sessionId);
    try {
      expect(s.meta.settings.backend).toMatchObject({ kind: 'python', device: 'cpu', duelRounds: 2 });
      expect(s.meta.gpu).toBeNull();
      const vs = s.variants();
      const base = vs.find((v) => v.origin === 'baseline')!;
      // The baseline is the reference module itself, run eagerly.
      expect(base.source).toContain(PY_PROBLEM.trimEnd());
      expect(base.source).toContain('class ModelNew(Model):\n    pass');
      const llm = vs.filter((v) => v.origin === 'llm');
      expect(llm).toHaveLength(ORDER.length);
      const res = (i: number): EvalResult => s.resultOf(llm[i].id)!;
      const byName = Object.fromEntries(ORDER.map((n, i) => [n, res(i)]));
      for (const r of [s.resultOf(base.id)!, ...Object.values(byName)]) {
        expect(r.source.kind === 'cpu' || r.source.kind === 'none', JSON.stringify(r.source)).toBe(true); // never a GPU's figure
      }
      for (const n of ['good', 'good2'] as const) {
        const r = byName[n];
        // An honest rewrite runs at the baseline's speed. On CI's two loaded cores one CPU measurement
        // once read 2.06x, so CUDA-L1's re-measure rule (llm.ts remeasureIfSuspicious) measured it
        // again in a fresh process (0.97x) and rejected the claim: the rule doing its job, not a
        // journaling fault. That outcome is allowed, and only with a second figure near the baseline's.
        if (r.failure) {
          expect(r.failure, JSON.stringify(r.failure)).toMatchObject({ kind: 'rejected' });
          expect(r.failure.reason).toMatch(/^speedup .* not reproduced: re-measured in a fresh process/);
          const again = r.remeasured?.secondMedianMs;
          expect(again, JSON.stringify(r.remeasured)).toBeGreaterThan(0);
          const baseMs = s.resultOf(base.id)!.timing![0].medianMs;
          expect(baseMs / again!).toBeGreaterThan(0.5);
          expect(baseMs / again!).toBeLessThan(2);
        }
        expect(r.source).toMatchObject({ kind: 'cpu' });
        expect(r.python).toMatchObject({ guarantee: 'python-in-process', label: 'pytorch-only', correct: true, correct1e2: true, device: 'cpu', customShare: null });
        expect(r.timing![0].medianMs).toBeGreaterThan(0);
        expect(r.timing![0].samplesMs.length).toBeGreaterThanOrEqual(10);
      }
      expect(s.resultOf(base.id)!.python?.label).toBe('pytorch-only');
      expect(byName.wrong.failure).toMatchObject({ kind: 'correctness' });
      expect(byName.wrong.failure!.reason).toContain("at KernelBench's tolerance; wrong too at 1e-2");
      expect(byName.wrong.python?.label).toBe('pytorch-only');
      expect(byName.wrong.timing).toBeUndefined();
      expect(byName.fallback.failure).toMatchObject({ kind: 'compile' });
      expect(byName.fallback.failure!.reason).toMatch(/^fallback: its extension build failed \(kd_opt_broken/);
      expect(byName.fallback.python?.label).toBe('fallback');
      expect(byName.syntax.failure).toMatchObject({ kind: 'compile' });
      expect(byName.syntax.failure!.reason).toMatch(/^\[import\] SyntaxError/);
      expect(byName.syntax.build.ok).toBe(false);
      expect(byName.noModelNew.failure).toMatchObject({ kind: 'rejected', reason: 'llm answer: the code defines no class ModelNew' });
      // The model's three parts are kept on the variant.
      const info = llmInfoOf(llm[0])!;
      expect(info.model).toBe('fake-model');
      expect(info.analysis).toContain('answer 0');
      // Duels: a timed candidate against the fastest candidate its prompt showed, pairs of fresh-process measurements.
      const duels = s.events().filter((e) => e.type === 'duel');
      expect(duels.length).toBeGreaterThanOrEqual(1);
      for (const d of duels) {
        if (d.type !== 'duel') continue;
        expect(d.result).toMatchObject({ pairs: 2, timer: 'wall' });
        expect(d.result.aMs).toHaveLength(2);
        expect(['faster', 'slower', 'same', 'unsure']).toContain(d.result.verdict);
      }
    } finally {
      s.close();
    }
  });

  it('prompts with the PyTorch reference, then with earlier candidates and their CPU speedups and labels', () => {
    const prompts = srv.requests.filter((r) => r.url.endsWith('/chat/completions')).map((r) => (r.body!.messages as Array<{ content: string }>)[1].content);
    expect(prompts.length).toBe(ORDER.length);
    expect(prompts[0]).toContain(`\`\`\`python\n${PY_PROBLEM.trimEnd()}\n\`\`\``);
    expect(prompts[0]).toContain("Measured on: CPU (torch without CUDA): the times below are CPU times, not a GPU's.");
    expect(prompts[0]).toMatch(/Baseline \(the reference module run eagerly by PyTorch\) on the timed size: [0-9.]+ ms\./);
    // A later prompt shows a measured candidate with its speedup and label.
    expect(prompts.at(-1)).toMatch(/## Variant A \(v\d+\): speedup [0-9.]+× \([0-9.]+ ms\), verdict vs baseline: \w+, label: pytorch-only/);
  });

  it('lists the session as a Python CPU session, and refuses strategies that cannot write Python', async () => {
    const list = await cli(['sessions']);
    expect(list.stdout).toMatch(new RegExp(`${sessionId}\\s+py-linrelu\\s+llm\\s+python CPU \\(CPU times\\).*best [0-9.]+ \\S+ [0-9.]+× \\[CPU\\]`));
    const r = await cli(['optimize', taskDir, '--strategy', 'random', '--budget', '1']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('strategy random cannot propose Python candidates');
    expect(r.stderr).toContain('--strategy llm');
    // Export writes .cu files: a Python candidate is refused, not written as CUDA.
    const e = await cli(['export', sessionId, '--best', '-o', path.join(home, 'best.cu')]);
    expect(e.code).not.toBe(0);
    expect(e.stderr).toContain('is a Python candidate (ModelNew, guarantee level python-in-process): export writes CUDA variants (.cu) only');
    expect(fs.existsSync(path.join(home, 'best.cu'))).toBe(false);
  }, 120_000);
});
