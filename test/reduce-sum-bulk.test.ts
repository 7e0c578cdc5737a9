// reduce_sum's LOAD 4 (issue 17): a Hopper bulk-copy (TMA) body that the CPU emulation cannot run
// (it builds the plain-load fallback there), so this file checks what a build can: for sm_90 the
// product's own build accepts it and the device code really holds the bulk copies and the mbarrier
// waits; for sm_80 the same configuration builds the plain body (no bulk copy). Whether it is
// right and fast is the GPU's to say (bench/results/h200-vs-pytorch-reduce_sum-bulk-c370d7d.md:
// every configuration passed the checks).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildVariant, nvccFlags, type BuildEnv } from '../main/engine/build/compile.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import type { Config } from '../main/engine/base/types.js';

const run = promisify(execFile);
const task = resolveTask('reduce_sum');
const BULK: Config = { BLOCK: 512, VEC: 4, ITEMS: 4, GRID_MULT: 4, SHUFFLE: 1, FINAL: 0, LOAD: 4 };

async function ptx(config: Config, arch: string): Promise<string> {
  const flags = nvccFlags({ opt: 3 }, config, arch).filter((f, i, a) => f !== '-Xptxas' && a[i - 1] !== '-Xptxas');
  const r = await run(NVCC!.nvcc, [...flags, '-ptx', task.baselinePath, '-o', '-'], { maxBuffer: 64 << 20 });
  return r.stdout;
}

describe('reduce_sum LOAD 4 (bulk copies)', () => {
  it('is in the space at the shapes whose two stages fit in 192 KiB, and only there', () => {
    const bulk = enumerateSpace(task).filter((c) => c.LOAD === 4);
    expect(bulk.length).toBeGreaterThan(0);
    for (const c of bulk) expect(Number(c.BLOCK) * Number(c.ITEMS), JSON.stringify(c)).toBeLessThanOrEqual(4096);
    expect(isValidConfig(task, BULK)).toBe(true);
    expect(isValidConfig(task, { ...BULK, BLOCK: 1024, ITEMS: 8 })).toBe(false);
  });

  describe.skipIf(NO_NVCC)('built with nvcc', () => {
    let workRoot: string;
    beforeAll(() => {
      workRoot = mkdtempSync(join(tmpdir(), 'kd-rs-bulk-'));
    });
    afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

    it('sm_90: the product builds it, and its PTX streams chunks with cp.async.bulk onto mbarriers', async () => {
      const env: BuildEnv = { nvcc: NVCC!.nvcc, nvccVersion: NVCC!.version, arch: 'sm_90', libDir: NVCC!.libDir, workRoot };
      const b = await buildVariant(task, { source: task.baselineSource, config: BULK, flags: { opt: 3 } }, env);
      expect(b.ok, b.log.slice(-2000)).toBe(true);
      const text = await ptx(BULK, 'sm_90');
      expect(text).toContain('cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes');
      expect(text).toContain('mbarrier.try_wait.parity.shared::cta.b64');
      expect(text).toContain('mbarrier.arrive.expect_tx.shared::cta.b64');
      // The plain-load body of LOAD 1 has none of it.
      expect(await ptx({ ...BULK, LOAD: 1 }, 'sm_90')).not.toContain('cp.async.bulk');
    }, 120_000);

    it('sm_80: the same configuration builds the plain float4 body', async () => {
      const text = await ptx(BULK, 'sm_80');
      expect(text).not.toContain('cp.async.bulk');
      expect(text).not.toContain('mbarrier');
      expect(text).toMatch(/ld\.global\.nc\.v4\.f32/);
    }, 120_000);
  });
});
