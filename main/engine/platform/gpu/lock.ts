// One measurement at a time per GPU, across processes: the app, a CLI run and a benchmark on the
// same machine would otherwise time their kernels on top of each other. A lock file per GPU
// (linked into place whole, never seen empty) holds the owner's pid and host; a lock left by a
// process that died is taken over. The same lock on any file (withLockFile) serves other work that
// must happen once across processes (the harness build, the browser tests' turn).
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { kernelduelHome } from '../../base/paths.js';
import { processAlive as alive } from '../proc/alive.js';

export interface GpuLockOptions {
  dir?: string;
  /** Called once when the GPU is busy with another process's measurement. */
  onWait?: (owner: string) => void;
  pollMs?: number;
  /** How long a lock file without an owner line (being written) is waited on before onWait names the file. */
  ownerWaitMs?: number;
  signal?: AbortSignal;
}

export function gpuLockPath(key: string, dir = join(kernelduelHome(), 'locks')): string {
  return join(dir, `gpu-${key.replace(/[^A-Za-z0-9_-]/g, '_')}.lock`);
}

/** The lock file's owner line: `<pid> <host> <iso time>`; null when it is not one (empty, or cut short). */
export function parseLockOwner(text: string): { pid: number; host: string } | null {
  const [pidText, host] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  return Number.isInteger(pid) && pid > 0 && host ? { pid, host } : null;
}

/** Where hard links are not supported: O_EXCL create, then the owner line (a reader may see it empty for a moment). */
function createInPlace(path: string): boolean {
  try {
    writeFileSync(path, `${process.pid} ${hostname()} ${new Date().toISOString()}\n`, { flag: 'wx' });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/**
 * Creates the lock file with its owner line already in it: written to a file of this process's own,
 * then linked into place (link(2) fails when the lock exists), so no other process ever reads an
 * empty lock file.
 */
function create(path: string): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, `${process.pid} ${hostname()} ${new Date().toISOString()}\n`);
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return createInPlace(path); // no hard links here
    throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* gone already */
    }
  }
}

function tryAcquire(path: string): { ok: true } | { ok: false; owner: string | null } {
  if (create(path)) return { ok: true };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { ok: false, owner: null }; // released between the two: try again
  }
  const owner = parseLockOwner(text);
  // No owner line: a lock file written by an older version that was being written, or damaged.
  if (!owner) return { ok: false, owner: null };
  if (owner.host === hostname() && (owner.pid === process.pid || !alive(owner.pid))) {
    // Left behind by a process that died (or by this one before a crash): take it over.
    try {
      unlinkSync(path);
    } catch {
      /* someone else took it over first */
    }
    return tryAcquire(path);
  }
  return { ok: false, owner: `pid ${owner.pid} on ${owner.host}` };
}

export async function withGpuLock<T>(key: string, fn: () => Promise<T>, o: GpuLockOptions = {}): Promise<T> {
  const dir = o.dir ?? join(kernelduelHome(), 'locks');
  return withLockFile(gpuLockPath(key, dir), fn, o, `GPU ${key}`);
}

/**
 * The same lock on any file (its folder is made): fn runs while this process holds `path`, which
 * another process's call waits for; a lock left by a process that died is taken over. Used for
 * work that must be done once across processes, such as building the harness.
 */
export async function withLockFile<T>(path: string, fn: () => Promise<T>, o: Omit<GpuLockOptions, 'dir'> = {}, what = path): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  let told = false;
  const since = Date.now();
  for (;;) {
    const r = tryAcquire(path);
    if (r.ok) break;
    if (o.signal?.aborted) throw new Error(`cancelled while waiting for ${what}`);
    // Said once, naming the owner; a lock file without one is named as a file after a while.
    if (!told && (r.owner !== null || Date.now() - since > (o.ownerWaitMs ?? 2000))) {
      told = true;
      o.onWait?.(r.owner ?? `the owner is not written in ${path}; delete that file if no KernelDuel process is measuring`);
    }
    await new Promise((res) => setTimeout(res, o.pollMs ?? 100));
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  }
}
