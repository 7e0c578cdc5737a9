// -maxrregcount and __launch_bounds__: which sources the flag can change (everyKernelHasLaunchBounds,
// read from the text), and, on the installed nvcc, that the flag really is ignored for a kernel
// with bounds and honoured for one without (the reason the live action space leaves it out).
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { everyKernelHasLaunchBounds } from '../main/engine/source/launch.js';
import { parsePtxas } from '../main/engine/build/ptxas.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';

describe('everyKernelHasLaunchBounds', () => {
  it('is true when every __global__ carries bounds, in any position and under #if', () => {
    expect(everyKernelHasLaunchBounds('__global__ void __launch_bounds__(256) k(float* x) { x[0] = 1; }')).toBe(true);
    expect(everyKernelHasLaunchBounds('template <int N> __global__ __launch_bounds__(N, 2) void k(float* x) {}')).toBe(true);
    expect(everyKernelHasLaunchBounds('#if A\n__global__ void __launch_bounds__(T, 2)\n#else\n__global__ void __launch_bounds__(T)\n#endif\nk(float* x) {}\n__global__ void __launch_bounds__((B) * 2) g() {}')).toBe(true);
  });
  it('is false when one kernel or one declaration lacks them, or there is no kernel', () => {
    expect(everyKernelHasLaunchBounds('__global__ void __launch_bounds__(256) k() {}\n__global__ void g(float* x) {}')).toBe(false);
    expect(everyKernelHasLaunchBounds('__global__ void k();\n__global__ void __launch_bounds__(256) k() {}')).toBe(false);
    expect(everyKernelHasLaunchBounds('void host() {}')).toBe(false);
    // A __noinline__ device function keeps its own register allocation, which the flag may cap.
    expect(everyKernelHasLaunchBounds('__device__ __noinline__ float f(float x) { return x; }\n__global__ void __launch_bounds__(256) k() {}')).toBe(false);
  });
  it('does not read comments or strings', () => {
    expect(everyKernelHasLaunchBounds('// __global__ void old(float* x)\n__global__ void __launch_bounds__(128) k() {}')).toBe(true);
    expect(everyKernelHasLaunchBounds('const char* s = "__launch_bounds__";\n__global__ void k() {}')).toBe(false);
  });
});

describe.skipIf(NO_NVCC)('-maxrregcount on the installed nvcc (ptxas -v)', () => {
  // A kernel that wants many registers (a long dependent chain over an unrolled array).
  const body = '{ float a[32]; for (int i = 0; i < 32; i++) a[i] = x[threadIdx.x + i * 1024]; float s = 0; #pragma unroll\n for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) s += a[i] * a[j]; y[threadIdx.x] = s; }';
  const regs = async (bounds: boolean, maxrreg: number | null): Promise<number> => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-lb-'));
    try {
      const src = join(dir, 'k.cu');
      writeFileSync(src, `__global__ void ${bounds ? '__launch_bounds__(256) ' : ''}k(const float* __restrict__ x, float* __restrict__ y) ${body.replace('#pragma unroll', '\n#pragma unroll')}\n`);
      const args = ['-arch=sm_90', '-c', '-Xptxas', '-v', '-o', join(dir, 'k.o'), ...(maxrreg ? [`-maxrregcount=${maxrreg}`] : []), src];
      const { stdout, stderr } = await promisify(execFile)(NVCC!.nvcc, args);
      const r = parsePtxas(stdout + stderr);
      expect(r).toHaveLength(1);
      return r[0].registers;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  it('ignores the flag for a kernel with bounds and honours it for one without', async () => {
    const [bounded, boundedCapped, free, freeCapped] = await Promise.all([regs(true, null), regs(true, 24), regs(false, null), regs(false, 24)]);
    // The premise: this kernel takes more than 24 registers when left alone.
    expect(free).toBeGreaterThan(24);
    expect(freeCapped).toBeLessThanOrEqual(24);
    expect(bounded).toBeGreaterThan(24);
    expect(boundedCapped).toBe(bounded);
  }, 120_000);
});
