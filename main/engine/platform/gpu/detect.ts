// GPU detection through nvidia-smi (with a systeminformation fallback for names only).
// Plain Node: never imports electron.

import type { ClockReading, GpuInfo } from '../../base/types.js';
import { archForComputeCapability } from './arch.js';
import { outcomeOf, runProcess, type ProcessOutcome } from '../proc/run.js';

/** nvidia-smi, time-limited (its whole process group is killed at the deadline). */
async function runSmi(smi: string, args: string[], timeoutMs: number): Promise<ProcessOutcome> {
  return outcomeOf(await runProcess(smi, args, { timeoutMs: Math.max(1, timeoutMs) }));
}

export interface GpuDetection {
  gpus: GpuInfo[];
  source: 'nvidia-smi' | 'systeminformation' | 'none';
  driverVersion: string | null;
  problems: string[];
}

interface GraphicsLike {
  controllers: Array<{ vendor?: string; model?: string; vram?: number | null; subDeviceId?: string }>;
}

export interface DetectGpusOptions {
  nvidiaSmi?: string;
  timeoutMs?: number;
  useSystemInformation?: boolean;
  /** Replaces systeminformation's graphics() (tests). */
  graphics?: () => Promise<GraphicsLike>;
  /** CUDA_VISIBLE_DEVICES to honour (default: the environment's; undefined there means all GPUs). */
  visibleDevices?: string;
}

/** GPU names compared without case, spacing, vendor prefix or a REPLAY label ("NVIDIA H200" -> "h200"). */
export function normaliseGpuName(name: string): string {
  return name
    .replace(/\(?\bREPLAY\b\)?:?/gi, '')
    .replace(/^\s*NVIDIA\s+/i, '')
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * A GPU model's short name in results files (bench/results/<slug>-*.json, bench/spaces/<slug>/):
 * its normalised name with dashes, so "NVIDIA H200" -> "h200" and a different model, such as
 * "NVIDIA H200 NVL" -> "h200-nvl", gets files of its own (the roofline matches the same way).
 */
export function gpuSlug(name: string): string {
  return normaliseGpuName(name).replace(/ /g, '-') || 'gpu';
}

/**
 * The value of CUDA_VISIBLE_DEVICES that selects exactly this GPU for a child process: its UUID
 * when known (nvidia-smi numbers GPUs in PCI order, CUDA by default fastest first, so an index can
 * name another GPU on a machine with mixed GPUs), else its nvidia-smi index.
 */
export function cudaDeviceSelector(gpu: Pick<GpuInfo, 'index' | 'uuid'>): string {
  return gpu.uuid ? gpu.uuid : String(gpu.index);
}

/**
 * The GPUs that CUDA_VISIBLE_DEVICES leaves visible, as CUDA reads it: a comma-separated list of
 * indices or UUIDs (a UUID may be abbreviated to a unique prefix), read up to the first entry that
 * names no GPU. nvidia-smi ignores the variable, so detection applies it here: a user who pins
 * KernelDuel to one GPU of a shared server gets that GPU only. Pure.
 */
export function applyVisibleDevices(gpus: GpuInfo[], visible: string | undefined): { gpus: GpuInfo[]; problem: string | null } {
  if (visible === undefined) return { gpus, problem: null };
  const out: GpuInfo[] = [];
  for (const raw of visible.split(',')) {
    const e = raw.trim();
    if (e === '') break;
    const g = /^\d+$/.test(e)
      ? gpus.find((x) => x.index === Number(e))
      : (() => {
          const m = gpus.filter((x) => x.uuid && x.uuid.toLowerCase().startsWith((e.toLowerCase().startsWith('gpu-') ? e : `GPU-${e}`).toLowerCase()));
          return m.length === 1 ? m[0] : undefined;
        })();
    if (!g) break;
    if (!out.includes(g)) out.push(g);
  }
  if (out.length === 0 && gpus.length > 0) {
    return { gpus: out, problem: `CUDA_VISIBLE_DEVICES=${JSON.stringify(visible)} hides every GPU that nvidia-smi lists (${gpus.map((g) => `${g.index}: ${g.uuid || g.name}`).join(', ')}): unset it or name a GPU by index or UUID. ${STILL_WORKS}` };
  }
  return { gpus: out, problem: null };
}

export const QUERY_FIELDS = [
  'index',
  'name',
  'uuid',
  'compute_cap',
  'memory.total',
  'clocks.sm',
  'clocks.mem',
  'clocks.max.sm',
  'clocks.max.mem',
  'driver_version',
] as const;

const DEFAULT_TIMEOUT_MS = 10_000;

const STILL_WORKS =
  'KernelDuel can still build variants and check they compile (compile-only), and replay recorded spaces; correctness checks and timing need a GPU.';

function defaultNvidiaSmi(): string {
  const fromEnv = process.env.KERNELDUEL_NVIDIA_SMI;
  return fromEnv && fromEnv.trim() !== '' ? fromEnv : 'nvidia-smi';
}

// ---------------------------------------------------------------------------------------------
// Parsing

function isNA(v: string | undefined): boolean {
  if (v === undefined) return true;
  const t = v.trim();
  return t === '' || /^\[?(N\/A|Not Supported|Unknown Error|Insufficient Permissions|GPU is lost|Requested functionality has been deprecated)\]?$/i.test(t);
}

function num(v: string | undefined): number | null {
  if (isNA(v)) return null;
  const n = Number(v!.trim().replace(/\s*(MiB|MHz|W|C)$/i, ''));
  return Number.isFinite(n) ? n : null;
}

function archOrEmpty(cc: string): string {
  try {
    return archForComputeCapability(cc);
  } catch {
    return '';
  }
}

/** Parses `--format=csv,noheader,nounits` output of the QUERY_FIELDS query. Pure. */
export function parseNvidiaSmiCsv(text: string): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  const n = QUERY_FIELDS.length;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    let f = line.split(',').map((s) => s.trim());
    if (f.length < n) continue;
    if (f.length > n) {
      // A name containing commas: everything between index and the last 8 fields.
      f = [f[0], f.slice(1, f.length - (n - 2)).join(', '), ...f.slice(f.length - (n - 2))];
    }
    const index = Number(f[0]);
    if (!Number.isInteger(index) || index < 0) continue;
    const cc = isNA(f[3]) ? '' : f[3];
    const arch = cc === '' ? '' : archOrEmpty(cc);
    gpus.push({
      index,
      name: f[1],
      uuid: isNA(f[2]) ? '' : f[2],
      computeCapability: arch === '' ? '' : cc,
      arch,
      memoryTotalMiB: num(f[4]) ?? 0,
      smClockMHz: num(f[5]),
      memClockMHz: num(f[6]),
      maxSmClockMHz: num(f[7]),
      maxMemClockMHz: num(f[8]),
      driverVersion: isNA(f[9]) ? '' : f[9],
    });
  }
  return gpus;
}

