// Host description (CPU, memory, OS) and a one-call summary of what this machine can do.
// Plain Node: never imports electron.

import os from 'node:os';
import { detectGpus, type DetectGpusOptions, type GpuDetection } from '../gpu/detect.js';
import { findToolchain, type Toolchain } from '../toolchain/nvcc.js';

export interface HostInfo {
  cpu: string;
  cores: number;
  memTotalBytes: number;
  os: string;
  hostname: string;
}

export interface EnvironmentDescription {
  host: HostInfo;
  gpu: GpuDetection;
  toolchain: Toolchain;
  /** nvcc found and runs. */
  canCompile: boolean;
  /** canCompile and at least one GPU with a known architecture nvcc can target. */
  canRun: boolean;
  messages: string[];
}

export interface DescribeEnvironmentOptions {
  gpu?: DetectGpusOptions;
  env?: NodeJS.ProcessEnv;
  toolchainTimeoutMs?: number;
  /** Limit for each systeminformation call; default 10 s. */
  hostTimeoutMs?: number;
}

interface SiLike {
  cpu(): Promise<{ manufacturer?: string; brand?: string; cores?: number; physicalCores?: number }>;
  mem(): Promise<{ total?: number }>;
  osInfo(): Promise<{ distro?: string; release?: string; platform?: string; arch?: string; hostname?: string }>;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    t.unref();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

function fallbackHost(): HostInfo {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() || 'unknown CPU',
    cores: os.availableParallelism?.() ?? cpus.length,
    memTotalBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    hostname: os.hostname(),
  };
}

// The process's own answer from systeminformation: a machine's CPU, memory and OS do not change under
// a running process, and systeminformation's first calls take 0.1-0.3 s on an idle machine and
// seconds on a busy one (every workbench page load asks).
let processHost: Promise<{ host: HostInfo; complete: boolean }> | null = null;

/** Forgets the remembered host facts (tests). */
export function clearHostInfoCache(): void {
  processHost = null;
}

/**
 * CPU, core count, memory and OS, from systeminformation with node:os fallbacks for anything that fails.
 * With the real systeminformation (no `si` given) the answer is remembered for the process, unless a
 * call failed or timed out (then the next call asks again, as findToolchain does for nvcc).
 */
export async function hostInfo(opts: { si?: SiLike; timeoutMs?: number } = {}): Promise<HostInfo> {
  if (opts.si) return (await gatherHost(opts.si, opts.timeoutMs)).host;
  const pending = processHost ?? gatherHost(undefined, opts.timeoutMs);
  processHost = pending;
  const r = await pending;
  if (!r.complete && processHost === pending) processHost = null;
  return r.host;
}

async function gatherHost(given: SiLike | undefined, timeoutMs: number | undefined): Promise<{ host: HostInfo; complete: boolean }> {
  const fb = fallbackHost();
  const ms = timeoutMs ?? 10_000;
  let si: SiLike;
  try {
    si = given ?? ((await import('systeminformation')) as unknown as SiLike);
  } catch {
    return { host: fb, complete: false };
  }
  const [cpu, mem, osi] = await Promise.allSettled([withTimeout(si.cpu(), ms), withTimeout(si.mem(), ms), withTimeout(si.osInfo(), ms)]);
  const complete = cpu.status === 'fulfilled' && mem.status === 'fulfilled' && osi.status === 'fulfilled';
  const out: HostInfo = { ...fb };
  if (cpu.status === 'fulfilled' && cpu.value) {
    const name = `${cpu.value.manufacturer ?? ''} ${cpu.value.brand ?? ''}`.replace(/\s+/g, ' ').trim();
    if (name) out.cpu = name;
    const cores = cpu.value.cores ?? cpu.value.physicalCores;
    if (typeof cores === 'number' && cores > 0) out.cores = cores;
  }
  if (mem.status === 'fulfilled' && typeof mem.value?.total === 'number' && mem.value.total > 0) {
    out.memTotalBytes = mem.value.total;
  }
  if (osi.status === 'fulfilled' && osi.value) {
    const v = osi.value;
    const name = [v.distro, v.release].filter((s) => s && s !== 'unknown').join(' ').trim();
    if (name) out.os = `${name}${v.arch ? ` (${v.arch})` : ''}`;
    if (v.hostname) out.hostname = v.hostname;
  }
  return { host: out, complete };
}

/** Gathers host, GPU and toolchain facts concurrently and says what KernelDuel can do here. */
export async function describeEnvironment(opts: DescribeEnvironmentOptions = {}): Promise<EnvironmentDescription> {
  const [host, gpu, toolchain] = await Promise.all([
    hostInfo({ timeoutMs: opts.hostTimeoutMs }),
    detectGpus(opts.gpu),
    findToolchain(opts.env ?? process.env, { timeoutMs: opts.toolchainTimeoutMs }),
  ]);

  const messages: string[] = [...gpu.problems, ...toolchain.problems];
  const canCompile = toolchain.nvcc !== null && toolchain.version !== null;

  const usable = gpu.source === 'nvidia-smi' ? gpu.gpus.filter((g) => g.arch !== '') : [];
  const supported = usable.filter((g) => toolchain.targets.length === 0 || toolchain.targets.includes(g.arch));
  if (canCompile) {
    for (const g of usable) {
      if (!supported.includes(g)) {
        messages.push(
          `nvcc ${toolchain.version} cannot build for GPU ${g.index} (${g.name}, ${g.arch}): it targets ${toolchain.targets.join(', ')}. Install a CUDA toolkit that supports ${g.arch}.`,
        );
      }
    }
  }
  const canRun = canCompile && supported.length > 0;

  if (canRun) {
    messages.push(
      `Ready: nvcc ${toolchain.version} and ${supported.map((g) => `GPU ${g.index} ${g.name} (${g.arch})`).join(', ')}: building, correctness checks and timing all work.`,
    );
  } else if (canCompile) {
    messages.push(`Compile-only: nvcc ${toolchain.version} works but no usable GPU was found, so variants are built and checked to compile, not run or timed.`);
  } else {
    messages.push('Replay-only: without a working nvcc KernelDuel can only replay recorded spaces.');
  }

  return { host, gpu, toolchain, canCompile, canRun, messages };
}
