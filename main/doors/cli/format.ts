// Human-readable summaries of results for the CLI.
import { baselineFigureMs, type EvalResult, type PythonFigure, type PytorchBaselines, type PytorchBaselineTime } from '../../engine/base/types.js';
import type { SessionSummary } from '../../engine/session/list.js';
import { executorWords, timingWallWords } from '../../contract/timing-words.js';
import { pythonDeviceOf, replayRecordingOf } from '../../engine/session/run-settings.js';
import type { Task } from '../../engine/task/manifest.js';
import { sizeLayout } from '../../engine/task/manifest.js';

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  return ms >= 1 ? `${ms.toFixed(3)} ms` : `${(ms * 1000).toFixed(2)} µs`;
}

export function describeResult(task: Task, r: EvalResult): string {
  const lines: string[] = [];
  const b = r.build;
  lines.push(`build: ${b.ok ? 'ok' : 'FAILED'}${b.cached ? ' (cached)' : ` in ${(b.durationMs / 1000).toFixed(1)} s`} for ${b.arch}`);
  for (const k of b.resources) lines.push(`  ${k.name}: ${k.registers} regs, ${k.sharedBytes} B smem, ${k.stackBytes} B stack, spills ${k.spillStoreBytes}/${k.spillLoadBytes} B`);
  const check = r.check;
  if (check) {
    const worst = (k: 'relL2' | 'maxAbsErr' | 'maxRelErr'): number => check.checks.reduce((m, c) => Math.max(m, Number(c[k]) || 0), 0);
    // An element's relative error is large wherever the expected value is near zero; in a check
    // that passed, the absolute tolerance covered it, so the whole buffer's relative L2 error leads.
    const rel = worst('maxRelErr');
    const nearZero = check.ok && rel > 0.01 ? ' (on an element whose expected value is near zero: within the absolute tolerance)' : '';
    lines.push(`check: ${check.ok ? 'ok' : 'FAILED'} (${check.checks.length} buffer checks over sizes and seeds; worst relative L2 error ${worst('relL2').toExponential(2)}, largest element error ${worst('maxAbsErr').toExponential(2)} absolute, ${rel.toExponential(2)} relative${nearZero})`);
    // Where the judge got the check's executor (judges from 2026-12-08 01:00 on): a spare still
    // making its CUDA context is most of a check's time when it happens.
    if (check.executor) lines.push(`  ${executorWords(check.executor)}`);
  }
  for (const t of r.timing ?? []) {
    const lay = sizeLayout(task, t.size);
    const s = t.medianMs / 1000;
    const bw = lay.bytes ? ` ${(lay.bytes / s / 1e12).toFixed(3)} TB/s` : '';
    const fl = lay.flops ? ` ${(lay.flops / s / 1e12).toFixed(2)} TFLOP/s` : '';
    lines.push(`time (size ${t.size}): median ${fmtMs(t.medianMs)} [${fmtMs(t.ciLowMs)}, ${fmtMs(t.ciHighMs)}] ±${(t.relNoise * 100).toFixed(2)}% over ${t.samplesMs.length} samples${t.bufferSets && t.bufferSets > 1 ? ` on ${t.bufferSets} buffer sets` : ''}${t.contexts && t.contexts > 1 ? ` in ${t.contexts} executors` : ''} (${t.timer}${t.cutoffMs !== undefined ? `, stopped early: decidedly above the cutoff ${fmtMs(t.cutoffMs)}` : t.converged ? '' : ', not converged'})${bw}${fl}`);
    if (t.perSetMedianMs && t.setRelSd !== undefined) {
      lines.push(`  buffer sets: medians ${t.perSetMedianMs.map(fmtMs).join(', ')}; their mean's sd ${(t.setRelSd * 100).toFixed(2)}% of the median (placement: more samples do not shrink it, more sets do)`);
    }
    const wall = timingWallWords(t);
    if (wall) lines.push(`  ${wall}`);
    if (t.timerNote) lines.push(`  note: ${t.timerNote}`);
    if (t.clocksStart) lines.push(`  clocks: SM ${t.clocksStart.smMHz}→${t.clocksEnd?.smMHz} MHz, mem ${t.clocksStart.memMHz}→${t.clocksEnd?.memMHz} MHz`);
  }
  if (r.compileOnly) lines.push('compile-only: no GPU, so not checked or timed');
  if (r.failure) lines.push(`FAILED [${r.failure.kind}]: ${r.failure.reason}`);
  return lines.join('\n');
}

