// The Python candidate runner (resources/python/kd_candidate.py) and its client
// (main/engine/pytorch/candidate.ts) on the CPU with Debian's torch: the pure logic (kernel names
// from sources and from profiler records, shares, labels), its guarantee lists against the
// contract's, and real runs of small candidates: a correct rewrite, a cache of its first output, an
// extension whose build fails (fallback), one that goes wrong after a few calls (caught in timed
// calls), one that shrinks the problem, sizes set from a task, and the core's refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { candidateScript, measureCandidate, type CandidateOutcome, type PyTiming } from '../main/engine/pytorch/candidate.js';
import { GUARANTEE_LEVELS } from '../main/engine/base/types.js';
import { describePythonResult, evalPythonCandidate, PythonCandidateError, type PythonEvalResult, type PythonSizeResult } from '../main/core/pytorch.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';
import { PY_PROBLEM } from './fixtures/python-task.js';
import { countingModel, PY_HOSTILE } from './fixtures/python-hostile.js';

const PY = TORCH_PYTHON ?? '/usr/bin/python3';

function classify(req: unknown): { own: string[]; label: string; customShare?: number; bySource?: Record<string, number>; idents: Record<string, string | null> } {
  return JSON.parse(execFileSync(PY, [candidateScript(), 'classify'], { input: JSON.stringify(req), encoding: 'utf8', timeout: 30_000 })) as never;
}

