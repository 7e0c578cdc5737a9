// A diagnostic trace of GPU queue places and captures: with KERNELDUEL_TRACE=<file> every place
// asked for, given and handed back, and every capture process's start and end, is appended there as
// one JSON line ({"t": epoch ms, "q": queue, "ev": ..., ...}). It answers "what held this GPU while
// that evaluation waited" in runs on several GPUs. Off (a no-op) unless the variable is set.
import { appendFileSync } from 'node:fs';

export function traceGpu(ev: Record<string, string | number>): void {
  const file = process.env.KERNELDUEL_TRACE;
  if (!file) return;
  try {
    appendFileSync(file, JSON.stringify({ t: Date.now(), ...ev }) + '\n');
  } catch {
    /* a diagnostic: never in the way of a measurement */
  }
}
