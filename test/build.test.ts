// Builds real variants with nvcc (no GPU needed): every built-in task's baseline and a few
// configurations of each space, compile failures mapped to the variant's lines, the build cache
// and cancellation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateShim } from '../main/engine/build/shim.js';
import { entrySignature } from '../main/engine/source/entry.js';
import { parsePtxas, shortKernelName } from '../main/engine/build/ptxas.js';
import { buildKey, buildVariant, nvccFlags, parseCompilerMessages, type BuildEnv } from '../main/engine/build/compile.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { defaultConfig, enumerateSpace } from '../main/engine/task/space.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import type { BuildResult, Config } from '../main/engine/base/types.js';

const BUILTIN = builtinTasksDir();
const taskNames = readdirSync(BUILTIN, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
const tasks = new Map<string, Task>(taskNames.map((n) => [n, loadTask(join(BUILTIN, n))]));
const softmax = (): Task => tasks.get('softmax')!;

let workRoot: string;
let env: BuildEnv;
beforeAll(() => {
  workRoot = mkdtempSync(join(tmpdir(), 'kd-build-'));
  if (NVCC) env = { nvcc: NVCC.nvcc, nvccVersion: NVCC.version, arch: 'sm_90', libDir: NVCC.libDir, workRoot };
});
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

const unique = (): string => `\n// ${Date.now()}-${Math.random()}\n`;

describe('shim', () => {
  it('entrySignature spells the task entry point with const inputs and scalar types', () => {
    expect(entrySignature(softmax())).toBe('void softmax(const float* x, float* y, int rows, int cols)');
  });
  it('generateShim includes the variant and calls the entry point with unpacked arguments', () => {
    const shim = generateShim(softmax(), '/w/variant.cu');
    expect(shim).toContain('#include "/w/variant.cu"');
    expect(shim).toContain('// Expected entry point: void softmax(const float* x, float* y, int rows, int cols)');
    expect(shim).toContain('extern "C" __attribute__((visibility("default"))) void kd_entry_packed(void** a) {');
    expect(shim).toContain('  softmax((const float*)a[0], (float*)a[1], *(const int*)a[2], *(const int*)a[3]);');
  });
  it('escapes quotes and backslashes in the include path', () => {
    expect(generateShim(softmax(), 'C:\\dir\\a"b.cu')).toContain('#include "C:/dir/a\\"b.cu"');
  });
});

// Captured from nvcc 13.0 (`nvcc -arch=sm_90 -c -Xptxas -v`, the first with -maxrregcount=24).
const PTXAS_13 = `ptxas warning : For profile sm_90 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for '_ZN2ns4kernEPKfPfi' with  24 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN2ns4kernEPKfPfi' for 'sm_90'
ptxas info    : Function properties for _ZN2ns4kernEPKfPfi
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 39.662 ms
ptxas info    : Compiling entry function '_Z5plainPf' for 'sm_90'
ptxas info    : Function properties for _Z5plainPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 3.271 ms
ptxas info    : Compiling entry function '_Z5spillPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z5spillPKfPf
    6200 bytes stack frame, 6224 bytes spill stores, 12696 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 6200 bytes cumulative stack size
ptxas info    : Compile time = 655.678 ms
`;
// The CUDA 11/12 form, with cmem on the "Used" line.
const PTXAS_12 = `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z6kernelPKfPfii' for 'sm_80'
ptxas info    : Function properties for _Z6kernelPKfPfii
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, 4096 bytes smem, 376 bytes cmem[0]
`;

describe('parsePtxas', () => {
  it('reads registers, shared memory, stack and spills per kernel from an nvcc 13 log', () => {
    const r = parsePtxas(PTXAS_13);
    expect(r).toEqual([
      { name: 'ns::kern', registers: 24, sharedBytes: 1024, constantBytes: 0, stackBytes: 256, spillStoreBytes: 0, spillLoadBytes: 0 },
      { name: 'plain', registers: 10, sharedBytes: 0, constantBytes: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0 },
      { name: 'spill', registers: 24, sharedBytes: 0, constantBytes: 0, stackBytes: 6200, spillStoreBytes: 6224, spillLoadBytes: 12696 },
    ]);
  });
  it('reads constant memory from the CUDA 12 form', () => {
    expect(parsePtxas(PTXAS_12)).toEqual([
      { name: 'kernel', registers: 40, sharedBytes: 4096, constantBytes: 376, stackBytes: 8, spillStoreBytes: 4, spillLoadBytes: 12 },
    ]);
  });
  it('gives nothing for a log without kernels', () => {
    expect(parsePtxas('')).toEqual([]);
    expect(parsePtxas('variant.cu(3): error: expected a ";"')).toEqual([]);
  });
  it('demangles plain and namespaced names and leaves others alone', () => {
    expect(shortKernelName('_Z6kernelPKfPfii')).toBe('kernel');
    expect(shortKernelName('_ZN5sm_kd14softmax_kernelEPKfPfii')).toBe('sm_kd::softmax_kernel');
    expect(shortKernelName('my_extern_c_kernel')).toBe('my_extern_c_kernel');
    // Template instantiations are told apart by their arguments (layernorm's CACHE=1 builds one per row length class).
    expect(shortKernelName('_ZN5ln_kd16layernorm_kernelILi8EEEvPKfS2_S2_Pfii')).toBe('ln_kd::layernorm_kernel<8>');
    expect(shortKernelName('_Z6kernelILi4ELb1EfEvPf')).toBe('kernel<4, true, float>');
    expect(shortKernelName('_Z6kernelILin3ELj7EEvPf')).toBe('kernel<-3, 7u>');
    expect(shortKernelName('_ZN2ns6kernelI6float4EEvPf')).toBe('ns::kernel<float4>');
    expect(shortKernelName('_Z6kernelIN2ns3FooEEvPf')).toBe('kernel<…>');
  });
  it.skipIf(NO_NVCC)('parses the log of a live nvcc -Xptxas -v compile of a namespaced kernel', async () => {
    const dir = mkdtempSync(join(workRoot, 'ptx-'));
    const src = join(dir, 'k.cu');
    writeFileSync(src, 'namespace ns { __global__ void kern(const float* x, float* y) { __shared__ float s[256]; s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); y[threadIdx.x] = s[255 - threadIdx.x]; } }\n');
    const { stderr, stdout } = await promisify(execFile)(env.nvcc, ['-arch=sm_90', '-c', '-Xptxas', '-v', '-o', join(dir, 'k.o'), src]);
    const r = parsePtxas(stdout + stderr);
    expect(r).toHaveLength(1);
    expect(r[0].name).toBe('ns::kern');
    expect(r[0].registers).toBeGreaterThan(0);
    expect(r[0].sharedBytes).toBe(1024);
  });
});

describe('nvccFlags and buildKey', () => {
  it('passes tunables as sorted -D defines after the optimisation flags', () => {
    const f = nvccFlags({ fastMath: true, maxrregcount: 64, dlcm: 'cg' }, { VEC: 4, BLOCK: 256 }, 'sm_90');
    expect(f.slice(0, 2)).toEqual(['-arch=sm_90', '-O3']);
    expect(f).toContain('--use_fast_math');
    expect(f).toContain('-maxrregcount=64');
    expect(f).toContain('-dlcm=cg');
    expect(f.filter((x) => x.startsWith('-D'))).toEqual(['-DBLOCK=256', '-DVEC=4']);
  });
  it('is the same for equal configurations in any key order and differs when the config differs', () => {
    const t = softmax();
    const e = { nvcc: 'nvcc', nvccVersion: '13.0', arch: 'sm_90', libDir: null, workRoot: '/x' };
    const a = buildKey(t, { source: 's', config: { A: 1, B: 2 }, flags: {} }, e);
    expect(buildKey(t, { source: 's', config: { B: 2, A: 1 }, flags: {} }, e)).toBe(a);
    expect(buildKey(t, { source: 's', config: { A: 1, B: 3 }, flags: {} }, e)).not.toBe(a);
    expect(buildKey(t, { source: 's', config: { A: 1, B: 2 }, flags: {} }, { ...e, arch: 'sm_80' })).not.toBe(a);
    expect(buildKey(t, { source: 's2', config: { A: 1, B: 2 }, flags: {} }, e)).not.toBe(a);
  });
});

describe('parseCompilerMessages', () => {
  it('maps nvcc and gcc style messages of the variant file and ignores other files', () => {
    const log = [
      'variant.cu(12): error: expected a ";"',
      'variant.cu(20): warning #177-D: variable "q" was declared but never referenced',
      'shim.cu(5): error: too many arguments in function call',
      '/tmp/x/variant.cu:7:3: error: stray character',
    ].join('\n');
    expect(parseCompilerMessages(log, 'variant.cu')).toEqual([
      { line: 12, severity: 'error', message: 'expected a ";"' },
      { line: 20, severity: 'warning', message: 'variable "q" was declared but never referenced' },
      { line: 7, column: 3, severity: 'error', message: 'stray character' },
    ]);
  });
});

/** The configurations built for every task: the defaults, the last of the space and two from the middle. */
function configsOf(t: Task): Array<{ label: string; config: Config }> {
  const space = enumerateSpace(t);
  const n = space.length;
  return [
    { label: 'defaults', config: defaultConfig(t) },
    { label: `#${Math.floor(n / 3)}`, config: space[Math.floor(n / 3)] },
    { label: `#${Math.floor((2 * n) / 3)}`, config: space[Math.floor((2 * n) / 3)] },
    { label: `#${n - 1} (last)`, config: space[n - 1] },
  ];
}

describe.skipIf(NO_NVCC)('real nvcc builds of every built-in task', () => {
  const results = new Map<string, BuildResult>();
  beforeAll(async () => {
    const jobs: Array<Promise<void>> = [];
    for (const [name, t] of tasks) {
      for (const { label, config } of configsOf(t)) {
        jobs.push(
          buildVariant(t, { source: t.baselineSource, config, flags: { opt: 3 } }, env).then((r) => void results.set(`${name} ${label}`, r)),
        );
      }
    }
    await Promise.all(jobs);
  }, 300_000);

  for (const name of taskNames) {
    it(`${name}: the baseline with its defaults builds and reports per-kernel resources`, () => {
      const r = results.get(`${name} defaults`)!;
      expect(r.failure, r.log).toBeUndefined();
      expect(r.ok).toBe(true);
      expect(r.cached).toBeFalsy();
      expect(r.libPath && existsSync(r.libPath)).toBeTruthy();
      expect(r.arch).toBe('sm_90');
      expect(r.command).toContain('-arch=sm_90');
      expect(r.resources.length).toBeGreaterThanOrEqual(1);
      for (const k of r.resources) {
        expect(k.registers).toBeGreaterThan(0);
        expect(k.name).not.toMatch(/^_Z/);
      }
    });
    it(`${name}: three more configurations of its space build`, () => {
      const others = configsOf(tasks.get(name)!).slice(1);
      for (const { label, config } of others) {
        const r = results.get(`${name} ${label}`)!;
        expect(r.ok, `${name} ${label} ${JSON.stringify(config)}: ${r.failure?.reason}\n${r.log}`).toBe(true);
        expect(r.resources.length).toBeGreaterThanOrEqual(1);
        for (const [k, v] of Object.entries(config)) expect(r.command).toContain(`-D${k}=${v}`);
      }
    });
  }

  // MINB 1 must not be written as __launch_bounds__(threads, 1): ptxas then plans for one block per
  // SM and takes more registers (80 instead of 64 here: one 512-thread block per SM instead of two,
  // 6.31 ms instead of 5.17 on the H200; the naive baseline 56 instead of 32).
  it('matmul: MINB 1 leaves ptxas its own register budget (the recorded best TILED 1 tile: <= 64 registers; the naive baseline <= 32)', async () => {
    const t = tasks.get('matmul')!;
    const config = { ...defaultConfig(t), TILED: 1, BM: 128, BN: 128, BK: 32, TM: 8, TN: 4 };
    const r = await buildVariant(t, { source: t.baselineSource, config, flags: { opt: 3 } }, env);
    expect(r.ok, r.log).toBe(true);
    const regs = (b: BuildResult): number | undefined => b.resources.find((k) => k.name.includes('matmul_kernel'))?.registers;
    expect(regs(r)).toBeLessThanOrEqual(64);
    expect(regs(results.get('matmul defaults')!)).toBeLessThanOrEqual(32);
  }, 120_000);

  it('a second identical build is a cache hit with the same library', async () => {
    const t = softmax();
    const first = results.get('softmax defaults')!;
    const started = Date.now();
    const again = await buildVariant(t, { source: t.baselineSource, config: defaultConfig(t), flags: { opt: 3 } }, env);
    expect(again.cached).toBe(true);
    expect(again.ok).toBe(true);
    expect(again.libPath).toBe(first.libPath);
    expect(again.resources).toEqual(first.resources);
    // No nvcc ran: far less time than the build it stands for (relative, so a busy machine does not matter).
    expect(Date.now() - started).toBeLessThan(first.durationMs / 2);
  });
});

describe.skipIf(NO_NVCC)('failed builds', () => {
  it("a syntax error fails with kind 'compile', a reason naming the error, mapped to the variant's line", async () => {
    const t = softmax();
    const lines = t.baselineSource.split('\n');
    const at = lines.findIndex((l) => l.includes('const float inv = 1.f / s;'));
    expect(at).toBeGreaterThan(0);
    lines[at] = '  const float inv = 1.f / s  // missing semicolon';
    const r = await buildVariant(t, { source: lines.join('\n') + unique(), config: defaultConfig(t), flags: {} }, env);
    expect(r.ok).toBe(false);
    expect(r.libPath).toBeUndefined();
    expect(r.failure?.kind).toBe('compile');
    expect(r.failure?.reason).toMatch(/error/);
    expect(r.failure?.reason).toMatch(/expected a ";"/);
    // The build folder is stripped from the log: messages name variant.cu, not a temp path.
    expect(r.log).not.toContain(workRoot);
    const msgs = parseCompilerMessages(r.log, 'variant.cu').filter((m) => m.severity === 'error');
    expect(msgs.length).toBeGreaterThanOrEqual(1);
    // The error is reported on the broken line (1-based) or the next one.
    expect([at + 1, at + 2]).toContain(msgs[0].line);
  });

  it('a variant whose entry point has the wrong signature fails to compile', async () => {
    const t = softmax();
    const src = t.baselineSource.replace(
      'void softmax(const float* x, float* y, int rows, int cols) {',
      'void softmax(const float* x, float* y, int rows) {\n  const int cols = rows;',
    );
    expect(src).not.toBe(t.baselineSource);
    const r = await buildVariant(t, { source: src + unique(), config: defaultConfig(t), flags: {} }, env);
    expect(r.ok).toBe(false);
    expect(r.failure?.kind).toBe('compile');
    expect(r.failure?.log ?? r.log).toContain('softmax(');
  });

  it('cancelling with an AbortSignal mid-build returns promptly without a library', async () => {
    const t = tasks.get('matmul') ?? softmax();
    const ac = new AbortController();
    const spec = { source: t.baselineSource + unique(), config: defaultConfig(t), flags: {} };
    const p = buildVariant(t, spec, env, ac.signal).then(
      (r) => ({ r, e: null as unknown }),
      (e: unknown) => ({ r: null as BuildResult | null, e }),
    );
    await new Promise((res) => setTimeout(res, 700));
    const abortedAt = Date.now();
    ac.abort();
    const { r, e } = await p;
    const cancelledInMs = Date.now() - abortedAt;
    // Promptly: nvcc is killed, not waited for. Measured against the same build left to finish, so a
    // busy machine (slower at both) does not decide the outcome.
    const full = await buildVariant(t, { ...spec, source: spec.source + unique() }, env);
    expect(full.ok, full.log).toBe(true);
    expect(cancelledInMs).toBeLessThan(full.durationMs / 2);
    if (r) {
      expect(r.ok).toBe(false);
      expect(r.failure?.reason).toMatch(/cancel/);
    } else {
      expect((e as Error).name).toMatch(/AbortError/);
    }
    const dir = join(workRoot, 'builds', buildKey(t, spec, env));
    await new Promise((res) => setTimeout(res, 300));
    expect(existsSync(join(dir, 'variant.so'))).toBe(false);
  });

  it('a build queued after a cancelled one still runs', async () => {
    const t = softmax();
    const r = await buildVariant(t, { source: t.baselineSource + unique(), config: { ...defaultConfig(t), VEC: 4 }, flags: {} }, env);
    expect(r.ok, r.log).toBe(true);
  });
});
