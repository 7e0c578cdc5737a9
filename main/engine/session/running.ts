// Which sessions a run is appending to right now: a run marks its session folder
// (`<session>/running.json`: pid, host, start) while it runs and removes the mark when it ends. A
// mark whose process is gone is a run that was killed: `kernelduel sessions` shows such a session
// as `interrupted` (resume it with --resume), and never trusts its summary.json over its journal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive as alive } from '../platform/proc/alive.js';

export const RUNNING_FILE = 'running.json';

export interface RunMark {
  pid: number;
  host: string;
  startedAt: string;
}

/** Marks `sessionDir` as being run by this process; the returned function removes the mark. Best effort. */
export function markRunning(sessionDir: string): () => void {
  const file = path.join(sessionDir, RUNNING_FILE);
  const mark: RunMark = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  try {
    fs.writeFileSync(file, JSON.stringify(mark) + '\n');
  } catch {
    return () => undefined; // a read-only folder: the run itself fails clearly when it appends
  }
  return () => {
    try {
      const now = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<RunMark>;
      if (now.pid === mark.pid && now.host === mark.host) fs.unlinkSync(file);
    } catch {
      /* gone already */
    }
  };
}

/**
 * Whether a run holds the session now: 'running' (its process is alive, or on another host where
 * that cannot be checked), 'interrupted' (its process is gone: killed), or null (no mark).
 */
export function runState(sessionDir: string): 'running' | 'interrupted' | null {
  let m: Partial<RunMark>;
  try {
    m = JSON.parse(fs.readFileSync(path.join(sessionDir, RUNNING_FILE), 'utf8')) as Partial<RunMark>;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'interrupted';
  }
  if (typeof m.pid !== 'number' || typeof m.host !== 'string') return 'interrupted';
  if (m.host !== os.hostname()) return 'running';
  return alive(m.pid) ? 'running' : 'interrupted';
}
