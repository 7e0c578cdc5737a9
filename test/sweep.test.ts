// The sweep's bookkeeping (recording whole spaces): every variant is built first (in parallel),
// build failures are recorded at once, the rest go through the evaluator in order, and each
// outcome reaches onResult as soon as it exists (a recorder appends it to its file).
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Evaluator } from '../main/engine/measure/evaluate.js';
import { sweep } from '../main/engine/measure/sweep.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import type { BuildResult, EvalResult, VariantSpec } from '../main/engine/base/types.js';
import type { GpuInfo } from '../main/engine/base/types.js';

const source = { kind: 'gpu' as const, gpu: 'Fake GPU', uuid: 'GPU-fake' };
class FakeEvaluator extends Evaluator {
  readonly order: string[] = [];
  override build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>): Promise<BuildResult> {
    const ok = !spec.source.includes('noBuild');
    return Promise.resolve({ ok, libPath: ok ? `/fake/${spec.source}.so` : undefined, arch: 'sm_90', command: [], resources: [], log: '', durationMs: 0, failure: ok ? undefined : { kind: 'compile', reason: 'syntax error' } });
  }
  override async evaluate(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>): Promise<EvalResult> {
    this.order.push(spec.source);
    const build = await this.build(spec);
    if (spec.source.includes('crash')) return { build, failure: { kind: 'runtime', reason: 'the executor was killed by signal 11' }, source };
    return { build, check: { ok: true, checks: [], durationMs: 1 }, source };
  }
}
const gpu: GpuInfo = { index: 0, name: 'Fake GPU', uuid: 'GPU-fake', computeCapability: '9.0', arch: 'sm_90', memoryTotalMiB: 1, smClockMHz: null, memClockMHz: null, maxSmClockMHz: null, maxMemClockMHz: null, driverVersion: '0' };
const toolchain = { nvcc: '/bin/false', version: '0', cudaHome: null, libDir: null, targets: [], hostCompiler: null, problems: [] };
const item = (id: string, marker: string) => ({ id, spec: { source: marker, config: {}, flags: {} } });

describe('sweep', () => {
  it('records build failures at once and evaluates the rest in order, reporting each as it is done', async () => {
    const ev = new FakeEvaluator({ task: resolveTask('softmax'), toolchain, gpu, workRoot: mkdtempSync(join(tmpdir(), 'kd-sweep-')), seeds: [1, 2, 3] });
    const seen: Array<[string, number, number]> = [];
    const res = await sweep(ev, [item('a', 'good1'), item('b', 'crash'), item('c', 'noBuild'), item('d', 'good2')], { onResult: (id, _r, done, total) => seen.push([id, done, total]) });
    expect(res.size).toBe(4);
    expect(ev.order).toEqual(['good1', 'crash', 'good2']); // the one that did not build never reaches the GPU
    expect(res.get('c')?.failure).toMatchObject({ kind: 'compile' });
    expect(res.get('b')?.failure?.kind).toBe('runtime');
    expect(res.get('d')?.check?.ok).toBe(true);
    expect(seen.map((s) => s[0])).toEqual(['c', 'a', 'b', 'd']);
    expect(seen.map((s) => s[1])).toEqual([1, 2, 3, 4]);
    expect(seen.every((s) => s[2] === 4)).toBe(true);
  });

  it('stops at an abort, keeping what it measured', async () => {
    const ev = new FakeEvaluator({ task: resolveTask('softmax'), toolchain, gpu, workRoot: mkdtempSync(join(tmpdir(), 'kd-sweep-')), seeds: [1, 2, 3] });
    const ac = new AbortController();
    const res = await sweep(ev, [item('a', 'good1'), item('b', 'good2'), item('c', 'good3')], { signal: ac.signal, onResult: (id) => id === 'a' && ac.abort() });
    expect([...res.keys()]).toEqual(['a']);
  });
});
