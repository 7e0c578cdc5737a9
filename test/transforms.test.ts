// Source transforms on a real parse tree (tree-sitter C++ grammar, CUDA syntax masked): sites are
// found in the real example kernels, applied edits land where they should, what cannot be applied
// is not offered (ERROR nodes, runtime block sizes, existing qualifiers), and a transformed
// kernel still builds with nvcc.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { findTransforms, maskCuda, parseCuda } from '../main/engine/source/transforms.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { buildVariant } from '../main/engine/build/compile.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { defaultConfig } from '../main/engine/task/space.js';

const tasks = new Map<string, Task>(readdirSync(builtinTasksDir()).map((n) => [n, loadTask(join(builtinTasksDir(), n))]));
const tunables = (t: Task): string[] => Object.keys(t.manifest.tunables ?? {});

const NAIVE = `#include <cuda_runtime.h>
#ifndef BLOCK
#define BLOCK 128
#endif
#define NT (BLOCK * 2)
template <int V>
__global__ void scale(const float* x, float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    if (i < n) y[i] = a * x[i];
  }
}
__global__ void other(float* p, int n) { for (int i = 0; i < n; ++i) p[i] = 0; }
void entry(const float* x, float* y, float a, int n, int b) {
  scale<1><<<(n + NT - 1) / NT, NT>>>(x, y, a, n);
  other<<<1, b>>>(y, n);
}
`;

describe('masking and parsing', () => {
  it('masking keeps every offset and line', () => {
    const m = maskCuda(NAIVE);
    expect(m.length).toBe(NAIVE.length);
    expect(m.split('\n').length).toBe(NAIVE.split('\n').length);
    expect(m).not.toMatch(/__global__|<<</);
  });
  it('the __global__ function of every example kernel is found in the masked parse tree (preprocessor branches may still leave ERROR nodes: sites there are skipped)', async () => {
    for (const t of tasks.values()) {
      const tree = await parseCuda(t.baselineSource);
      const fns = tree.rootNode.descendantsOfType('function_definition').filter((f) => f && t.baselineSource.slice(Math.max(0, f.startIndex - 200), f.startIndex + 100).includes('__global__'));
      expect(fns.length, t.manifest.name).toBeGreaterThan(0);
      tree.delete();
    }
  });
});

describe('findTransforms', () => {
  it('offers #pragma unroll on loops of the real kernels that are not unrolled yet, and no qualifier they already have', async () => {
    for (const t of tasks.values()) {
      const c = await findTransforms(t.baselineSource, { tunables: tunables(t) });
      expect(c.sites.filter((s) => s.kind !== 'unroll'), t.manifest.name).toEqual([]); // they all carry __restrict__ and __launch_bounds__
      for (const s of c.sites) {
        const out = c.apply([s.options[1]]);
        const lines = out.split('\n');
        expect(lines[s.line - 1].trim(), `${t.manifest.name} ${s.dim}`).toBe('#pragma unroll 4');
        expect(lines[s.line].trim()).toMatch(/^for\s*\(/);
      }
    }
    const sm = await findTransforms(tasks.get('softmax')!.baselineSource, { tunables: tunables(tasks.get('softmax')!) });
    expect(sm.sites.length).toBeGreaterThan(1);
  });

  it('offers __restrict__ and __launch_bounds__ on a naive kernel whose block size is a macro of tunables, not on one launched with a runtime block size', async () => {
    const c = await findTransforms(NAIVE, { tunables: ['BLOCK'] });
    const dims = c.sites.map((s) => s.dim);
    expect(dims).toContain('restrict@scale');
    expect(dims).toContain('restrict@other');
    expect(dims).toContain('launch_bounds@scale');
    expect(dims).not.toContain('launch_bounds@other');
    expect(dims).toContain('unroll@scale/for0');
    expect(dims).not.toContain('unroll@other/for0'); // the loop does not begin its line
    const out = c.apply(['restrict@scale', 'launch_bounds@scale=NT', 'unroll@scale/for0=8']);
    expect(out).toContain('__global__ void __launch_bounds__(NT) scale(const float* __restrict__ x, float *__restrict__ y, float a, int n)');
    expect(out).toContain('  #pragma unroll 8\n  for (int k = 0;');
    expect(out).toContain('other(float* p, int n)'); // untouched
    expect(() => c.apply(['unroll@scale/for0=2', 'unroll@scale/for0=4'])).toThrow(/twice/);
    expect(() => c.apply(['nope'])).toThrow(/unknown transform/);
    // A block size from a macro of a runtime value is not static: not offered.
    const dyn = NAIVE.replace('#define NT (BLOCK * 2)', '#define NT (n / 4)');
    expect((await findTransforms(dyn, { tunables: ['BLOCK'] })).sites.map((s) => s.dim)).not.toContain('launch_bounds@scale');
  });

  it('does not throw on code the grammar cannot parse, and offers nothing at broken sites', async () => {
    const broken = '__global__ void k(float* p int n) { for (int i = 0; i < n; ++i) p[i] = ; }\n@@@ ### }}}';
    const c = await findTransforms(broken, { tunables: [] });
    expect(c.sites.filter((s) => s.kind === 'restrict')).toEqual([]);
    expect(c.apply([])).toBe(broken);
  });

  it('an ActionSpace with transform dimensions decodes to transformed source and records the ids', async () => {
    const t = tasks.get('softmax')!;
    const cat = await findTransforms(t.baselineSource, { tunables: tunables(t) });
    const space = new ActionSpace(t, { transforms: cat });
    const a = space.encode({ config: defaultConfig(t), transforms: [cat.sites[0].options[0]] })!;
    const p = space.decode(a);
    expect(p.transforms).toEqual([cat.sites[0].options[0]]);
    expect(p.source).toContain('#pragma unroll 2');
    expect(p.source).not.toBe(t.baselineSource);
  });
});

describe.skipIf(NO_NVCC)('a transformed kernel still builds', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(join(tmpdir(), 'kd-tx-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  it('softmax with #pragma unroll on every offered loop compiles with nvcc and keeps its kernel', async () => {
    const t = tasks.get('softmax')!;
    const cat = await findTransforms(t.baselineSource, { tunables: tunables(t) });
    const ids = cat.sites.map((s) => s.options[1]);
    const source = cat.apply(ids);
    const b = await buildVariant(t, { source, config: { ...defaultConfig(t), TPR: 32, VEC: 4, ONLINE: 1 }, flags: { opt: 3 } }, { nvcc: NVCC!.nvcc, nvccVersion: NVCC!.version, arch: 'sm_90', libDir: NVCC!.libDir, workRoot: work });
    expect(b.failure?.log ?? '').toBe('');
    expect(b.ok).toBe(true);
    expect(b.resources.some((r) => r.name.includes('softmax_kernel'))).toBe(true);
  }, 60_000);
});
