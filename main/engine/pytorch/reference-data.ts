// Reference data of a PyTorch-reference task for the CUDA harness (docs/PYTHON-CANDIDATES.md, "The
// CUDA entry point of the same task"): before any variant runs, the reference server
// (kd_reference.py serve, one per size, on the evaluator's GPU) computes the check samples and a
// pool of timing samples, each under a fresh torch seed drawn here and written to no file, and
// writes their inputs, weights and outputs as raw files into a private folder (mode 0700, on tmpfs
// where it fits). What comes back is the folder's manifest (every file's bytes and sha256), kept in
// memory by the engine and written only into the judge's plan; the judge checks every file
// against it before it uses it (resources/harness/kd_reffiles.h).
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DTYPE_BYTES, sizeLayout, type Task } from '../task/manifest.js';
import { ReferenceFailure, ReferenceServer } from './server.js';
import type { RunAnswer } from './protocol.js';

/** One sample: the check samples are what every variant is checked on; timing samples rotate in timed calls. */
export interface ReferenceSample {
  size: number;
  id: number;
  timing: boolean;
}
/** One file of a sample: the data of the buffer argument `arg` (index into the task's args). */
export interface ReferenceFile {
  size: number;
  id: number;
  arg: number;
  bytes: number;
  sha256: string;
  /** Relative to the folder. */
  rel: string;
}
/** The reference data of an evaluator: its folder and manifest (the shape measure/harness.ts's plan takes). */
export interface ReferenceData {
  dir: string;
  samples: ReferenceSample[];
  files: ReferenceFile[];
  bytes: number;
  /** Seconds the reference server took (start, runs), for the log. */
  seconds: number;
  /** Removes the folder (also done when the process exits). */
  cleanup(): void;
}

export interface ReferenceDataOptions {
  task: Task;
  python: string;
  /** Device of the reference server: 'cuda' (the GPU CUDA_VISIBLE_DEVICES in env selects) or 'cpu' (tests). */
  device: string;
  env?: NodeJS.ProcessEnv;
  /** Check samples per size (index -> count); sizes not given get `checks`. */
  checksBySize?: Record<number, number>;
  checks: number;
  /** Timing samples per timed size (default 8). */
  timing?: number;
  /** Sizes that are timed (they get timing samples); default the task's. */
  timed?: number[];
  /** Where the private folder is made: default /dev/shm when the data fits there, else the OS's temporary folder. */
  root?: string;
  /** Per reference command (default 300 s). */
  timeoutMs?: number;
  /** Torch seeds (tests): default drawn from the system's random source. */
  seed?: () => number;
}

export class ReferenceDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReferenceDataError';
  }
}

/** Bytes the data of one sample of a size takes (inputs, weights, outputs). */
export function sampleBytes(task: Task, size: number): number {
  return sizeLayout(task, size).args.reduce((acc, a) => acc + (a.kind === 'buffer' ? a.elements * DTYPE_BYTES[a.dtype] : 0), 0);
}

function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
}

/** The folder the data goes to: /dev/shm when it fits with room to spare (tmpfs: no disk I/O), else the temporary folder. */
export function referenceRoot(total: number, given?: string): string {
  const fits = (d: string): boolean => existsSync(d) && freeBytes(d) > total * 1.25 + (256 << 20);
  if (given) {
    if (!fits(given)) throw new ReferenceDataError(`the reference data needs ${(total / 2 ** 30).toFixed(2)} GiB, ${given} has ${(freeBytes(given) / 2 ** 30).toFixed(2)} GiB free: use a smaller size of the task`);
    return given;
  }
  for (const d of ['/dev/shm', tmpdir()]) if (fits(d)) return d;
  throw new ReferenceDataError(`the reference data needs ${(total / 2 ** 30).toFixed(2)} GiB, and neither /dev/shm (${(freeBytes('/dev/shm') / 2 ** 30).toFixed(2)} GiB free) nor ${tmpdir()} (${(freeBytes(tmpdir()) / 2 ** 30).toFixed(2)} GiB free) has room: use a smaller size of the task`);
}

/**
 * Removes the reference-data folders that processes of this user left behind when they were killed
 * (`kd-ref-<pid>-…` whose process is gone): on tmpfs they would hold memory until a reboot.
 */
export function sweepStaleReferenceData(root: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return removed;
  }
  for (const n of names) {
    const m = /^kd-ref-(\d+)-/.exec(n);
    if (!m || Number(m[1]) === process.pid) continue;
    const p = join(root, n);
    try {
      if (process.getuid && statSync(p).uid !== process.getuid()) continue;
      process.kill(Number(m[1]), 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') continue;
      rmSync(p, { recursive: true, force: true });
      removed.push(p);
    }
  }
  return removed;
}

const cleanups = new Set<() => void>();
let exitHook = false;

