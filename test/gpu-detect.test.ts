import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { archForComputeCapability, computeCapabilityOfArch } from '../main/engine/platform/gpu/arch.js';
import { applyVisibleDevices, cudaDeviceSelector, detectGpus, gpuSlug, parseNvidiaSmiCsv, readClocks } from '../main/engine/platform/gpu/detect.js';

let dir: string;

function script(name: string, body: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, `#!/bin/bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** Alive and not a zombie. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}

const TWO_GPUS = [
  '0, NVIDIA H200, GPU-abc12345-6789-abcd-ef01-234567890abc, 9.0, 143771, 1980, 3201, 1980, 3201, 570.86.15',
  '1, NVIDIA GeForce RTX 3090, GPU-def00000-1111-2222-3333-444444444444, 8.6, 24576, [N/A], [N/A], 2100, 9751, 570.86.15',
].join('\n');

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kd-smi-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('archForComputeCapability / computeCapabilityOfArch', () => {
  it('maps compute capabilities to sm_ names, including two-digit majors', () => {
    expect(archForComputeCapability('9.0')).toBe('sm_90');
    expect(archForComputeCapability('8.6')).toBe('sm_86');
    expect(archForComputeCapability('10.0')).toBe('sm_100');
    expect(archForComputeCapability('12.0')).toBe('sm_120');
  });
  it('rejects garbage with an error naming the bad value', () => {
    expect(() => archForComputeCapability('abc')).toThrow(/"abc"/);
    expect(() => archForComputeCapability('')).toThrow(/compute capability/);
    expect(() => archForComputeCapability('9')).toThrow();
    expect(() => archForComputeCapability('[N/A]')).toThrow();
  });
  it('maps sm_/compute_ names back to compute capabilities', () => {
    expect(computeCapabilityOfArch('sm_90')).toBe('9.0');
    expect(computeCapabilityOfArch('sm_100')).toBe('10.0');
    expect(computeCapabilityOfArch('compute_86')).toBe('8.6');
    expect(computeCapabilityOfArch('sm_90a')).toBe('9.0');
    expect(() => computeCapabilityOfArch('gfx90a')).toThrow(/architecture/);
  });
});

describe('gpuSlug', () => {
  it('names results files after the GPU model, as the roofline matches them', () => {
    expect(gpuSlug('NVIDIA H200')).toBe('h200'); // bench/results/h200-*.json, bench/spaces/h200/
    expect(gpuSlug('REPLAY NVIDIA H200')).toBe('h200');
    // Another model gets its own files, not the H200's ceilings or spaces.
    expect(gpuSlug('NVIDIA H200 NVL')).toBe('h200-nvl');
    expect(gpuSlug('NVIDIA A100-SXM4-80GB')).toBe('a100-sxm4-80gb');
    expect(gpuSlug('NVIDIA GeForce RTX 4090')).toBe('geforce-rtx-4090');
    expect(gpuSlug('  ')).toBe('gpu');
  });
});

describe('parseNvidiaSmiCsv', () => {
  it('parses every field of a two-GPU listing and turns [N/A] clocks into null', () => {
    const gpus = parseNvidiaSmiCsv(TWO_GPUS);
    expect(gpus).toHaveLength(2);
    expect(gpus[0]).toEqual({
      index: 0,
      name: 'NVIDIA H200',
      uuid: 'GPU-abc12345-6789-abcd-ef01-234567890abc',
      computeCapability: '9.0',
      arch: 'sm_90',
      memoryTotalMiB: 143771,
      smClockMHz: 1980,
      memClockMHz: 3201,
      maxSmClockMHz: 1980,
      maxMemClockMHz: 3201,
      driverVersion: '570.86.15',
    });
    expect(gpus[1].arch).toBe('sm_86');
    expect(gpus[1].smClockMHz).toBeNull();
    expect(gpus[1].memClockMHz).toBeNull();
    expect(gpus[1].maxSmClockMHz).toBe(2100);
  });
  it('leaves compute capability and arch empty when compute_cap is [N/A] or garbage', () => {
    const gpus = parseNvidiaSmiCsv('0, Tesla K80, GPU-x, [N/A], 11441, 562, 2505, 875, 2505, 470.1\n1, Odd, GPU-y, weird, 1, 1, 1, 1, 1, 470.1\n');
    expect(gpus.map((g) => [g.computeCapability, g.arch])).toEqual([
      ['', ''],
      ['', ''],
    ]);
  });
  it('keeps a GPU name that contains commas and ignores blank/short lines', () => {
    const gpus = parseNvidiaSmiCsv('\r\n0, Weird, Name, GPU-q, 8.9, 8000, 100, 200, 300, 400, 555.1\r\nnot a row\n');
    expect(gpus).toHaveLength(1);
    expect(gpus[0].name).toBe('Weird, Name');
    expect(gpus[0].arch).toBe('sm_89');
    expect(gpus[0].driverVersion).toBe('555.1');
  });
});

describe('detectGpus with fake nvidia-smi', () => {
  it('lists both GPUs from a working nvidia-smi and reports the driver version without problems', async () => {
    const smi = script('smi-ok', `cat <<'CSV'\n${TWO_GPUS}\nCSV`);
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(d.source).toBe('nvidia-smi');
    expect(d.gpus.map((g) => g.name)).toEqual(['NVIDIA H200', 'NVIDIA GeForce RTX 3090']);
    expect(d.driverVersion).toBe('570.86.15');
    expect(d.problems).toEqual([]);
  });

  it('passes the documented --query-gpu field list to nvidia-smi', async () => {
    const argsFile = path.join(dir, 'args.txt');
    const smi = script('smi-args', `echo "$@" > ${argsFile}\necho '0, G, GPU-1, 9.0, 1, 1, 1, 1, 1, 1.0'`);
    await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(readFileSync(argsFile, 'utf8').trim()).toBe(
      '--query-gpu=index,name,uuid,compute_cap,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader,nounits',
    );
  });

  it('returns within about the timeout when nvidia-smi hangs, says so, and kills it (and its children)', async () => {
    const pidFile = path.join(dir, 'hang.pids');
    const smi = script('smi-hang', `sleep 60 &\necho "$$ $!" > ${pidFile}\nwait`);
    const t0 = Date.now();
    const d = await detectGpus({ nvidiaSmi: smi, timeoutMs: 800, useSystemInformation: false });
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(5000);
    expect(elapsed).toBeGreaterThanOrEqual(700);
    expect(d.source).toBe('none');
    expect(d.gpus).toEqual([]);
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(/hangs/);
    expect(d.problems[0]).toMatch(/did not answer within 0\.8 s/);
    const pids = readFileSync(pidFile, 'utf8').trim().split(/\s+/).map(Number);
    expect(pids).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of pids) expect(isAlive(pid), `pid ${pid} still alive`).toBe(false);
  });

  it('reports exit code and the driver message when nvidia-smi fails', async () => {
    const smi = script(
      'smi-fail',
      `echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."\nexit 9`,
    );
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(d.source).toBe('none');
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(/exited with code 9/);
    expect(d.problems[0]).toMatch(/couldn't communicate with the NVIDIA driver/);
    expect(d.problems[0]).toMatch(/not loaded/);
    expect(d.problems[0]).toMatch(/compile-only/);
  });

  it('says no NVIDIA driver is found when nvidia-smi does not exist', async () => {
    const d = await detectGpus({ nvidiaSmi: path.join(dir, 'does-not-exist', 'nvidia-smi'), useSystemInformation: false });
    expect(d).toMatchObject({ gpus: [], source: 'none', driverVersion: null });
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(/^No NVIDIA driver found/);
    expect(d.problems[0]).toMatch(/compile-only/);
    expect(d.problems[0]).toMatch(/timing need a GPU/);
  });

  it('uses the exact PATH message when the default nvidia-smi is missing', async () => {
    const saved = { path: process.env.PATH, smi: process.env.KERNELDUEL_NVIDIA_SMI };
    process.env.PATH = path.join(dir, 'empty-bin');
    delete process.env.KERNELDUEL_NVIDIA_SMI;
    try {
      const d = await detectGpus({ useSystemInformation: false });
      expect(d.problems).toEqual([
        'No NVIDIA driver found (nvidia-smi is not on PATH): KernelDuel can still build variants and check they compile (compile-only), and replay recorded spaces; correctness checks and timing need a GPU.',
      ]);
    } finally {
      process.env.PATH = saved.path;
      if (saved.smi !== undefined) process.env.KERNELDUEL_NVIDIA_SMI = saved.smi;
    }
  });

  it('honours KERNELDUEL_NVIDIA_SMI when no nvidiaSmi option is given', async () => {
    const smi = script('smi-env', `echo '0, Env GPU, GPU-e, 8.0, 40960, 1410, 1215, 1410, 1215, 550.0'`);
    const saved = process.env.KERNELDUEL_NVIDIA_SMI;
    process.env.KERNELDUEL_NVIDIA_SMI = smi;
    try {
      const d = await detectGpus({ useSystemInformation: false });
      expect(d.gpus.map((g) => g.name)).toEqual(['Env GPU']);
    } finally {
      if (saved === undefined) delete process.env.KERNELDUEL_NVIDIA_SMI;
      else process.env.KERNELDUEL_NVIDIA_SMI = saved;
    }
  });

  it('reports a problem when nvidia-smi lists zero GPUs', async () => {
    const smi = script('smi-empty', 'exit 0');
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(d.source).toBe('none');
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(/listed no GPUs/);
  });

  it('flags a GPU whose compute capability is missing but keeps it', async () => {
    const smi = script('smi-nocc', `echo '0, Tesla K80, GPU-k, [N/A], 11441, 562, 2505, 875, 2505, 470.57.02'`);
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(d.source).toBe('nvidia-smi');
    expect(d.gpus).toHaveLength(1);
    expect(d.gpus[0].arch).toBe('');
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(/GPU 0 \(Tesla K80\) did not report its compute capability/);
  });

  it('retries without compute_cap on an old driver that rejects the field', async () => {
    const smi = script(
      'smi-old',
      `if [[ "$*" == *compute_cap* ]]; then echo 'Field "compute_cap" is not a valid field to query.'; exit 2; fi\n` +
        `echo '0, Tesla V100-SXM2-16GB, GPU-v, 16160, 1530, 877, 1530, 877, 450.80.02'`,
    );
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false });
    expect(d.source).toBe('nvidia-smi');
    expect(d.gpus).toHaveLength(1);
    expect(d.gpus[0]).toMatchObject({ name: 'Tesla V100-SXM2-16GB', uuid: 'GPU-v', memoryTotalMiB: 16160, arch: '', driverVersion: '450.80.02' });
    expect(d.problems[0]).toMatch(/too old to report compute_cap/);
  });

  it('falls back to systeminformation names (unknown compute capability) when nvidia-smi gives nothing', async () => {
    const d = await detectGpus({
      nvidiaSmi: path.join(dir, 'missing-smi'),
      graphics: async () => ({
        controllers: [
          { vendor: 'Intel Corporation', model: 'UHD Graphics 630', vram: 1024 },
          { vendor: 'NVIDIA Corporation', model: 'GA102 [GeForce RTX 3090]', vram: 24576 },
        ],
      }),
    });
    expect(d.source).toBe('systeminformation');
    expect(d.gpus).toHaveLength(1);
    expect(d.gpus[0]).toMatchObject({ name: 'GA102 [GeForce RTX 3090]', computeCapability: '', arch: '', memoryTotalMiB: 24576 });
    expect(d.problems.some((p) => /compute capability is unknown/.test(p))).toBe(true);
    expect(d.problems.some((p) => /^No NVIDIA driver found/.test(p))).toBe(true);
  });

  it('does not consult systeminformation when useSystemInformation is false', async () => {
    let called = false;
    const d = await detectGpus({
      nvidiaSmi: path.join(dir, 'missing-smi'),
      useSystemInformation: false,
      graphics: async () => {
        called = true;
        return { controllers: [{ vendor: 'NVIDIA', model: 'X' }] };
      },
    });
    expect(called).toBe(false);
    expect(d.source).toBe('none');
  });
});

