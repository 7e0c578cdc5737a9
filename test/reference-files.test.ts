// A PyTorch task's CUDA entry points judged by the CUDA harness, as far as a machine without a GPU
// can take it (docs/PYTHON-CANDIDATES.md, "The CUDA entry point of the same task"): the reference
// data PyTorch writes (here on the CPU) with its sha256 manifest; the judge's plan lines; the
// harness's own checks of that data (reffiles-selftest: what the judge runs before it loads the
// data onto its GPU): a good manifest passes, a changed file, a sample without its files, a file of
// another size and a timed size without timing samples are refused; the evaluator factory's wiring
// (torch without CUDA is refused, naming what still works); and `kernelduel eval <task> kernel.cu`
// without a GPU fails saying the variant was only built.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';
import { NO_NVCC, sharedHarness } from './fixtures/toolchain.js';
import { writePythonTask } from './fixtures/python-task.js';
import { kernelduelCli } from './fixtures/cli.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { computeReferenceData, referenceRoot, sweepStaleReferenceData, type ReferenceData } from '../main/engine/pytorch/reference-data.js';
import { DEFAULT_TIMING, renderPlan, type PlanInput } from '../main/engine/measure/harness.js';
import { pytorchReferenceData } from '../main/core/evaluators.js';
import { bwrapArgs, sandboxStatus } from '../main/engine/platform/sandbox/index.js';

if (!TORCH_PYTHON) console.warn(`reference-files tests skipped: ${TORCH_SKIP_REASON}`);

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'kd-reffiles-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');

/** A correct CUDA entry point of the Linear+ReLU task (16 x 32). */
const KERNEL = `#ifndef BLOCK
#define BLOCK 128
#endif
__global__ void linrelu(const float* x, const float* w, const float* b, float* out, int rows, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * n) return;
  int r = i / n, c = i % n;
  float acc = b[c];
  for (int k = 0; k < n; k++) acc += x[r * n + k] * w[c * n + k];
  out[i] = acc > 0.f ? acc : 0.f;
}
void model_forward(const float* x, const float* lin_weight, const float* lin_bias, float* out) {
  linrelu<<<(16 * 32 + BLOCK - 1) / BLOCK, BLOCK>>>(x, lin_weight, lin_bias, out, 16, 32);
}
`;

