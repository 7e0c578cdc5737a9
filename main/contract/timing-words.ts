// Where a timing's wall time went besides its samples, in words: the same in `kernelduel eval` and
// the workbench's variant panel. A fast variant's timing can be mostly the reference's runs for the
// verified calls (histogram's naive reference, ~69 ms a run, was most of a 0.12 ms variant's 1 s
// timing on an H100, 2026-12-07), which no other figure shows. Likewise where a check's executor
// came from: a spare still making its CUDA context was most of a check two evaluations after each
// new best (H100, 2026-12-08).
import type { ExecutorFrom } from '../engine/base/types.js';

/** What the judge reports of a timing's wall time (Timing.setupMs, timedMs, verifyMs; judges from 2026-12-08 on). */
export interface TimingWall {
  setupMs?: number;
  timedMs?: number;
  verifyMs?: number;
  verifiedCalls?: number;
}

/** "wall time 412 ms: 96 set-up (buffer sets, warm-up), 316 sampling, of which 121 verifying 19 calls against the reference"; null when the judge did not say. */
export function timingWallWords(t: TimingWall): string | null {
  if (t.setupMs === undefined || t.timedMs === undefined || t.verifyMs === undefined) return null;
  const ms = (x: number): string => x.toFixed(0);
  const calls = t.verifiedCalls !== undefined ? ` ${t.verifiedCalls} call${t.verifiedCalls === 1 ? '' : 's'}` : '';
  return `wall time ${ms(t.setupMs + t.timedMs)} ms: ${ms(t.setupMs)} set-up (buffer sets, warm-up), ${ms(t.timedMs)} sampling, of which ${ms(t.verifyMs)} verifying${calls} against the reference`;
}

const EXECUTOR_WORDS: Record<ExecutorFrom, string> = {
  idle: 'kept from an earlier run with the variant loaded',
  spare: 'started ahead, CUDA up',
  'spare-starting': 'started ahead, still making its CUDA context',
  new: 'a new process',
};

/** "its executor: started ahead, still making its CUDA context, ready in 171 ms" (CheckResult.executor, judges from 2026-12-08 01:00 on). */
export function executorWords(e: { from: ExecutorFrom; ms: number }): string {
  return `its executor: ${EXECUTOR_WORDS[e.from]}, ready in ${e.ms.toFixed(0)} ms`;
}
