// Isolation of the processes that run untrusted code (the measurement harness with a variant's
// library loaded, and nvcc building a variant). What it does and does not promise: docs/ISOLATION.md.
//
// Layers, each independent of the others:
//  - a work folder per variant, a wall-clock timeout that kills the whole process group, a cap on
//    captured output (main/engine/platform/proc/run.ts);
//  - resource limits through prlimit(1): CPU seconds, RLIMIT_DATA (heap + private writable
//    mappings; not RLIMIT_AS, which breaks CUDA's large virtual-address reservations) and
//    RLIMIT_NPROC (not enforced for root);
//  - on Linux, when bubblewrap works here, a sandbox: no network (own network namespace), own PID
//    namespace (everything started inside dies with the run), the root file system read-only,
//    /tmp and /dev/shm private, /dev (GPU device nodes) passed through, only the run's folders
//    writable.
// KERNELDUEL_SANDBOX=off|auto|require (default auto); KERNELDUEL_BWRAP=path overrides bwrap's.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { delimiter, join, resolve } from 'node:path';

export type SandboxMode = 'off' | 'auto' | 'require';

export interface SandboxStatus {
  mode: SandboxMode;
  /** bwrap will wrap runs. */
  active: boolean;
  bwrap: string | null;
  /** Why the sandbox is not active (absent when active or turned off). */
  problem?: string;
}

export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxError';
  }
}

export function sandboxMode(env: NodeJS.ProcessEnv = process.env): SandboxMode {
  const v = (env.KERNELDUEL_SANDBOX ?? 'auto').trim().toLowerCase();
  if (v === 'off' || v === '0' || v === 'false' || v === 'no') return 'off';
  if (v === 'require' || v === 'required' || v === 'on' || v === '1') return 'require';
  return 'auto';
}

/** bwrap's path: KERNELDUEL_BWRAP, else the first `bwrap` on PATH (or in /usr/bin, /bin). */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.KERNELDUEL_BWRAP !== undefined && env.KERNELDUEL_BWRAP !== '') return existsSync(env.KERNELDUEL_BWRAP) ? resolve(env.KERNELDUEL_BWRAP) : null;
  if (process.platform !== 'linux') return null;
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/bin', '/usr/local/bin'];
  for (const d of dirs) {
    const p = join(d, 'bwrap');
    if (existsSync(p)) return p;
  }
  return null;
}

export interface SandboxSpec {
  /** Folders (or files) the run may write: the run's work folder, and the refdir for the reference run. */
  writable: string[];
  /** Folders (or files) it must be able to read even where /tmp is replaced (harness, libraries, refdir). */
  readable?: string[];
  /** Working directory inside the sandbox (default: the first writable folder). */
  cwd?: string;
  /** Folders hidden from the run (an empty tmpfs over each): a PyTorch task's reference data wherever it is. */
  hidden?: string[];
}

/** bwrap's arguments for one run (before `--` and the command). Exported for tests and the docs. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const a = [
    '--die-with-parent', // the sandbox goes when the run's supervisor goes
    '--unshare-net', // no network: only a loopback device of its own
    '--unshare-pid', // own PID namespace: every process started inside dies with the run
    '--unshare-ipc',
    '--unshare-uts',
    '--ro-bind', '/', '/', // the whole file system, read-only
    '--dev-bind', '/dev', '/dev', // device nodes as they are: /dev/nvidia*, /dev/nvidia-uvm
    '--tmpfs', '/dev/shm', // ... but shared memory private to the run
    '--proc', '/proc',
    '--tmpfs', '/tmp', // private, empty /tmp
  ];
  const seen = new Set<string>();
  // Readable paths first (they may be under /tmp, now hidden), writable ones after (a writable
  // folder inside a read-only one is mounted over it).
  for (const p of spec.readable ?? []) {
    const r = resolve(p);
    if (seen.has(r) || !existsSync(r)) continue;
    seen.add(r);
    a.push('--ro-bind', r, r);
  }
  for (const p of spec.writable) {
    const r = resolve(p);
    if (!existsSync(r)) continue;
    seen.add(r);
    a.push('--bind', r, r);
  }
  // Hidden folders last: mounted over anything above, a folder inside a readable or writable one too.
  for (const p of spec.hidden ?? []) {
    const r = resolve(p);
    if (existsSync(r)) a.push('--tmpfs', r);
  }
  const cwd = spec.cwd ?? spec.writable[0];
  if (cwd) a.push('--chdir', resolve(cwd));
  return a;
}

// ------------------------------------------------------------------------------------------- notes

type Notifier = (message: string) => void;
let notifier: Notifier = (m) => void process.stderr.write(`kernelduel: note: ${m}\n`);
const noted = new Set<string>();

/** Where the one-time notes about isolation go (the CLI: stderr; the app: its log). */
export function setSandboxNotifier(fn: Notifier): void {
  notifier = fn;
}

/** Says `message` once per process. */
export function noteOnce(key: string, message: string): void {
  if (noted.has(key)) return;
  noted.add(key);
  try {
    notifier(message);
  } catch {
    /* a broken logger must not stop a run */
  }
}

// ------------------------------------------------------------------------------------------- probe

const probes = new Map<string, Promise<SandboxStatus>>();

function probeRun(bwrap: string): Promise<string | null> {
  return new Promise((resolveP) => {
    let err = '';
    const dir = os.tmpdir();
    const child = spawn(bwrap, [...bwrapArgs({ writable: [dir] }), '--', '/bin/sh', '-c', 'exit 0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      resolveP(e.message);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      resolveP(code === 0 ? null : `${bwrap} failed (${sig ?? `exit ${code}`}): ${err.trim().split('\n')[0] || 'no message'}`);
    });
  });
}