describe.skipIf(!TORCH_PYTHON)('reference data of a PyTorch task (CPU torch)', () => {
  let data: ReferenceData;
  let taskDir: string;
  beforeAll(async () => {
    taskDir = writePythonTask(work);
    let s = 100;
    data = await computeReferenceData({ task: loadTask(taskDir), python: TORCH_PYTHON!, device: 'cpu', checks: 2, timing: 3, root: work, seed: () => s++ });
  }, 120_000);

  it('writes every sample of every buffer into a private folder, with a manifest that matches the files', () => {
    expect(data.dir.startsWith(join(work, `kd-ref-${process.pid}-`))).toBe(true);
    expect(statSync(data.dir).mode & 0o777).toBe(0o700);
    expect(data.samples).toEqual([0, 1, 2, 3, 4].map((id) => ({ size: 0, id, timing: id >= 2 })));
    // 4 buffers per sample: x and out per sample, the weights (lin_weight, lin_bias) shared.
    expect(data.files).toHaveLength(20);
    const weights = data.files.filter((f) => f.arg === 1 || f.arg === 2);
    expect(new Set(weights.map((f) => f.rel)).size).toBe(2);
    for (const f of data.files) {
      const p = join(data.dir, f.rel);
      expect(statSync(p).size).toBe(f.bytes);
      expect(sha(p)).toBe(f.sha256);
    }
    expect(data.files.find((f) => f.arg === 0)!.bytes).toBe(16 * 32 * 4);
    // Fresh seeds: no two samples have the same inputs.
    expect(new Set(data.files.filter((f) => f.arg === 0).map((f) => f.sha256)).size).toBe(5);
  });

  it('the judge plan carries the manifest; the capture plan does not', () => {
    const task = loadTask(taskDir);
    const base: PlanInput = { task, sizes: [0], seeds: [0, 0], timed: [0], timing: DEFAULT_TIMING };
    const judge = renderPlan({ ...base, reference: data }, 'judge');
    expect(judge).toContain(`reference files ${data.dir}\n`);
    expect(judge).toMatch(/^refsample 0 2 timing$/m);
    expect(judge).toMatch(/^reffile 0 0 3 2048 [0-9a-f]{64} s0\/0\/output\.out\.bin$/m);
    expect(renderPlan(base, 'capture')).not.toMatch(/reference|refsample|reffile/);
    expect(() => renderPlan({ ...base, reference: { ...data, dir: '/tmp/a b' } }, 'x')).toThrow(/white space/);
  });

  it('removes the folders of killed processes, never a live one\'s', () => {
    const root = mkdtempSync(join(work, 'sweep-'));
    const dead = mkdtempSync(join(root, 'kd-ref-999999999-'));
    const alive = mkdtempSync(join(root, `kd-ref-${process.ppid}-`));
    const mine = mkdtempSync(join(root, `kd-ref-${process.pid}-`));
    expect(sweepStaleReferenceData(root)).toEqual([dead]);
    expect([existsSync(dead), existsSync(alive), existsSync(mine)]).toEqual([false, true, true]);
  });

  it('the capture\'s sandbox hides the folder wherever it is (an empty tmpfs over it)', () => {
    const a = bwrapArgs({ writable: [work], hidden: [data.dir, join(work, 'absent')] });
    expect(a.join(' ')).toContain(`--tmpfs ${data.dir}`);
    expect(a.join(' ')).not.toContain('absent');
    // After the writable bind of the folder that holds it: the tmpfs wins.
    expect(a.indexOf(data.dir)).toBeGreaterThan(a.indexOf(work));
  });

  it('bubblewrap really hides it (where bwrap works here)', async () => {
    const st = await sandboxStatus();
    if (!st.active || !st.bwrap) return;
    const ls = (hidden: string[]): string => execFileSync(st.bwrap!, [...bwrapArgs({ writable: [work], hidden }), '--', 'sh', '-c', `ls ${data.dir} | wc -l`], { encoding: 'utf8' }).trim();
    expect(ls([])).toBe('1'); // s0
    expect(ls([data.dir])).toBe('0');
  });

  it('refuses a folder without room for the data, naming the sizes', () => {
    expect(() => referenceRoot(2 ** 60, work)).toThrow(/needs .* GiB, .* free: use a smaller size/);
  });

  it('the evaluator factory refuses torch without CUDA, naming what still works', async () => {
    const get = pytorchReferenceData(loadTask(taskDir), { ...process.env, KERNELDUEL_PYTHON: TORCH_PYTHON! });
    await expect(get({ gpu: { index: 0, name: 'X', uuid: 'GPU-x', arch: 'sm_90', memoryMiB: 1 } as never, checks: 1, checksBySize: {} })).rejects.toThrow(/needs torch with CUDA .* Python candidates can still be checked on the CPU/);
  }, 120_000);

  describe.skipIf(NO_NVCC)('the harness checks the data before the judge uses it (reffiles-selftest)', () => {
    let harness: string;
    beforeAll(async () => {
      harness = await sharedHarness();
    }, 600_000);

    /** Runs the self-test on plan text; its result. */
    const selftest = (plan: string): { status: string; error?: string; body: { files?: number; bytes?: number; checkSamples?: number; timingSamples?: number } } => {
      const dir = mkdtempSync(join(work, 'st-'));
      writeFileSync(join(dir, 'plan.txt'), plan);
      execFileSync(harness, ['reffiles-selftest', join(dir, 'plan.txt'), join(dir, 'r.json')], { cwd: dir, timeout: 60_000 });
      return JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    };
    const planOf = (edit: (p: ReferenceData) => Partial<ReferenceData> = () => ({})): string => {
      const task = loadTask(taskDir);
      return renderPlan({ task, sizes: [0], seeds: [0, 0], timed: [0], timing: DEFAULT_TIMING, reference: { ...data, ...edit(data) } }, 'n');
    };

    it('a manifest that matches the files passes', () => {
      const r = selftest(planOf());
      expect(r.status, r.error).toBe('ok');
      expect(r.body).toEqual({ files: 12, bytes: 5 * 2 * 2048 + 32 * 32 * 4 + 32 * 4, checkSamples: 2, timingSamples: 3 });
    });

    it('a file changed after PyTorch wrote it is refused (sha256 mismatch)', () => {
      const f = data.files.find((x) => x.arg === 3 && x.id === 1)!;
      const p = join(data.dir, f.rel);
      const orig = readFileSync(p);
      const bad = Buffer.from(orig);
      bad[7] ^= 1;
      writeFileSync(p, bad);
      try {
        const r = selftest(planOf());
        expect(r.status).toBe('runtime');
        expect(r.error).toMatch(new RegExp(`${f.rel.replace(/\//g, '\\/')}: sha256 mismatch .* the reference data changed after PyTorch wrote it`));
      } finally {
        writeFileSync(p, orig);
      }
    });

    it('a file of another length, or a missing file, is refused', () => {
      const f = data.files.find((x) => x.arg === 0 && x.id === 2)!;
      const p = join(data.dir, f.rel);
      const orig = readFileSync(p);
      writeFileSync(p, orig.subarray(0, 100));
      try {
        expect(selftest(planOf()).error).toMatch(/100 bytes, the plan says 2048/);
        rmSync(p);
        expect(selftest(planOf()).error).toMatch(/No such file/);
      } finally {
        writeFileSync(p, orig);
      }
    });

    it('a sample without all of its files (a missing seed) is refused', () => {
      const r = selftest(planOf((d) => ({ files: d.files.filter((f) => !(f.id === 3 && f.arg === 3)) })));
      expect(r.status).toBe('runtime');
      expect(r.error).toMatch(/reference size 0, sample 3 has no file for out/);
      const r2 = selftest(planOf((d) => ({ samples: d.samples.filter((s) => s.id !== 4) })));
      expect(r2.error).toMatch(/belongs to size 0, sample 4, which the plan does not list/);
    });

    it('a manifest whose sizes disagree with the buffers, or a timed size without timing samples, is refused', () => {
      expect(selftest(planOf((d) => ({ files: d.files.map((f) => (f.arg === 0 ? { ...f, bytes: 4096 } : f)) }))).error).toMatch(/has 4096 bytes, the buffer 2048/);
      expect(selftest(planOf((d) => ({ samples: d.samples.filter((s) => !s.timing), files: d.files.filter((f) => f.id < 2) }))).error).toMatch(/size 0 is timed but has no timing sample/);
      expect(selftest(planOf((d) => ({ samples: d.samples.filter((s) => s.timing), files: d.files.filter((f) => f.id >= 2) }))).error).toMatch(/size 0 has no check sample/);
      expect(selftest(planOf((d) => ({ files: d.files.map((f) => (f.id === 0 && f.arg === 0 ? { ...f, rel: '../x.bin' } : f)) }))).error).toMatch(/without \.\./);
    });
  });

  it.skipIf(NO_NVCC)('kernelduel eval <pytorch task> kernel.cu without a GPU builds it and fails saying it was not checked', async () => {
    const dir = join(work, 'cli-task');
    const t = writePythonTask(dir, 'py-linrelu-cuda');
    writeFileSync(join(t, 'kernel.cu'), KERNEL);
    const home = mkdtempSync(join(work, 'home-'));
    const r = await kernelduelCli(home, TORCH_PYTHON!, ['eval', t, join(t, 'kernel.cu'), '--json']);
    expect(r.code, r.stderr).toBe(2);
    const j = JSON.parse(r.stdout) as { result: { build: { ok: boolean }; compileOnly?: boolean }; notChecked?: string };
    expect(j.result.build.ok).toBe(true);
    expect(j.notChecked).toMatch(/not checked: task py-linrelu-cuda has a PyTorch reference, and its CUDA entry points are checked and timed against reference data PyTorch computes on an NVIDIA GPU/);
    const text = await kernelduelCli(home, TORCH_PYTHON!, ['eval', t]);
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/not checked: .* this machine has none, so the variant was only built/);
    expect(existsSync(join(t, 'kernel.cu'))).toBe(true);
  }, 300_000);
});