describe('readClocks', () => {
  it('queries one GPU by index and parses clocks, temperature and power', async () => {
    const argsFile = path.join(dir, 'clock-args.txt');
    const smi = script('smi-clocks', `echo "$@" > ${argsFile}\necho '1755, 2619, 41, 123.45'`);
    const r = await readClocks(1, { nvidiaSmi: smi });
    expect(r).toEqual({ smMHz: 1755, memMHz: 2619, tempC: 41, powerW: 123.45 });
    const args = readFileSync(argsFile, 'utf8');
    expect(args).toMatch(/-i 1 /);
    expect(args).toMatch(/--query-gpu=clocks\.sm,clocks\.mem,temperature\.gpu,power\.draw/);
  });
  it('turns [N/A] into null', async () => {
    const smi = script('smi-clocks-na', `echo '1755, 2619, 41, [N/A]'`);
    expect(await readClocks(0, { nvidiaSmi: smi })).toEqual({ smMHz: 1755, memMHz: 2619, tempC: 41, powerW: null });
  });
  it('returns null when nvidia-smi is missing, fails or hangs', async () => {
    expect(await readClocks(0, { nvidiaSmi: path.join(dir, 'nope') })).toBeNull();
    expect(await readClocks(0, { nvidiaSmi: script('smi-clocks-fail', 'echo broken; exit 9') })).toBeNull();
    const t0 = Date.now();
    expect(await readClocks(0, { nvidiaSmi: script('smi-clocks-hang', 'sleep 60'), timeoutMs: 300 })).toBeNull();
    expect(Date.now() - t0).toBeLessThan(4000);
  });
});