/**
 * Whether bwrap works here (probed once per process by running `bwrap ... true`: it can exist and
 * still fail, e.g. in a container without user namespaces). In `auto` mode an unavailable sandbox is
 * said once (setSandboxNotifier) and runs carry on with the other limits; `require` throws.
 */
export function sandboxStatus(env: NodeJS.ProcessEnv = process.env): Promise<SandboxStatus> {
  const mode = sandboxMode(env);
  const bwrap = mode === 'off' ? null : findBwrap(env);
  const key = `${mode}|${bwrap}|${env.KERNELDUEL_BWRAP ?? ''}`;
  let p = probes.get(key);
  if (!p) {
    p = (async (): Promise<SandboxStatus> => {
      if (mode === 'off') return { mode, active: false, bwrap: null };
      if (process.platform !== 'linux') return { mode, active: false, bwrap: null, problem: `sandboxing needs Linux (this is ${process.platform})` };
      if (!bwrap) {
        return { mode, active: false, bwrap: null, problem: env.KERNELDUEL_BWRAP ? `KERNELDUEL_BWRAP=${env.KERNELDUEL_BWRAP} does not exist` : 'bubblewrap (bwrap) is not installed (e.g. `apt-get install bubblewrap`)' };
      }
      const fail = await probeRun(bwrap);
      return fail ? { mode, active: false, bwrap, problem: fail } : { mode, active: true, bwrap };
    })();
    probes.set(key, p);
  }
  return p.then((s) => {
    if (!s.active && s.problem) {
      if (s.mode === 'require') throw new SandboxError(`KERNELDUEL_SANDBOX=require but the sandbox is not available: ${s.problem}`);
      noteOnce(`sandbox:${key}`, `running variants without the bubblewrap sandbox (${s.problem}); the other limits (own work folder, timeouts, CPU time, memory, output size) still apply. Set KERNELDUEL_SANDBOX=off to silence this or =require to refuse to run without it.`);
    }
    return s;
  });
}

/** Forget probe results (tests switch KERNELDUEL_BWRAP between calls). */
export function resetSandboxProbe(): void {
  probes.clear();
  noted.clear();
}

// ------------------------------------------------------------------------------------------- limits

export interface ResourceLimits {
  cpuSeconds?: number;
  /** RLIMIT_DATA bytes (heap and private writable mappings). */
  dataBytes?: number;
  /** RLIMIT_NPROC (processes + threads of the user; not enforced for root). */
  nproc?: number;
}

/** Default RLIMIT_DATA of a harness run: half the machine's memory, between 8 and 32 GiB; KERNELDUEL_MEMORY_LIMIT (bytes, or `off`) overrides. */
export function defaultDataLimit(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.KERNELDUEL_MEMORY_LIMIT?.trim();
  if (v && /^(off|0|none)$/i.test(v)) return undefined;
  if (v) {
    const m = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b?)?$/i.exec(v);
    if (m) {
      const unit = (m[2] ?? '').toLowerCase()[0];
      const mult = unit === 'k' ? 2 ** 10 : unit === 'm' ? 2 ** 20 : unit === 'g' ? 2 ** 30 : unit === 't' ? 2 ** 40 : 1;
      return Math.floor(Number(m[1]) * mult);
    }
  }
  return Math.min(32 * 2 ** 30, Math.max(8 * 2 ** 30, Math.floor(os.totalmem() / 2)));
}

let userThreads: number | null = null;
/** Processes + threads the current user runs now (RLIMIT_NPROC counts all of them). */
function countUserThreads(): number {
  if (userThreads !== null) return userThreads;
  const uid = process.getuid?.() ?? -1;
  let n = 0;
  try {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const st = readFileSync(`/proc/${d}/status`, 'utf8');
        const u = /^Uid:\s+(\d+)/m.exec(st);
        const t = /^Threads:\s+(\d+)/m.exec(st);
        if (u && Number(u[1]) === uid) n += t ? Number(t[1]) : 1;
      } catch {
        /* gone */
      }
    }
  } catch {
    n = 0;
  }
  return (userThreads = n);
}

/** RLIMIT_NPROC for a run: the user's current threads + 1024 (undefined for root, where the kernel ignores it). KERNELDUEL_NPROC_LIMIT overrides. */
export function defaultNprocLimit(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.KERNELDUEL_NPROC_LIMIT?.trim();
  if (v && /^(off|0|none)$/i.test(v)) return undefined;
  if (v && /^\d+$/.test(v)) return Number(v);
  if (process.platform !== 'linux' || process.getuid?.() === 0) return undefined;
  return countUserThreads() + 1024;
}

// ------------------------------------------------------------------------------------------- leftovers

/** The environment variable that marks every process of one run (inherited by whatever it starts). */
export const RUN_MARKER_ENV = 'KERNELDUEL_RUN';

/**
 * Kills every process still carrying `KERNELDUEL_RUN=<marker>` in its environment: what a run
 * started and hid from the process-group kill (setsid, double fork). Used when there is no PID
 * namespace (no sandbox). Best effort: a process that rewrote its environment escapes it.
 */
export function killMarkedProcesses(marker: string): number {
  if (process.platform !== 'linux') return 0;
  const needle = Buffer.from(`${RUN_MARKER_ENV}=${marker}\0`);
  let killed = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const d of pids) {
    const pid = Number(d);
    if (pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${d}/environ`);
      if (env.indexOf(needle) >= 0) {
        process.kill(pid, 'SIGKILL');
        killed++;
      }
    } catch {
      /* gone, or not ours */
    }
  }
  return killed;
}
