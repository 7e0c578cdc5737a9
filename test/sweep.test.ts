// The sweep's bookkeeping (recording whole spaces through one harness process), exercised with a
// stand-in harness script: results arrive per variant, a crash or a hang is pinned on the variant
// that caused it, and the sweep carries on after it in a fresh process.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Evaluator } from '../main/eval/evaluate.js';
import { sweep } from '../main/eval/sweep.js';
import { resolveTask } from '../main/task/resolve.js';
import type { BuildResult, VariantSpec } from '../main/common/types.js';
import type { GpuInfo } from '../main/gpu/detect.js';

const dir = mkdtempSync(join(tmpdir(), 'kd-sweep-'));
const fake = join(dir, 'fake_harness.sh');
// Same command line as the real harness: sweep <plan> <out.jsonl> <list>.
writeFileSync(
  fake,
  `#!/bin/bash
nonce=$(grep '^nonce ' "$2" | cut -d' ' -f2)
while read -r id lib; do
  case "$lib" in
    *hang*) sleep 60 ;;
    *crash*) kill -SEGV $$ ;;
    *wrong*) echo "{\\"id\\":\\"$id\\",\\"nonce\\":\\"$nonce\\",\\"status\\":\\"correctness\\",\\"error\\":\\"y[3]: expected 1 got 2\\",\\"checks\\":[]}" >> "$3" ;;
    *) echo "{\\"id\\":\\"$id\\",\\"nonce\\":\\"$nonce\\",\\"status\\":\\"ok\\",\\"checks\\":[],\\"l2FlushBytes\\":1,\\"timings\\":[{\\"size\\":0,\\"warmupCalls\\":3,\\"converged\\":true,\\"eventMs\\":[1,1.1,0.9,1,1],\\"wallMs\\":[1.02,1.12,0.92,1.02,1.02]}]}" >> "$3" ;;
  esac
done < "$4"
`,
);
chmodSync(fake, 0o755);

class FakeEvaluator extends Evaluator {
  override harness(): Promise<string> {
    return Promise.resolve(fake);
  }
  override reference(): Promise<void> {
    return Promise.resolve();
  }
  override build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>): Promise<BuildResult> {
    const ok = !spec.source.includes('noBuild');
    return Promise.resolve({ ok, libPath: ok ? `/fake/${spec.source}.so` : undefined, arch: 'sm_90', command: [], resources: [], log: '', durationMs: 0, failure: ok ? undefined : { kind: 'compile', reason: 'syntax error' } });
  }
}

const gpu: GpuInfo = { index: 0, name: 'Fake GPU', uuid: 'GPU-fake', computeCapability: '9.0', arch: 'sm_90', memoryTotalMiB: 1, smClockMHz: null, memClockMHz: null, maxSmClockMHz: null, maxMemClockMHz: null, driverVersion: '0' };
const ev = new FakeEvaluator({ task: resolveTask('softmax'), toolchain: { nvcc: '/bin/false', version: '0', cudaHome: null, libDir: null, targets: [], hostCompiler: null, problems: [] }, gpu, workRoot: dir, seeds: [1, 2, 3] });
const item = (id: string, marker: string) => ({ id, spec: { source: marker, config: {}, flags: {} } });

describe('sweep', () => {
  it('records every variant, pins a crash and a hang on their variants, and goes on after them', async () => {
    const seen: string[] = [];
    const res = await sweep(ev, [item('a', 'good1'), item('b', 'crash'), item('c', 'good2'), item('d', 'hang'), item('e', 'wrong'), item('f', 'noBuild'), item('g', 'good3')], {
      perVariantTimeoutMs: 1500,
      onResult: (id) => seen.push(id),
    });
    expect(res.size).toBe(7);
    expect(res.get('a')?.timing?.[0].medianMs).toBe(1);
    expect(res.get('a')?.failure).toBeUndefined();
    expect(res.get('b')?.failure).toMatchObject({ kind: 'runtime' });
    expect(res.get('b')?.failure?.reason).toMatch(/SIGSEGV|killed|exited/);
    expect(res.get('c')?.timing?.[0].medianMs).toBe(1);
    expect(res.get('d')?.failure?.kind).toBe('timeout');
    expect(res.get('e')?.failure).toMatchObject({ kind: 'correctness', reason: 'y[3]: expected 1 got 2' });
    expect(res.get('f')?.failure?.kind).toBe('compile');
    expect(res.get('g')?.timing?.[0].samplesMs).toHaveLength(5);
    expect(res.get('g')?.source).toEqual({ kind: 'gpu', gpu: 'Fake GPU', uuid: 'GPU-fake' });
    expect(new Set(seen).size).toBe(7);
  }, 30_000);
});
