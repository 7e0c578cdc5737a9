import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearToolchainCache, findToolchain, parseNvccVersion } from '../main/engine/platform/toolchain/nvcc.js';
import { ApiService } from '../main/core/service.js';

const REAL_NVCC = '/usr/local/cuda/bin/nvcc';
const hasNvcc = existsSync(REAL_NVCC);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kd-nvcc-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => clearToolchainCache());

function fakeNvcc(sub: string, body: string): string {
  const bin = path.join(dir, sub, 'bin');
  mkdirSync(bin, { recursive: true });
  const p = path.join(bin, 'nvcc');
  writeFileSync(p, `#!/bin/bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** An environment where nothing points at a CUDA toolkit. */
function emptyEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: path.join(dir, 'nowhere'), CUDA_HOME: path.join(dir, 'no-cuda'), KERNELDUEL_NO_DEFAULT_CUDA: '1', ...extra };
}

describe('parseNvccVersion', () => {
  it('extracts the full version from nvcc --version output', () => {
    expect(parseNvccVersion('Cuda compilation tools, release 13.0, V13.0.48\nBuild cuda_13.0.r13.0/compiler.1')).toBe('13.0.48');
    expect(parseNvccVersion('Cuda compilation tools, release 12.4, V12.4.131')).toBe('12.4.131');
  });
  it('falls back to the release number, and returns null on unrelated text', () => {
    expect(parseNvccVersion('Cuda compilation tools, release 11.8')).toBe('11.8');
    expect(parseNvccVersion('command not found')).toBeNull();
    expect(parseNvccVersion('')).toBeNull();
  });
});

describe('findToolchain', () => {
  it.skipIf(!hasNvcc)('finds the real CUDA 13 toolkit: version, sm_90 target and libcudart', async () => {
    const tc = await findToolchain({ ...process.env, KERNELDUEL_NVCC: REAL_NVCC });
    expect(tc.nvcc).toBe(REAL_NVCC);
    expect(tc.version).toMatch(/^13\./);
    expect(tc.targets).toContain('sm_90');
    expect(tc.targets.every((t) => /^sm_\d+[a-z]?$/.test(t))).toBe(true);
    expect(tc.libDir).not.toBeNull();
    expect(existsSync(path.join(tc.libDir!, 'libcudart.so'))).toBe(true);
    expect(tc.cudaHome).not.toBeNull();
    expect(tc.problems.filter((p) => /nvcc/.test(p) && !/host C\+\+/.test(p))).toEqual([]);
  });

  it.skipIf(!hasNvcc)('falls back to /usr/local/cuda/bin when PATH and CUDA_HOME have no nvcc', async () => {
    const tc = await findToolchain({ PATH: path.join(dir, 'nowhere') });
    expect(tc.nvcc).toBe(REAL_NVCC);
    expect(tc.version).toMatch(/^13\./);
  });

  it.skipIf(!hasNvcc)('finds nvcc through CUDA_HOME/bin', async () => {
    const tc = await findToolchain({ PATH: path.join(dir, 'nowhere'), CUDA_HOME: '/usr/local/cuda', KERNELDUEL_NO_DEFAULT_CUDA: '1' });
    expect(tc.nvcc).toBe(REAL_NVCC);
    expect(tc.cudaHome).toBe('/usr/local/cuda');
  });

  it.skipIf(!hasNvcc)('locates libcudart even when nvcc on PATH is a wrapper script outside the toolkit', async () => {
    const wrapperDir = path.join(dir, 'wrap');
    mkdirSync(wrapperDir, { recursive: true });
    const w = path.join(wrapperDir, 'nvcc');
    writeFileSync(w, `#!/bin/sh\nexec ${REAL_NVCC} "$@"\n`);
    chmodSync(w, 0o755);
    const tc = await findToolchain({ PATH: wrapperDir, CUDA_HOME: '/usr/local/cuda' });
    expect(tc.nvcc).toBe(w);
    expect(tc.libDir).not.toBeNull();
    expect(existsSync(path.join(tc.libDir!, 'libcudart.so'))).toBe(true);
  });

  it('reports the missing-nvcc message when nothing points at a toolkit', async () => {
    const tc = await findToolchain(emptyEnv());
    expect(tc.nvcc).toBeNull();
    expect(tc.version).toBeNull();
    expect(tc.targets).toEqual([]);
    expect(tc.problems).toContain(
      'nvcc not found on PATH, CUDA_HOME, CUDA_PATH or /usr/local/cuda: install the CUDA toolkit or set KERNELDUEL_NVCC; without it KernelDuel can only replay recorded spaces',
    );
  });

  it('says KERNELDUEL_NVCC is wrong when it points at a missing file', async () => {
    const tc = await findToolchain(emptyEnv({ KERNELDUEL_NVCC: path.join(dir, 'missing', 'nvcc') }));
    expect(tc.nvcc).toBeNull();
    expect(tc.problems.some((p) => p.startsWith('KERNELDUEL_NVCC is set to') && p.includes('not an executable'))).toBe(true);
  });

  it('prefers KERNELDUEL_NVCC over PATH and parses a fake nvcc', async () => {
    const onPath = fakeNvcc('pathcuda', 'echo "Cuda compilation tools, release 11.0, V11.0.1"');
    const chosen = fakeNvcc(
      'chosen',
      'if [ "$1" = "--list-gpu-arch" ]; then printf "compute_80\\ncompute_86\\ncompute_90\\n"; else echo "Cuda compilation tools, release 12.4, V12.4.131"; fi',
    );
    const tc = await findToolchain(emptyEnv({ KERNELDUEL_NVCC: chosen, PATH: path.dirname(onPath) }));
    expect(tc.nvcc).toBe(chosen);
    expect(tc.version).toBe('12.4.131');
    expect(tc.targets).toEqual(['sm_80', 'sm_86', 'sm_90']);
  });

  it('reports an nvcc that fails to run, with its exit code and stderr', async () => {
    const bad = fakeNvcc('broken', 'echo "error while loading shared libraries: libnvvm.so" >&2; exit 127');
    const tc = await findToolchain(emptyEnv({ KERNELDUEL_NVCC: bad }));
    expect(tc.nvcc).toBe(bad);
    expect(tc.version).toBeNull();
    const p = tc.problems.find((s) => s.includes('failed to run'));
    expect(p).toBeDefined();
    expect(p).toMatch(/exited with code 127/);
    expect(p).toMatch(/libnvvm\.so/);
  });

  it('times out an nvcc that hangs instead of waiting for it', async () => {
    const hang = fakeNvcc('hang', '/bin/sleep 60');
    const t0 = Date.now();
    const tc = await findToolchain(emptyEnv({ KERNELDUEL_NVCC: hang }), { timeoutMs: 400 });
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(tc.version).toBeNull();
    expect(tc.problems.some((p) => /did not answer --version within 0\.4 s/.test(p))).toBe(true);
  });

  it('does not remember an nvcc that timed out: the next call asks it again (a busy machine for a moment)', async () => {
    // Slow until the marker file exists (the machine's load has passed), quick after.
    const calm = path.join(dir, 'slow-once-calm');
    const slow = fakeNvcc('slow-once', `if [ ! -e ${calm} ]; then /bin/sleep 5; fi
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.48"; else echo "sm_90"; fi`);
    const env = emptyEnv({ KERNELDUEL_NVCC: slow, PATH: '/usr/bin:/bin' });
    const first = await findToolchain(env, { timeoutMs: 1500 });
    expect(first.version).toBeNull();
    expect(first.problems.some((p) => /did not answer --version within 1\.5 s/.test(p))).toBe(true);
    writeFileSync(calm, '');
    await new Promise((r) => setTimeout(r, 50)); // the cache drops it once the answer is in
    const second = await findToolchain(env, { timeoutMs: 1500 });
    expect(second).not.toBe(first);
    expect(second.version).toBe('13.0.48');
    expect(second.targets).toEqual(['sm_90']);
    // A definite answer is remembered.
    expect(findToolchain(env, { timeoutMs: 1500 })).toBe(findToolchain(env, { timeoutMs: 1500 }));
    expect(await findToolchain(env, { timeoutMs: 1500 })).toBe(second);
  }, 30_000);

  it("a front door's warm() asks nvcc before the workbench's first env.describe, which then finds it remembered", async () => {
    const calls = path.join(dir, 'warm-calls');
    const counted = fakeNvcc('counted', `echo "$1" >> ${calls}
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.48"; else echo "sm_90"; fi`);
    const env = emptyEnv({ KERNELDUEL_NVCC: counted, PATH: '/usr/bin:/bin', KERNELDUEL_NO_GPU: '1', KERNELDUEL_HOME: path.join(dir, 'warm-home') });
    const service = new ApiService({ mode: 'browser', env, worker: false });
    const asked = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n').length : 0);
    expect(asked()).toBe(0);
    service.warm();
    const t0 = Date.now();
    while (asked() < 2 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20));
    expect(asked()).toBe(2); // --version and the target list, before any call of the workbench
    const described = await service.handlers()['env.describe']({});
    expect(described.toolchain.version).toBe('13.0.48');
    expect(asked()).toBe(2);
  }, 30_000);

  it('caches per environment and forgets after clearToolchainCache()', async () => {
    const env = emptyEnv();
    const a = findToolchain(env);
    expect(findToolchain({ ...env })).toBe(a);
    expect(findToolchain(emptyEnv({ CUDA_PATH: path.join(dir, 'other') }))).not.toBe(a);
    await a;
    clearToolchainCache();
    expect(findToolchain(env)).not.toBe(a);
  });
});