describe.skipIf(!TORCH_PYTHON)(`kd_candidate.py logic (${TORCH_SKIP_REASON})`, () => {
  it('finds a source\'s own kernels: __global__ (launch bounds, templates, namespaces) and @triton.jit, not host functions', () => {
    const source = [
      '__global__ void __launch_bounds__(256) fused_relu(float* x) {}',
      'template <typename T> __global__ void scale_kernel(T* x, int n) {}',
      'static __global__ void\n  tail_kernel(float* y) {}',
      'torch::Tensor relu_fwd(torch::Tensor x) { return x; }',
      '@triton.jit\ndef add_kernel(x_ptr, n, BLOCK: tl.constexpr):\n    pass',
    ].join('\n');
    expect(classify({ source }).own).toEqual(['add_kernel', 'fused_relu', 'scale_kernel', 'tail_kernel']);
  });

  it('--quiet-lock: a runner times only when no other quiet runner is working, and one waiting to time goes before later arrivals', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-quietlock-'));
    try {
      const r = JSON.parse(execFileSync(PY, [join(import.meta.dirname, 'fixtures', 'lock_order.py'), candidateScript(), join(dir, 'gpu.lock')], { encoding: 'utf8', timeout: 60_000 })) as Record<string, Record<string, number>>;
      // The timer asked at 0.4 s while the holder worked (shared) until 1.5 s: it times after that.
      expect(r.timer.exclusive).toBeGreaterThanOrEqual(r.holder.done);
      // The late runner asked at 0.8 s, before the holder was done: it waits until the timing ends
      // (without the turnstile it would be let in at once and could delay the timing indefinitely).
      expect(r.late.asked).toBeLessThan(r.holder.done);
      expect(r.late.shared).toBeGreaterThanOrEqual(r.timer.exclusiveEnd);
      expect(r.timer.exclusiveEnd - r.timer.exclusive).toBeGreaterThanOrEqual(0.59);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells the candidate\'s kernels from PyTorch\'s by function name (demangled, mangled, namespaced), and computes the share', () => {
    const r = classify({
      own: ['fused_relu', 'scale_kernel', 'gemm'],
      kernels: [
        { name: 'void fused_relu(float const*, float*, long)', us: 30, count: 2 },
        { name: '_Z12scale_kernelIfEvPT_i', us: 10, count: 2 },
        { name: 'void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::relu_kernel>(int, float*)', us: 40, count: 2 },
        { name: 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128>(Params)', us: 15, count: 2 },
        { name: 'triton_poi_fused_relu_0', us: 5, count: 2 },
      ],
    });
    expect(r.idents['_Z12scale_kernelIfEvPT_i']).toBe('scale_kernel');
    expect(r.bySource).toEqual({ own: 40, aten: 40, library: 15, triton: 5 });
    expect(r.customShare).toBeCloseTo(0.4, 6);
    expect(r.label).toBe('custom');
  });

  it('a candidate kernel named like one of PyTorch\'s is not credited with PyTorch\'s kernel', () => {
    const r = classify({ own: ['reduce_kernel'], kernels: [{ name: 'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<float>)', us: 10 }, { name: '_ZN2at6native13reduce_kernelILi512ELi1EEEvv', us: 5 }] });
    expect(r.bySource).toEqual({ aten: 15 });
    expect(r.label).toBe('pytorch-only');
  });

  it('labels: no own kernel ran -> pytorch-only, or fallback when an extension failed; failed when nothing ran; unprofiled without records', () => {
    const aten = [{ name: 'void at::native::reduce_kernel<512, 1>(float*)', us: 10 }];
    expect(classify({ own: ['k'], kernels: aten, loads: [{ ok: true }] }).label).toBe('pytorch-only');
    expect(classify({ own: ['k'], kernels: aten, loads: [{ ok: false }] }).label).toBe('fallback');
    expect(classify({ own: [], kernels: aten, loads: [] }).label).toBe('pytorch-only');
    expect(classify({ own: ['k'], kernels: aten, ran: false }).label).toBe('failed');
    expect(classify({ own: ['k'], loads: [{ ok: true }] }).label).toBe('unprofiled');
    expect(classify({ own: [], loads: [] }).label).toBe('pytorch-only');
  });

  it('carries the same guarantee lists as the contract (GUARANTEE_LEVELS)', () => {
    const g = JSON.parse(execFileSync(PY, ['-c', 'import json, sys; sys.path.insert(0, sys.argv[1]); import kd_candidate as k; print(json.dumps(k.GUARANTEE))', join(candidateScript(), '..')], { encoding: 'utf8' })) as { level: string; holds: string[]; doesNotHold: string[] };
    expect(g.level).toBe('python-in-process');
    expect(g.holds).toEqual([...GUARANTEE_LEVELS['python-in-process'].holds]);
    expect(g.doesNotHold).toEqual([...GUARANTEE_LEVELS['python-in-process'].doesNotHold]);
  });
});

// The Linear + ReLU problem the Python-candidate tests share.
const PROBLEM = PY_PROBLEM;
const HEAD = 'import torch\nimport torch.nn as nn\n';
const CANDIDATES: Record<string, string> = {
  good: `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        return torch.clamp_min(self.lin(x), 0)
`,
  // Honest, but slow (50 ms more) for its first 30 calls, as a forward that builds something lazily or
  // a machine under a passing load: its early first-use calls are slow, the timed calls' median is not.
  slowStart: countingModel(`        if self.calls <= 30:
            time.sleep(0.05)
        return torch.relu(self.lin(x))`, 'import time\n'),
  // Caches its first output (a result keyed on nothing): fresh seeds per check catch it.
  cached: `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.memo = None
    def forward(self, x):
        if self.memo is None:
            self.memo = torch.relu(self.lin(x))
        return self.memo
`,
  // Right for its first 8 calls (the checks and warm-ups), then returns zeros: only verified timed calls see it.
  lazy: countingModel(`        y = torch.relu(self.lin(x))
        return y if self.calls <= 8 else torch.zeros_like(y)`),
  // Its extension does not build; it falls back to PyTorch.
  fallback: `${HEAD}from torch.utils.cpp_extension import load_inline
try:
    ext = load_inline(name="kd_test_broken", cpp_sources="int f(", cuda_sources="__global__ void relu_kernel(float* x) {}", functions=["nope"])
except Exception:
    ext = None
class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        return torch.relu(self.lin(x))
`,
  // Lays its weight out once, in a buffer its first forward creates (CUDA-L1 1/64, 1/71, 2/31, 2/92
  // do so): correct; restoring the built state before each check must leave that buffer alone.
  layoutOnce: `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        if not hasattr(self, "wt"):
            self.register_buffer("wt", self.lin.weight.detach().t().contiguous())
        return torch.clamp_min(x @ self.wt + self.lin.bias, 0)
`,
  // Does half the batch (shrinking the problem).
  shrunk: `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        return torch.relu(self.lin(x[: x.shape[0] // 2]))
`,
  ...PY_HOSTILE,
  raises: `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
    def forward(self, x):
        raise RuntimeError("no kernel for you")
`,
};

describe('a Python result\'s text with the GPU\'s own times', () => {
  const t = (medianMs: number, gpu: number | null, host: number): PyTiming => ({
    medianMs, meanMs: medianMs, minMs: medianMs, rsd: 0.01, samples: 10, eventMedianMs: medianMs, wallMedianMs: medianMs, floorMs: 0.01,
    timer: 'events', wallExceedsEvents: false, verifiedCalls: 2, inputSets: 2, hostCallMedianMs: host,
    ...(gpu ? { gated: { deviceMedianMs: gpu, gateMs: 1, samples: 10, starved: 0 } } : {}),
  });
  const size = (time: PyTiming, eager: PyTiming): PythonSizeResult => ({
    size: { n: 1 }, label: 'pytorch-only', correct: true, correct1e2: true, customShare: 0, ownKernels: [], topKernels: [],
    time, eager, compiled: null, compileNote: 'not asked', speedupEager: eager.medianMs / time.medianMs, speedupCompile: null,
    speedupEagerGpu: time.gated && eager.gated ? eager.gated.deviceMedianMs / time.gated.deviceMedianMs : null, speedupCompileGpu: null,
    flagsChanged: [], failedBuilds: [], sandboxed: true, device: 'cuda:0',
  });
  const result = (s: PythonSizeResult): PythonEvalResult => ({ task: 't', candidate: '/x/c.py', guarantee: 'python-in-process', guaranteeText: GUARANTEE_LEVELS['python-in-process'], python: 'python3', torch: '2.11', sizes: [s] });

  it('says the speedup by GPU time beside the one-call one, and names host-bound figures (CUDA-L1 1/19 on the H200: 3.2x one-call, the same kernel)', () => {
    const text = describePythonResult(result(size(t(0.0325, 0.0043, 0.020), t(0.1036, 0.0043, 0.054))));
    expect(text).toMatch(/→ 3\.188× vs eager/);
    expect(text).toMatch(/GPU's own time: 0\.0043 ms \(host issues the call in 0\.0200 ms\); eager 0\.0043 ms → 1\.000× by GPU time — HOST-BOUND \(the candidate, eager\)/);
  });

  it('a long forward is not called host-bound, and a result without GPU times (CPU, older runner) has no such line', () => {
    expect(describePythonResult(result(size(t(2.1, 2.05, 0.05), t(2.8, 2.7, 0.05))))).toMatch(/GPU's own time: 2\.0500 ms \(host issues the call in 0\.0500 ms\); eager 2\.7000 ms → 1\.317× by GPU time\n?$/);
    expect(describePythonResult(result(size(t(2.1, null, 2.1), t(2.8, null, 2.8))))).not.toMatch(/GPU's own time/);
  });

  it('says the per-call figure optimize ranks by, with eager\'s, where the runner gave per-call samples', () => {
    // as the runner writes them: the per-call samples and their median
    const pc = (x: PyTiming, per: number[]): PyTiming => ({ ...x, perCallMs: [...per].sort((a, b) => a - b)[per.length >> 1], gated: { ...x.gated!, perCallSamplesMs: per } });
    const text = describePythonResult(result(size(pc(t(0.0325, 0.0043, 0.020), [0.02, 0.021, 0.019]), pc(t(0.1036, 0.0043, 0.054), [0.054, 0.05, 0.06]))));
    expect(text).toMatch(/per call \(the larger of the GPU's own time and the host's call time, per gated sample; what optimize ranks by\): 0\.0200 ms; eager 0\.0540 ms → 2\.700×$/);
    expect(describePythonResult(result(size(t(2.1, 2.05, 0.05), t(2.8, 2.7, 0.05))))).not.toMatch(/per call/);
  });
});

describe.skipIf(!TORCH_PYTHON)(`Python candidates on the CPU (${TORCH_SKIP_REASON})`, () => {
  let dir = '';
  const results: Record<string, CandidateOutcome> = {};
  let core: PythonEvalResult | undefined;
  const prevPython = process.env.KERNELDUEL_PYTHON;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kd-pycand-'));
    writeFileSync(join(dir, 'problem.py'), PROBLEM);
    // A PyTorch task for the core's evaluation (run beside the runner's cases, in parallel).
    const taskDir = join(dir, 'task');
    mkdirSync(taskDir);
    writeFileSync(join(taskDir, 'model.py'), PROBLEM);
    // A CUDA baseline is not needed to judge a Python candidate, but a task names its entry point.
    writeFileSync(join(taskDir, 'kernel.cu'), 'void model_forward(const float* x, const float* lin_weight, const float* lin_bias, float* out) {}\n');
    writeFileSync(join(taskDir, 'task.yaml'), [
      'name: py-task', 'entry: model_forward', 'reference: {pytorch: model.py}', 'files: {baseline: kernel.cu}', 'args:',
      '  - {name: x, kind: buffer, dtype: f32, shape: [batch, 32], role: in}',
      '  - {name: lin_weight, kind: buffer, dtype: f32, shape: [32, 32], role: in}',
      '  - {name: lin_bias, kind: buffer, dtype: f32, shape: [32], role: in}',
      '  - {name: out, kind: buffer, dtype: f32, shape: [batch, 32], role: out}',
      'sizes:', '  - {batch: 5}', '',
    ].join('\n'));
    writeFileSync(join(taskDir, 'candidate.py'), CANDIDATES.good);
    process.env.KERNELDUEL_PYTHON = PY;
    const fast = ['--min-samples', '5', '--max-samples', '40', '--min-time-s', '0.05', '--max-time-s', '0.5', '--warmup', '2'];
    const coreRun = evalPythonCandidate(loadTask(taskDir), join(taskDir, 'candidate.py'), { device: 'cpu' }).then((r) => void (core = r));
    await Promise.all([coreRun, ...Object.entries(CANDIDATES).map(async ([name, code]) => {
      writeFileSync(join(dir, `${name}.py`), code);
      results[name] = await measureCandidate(join(dir, 'problem.py'), join(dir, `${name}.py`), {
        python: PY, workDir: join(dir, `run-${name}`), extDir: join(dir, `ext-${name}`), timeoutMs: 120_000, sandbox: true, device: 'cpu', eager: true, checks: 3,
        // the slow starts: enough samples after their first 30 calls that the median is of fast calls
        timingArgs: name === 'good' ? [...fast, '--warmup-ms', '150'] : name === 'slowStart' || name === 'slowStartCache' ? ['--min-samples', '80', '--max-samples', '100', '--min-time-s', '0.05', '--max-time-s', '3', '--warmup', '2'] : fast,
        // contentCache (and the slow starts): a forward long enough (a batch of 4096) that a cache hit is clearly cheaper than the timer's noise
        ...(name === 'good' ? { overrides: { batch: 7 } } : name === 'contentCache' || name === 'cacheUntilNew' || name === 'slowStart' || name === 'slowStartCache' ? { overrides: { batch: 4096 } } : {}),
      });
    })]);
  }, 180_000);
  afterAll(() => {
    if (prevPython === undefined) delete process.env.KERNELDUEL_PYTHON;
    else process.env.KERNELDUEL_PYTHON = prevPython;
    rmSync(dir, { recursive: true, force: true });
  });

  it('the core evaluates a candidate at the task\'s size and prints the guarantee level first, then the label, correctness and speedup', () => {
    const r = core as PythonEvalResult;
    expect(r.guarantee).toBe('python-in-process');
    expect(r.sizes.map((s) => [s.size, s.label, s.correct])).toEqual([[{ batch: 5 }, 'pytorch-only', true]]);
    expect(r.sizes[0].speedupEager).toBeGreaterThan(0);
    const text = describePythonResult(r).split('\n');
    expect(text[0]).toMatch(/^py-task: candidate\.py — guarantee level PYTHON-IN-PROCESS: the candidate's host code runs in the measuring process/);
    expect(text.join('\n')).toMatch(/label: PYTORCH-ONLY[\s\S]*correct: yes at KernelBench's tolerance[\s\S]*vs eager/);
  });

  it('a correct PyTorch rewrite: correct at both tolerances, timed with the eager baseline, labelled pytorch-only, at the task\'s size', () => {
    const r = results.good;
    expect(r.failure).toBeUndefined();
    expect(r.guarantee).toBe('python-in-process');
    expect([r.correct, r.correct1e2]).toEqual([true, true]);
    expect(r.label).toBe('pytorch-only');
    expect(r.time?.samples).toBeGreaterThanOrEqual(5);
    expect(r.time?.verifiedCalls).toBeGreaterThanOrEqual(1);
    expect(r.file?.eager?.medianMs).toBeGreaterThan(0);
    expect(r.file?.checks?.[0].outputs[0].shape).toEqual([7, 32]);
    // --warmup-ms 150: warm-up calls go on past --warmup 2 until 150 ms have passed (a tiny Linear
    // takes well under a millisecond), for the eager baseline and the candidate; no GPU to pre-warm.
    for (const t of [r.time, r.file?.eager]) {
      expect(t?.warmupMs).toBe(150);
      expect(t?.warmupCalls).toBeGreaterThan(2);
      expect(t?.prewarmMs).toBe(0);
      // the host's time for the call to return, beside the samples (on the CPU it is the sample)
      expect(t?.hostCallMedianMs).toBeGreaterThan(0);
      expect(t?.hostCallMedianMs).toBeLessThanOrEqual((t?.medianMs ?? 0) * 1.5 + 0.05);
    }
  });

  it('a cached first output fails the later checks (fresh seeds per check) and is not timed', () => {
    const r = results.cached;
    expect(r.correct).toBe(false);
    expect(r.file?.checks?.[0].ok).toBe(true);
    expect(r.file?.checks?.slice(1).every((c) => !c.ok)).toBe(true);
    expect(r.time).toBeNull();
  });

  it('wrong outputs after the checks are caught in the timed calls (the last one is always verified)', () => {
    const r = results.lazy;
    expect(r.correct).toBe(true);
    expect(r.failure?.kind).toBe('correctness');
    // (or a first-use call among them: those are all verified)
    expect(r.failure?.message).toMatch(/timed call \d+|call on first-seen inputs \d+/);
  });

  it('says when the reference\'s outputs do not depend on the inputs (a constant passes every check), and not otherwise', async () => {
    expect(results.good.file?.referenceConstant).toEqual({ constant: false });
    // KernelBench level 2 task 80's shape: a max over a dimension (keepdim), minus its own mean: zeros for every input.
    writeFileSync(join(dir, 'zeros-problem.py'), `${HEAD}class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        y = torch.max(self.lin(x), dim=1, keepdim=True).values
        return torch.nn.functional.gelu(y - y.mean(dim=1, keepdim=True))
batch = 5
def get_inputs():
    return [torch.randn(batch, 32)]
def get_init_inputs():
    return [32]
`);
    writeFileSync(join(dir, 'zeros-candidate.py'), `${HEAD}class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
    def forward(self, x):
        return torch.zeros(x.shape[0], 1)
`);
    const r = await measureCandidate(join(dir, 'zeros-problem.py'), join(dir, 'zeros-candidate.py'), {
      python: PY, workDir: join(dir, 'run-zeros'), extDir: join(dir, 'ext-zeros'), timeoutMs: 120_000, sandbox: true, device: 'cpu', eager: true, checks: 3,
      timingArgs: ['--min-samples', '5', '--max-samples', '20', '--min-time-s', '0.05', '--max-time-s', '0.3', '--warmup', '1'],
    });
    expect(r.correct).toBe(true);
    expect(r.file?.referenceConstant).toEqual({ constant: true, uniform: [0] });
  }, 120_000);

  it('a runner that stops at once (--device cuda on a torch without CUDA) gives its own reason, not a schema\'s complaints', async () => {
    const hasCuda = execFileSync(PY, ['-c', 'import torch; print(torch.cuda.is_available())'], { encoding: 'utf8' }).trim() === 'True';
    if (hasCuda) return; // this torch has CUDA: nothing to refuse
    const r = await measureCandidate(join(dir, 'problem.py'), join(dir, 'good.py'), { python: PY, workDir: join(dir, 'run-nocuda'), timeoutMs: 60_000, sandbox: true, device: 'cuda' });
    expect(r.failure).toEqual({ kind: 'torch', message: '--device cuda: this torch has no usable CUDA' });
  });

  it('an output that is a tensor subclass (a lazy product with empty storage that computes when read) fails, not timed', () => {
    const r = results.deferred;
    expect(r.correct).not.toBe(true);
    expect(r.failure?.kind).toBe('correctness');
    expect(r.failure?.message).toMatch(/Deferred \(a subclass of torch\.Tensor\), not a plain tensor/);
    expect(r.time).toBeNull();
  });

  it('a subclass returned only in timed calls (plain in the checks) is caught there, verified or not', () => {
    const r = results.hollow;
    expect(r.correct).toBe(true);
    expect(r.failure?.kind).toBe('correctness');
    expect(r.failure?.message).toMatch(/Hollow \(a subclass of torch\.Tensor\)/);
    expect(r.time).toBeNull();
  });

  it('a cache of results keyed on the inputs: right in every check and timed call, caught by the calls on first-seen inputs', () => {
    const r = results.contentCache;
    expect(r.correct).toBe(true);
    expect(r.failure?.kind).toBe('correctness');
    expect(r.failure?.message).toMatch(/calls on repeated inputs took [\d.]+ ms, calls on first-seen inputs at least [\d.]+ ms/);
    expect(r.time).toBeNull();
    // one that stops caching when a new input shows up: the first-use calls come early, at random
    // places among the samples, so it is either caught or left with an honest figure
    const u = results.cacheUntilNew;
    if (u.failure) expect(u.failure.message).toMatch(/calls on repeated inputs took [\d.]+ ms, calls on first-seen inputs at least [\d.]+ ms/);
    else expect(u.time!.medianMs).toBeGreaterThanOrEqual(0.5 * (u.time!.firstUse?.minMs ?? Infinity));
    // an honest candidate: its first-use calls are timed and verified, and pass
    expect(results.good.time?.firstUse?.samples).toBe(5);
  });

  it('first-use calls that look like a cache are made again at the end: an honest slow start passes, a cache behind one is caught', () => {
    // Honest, slow for its first 30 calls: the early first-use calls (among them) were suspect, the
    // confirming ones at the end were not, and it passes with its fast median.
    // (On a CPU loaded by other work its fast calls can take as long as the slow start's 50 ms
    // sleeps: then the early first-use calls do not look like a cache, nothing is confirmed, and it
    // passes all the same. Either way the runner confirms exactly when the comparison was suspect.)
    const s = results.slowStart;
    expect(s.failure, JSON.stringify(s.failure)).toBeUndefined();
    const fu = s.time!.firstUse!;
    if (s.time!.medianMs < 0.45 * fu.minMs!) {
      expect(fu.confirm?.samples).toBe(5);
      expect(s.time!.medianMs).toBeGreaterThanOrEqual(0.5 * fu.confirm!.minMs);
    } else if (s.time!.medianMs >= 0.55 * fu.minMs!) {
      expect(fu.confirm).toBeUndefined();
    }
    // The cache behind the same slow start: caught, by both comparisons.
    const c = results.slowStartCache;
    expect(c.correct).toBe(true);
    expect(c.failure?.kind).toBe('correctness');
    expect(c.failure?.message).toMatch(/calls on repeated inputs took [\d.]+ ms, calls on first-seen inputs at least [\d.]+ ms \([\d.]+x\), [\d.]+ ms when checked again at the end: results served from a cache/);
    // An honest candidate with no suspect comparison makes no confirming calls.
    expect(results.good.time?.firstUse?.confirm).toBeUndefined();
  });

  it('a candidate that replaces what the checker or the timer calls fails, naming it and when', () => {
    expect(results.patchesChecker.failure?.kind).toBe('correctness');
    expect(results.patchesChecker.failure?.message).toMatch(/^the candidate replaced torch\.isclose \(at its import\)/);
    expect(results.patchesChecker.time).toBeNull();
    expect(results.patchesClock.correct).toBe(true);
    expect(results.patchesClock.failure?.message).toMatch(/^the candidate replaced time\.perf_counter \(while it was timed\)/);
    expect(results.patchesClock.time).toBeNull();
  });

  it('a buffer the first forward creates (a weight laid out once) is kept when the built state is restored before each check, and named', () => {
    const r = results.layoutOnce;
    expect(r.failure).toBeUndefined();
    expect([r.correct, r.correct1e2]).toEqual([true, true]);
    expect(r.file?.stateAddedKeys).toEqual(['wt']);
    expect(results.good.file?.stateAddedKeys).toBeUndefined();
  });

  it('an output of another dtype than the reference\'s fails every check, naming both', () => {
    const r = results.wrongDtype;
    expect([r.correct, r.correct1e2]).toEqual([false, false]);
    expect(r.file?.checks?.[0].why).toMatch(/dtype float64, the reference's is float32/);
  });

  it('an extension that fails to build and falls back to PyTorch is labelled fallback, its load recorded', () => {
    const r = results.fallback;
    expect(r.label).toBe('fallback');
    expect(r.file?.loads.map((l) => [l.name, l.ok])).toEqual([['kd_test_broken', false]]);
    expect(r.file?.own).toEqual(['relu_kernel']);
  });

  it('a shrunk problem fails on the output\'s shape; a forward that raises is failed', () => {
    expect(results.shrunk.correct).toBe(false);
    expect(results.shrunk.file?.checks?.[0].why).toMatch(/shape \[8, 32\], expected \[16, 32\]/);
    expect(results.raises.label).toBe('failed');
    expect(results.raises.failure?.message).toMatch(/no kernel for you/);
  });

  it('runs candidate code inside bubblewrap where it works (the result says which)', () => {
    for (const r of Object.values(results)) expect(r.process.sandboxed || !!r.process.sandboxProblem).toBe(true);
  });
});

describe('core: Python candidates need a PyTorch-reference task and a ModelNew', () => {
  it('refuses a CUDA-reference task, naming what to do', async () => {
    const task = loadTask(join(builtinTasksDir(), 'softmax'));
    await expect(evalPythonCandidate(task, '/nonexistent.py')).rejects.toThrow(PythonCandidateError);
    await expect(evalPythonCandidate(task, '/nonexistent.py')).rejects.toThrow(/reference\.pytorch/);
  });

});
