// The suite kernels' expert options on the CPU (issue 17): scripts/cpu-emu/run.py builds each
// configuration of transpose and matmul (their defaults and every expert configuration of
// bench/expert-configs.json) with g++ against an emulation of CUDA threads, barriers and warp
// shuffles, and compares every output element of the tasks' awkward sizes, aligned and misaligned,
// with a double-precision reference. Index arithmetic, tails and fallbacks are checked here; speed,
// memory ordering and inline PTX (cp.async) only on a GPU (scripts/device-expert-check.sh).
// Of layernorm, the one-pass variance (STATS=1) on its stress size; the references of histogram,
// softmax, layernorm and matmul (`--file reference`); reduce_sum and
// the rest of softmax/layernorm are left to the script itself (minutes on 2 cores).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const have = (cmd: string): boolean => spawnSync(cmd, ['--version'], { encoding: 'utf8' }).status === 0;
const missing = ['g++', 'python3'].filter((c) => !have(c));
if (missing.length) console.warn(`cpu-emu test skipped: ${missing.join(' and ')} not found (the emulation builds kernels with g++ from a Python driver)`);

describe.skipIf(missing.length > 0)('suite kernels under the CPU emulation (issue 17)', () => {
  it('transpose and matmul: the defaults and every expert configuration write every element right', () => {
    const r = spawnSync('python3', [join(root, 'scripts', 'cpu-emu', 'run.py'), '--tasks', 'transpose,matmul', '--count', '0', '--jobs', '2'], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out.slice(-4000)).toBe(0);
    const m = /(\d+) configurations, (\d+) failed/.exec(out);
    expect(m, out.slice(-2000)).not.toBeNull();
    // defaults (2) and the expert configurations (at least 3 per task) all ran
    expect(Number(m![1])).toBeGreaterThanOrEqual(8);
    expect(Number(m![2])).toBe(0);
    expect(out).toMatch(/ok {3}transpose +expert .*REG4=1/);
    expect(out).toMatch(/ok {3}matmul +expert .*PIPE=3/);
  }, 300_000);

  it('layernorm: the one-pass variance (STATS=1) holds on rows of values close together (64x3 at 2.5 +- 0.01)', () => {
    // Unshifted, E[x^2] - mean^2 in fp32 got 66 of 192 elements of that size wrong in every STATS=1
    // configuration at 2.5 +- 0.1 and atol 3e-5 (a numpy model of it at 2.5 +- 0.01 and the task's atol
    // 2.5e-4: ~180 of 192, off by 0.03-0.04, where two passes are off by at most 1e-4); on the H200 it
    // failed a 5x3 check of the task now and then (bench/results/README.md).
    // --count includes the default and the expert configurations (4): 6 samples.
    const r = spawnSync('python3', [join(root, 'scripts', 'cpu-emu', 'run.py'), '--tasks', 'layernorm', '--count', '10', '--only', 'STATS=1', '--jobs', '2'], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out.slice(-4000)).toBe(0);
    expect(out.match(/^ok {3}layernorm +sample .*STATS=1/gm)?.length ?? 0, out.slice(-2000)).toBeGreaterThanOrEqual(3);
  }, 300_000);

  it("the references (trusted: every variant is checked against them) of histogram, softmax, layernorm and matmul write every element right, at every alignment", () => {
    // Each replaced a slower plain kernel (histogram's per-block counts on 2026-12-07; softmax's and
    // layernorm's block per row and matmul's shared-memory tiles on 2026-12-08), because the judge
    // runs the reference for every verified timed call. A dropped or doubled byte, a reduction that
    // skips its last step or a tile's k loop one short fails here (planted ones did). Matmul's is
    // also held to the plain loop's result bit for bit (its 4x4-outputs-a-thread form of 2026-12-08
    // promises it; a planted fp32 accumulator, within the tolerance, failed that).
    const r = spawnSync('python3', [join(root, 'scripts', 'cpu-emu', 'run.py'), '--tasks', 'histogram,softmax,layernorm,matmul', '--file', 'reference', '--jobs', '2'], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out.slice(-4000)).toBe(0);
    for (const t of ['histogram', 'softmax', 'layernorm', 'matmul']) expect(out).toMatch(new RegExp(`^ok {3}${t} +reference`, 'm'));
    expect(out).toMatch(/4 configurations, 0 failed/);
  }, 300_000);
});
