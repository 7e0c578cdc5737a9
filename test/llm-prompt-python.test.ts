// The CUDA-L1 prompt for Python candidates (ModelNew) of a PyTorch-reference task: what the model
// sees (the PyTorch reference's source, the rules a Python candidate is judged by, earlier
// candidates with their measured speedups and labels, where they were measured) and how its answer
// is read (one ```python block defining ModelNew). Pure: no torch, no server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPrompt, PYTHON_SYSTEM_PROMPT, SYSTEM_PROMPT } from '../main/engine/llm/prompt.js';
import { parsePythonAnswer } from '../main/engine/llm/parse.js';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { pythonCandidateTask } from '../main/core/python-measurer.js';
import { PY_CANDIDATES, PY_PROBLEM, pyAnswer, writePythonTask } from './fixtures/python-task.js';

let dir = '';
let task: Task;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kd-pyprompt-'));
  task = pythonCandidateTask(loadTask(writePythonTask(dir)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the prompt for Python candidates', () => {
  it('carries the PyTorch reference, the rules of a Python candidate, the device and the eager baseline', () => {
    const p = buildPrompt({ task, exemplars: [], baselineMs: 0.0165, candidates: 'python', device: "CPU (torch without CUDA): the times below are CPU times, not a GPU's" });
    expect(p.messages[0]).toEqual({ role: 'system', content: PYTHON_SYSTEM_PROMPT });
    const user = p.messages[1].content;
    // The reference module's whole source, as Python.
    expect(user).toContain(`\`\`\`python\n${PY_PROBLEM.trimEnd()}\n\`\`\``);
    expect(user).toContain('`ModelNew` must compute exactly what `Model` computes');
    expect(user).toContain('# Task: py-linrelu');
    expect(user).toContain('What it computes: y = relu(x W^T + b)');
    expect(user).toContain("size 0 (timed): the reference file's own constants");
    expect(user).toContain('lin_weight: input or parameter, f32, shape [32, 32]');
    expect(user).toContain("Tolerance (KernelBench's): |got-exp| <= 1e-4 + 1e-4*|exp| for float32 outputs");
    expect(user).toContain("Measured on: CPU (torch without CUDA): the times below are CPU times, not a GPU's.");
    expect(user).toContain('Baseline (the reference module run eagerly by PyTorch) on the timed size: 0.017 ms.');
    // The rules it is judged by.
    expect(user).toContain('defines `class ModelNew(nn.Module)`');
    expect(user).toContain('in the same order');
    expect(user).toMatch(/falls back to PyTorch code is labelled fallback and counts as FAILED/);
    expect(user).toContain('labelled pytorch-only');
    expect(user).toContain("do not change torch's precision flags");
    // No exemplar yet: the baseline (the reference as ModelNew) is shown.
    expect(user).toContain('None has been measured yet besides the baseline (speedup 1.000×), which is the reference module itself run eagerly:');
    expect(user).toContain('class ModelNew(Model):\n    pass');
    // The answer: a python block, not CUDA; nothing of the CUDA entry point's rules.
    expect(user).toContain('One complete ```python code block');
    expect(user).not.toContain('```cuda');
    expect(user).not.toContain('Keep the entry point exactly');
    expect(user).not.toContain('void model_forward');
  });

  it('shows earlier candidates with their measured speedups, verdicts and labels', () => {
    const p = buildPrompt({
      task, candidates: 'python', device: 'GPU NVIDIA H200', bestSpeedup: 1.8,
      exemplars: [
        { id: 'v3', source: PY_CANDIDATES.good, speedup: 1.8, medianMs: 0.01, verdict: 'faster', label: 'custom' },
        { id: 'v1', source: PY_CANDIDATES.good2, speedup: 0.9, medianMs: 0.02, verdict: 'slower', label: 'pytorch-only' },
      ],
    });
    const user = p.messages[1].content;
    expect(user).toContain('# Earlier variants, with their measured speedups over the baseline (the reference run eagerly)');
    expect(user).toContain('## Variant A (v3): speedup 1.800× (0.010 ms), verdict vs baseline: faster, label: custom');
    expect(user).toContain(`\`\`\`python\n${PY_CANDIDATES.good.trimEnd()}\n\`\`\``);
    expect(user).toContain('## Variant B (v1): speedup 0.900× (0.020 ms), verdict vs baseline: slower, label: pytorch-only');
    expect(user).toContain('The best speedup found so far in this session is 1.800×.');
    expect(user).toContain('Measured on: GPU NVIDIA H200.');
    // The prompt id is the GRPO group key: other exemplars, another prompt.
    expect(p.promptId).not.toBe(buildPrompt({ task, candidates: 'python', exemplars: [] }).promptId);
  });

  it('a CUDA task\'s prompt is unchanged: CUDA rules and code, no ModelNew', () => {
    const p = buildPrompt({ task: resolveTask('softmax'), exemplars: [] });
    expect(p.messages[0].content).toBe(SYSTEM_PROMPT);
    expect(p.messages[1].content).toContain('```cuda');
    expect(p.messages[1].content).not.toContain('ModelNew');
  });
});

describe('reading a Python answer', () => {
  it('takes the python block that defines ModelNew, with the analysis and design', () => {
    const text = `${pyAnswer(PY_CANDIDATES.good)}`.replace('## Code\n', '## Code\nThe kernel alone:\n```cuda\n__global__ void k() {}\n```\nThe file:\n');
    const r = parsePythonAnswer(text);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts.code).toBe(PY_CANDIDATES.good);
    expect(r.parts.analysis).toContain('The baseline launches separate operators');
    expect(r.parts.design).toBe('One pass over the output.');
  });

  it('refuses an answer with CUDA only, without ModelNew, or cut off', () => {
    expect(parsePythonAnswer('## Code\n```cuda\n__global__ void k() {}\n```\n')).toMatchObject({ ok: false, reason: 'the answer has no ```python code block' });
    expect(parsePythonAnswer(pyAnswer(PY_CANDIDATES.noModelNew))).toMatchObject({ ok: false, reason: 'the code defines no class ModelNew' });
    expect(parsePythonAnswer(pyAnswer(PY_CANDIDATES.good).slice(0, -6))).toMatchObject({ ok: false, reason: 'the code block is not closed (the answer was cut off?)' });
  });
});
