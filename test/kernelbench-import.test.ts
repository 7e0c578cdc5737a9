// `kernelduel import kernelbench`: synthetic problem files for the logic (shapes from a CPU forward,
// from the meta device, extrapolated; failures by kind; folders that exist), then real KernelBench
// files from ../shared/kernelbench when that folder exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cliEnv, KERNELDUEL_BIN, showRun, type CliRun } from './fixtures/cli.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { importKernelBench, importProblem, listProblems, taskNameOf, type ImportedProblem, type KernelBenchImportOptions } from '../main/engine/interop/kernelbench.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { entrySignature } from '../main/engine/source/entry.js';
import { TORCH_MAJOR, TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';

const REPO = resolve(import.meta.dirname, '..');
const KERNELBENCH = process.env.KERNELBENCH_DIR ?? resolve(REPO, '..', 'shared', 'kernelbench');
const HAS_KB = existsSync(join(KERNELBENCH, 'level1'));

const SMALL = `import torch
import torch.nn as nn

class Model(nn.Module):
    """Simple model that scales a linear map."""
    def __init__(self, n, factor):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.factor = factor

    def forward(self, x):
        return self.fc(x) * self.factor

batch_size = 4
n = 8

def get_inputs():
    return [torch.rand(batch_size, n)]

def get_init_inputs():
    return [n, 2.0]
`;
const DROPOUT = SMALL.replace('self.fc = nn.Linear(n, n)', 'self.fc = nn.Linear(n, n)\n        self.drop = nn.Dropout(0.25)').replace('return self.fc(x) * self.factor', 'return self.drop(self.fc(x)) * self.factor');
const HALF = SMALL.replace('return self.fc(x) * self.factor', 'return (self.fc(x) * self.factor).half()');
const BROKEN = SMALL.replace('return self.fc(x) * self.factor', 'return self.fc(x) @ torch.ones(3, 3)');
/** No meta implementation (as max_pool3d in torch 1.13), and too slow for a CPU forward at its own batch size. */
const NO_META = `import time
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        if x.device.type == "meta":
            raise NotImplementedError("Could not run 'aten::fake_pool' with arguments from the 'Meta' backend.")
        if x.shape[0] > 2:
            time.sleep(60)
        return x[:, :, ::2].sum(dim=1)

batch_size = 64
channels = 3

def get_inputs():
    return [torch.rand(batch_size, channels, 10)]

def get_init_inputs():
    return []
`;
const SLOW = SMALL.replace('return self.fc(x) * self.factor', 'if x.device.type != "meta":\n            import time; time.sleep(60)\n        return self.fc(x)');

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kd-kbimport-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function problems(sub: string, files: Record<string, string>): string {
  const d = join(root, sub);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}
/** `kernelduel ...` without a GPU, with `env` over the usual test environment. */
const kd = (env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliRun> =>
  new Promise((res) => {
    execFile(process.execPath, [KERNELDUEL_BIN, ...args], { cwd: REPO, env: { ...cliEnv(join(root, 'home')), ...env }, timeout: 170_000 }, (err, stdout, stderr) => {
      res({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr });
    });
  });
const opts = (out: string, extra: Partial<KernelBenchImportOptions> = {}): KernelBenchImportOptions => ({ python: TORCH_PYTHON!, outDir: join(root, out), ...extra });
const byName = (rs: ImportedProblem[], n: string): ImportedProblem => rs.find((r) => r.name === n)!;

describe('naming and listing', () => {
  it('names a task after its level, number and title; lists problems in KernelBench order', () => {
    expect(taskNameOf('/x/level1/19_ReLU.py')).toEqual({ name: 'kb-l1-19-relu', level: 1, number: 19, title: 'ReLU' });
    expect(taskNameOf('/x/level2/1_Conv2D_ReLU_BiasAdd.py').name).toBe('kb-l2-1-conv2d-relu-biasadd');
    expect(taskNameOf('/x/mine/1_Square_matrix_multiplication_.py')).toEqual({ name: 'kb-1-square-matrix-multiplication', level: null, number: 1, title: 'Square matrix multiplication' });
    expect(taskNameOf('/x/my_op.py').name).toBe('kb-my-op');
    const d = problems('order', { '10_b.py': '', '2_a.py': '', '1_c.py': '', 'notes.txt': '' });
    expect(listProblems(d).map((f) => f.split('/').pop())).toEqual(['1_c.py', '2_a.py', '10_b.py']);
    expect(() => listProblems(join(root, 'nope'))).toThrow(/no such file or folder \(give a KernelBench problem file or a folder of them/);
  });
});

const suite = TORCH_PYTHON ? 'import kernelbench (synthetic problems)' : `import kernelbench (synthetic problems) — SKIPPED: ${TORCH_SKIP_REASON}`;
describe.skipIf(!TORCH_PYTHON)(suite, () => {
  it('writes task.yaml, model.py and a placeholder kernel.cu that load as a task with the discovered args', async () => {
    const src = problems('level3', { '1_Small_Linear.py': SMALL });
    const [r] = await importKernelBench(src, opts('out1'));
    expect(r.failure).toBeUndefined();
    expect(r.name).toBe('kb-l3-1-small-linear');
    expect(r.shapesFrom).toBe('cpu');
    expect(r.shapesNote).toMatch(/^from a forward on the CPU/);
    expect(r.randomForward).toBe(false);
    const t = loadTask(r.dir!);
    expect(t.pytorch).toEqual({ weightsSeed: 42 });
    expect(t.baselinePlaceholder).toBe(true);
    expect(t.referenceSource).toBe(SMALL);
    expect(t.manifest.description).toBe('KernelBench level 3 #1 (Small Linear): Simple model that scales a linear map.');
    expect(t.manifest.sizes).toEqual([{}]);
    expect(t.manifest.args).toEqual([
      { name: 'x', kind: 'buffer', dtype: 'f32', shape: [4, 8], role: 'in' },
      { name: 'fc_weight', kind: 'buffer', dtype: 'f32', shape: [8, 8], role: 'in' },
      { name: 'fc_bias', kind: 'buffer', dtype: 'f32', shape: [8], role: 'in' },
      { name: 'out', kind: 'buffer', dtype: 'f32', shape: [4, 8], role: 'out' },
    ]);
    expect(t.tolerance.f32).toEqual({ rtol: 1e-4, atol: 1e-4 });
    expect(t.manifest.metrics?.bytes).toBe((32 + 64 + 8 + 32) * 4);
    const yaml = readFileSync(join(r.dir!, 'task.yaml'), 'utf8');
    expect(yaml).toMatch(/Shapes: from a forward on the CPU/);
    expect(yaml).toMatch(/fc_weight.*# parameter fc\.weight/);
    expect(entrySignature(t)).toBe('void model_forward(const float* x, const float* fc_weight, const float* fc_bias, float* out)');
    expect(t.baselineSource).toContain(`${entrySignature(t)} {`);
    expect(t.baselineSource).toMatch(/PLACEHOLDER/);
    expect(t.baselineSource).toContain('Model(*get_init_inputs()) = Model(8, 2)');
  });

  it('refuses to overwrite a task folder unless forced', async () => {
    const src = problems('again', { '1_Small.py': SMALL });
    const o = opts('out2');
    expect((await importKernelBench(src, o))[0].failure).toBeUndefined();
    const [again] = await importKernelBench(src, o);
    expect(again.failure).toEqual({ kind: 'exists', message: expect.stringMatching(/already holds a task \(give --force to overwrite it\)/) });
    expect((await importKernelBench(src, { ...o, force: true }))[0].failure).toBeUndefined();
  });

  it('too big or too slow for the CPU: shapes from the meta device, and it says why', async () => {
    const src = problems('big', { '1_Big.py': SMALL, '2_Slow.py': SLOW });
    const rs = await importKernelBench(src, opts('out3', { runMaxBytes: 100, runLimitMs: 1500 }));
    const big = byName(rs, 'kb-1-big');
    expect(big.shapesFrom).toBe('meta');
    expect(big.shapesNote).toBe("from torch's meta device (shapes without data): 544 bytes of tensors is too much to run on the CPU here (over 100 bytes)");
    expect(readFileSync(join(big.dir!, 'task.yaml'), 'utf8')).toMatch(/shapes not confirmed by a CPU forward: meta/);
    const rs2 = await importKernelBench(problems('slow', { '2_Slow.py': SLOW }), opts('out3b', { runLimitMs: 1500 }));
    expect(rs2[0].shapesFrom).toBe('meta');
    expect(rs2[0].shapesNote).toMatch(/a CPU forward did not finish within 2 s/);
    expect(loadTask(rs2[0].dir!).manifest.args.map((a) => a.name)).toEqual(['x', 'fc_weight', 'fc_bias', 'out']);
  });

  it('no meta implementation and too slow: extrapolated from batch sizes 1 and 2, said in the note', async () => {
    const [r] = await importKernelBench(problems('nometa', { '5_NoMeta.py': NO_META }), opts('out4', { runLimitMs: 1500 }));
    expect(r.failure).toBeUndefined();
    expect(r.shapesFrom).toBe('scaled');
    expect(r.shapesNote).toMatch(/extrapolated linearly from CPU forwards with batch_size = 1 and 2 \(the problem's batch_size is 64\): aten::fake_pool has no meta implementation in this torch, and a CPU forward did not finish within 2 s/);
    expect(loadTask(r.dir!).manifest.args).toEqual([
      { name: 'x', kind: 'buffer', dtype: 'f32', shape: [64, 3, 10], role: 'in' },
      { name: 'out', kind: 'buffer', dtype: 'f32', shape: [64, 5], role: 'out' },
    ]);
  });

  it('random forwards are warned about; a dtype it cannot take and a broken problem fail by kind and write nothing', async () => {
    const src = problems('mixed', { '1_Drop.py': DROPOUT, '2_Half.py': HALF, '3_Broken.py': BROKEN });
    const rs = await importKernelBench(src, opts('out5'));
    const drop = byName(rs, 'kb-1-drop');
    expect(drop.failure).toBeUndefined();
    expect(drop.randomForward).toBe(true);
    expect(drop.warnings.join(' ')).toMatch(/the forward is random as KernelBench runs it \(training mode\): drop \(Dropout, p=0.25\); no kernel can match/);
    const half = byName(rs, 'kb-2-half');
    expect(half.failure).toEqual({ kind: 'unsupported', message: "output out is float16, which KernelDuel's entry points cannot take (dtypes: f32 f64 i32 u32 i64 u8)" });
    expect(half.dir).toBeUndefined();
    expect(existsSync(join(root, 'out5', 'kb-2-half'))).toBe(false);
    const broken = byName(rs, 'kb-3-broken');
    expect(broken.failure?.kind).toBe('problem');
    expect(broken.failure?.message).toMatch(/RuntimeError: mat1 and mat2 shapes cannot be multiplied/);
  });

  it('the command line: one line per problem, a summary, exit status 2 when one failed', async () => {
    const src = problems('cli', { '1_Small.py': SMALL, '2_Half.py': HALF });
    const out = join(root, 'out6');
    const r = await kd({ KERNELDUEL_PYTHON: TORCH_PYTHON! }, 'import', 'kernelbench', src, '-o', out);
    expect(r.code, showRun(r)).toBe(2);
    expect(r.stdout).toMatch(/^kb-1-small: shapes from a forward on the CPU/m);
    expect(r.stdout).toMatch(/^FAILED kb-2-half: \[unsupported\] output out is float16/m);
    expect(r.stdout).toMatch(/imported 1 of 2 problems into .*out6 \(shapes from a CPU forward: 1, the meta device: 0, extrapolated: 0\); 1 failed/);
    expect(r.stderr).toMatch(/importing with .* \(torch .*\)/);
    const noPy = await kd({ KERNELDUEL_PYTHON: join(root, 'no-python'), PATH: join(root, 'empty') }, 'import', 'kernelbench', src);
    expect(noPy.code).toBe(1);
    expect(noPy.stderr).toMatch(/kernelduel: importing KernelBench problems runs them with PyTorch: KERNELDUEL_PYTHON is set to .*no-python/);
  });

  it.skipIf(!existsSync('/usr/local/cuda/bin/nvcc'))('an imported task without a GPU: its placeholder builds, the PyTorch reference is not built, and eval fails saying it was not checked', async () => {
    const [r] = await importKernelBench(problems('evalco', { '1_Small.py': SMALL }), opts('out7'));
    const e = await kd({}, 'eval', r.dir!, '--json');
    expect(e.code, showRun(e)).toBe(2);
    const j = JSON.parse(e.stdout) as { result: { build: { ok: boolean }; compileOnly?: boolean; failure?: unknown }; notChecked?: string };
    expect(j.result.build.ok).toBe(true);
    expect(j.result.compileOnly).toBe(true);
    expect(j.result.failure).toBeUndefined();
    expect(j.notChecked).toMatch(/^not checked: task kb-1-small has a PyTorch reference/);
  });
});

const kbSuite = !TORCH_PYTHON ? `KernelBench files — SKIPPED: ${TORCH_SKIP_REASON}` : !HAS_KB ? `KernelBench files — SKIPPED: ${KERNELBENCH} does not exist (set KERNELBENCH_DIR to a folder holding level1/ and level2/)` : 'KernelBench files';
describe.skipIf(!TORCH_PYTHON || !HAS_KB)(kbSuite, () => {
  const kb = (f: string): string => join(KERNELBENCH, f);

  // (int64 targets and 0-d outputs are covered on synthetic problems: level1/95's 512 MiB CPU forward cost seconds here.)
  it('level2/6 (small: a CPU forward), level1/19 (12 GiB: meta)', async () => {
    const o = opts('kb');
    const conv = await importProblem(kb('level2/6_Conv3d_Softmax_MaxPool_MaxPool.py'), o);
    expect(conv.failure).toBeUndefined();
    expect(conv.shapesFrom).toBe('cpu');
    const t = loadTask(conv.dir!);
    expect(t.manifest.name).toBe('kb-l2-6-conv3d-softmax-maxpool-maxpool');
    expect(t.manifest.args.map((a) => `${a.name}:${a.kind === 'buffer' ? `${a.role}[${a.shape.join(',')}]` : a.value}`)).toEqual([
      'x:in[128,3,16,32,32]', 'conv_weight:in[16,3,3,3,3]', 'conv_bias:in[16]', 'out:out[128,16,3,7,7]',
    ]);
    const relu = await importProblem(kb('level1/19_ReLU.py'), o);
    expect(relu.shapesFrom).toBe('meta');
    expect(relu.shapesNote).toMatch(/12\.0 GiB of tensors is too much to run on the CPU here/);
    expect(entrySignature(loadTask(relu.dir!))).toBe('void model_forward(const float* x, float* out)');
  });

  it(`level1/97 (scaled_dot_product_attention) ${TORCH_MAJOR >= 2 ? 'imports with torch 2' : 'needs a newer torch than this one'}`, async () => {
    const r = await importProblem(kb('level1/97_ScaledDotProductAttention.py'), opts('kb97'));
    if (TORCH_MAJOR >= 2) expect(r.failure).toBeUndefined();
    else expect(r.failure).toEqual({ kind: 'needs-newer-torch', message: "AttributeError: module 'torch.nn.functional' has no attribute 'scaled_dot_product_attention'" });
  });
});