/** Computes the reference data of every size of the task (see the file's header). Throws ReferenceDataError or ReferenceFailure. */
export async function computeReferenceData(o: ReferenceDataOptions): Promise<ReferenceData> {
  const t = o.task;
  if (!t.pytorch) throw new ReferenceDataError(`task ${t.manifest.name} has a CUDA reference, not a PyTorch one`);
  const timed = new Set(o.timed ?? t.timed);
  const nTiming = o.timing ?? 8;
  const counts = t.manifest.sizes.map((_, si) => ({ checks: o.checksBySize?.[si] ?? o.checks, timing: timed.has(si) ? nTiming : 0 }));
  const total = counts.reduce((acc, c, si) => acc + (c.checks + c.timing) * sampleBytes(t, si), 0);
  for (const d of new Set([o.root ?? '/dev/shm', tmpdir()])) sweepStaleReferenceData(d);
  const root = referenceRoot(total, o.root);
  const dir = mkdtempSync(join(root, `kd-ref-${process.pid}-`)); // mode 0700
  const cleanup = (): void => {
    cleanups.delete(cleanup);
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(cleanup);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const c of [...cleanups]) c();
    });
  }
  const seed = o.seed ?? ((): number => randomInt(1, 2 ** 31));
  const used = new Set<number>();
  const samples: ReferenceSample[] = [];
  const files: ReferenceFile[] = [];
  const t0 = Date.now();
  try {
    for (let si = 0; si < t.manifest.sizes.length; si++) {
      const lay = sizeLayout(t, si);
      const overrides = t.manifest.sizes[si] as Record<string, number>;
      const server = await ReferenceServer.start({ python: o.python, problem: t.referencePath, device: o.device, weightsSeed: t.pytorch.weightsSeed, overrides, env: o.env, startTimeoutMs: o.timeoutMs ?? 300_000 });
      try {
        let weights: Map<string, { rel: string; bytes: number; sha256: string }> | null = null;
        const n = counts[si].checks + counts[si].timing;
        for (let id = 0; id < n; id++) {
          let s = seed();
          while (used.has(s)) s = seed();
          used.add(s);
          const rel = `s${si}/${id}`;
          const first = weights === null;
          const ans = await server.run({ seed: s, out: join(dir, rel), write: first ? ['inputs', 'weights', 'outputs'] : ['inputs', 'outputs'], hash: true }, o.timeoutMs ?? 300_000);
          if (first) {
            weights = new Map();
            for (const f of ans.files) if ((f.source === 'parameter' || f.source === 'buffer') && f.path && f.sha256) weights.set(f.name, { rel: relative(dir, f.path), bytes: f.bytes ?? 0, sha256: f.sha256 });
          }
          samples.push({ size: si, id, timing: id >= counts[si].checks });
          files.push(...matchFiles(t, si, lay.args, ans, dir, id, weights!));
        }
      } finally {
        await server.close();
      }
    }
  } catch (e) {
    cleanup();
    throw e;
  }
  return { dir, samples, files, bytes: files.reduce((a, f) => a + f.bytes, 0), seconds: (Date.now() - t0) / 1000, cleanup };
}

/** The files of one run answer as the task's buffer arguments: every buffer needs a file of its exact size and dtype. */
function matchFiles(t: Task, si: number, args: ReturnType<typeof sizeLayout>['args'], ans: RunAnswer, dir: string, id: number, weights: Map<string, { rel: string; bytes: number; sha256: string }>): ReferenceFile[] {
  const out: ReferenceFile[] = [];
  const byName = new Map(ans.files.map((f) => [f.name, f]));
  args.forEach((a, ai) => {
    if (a.kind !== 'buffer') return;
    const want = a.elements * DTYPE_BYTES[a.dtype];
    const where = `task ${t.manifest.name}, size ${si}: argument ${a.name}`;
    const w = weights.get(a.name);
    if (w) {
      if (a.role !== 'in') throw new ReferenceDataError(`${where} is a parameter or buffer of the module: its role must be in, task.yaml says ${a.role}`);
      if (w.bytes !== want) throw new ReferenceDataError(`${where} is ${want} bytes in task.yaml, PyTorch's ${w.bytes}`);
      out.push({ size: si, id, arg: ai, bytes: w.bytes, sha256: w.sha256, rel: w.rel });
      return;
    }
    const f = byName.get(a.name);
    if (!f || !f.path || !f.sha256) throw new ReferenceDataError(`${where}: the PyTorch reference has no tensor of that name (it has ${ans.files.map((x) => x.name).join(', ') || 'none'}); task.yaml's args must be the reference's (docs/TASK-FORMAT.md, "The entry point of a PyTorch task")`);
    if (f.dtype !== a.dtype) throw new ReferenceDataError(`${where} is ${a.dtype} in task.yaml, PyTorch's is ${f.dtype ?? f.torch_dtype}`);
    const role = f.source === 'output' ? 'out' : 'in';
    if (a.role !== role) throw new ReferenceDataError(`${where} is ${a.role} in task.yaml, PyTorch's is ${role} (${f.source})`);
    if (f.bytes !== want) throw new ReferenceDataError(`${where} is ${want} bytes in task.yaml (${a.elements} elements), PyTorch's ${f.bytes} (shape [${f.shape.join(', ')}])`);
    out.push({ size: si, id, arg: ai, bytes: f.bytes, sha256: f.sha256, rel: relative(dir, f.path) });
  });
  return out;
}

export { ReferenceFailure };
