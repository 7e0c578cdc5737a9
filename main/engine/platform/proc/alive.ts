// Whether a process of this machine still runs (signal 0 checks without signalling). Used by the
// lock files and run marks that name their owner's pid.

/** True while `pid` runs (also when it belongs to another user: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