// ---------------------------------------------------------------------------------------------
// Detection

function oneLine(s: string, max = 400): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function describeFailure(smi: string, outcome: ProcessOutcome, timeoutMs: number): string {
  if (outcome.kind === 'spawn-error') {
    if (outcome.code === 'ENOENT') {
      return smi === 'nvidia-smi'
        ? `No NVIDIA driver found (nvidia-smi is not on PATH): ${STILL_WORKS}`
        : `No NVIDIA driver found (nvidia-smi was not found at ${smi}): ${STILL_WORKS}`;
    }
    if (outcome.code === 'EACCES') {
      return `nvidia-smi at ${smi} cannot be run (permission denied): ${STILL_WORKS}`;
    }
    return `nvidia-smi (${smi}) could not be started (${outcome.code}: ${outcome.message}): ${STILL_WORKS}`;
  }
  if (outcome.kind === 'timeout') {
    return (
      `nvidia-smi hangs: it did not answer within ${Math.round(timeoutMs / 100) / 10} s and was killed ` +
      `(the NVIDIA driver may be stuck, or the GPU is being reset). ${STILL_WORKS}`
    );
  }
  const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.code}`;
  const said = oneLine(`${outcome.stderr}\n${outcome.stdout}`);
  const driverHint = /couldn't communicate with the NVIDIA driver|driver.*not loaded|NVML/i.test(said)
    ? ' The NVIDIA driver is probably not loaded (or does not match the kernel module).'
    : '';
  return `nvidia-smi failed (${how})${said ? `: ${said}` : ''}.${driverHint} ${STILL_WORKS}`;
}

async function systemInformationFallback(opts: DetectGpusOptions, timeoutMs: number): Promise<GpuInfo[] | null> {
  try {
    const getGraphics =
      opts.graphics ??
      (async () => {
        const si = await import('systeminformation');
        return (await si.graphics()) as GraphicsLike;
      });
    const data = await Promise.race([
      getGraphics(),
      new Promise<null>((r) => setTimeout(() => r(null), Math.max(timeoutMs, 1)).unref()),
    ]);
    if (!data) return null;
    const nv = (data.controllers ?? []).filter((c) => /nvidia/i.test(`${c.vendor ?? ''} ${c.model ?? ''}`));
    return nv.map((c, i) => ({
      index: i,
      name: (c.model ?? '').trim() || 'NVIDIA GPU',
      uuid: '',
      computeCapability: '',
      arch: '',
      memoryTotalMiB: typeof c.vram === 'number' && Number.isFinite(c.vram) ? c.vram : 0,
      smClockMHz: null,
      memClockMHz: null,
      maxSmClockMHz: null,
      maxMemClockMHz: null,
      driverVersion: '',
    }));
  } catch {
    return null;
  }
}

/** Lists NVIDIA GPUs. Never throws: everything that goes wrong ends up in `problems`. */
export async function detectGpus(opts: DetectGpusOptions = {}): Promise<GpuDetection> {
  const smi = opts.nvidiaSmi ?? defaultNvidiaSmi();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const problems: string[] = [];

  let outcome = await runSmi(smi, [`--query-gpu=${QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'], timeoutMs);
  let oldDriverNoCc = false;

  // Old drivers (< 510) do not know the compute_cap field and refuse the whole query: ask again without it.
  if (outcome.kind === 'exit' && outcome.code !== 0 && /compute_cap/i.test(outcome.stdout + outcome.stderr)) {
    const fields = QUERY_FIELDS.filter((f) => f !== 'compute_cap');
    const retry = await runSmi(smi, [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'], timeoutMs);
    if (retry.kind === 'exit' && retry.code === 0) {
      oldDriverNoCc = true;
      // Re-insert an [N/A] compute_cap column so a single parser handles both.
      const patched = retry.stdout
        .split(/\r?\n/)
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const f = l.split(',');
          if (f.length < fields.length) return l;
          const tail = f.slice(f.length - 6); // memory.total, 4 clocks, driver_version
          const head = f.slice(0, f.length - 6); // index, name (possibly with commas), uuid
          return [...head, ' [N/A]', ...tail].join(',');
        })
        .join('\n');
      outcome = { ...retry, stdout: patched };
    }
  }

  let gpus: GpuInfo[] = [];
  let smiFailed = false;
  if (outcome.kind === 'exit' && outcome.code === 0) {
    gpus = parseNvidiaSmiCsv(outcome.stdout);
    const listed = gpus.length;
    const vis = applyVisibleDevices(gpus, 'visibleDevices' in opts ? opts.visibleDevices : process.env.CUDA_VISIBLE_DEVICES);
    gpus = vis.gpus;
    if (vis.problem) {
      problems.push(vis.problem);
      return { gpus: [], source: 'nvidia-smi', driverVersion: null, problems };
    }
    if (listed === 0) {
      problems.push(
        `nvidia-smi ran but listed no GPUs (the driver is installed but sees no device, or CUDA_VISIBLE_DEVICES/containers hide them): ${STILL_WORKS}`,
      );
    }
  } else {
    smiFailed = true;
    problems.push(describeFailure(smi, outcome, timeoutMs));
  }

  for (const g of gpus) {
    if (g.arch === '') {
      problems.push(
        `GPU ${g.index} (${g.name}) did not report its compute capability` +
          (oldDriverNoCc || g.driverVersion ? ` (driver ${g.driverVersion || 'version unknown'} is too old to report compute_cap; update to 510 or newer)` : '') +
          `: KernelDuel cannot pick an nvcc -arch for it automatically. Set the architecture by hand (e.g. sm_86); detection of its name, memory and clocks still works.`,
      );
    }
  }

  if (gpus.length > 0) {
    const driverVersion = gpus.find((g) => g.driverVersion)?.driverVersion ?? null;
    return { gpus, source: 'nvidia-smi', driverVersion, problems };
  }

  if (opts.useSystemInformation !== false) {
    const fromSi = await systemInformationFallback(opts, timeoutMs);
    if (fromSi && fromSi.length > 0) {
      problems.push(
        `Found ${fromSi.length === 1 ? 'an NVIDIA GPU' : `${fromSi.length} NVIDIA GPUs`} (${fromSi.map((g) => g.name).join(', ')}) through the system's device list, but ` +
          `${smiFailed ? 'nvidia-smi did not work' : 'nvidia-smi did not list it'}, so its compute capability is unknown and the driver may not be usable: ` +
          `KernelDuel can build for an architecture you choose, but cannot run or time kernels until the NVIDIA driver works.`,
      );
      return { gpus: fromSi, source: 'systeminformation', driverVersion: null, problems };
    }
  }

  return { gpus: [], source: 'none', driverVersion: null, problems };
}

/** Current clocks, temperature and power of one GPU; null when nvidia-smi cannot tell. */
export async function readClocks(index: number, opts: { nvidiaSmi?: string; timeoutMs?: number } = {}): Promise<ClockReading | null> {
  if (!Number.isInteger(index) || index < 0) return null;
  const smi = opts.nvidiaSmi ?? defaultNvidiaSmi();
  const outcome = await runSmi(
    smi,
    ['-i', String(index), '--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw', '--format=csv,noheader,nounits'],
    opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
  if (outcome.kind !== 'exit' || outcome.code !== 0) return null;
  const line = outcome.stdout.split(/\r?\n/).find((l) => l.trim() !== '');
  if (!line) return null;
  const f = line.split(',').map((s) => s.trim());
  if (f.length < 4) return null;
  const reading: ClockReading = { smMHz: num(f[0]), memMHz: num(f[1]), tempC: num(f[2]), powerW: num(f[3]) };
  if (reading.smMHz === null && reading.memMHz === null && reading.tempC === null && reading.powerW === null) return null;
  return reading;
}
