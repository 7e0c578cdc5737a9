// bench/lib/context-loop.ts: the loop that `bench timing-stability --beside contexts` runs beside a
// measurement (fresh processes creating CUDA contexts). Without a GPU only the loop's mechanics and
// the refusal can be tested; the figures it is for come from a GPU (bench/results/README.md).
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContextProgram, startLoop } from '../bench/lib/context-loop.js';
import { HAS_GPU, NO_NVCC, NVCC } from './fixtures/toolchain.js';

describe('the loop beside a measurement', () => {
  it('runs its command again and again, one at a time, until stopped, and counts them', async () => {
    const loop = startLoop('/bin/true');
    await new Promise((r) => setTimeout(r, 300));
    const n = await loop.stop();
    expect(n.started).toBeGreaterThan(1);
    expect(n.failed).toBe(0);
  });
  it('a command that always fails stops the loop by itself after 20 tries, and stop() says so', async () => {
    const n = await startLoop('/bin/false').ended;
    expect(n.failed).toBe(n.started);
    expect(n.started).toBe(20);
  });
  it.skipIf(NO_NVCC || HAS_GPU)('without a GPU the context program builds but is refused, saying it needs the GPU under test', () => {
    expect(() => buildContextProgram(NVCC!.nvcc, mkdtempSync(join(tmpdir(), 'kd-ctx-')))).toThrow(/a process creating a CUDA context failed here .*needs the GPU under test/);
  }, 120_000);
});
