// One measurement at a time per GPU, across processes: the app, a CLI run and a benchmark on the
// same machine would otherwise time their kernels on top of each other. A lock file per GPU
// (created with O_EXCL) holds the owner's pid; a lock left by a process that died is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { kernelduelHome } from '../common/paths.js';

export interface GpuLockOptions {
  dir?: string;
  /** Called once when the GPU is busy with another process's measurement. */
  onWait?: (owner: string) => void;
  pollMs?: number;
  signal?: AbortSignal;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function gpuLockPath(key: string, dir = join(kernelduelHome(), 'locks')): string {
  return join(dir, `gpu-${key.replace(/[^A-Za-z0-9_-]/g, '_')}.lock`);
}

function tryAcquire(path: string): { ok: true } | { ok: false; owner: string } {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, `${process.pid} ${hostname()} ${new Date().toISOString()}\n`);
    closeSync(fd);
    return { ok: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { ok: false, owner: 'unknown' }; // released between open and read: try again
  }
  const [pidText, host] = text.trim().split(' ');
  const pid = Number(pidText);
  if (host === hostname() && Number.isInteger(pid) && (pid === process.pid || !alive(pid))) {
    // Left behind by a process that died (or by this one before a crash): take it over.
    try {
      unlinkSync(path);
    } catch {
      /* someone else took it over first */
    }
    return tryAcquire(path);
  }
  return { ok: false, owner: `pid ${pidText} on ${host ?? '?'}` };
}

export async function withGpuLock<T>(key: string, fn: () => Promise<T>, o: GpuLockOptions = {}): Promise<T> {
  const dir = o.dir ?? join(kernelduelHome(), 'locks');
  mkdirSync(dir, { recursive: true });
  const path = gpuLockPath(key, dir);
  let told = false;
  for (;;) {
    const r = tryAcquire(path);
    if (r.ok) break;
    if (o.signal?.aborted) throw new Error(`cancelled while waiting for GPU ${key}`);
    if (!told) {
      told = true;
      o.onWait?.(r.owner);
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
