import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { clearHostInfoCache, describeEnvironment, hostInfo } from '../main/engine/platform/host/info.js';
import { clearToolchainCache } from '../main/engine/platform/toolchain/nvcc.js';

const REAL_NVCC = '/usr/local/cuda/bin/nvcc';
const hasNvcc = existsSync(REAL_NVCC);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kd-host-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => clearToolchainCache());

function script(name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const p = path.join(dir, name);
  writeFileSync(p, `#!/bin/bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const noCudaEnv = (): NodeJS.ProcessEnv => ({ PATH: path.join(dir, 'nowhere'), KERNELDUEL_NO_DEFAULT_CUDA: '1' });

describe('hostInfo', () => {
  it('describes this machine with real systeminformation data', async () => {
    const h = await hostInfo();
    expect(h.cpu.length).toBeGreaterThan(0);
    expect(Number.isInteger(h.cores) && h.cores >= 1).toBe(true);
    expect(h.memTotalBytes).toBeGreaterThan(64 * 1024 * 1024);
    expect(h.os.length).toBeGreaterThan(0);
    expect(h.hostname).toBe(os.hostname());
  });

  it('uses systeminformation values when they are available', async () => {
    const h = await hostInfo({
      si: {
        cpu: async () => ({ manufacturer: 'AMD', brand: 'EPYC 9654', cores: 192 }),
        mem: async () => ({ total: 1234567890 }),
        osInfo: async () => ({ distro: 'Ubuntu', release: '24.04', arch: 'x64', hostname: 'gpu-box' }),
      },
    });
    expect(h).toEqual({ cpu: 'AMD EPYC 9654', cores: 192, memTotalBytes: 1234567890, os: 'Ubuntu 24.04 (x64)', hostname: 'gpu-box' });
  });

  it('falls back to node:os for every field when systeminformation throws or hangs', async () => {
    const h = await hostInfo({
      timeoutMs: 200,
      si: {
        cpu: async () => {
          throw new Error('boom');
        },
        mem: () => new Promise(() => {}),
        osInfo: async () => {
          throw new Error('boom');
        },
      },
    });
    expect(h.memTotalBytes).toBe(os.totalmem());
    expect(h.hostname).toBe(os.hostname());
    expect(h.cores).toBe(os.availableParallelism());
    expect(h.os).toContain(os.release());
    expect(h.cpu).toBe(os.cpus()[0]?.model?.trim() || 'unknown CPU');
  });

  it("remembers systeminformation's complete answer for the process (every page load asks)", async () => {
    clearHostInfoCache();
    const a = await hostInfo();
    const b = await hostInfo();
    expect(b).toBe(a);
    clearHostInfoCache();
    const c = await hostInfo();
    expect(c).not.toBe(a);
    expect(c).toEqual(a);
  });

  it('does not remember an answer in which a systeminformation call failed: the next call asks again', async () => {
    let cpuCalls = 0;
    vi.doMock('systeminformation', () => ({
      cpu: async () => {
        cpuCalls++;
        throw new Error('busy');
      },
      mem: async () => ({ total: 1234567890 }),
      osInfo: async () => ({ distro: 'Debian', release: '12', arch: 'x64', hostname: 'h' }),
    }));
    try {
      clearHostInfoCache();
      const a = await hostInfo();
      const b = await hostInfo();
      expect(cpuCalls).toBe(2);
      expect(b).not.toBe(a);
      expect(a.memTotalBytes).toBe(1234567890);
      expect(a.cpu).toBe(os.cpus()[0]?.model?.trim() || 'unknown CPU');
    } finally {
      vi.doUnmock('systeminformation');
      clearHostInfoCache();
    }
  });
});

describe('describeEnvironment', () => {
  it('is replay-only with neither nvcc nor an NVIDIA driver, and says why', async () => {
    const e = await describeEnvironment({
      env: noCudaEnv(),
      gpu: { nvidiaSmi: path.join(dir, 'no-smi'), useSystemInformation: false },
    });
    expect(e.canCompile).toBe(false);
    expect(e.canRun).toBe(false);
    expect(e.gpu.source).toBe('none');
    expect(e.toolchain.nvcc).toBeNull();
    expect(e.messages.some((m) => m.startsWith('No NVIDIA driver found'))).toBe(true);
    expect(e.messages.some((m) => m.startsWith('nvcc not found on PATH'))).toBe(true);
    expect(e.messages.some((m) => m.startsWith('Replay-only'))).toBe(true);
    expect(e.host.memTotalBytes).toBeGreaterThan(0);
  });

  it.skipIf(!hasNvcc)('is compile-only with nvcc and no GPU', async () => {
    const e = await describeEnvironment({
      env: { ...process.env, KERNELDUEL_NVCC: REAL_NVCC },
      gpu: { nvidiaSmi: path.join(dir, 'no-smi'), useSystemInformation: false },
    });
    expect(e.canCompile).toBe(true);
    expect(e.canRun).toBe(false);
    expect(e.messages.some((m) => m.startsWith('Compile-only'))).toBe(true);
  });

  it.skipIf(!hasNvcc)('can run with nvcc and a GPU whose architecture nvcc targets', async () => {
    const smi = script('smi-h200', `echo '0, NVIDIA H200, GPU-abc, 9.0, 143771, 1980, 3201, 1980, 3201, 570.86.15'`);
    const e = await describeEnvironment({ env: { ...process.env, KERNELDUEL_NVCC: REAL_NVCC }, gpu: { nvidiaSmi: smi, useSystemInformation: false } });
    expect(e.canCompile).toBe(true);
    expect(e.canRun).toBe(true);
    expect(e.gpu.gpus[0].arch).toBe('sm_90');
    expect(e.messages.some((m) => m.startsWith('Ready') && m.includes('sm_90'))).toBe(true);
  });

  it.skipIf(!hasNvcc)('cannot run on a GPU older than anything nvcc targets, and names the architecture', async () => {
    const smi = script('smi-kepler', `echo '0, Tesla K80, GPU-k, 3.7, 11441, 562, 2505, 875, 2505, 470.57.02'`);
    const e = await describeEnvironment({ env: { ...process.env, KERNELDUEL_NVCC: REAL_NVCC }, gpu: { nvidiaSmi: smi, useSystemInformation: false } });
    expect(e.canCompile).toBe(true);
    expect(e.canRun).toBe(false);
    expect(e.messages.some((m) => m.includes('cannot build for GPU 0') && m.includes('sm_37'))).toBe(true);
  });

  it('gathers host, GPU and toolchain concurrently rather than one after another', async () => {
    const smi = script('smi-slow', `/bin/sleep 3\necho '0, G, GPU-1, 9.0, 1, 1, 1, 1, 1, 1.0'`);
    const nvccDir = path.join(dir, 'slowcuda', 'bin');
    mkdirSync(nvccDir, { recursive: true });
    writeFileSync(path.join(nvccDir, 'nvcc'), '#!/bin/bash\n/bin/sleep 3\necho "Cuda compilation tools, release 12.4, V12.4.1"\n');
    chmodSync(path.join(nvccDir, 'nvcc'), 0o755);
    const t0 = Date.now();
    const e = await describeEnvironment({
      env: { ...noCudaEnv(), KERNELDUEL_NVCC: path.join(nvccDir, 'nvcc') },
      gpu: { nvidiaSmi: smi, useSystemInformation: false },
    });
    const elapsed = Date.now() - t0;
    expect(e.gpu.gpus).toHaveLength(1);
    expect(e.toolchain.version).toBe('12.4.1');
    // Sequential would be >= 6 s (smi 3 s + nvcc 3 s); concurrent about 3 s. The margin is wide
    // so that a loaded CI machine's slow process starts cannot fail it.
    expect(elapsed).toBeLessThan(5500);
  });
});