/** One line of `kernelduel sessions`: id, task, strategy, REPLAY label, results of the budget, status, best. */
export function describeSession(s: SessionSummary): string {
  const settings = s.meta?.settings ?? {};
  const strategy = typeof settings.strategy === 'string' ? settings.strategy : '?';
  const budget = typeof settings.budget === 'number' ? ` (budget ${settings.budget})` : '';
  const replay = replayRecordingOf(settings) !== null;
  const backend = settings.backend as { gpus?: unknown[]; simulateGpus?: { count?: number } } | undefined;
  const pool = Array.isArray(backend?.gpus) && backend.gpus.length ? `${backend.gpus.length}× ` : '';
  const sim = replay && backend?.simulateGpus?.count ? ` on ${backend.simulateGpus.count} simulated GPUs` : '';
  const py = pythonDeviceOf(settings);
  const where = replay ? `REPLAY${sim}` : py === 'cpu' ? 'python CPU (CPU times)' : py === 'cuda' ? `python ${s.meta?.gpu?.name ?? 'GPU'}` : s.meta ? (s.meta.gpu ? `${pool}${s.meta.gpu.name}` : 'compile-only') : '?';
  const best = s.best ? `  best ${fmtMs(s.best.medianMs)}${s.best.speedup ? ` ${s.best.speedup.toFixed(2)}×` : ''}${replay ? ' [REPLAY]' : py === 'cpu' ? ' [CPU]' : ''}` : '';
  const confirmed = s.confirmed ? `  confirmed ${s.confirmed.variantId}${s.confirmed.speedup ? ` ${s.confirmed.speedup.toFixed(3)}×` : ''} (precise)` : '';
  const hint = s.status === 'interrupted' ? ' (kernelduel optimize --resume ' + s.id + ')' : '';
  return `${s.id}  ${s.meta?.task.name ?? '?'}  ${strategy}  ${where}  ${s.results} results${budget}  ${s.status ?? ''}${hint}${best}${confirmed}${s.tornTail ? '  (torn last line: repaired when opened)' : ''}${s.error ? `  ERROR ${s.error}` : ''}`;
}

/** The optimize summary's PyTorch baselines line: each baseline's time and the best's speedup over it, or why there is none. */
export function baselinesSummary(b: PytorchBaselines, bestMs: number | null, figure?: PythonFigure): string {
  // a per-call Python run's best is compared with the baselines' per-call times (KernelBench's one-call figure beside)
  const vs = (t: PytorchBaselineTime | null, why: string | null): string => {
    if (!t) return `none (${why ?? 'not measured'})`;
    const ms = baselineFigureMs({ figure }, t);
    if (ms === null) return `${fmtMs(t.medianMs)} one-call, no per-call time to compare the best's with`;
    const per = figure === 'per-call' ? ' per call' : '';
    return `${fmtMs(ms)}${per}${per ? ` (one-call ${fmtMs(t.medianMs)})` : ''}${bestMs ? ` → best ${(ms / bestMs).toFixed(2)}× vs it${per}` : ''}`;
  };
  if (!b.eager && !b.compile && b.failure?.startsWith('not measured: ')) return `PyTorch baselines: ${b.failure}`;
  const where = b.device === 'cpu' ? ' [CPU] (CPU times, not a GPU\'s)' : ` on ${b.deviceName}`;
  return `PyTorch baselines${where}, guarantee level ${b.guarantee}: eager ${vs(b.eager, b.failure)}; torch.compile ${vs(b.compile, b.compileNote)}`;
}