describe('CUDA_VISIBLE_DEVICES', () => {
  const gpus = parseNvidiaSmiCsv(
    '0, NVIDIA H200, GPU-aaaa1111-0000-0000-0000-000000000000, 9.0, 143771, 1, 1, 1, 1, 580\n1, NVIDIA H200, GPU-bbbb2222-0000-0000-0000-000000000000, 9.0, 143771, 1, 1, 1, 1, 580\n',
  );
  it('keeps every GPU when unset, and the named ones in the order given', () => {
    expect(applyVisibleDevices(gpus, undefined).gpus.map((g) => g.index)).toEqual([0, 1]);
    expect(applyVisibleDevices(gpus, '1').gpus.map((g) => g.index)).toEqual([1]);
    expect(applyVisibleDevices(gpus, '1,0').gpus.map((g) => g.index)).toEqual([1, 0]);
  });
  it('accepts full and abbreviated UUIDs, and stops at the first entry that names no GPU, as CUDA does', () => {
    expect(applyVisibleDevices(gpus, 'GPU-bbbb2222-0000-0000-0000-000000000000').gpus.map((g) => g.index)).toEqual([1]);
    expect(applyVisibleDevices(gpus, 'GPU-aaaa').gpus.map((g) => g.index)).toEqual([0]);
    expect(applyVisibleDevices(gpus, '0,7,1').gpus.map((g) => g.index)).toEqual([0]);
  });
  it('says so when the variable hides every GPU', () => {
    const r = applyVisibleDevices(gpus, '5');
    expect(r.gpus).toEqual([]);
    expect(r.problem).toMatch(/CUDA_VISIBLE_DEVICES="5" hides every GPU/);
    expect(applyVisibleDevices(gpus, '').problem).toMatch(/hides every GPU/);
  });
  it('detectGpus applies it to what nvidia-smi lists; children are pinned by UUID', async () => {
    const smi = script('smi-two', `cat <<'CSV'\n${TWO_GPUS}\nCSV`);
    const d = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false, visibleDevices: '1' });
    expect(d.gpus.map((g) => g.name)).toEqual(['NVIDIA GeForce RTX 3090']);
    expect(cudaDeviceSelector(d.gpus[0])).toBe(d.gpus[0].uuid);
    expect(cudaDeviceSelector({ index: 3, uuid: '' })).toBe('3');
    const none = await detectGpus({ nvidiaSmi: smi, useSystemInformation: false, visibleDevices: '9' });
    expect(none.gpus).toEqual([]);
    expect(none.problems.join(' ')).toMatch(/hides every GPU/);
  });
});
