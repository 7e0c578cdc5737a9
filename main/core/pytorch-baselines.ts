// The PyTorch baselines of an optimisation run on a PyTorch-reference task: the task's own Model
// timed eagerly and (where this torch has it) through torch.compile, once per session, at the task's
// first timed size, on the run's device, by the trusted runner's `baseline` command (the same timing
// method as Python candidates; engine/pytorch/candidate.ts). Journaled as a `pytorch-baselines`
// event; a failure is recorded there with its reason and the session goes on. Runs before the
// search starts; on a GPU it takes the GPU's queue exclusively, so it never overlaps a timed
// measurement of this or another KernelDuel process on that GPU.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isHostBound, type PytorchBaselines, type PytorchBaselineTime } from '../engine/base/types.js';
import type { Task } from '../engine/task/manifest.js';
import { measureBaseline, removeRunDir, type BaselineFile, type PyTiming } from '../engine/pytorch/candidate.js';
import type { GpuQueue } from '../engine/measure/evaluate.js';

/** Where and with what the baselines are timed. */
export interface BaselineTarget {
  device: 'cuda' | 'cpu';
  /** The GPU's name, or 'cpu'. */
  deviceName: string;
  python: string;
  torch: string | null;
  /** Extra environment of the runner (CUDA_VISIBLE_DEVICES naming the run's GPU). */
  env?: Record<string, string>;
  /** The run's GPU queue (the evaluators' on that GPU): held exclusively while the baselines are timed. */
  queue?: GpuQueue;
}

/** What a run does about the baselines: measure them on `target`, or say why not (`skip`). */
export type BaselinePlan = { target: BaselineTarget } | { skip: string; device: 'cuda' | 'cpu'; deviceName: string; torch: string | null };

export interface BaselineMeasureOptions {
  workRoot: string;
  /** The runner's timing options (--min-samples ...), as the run's candidates get them. */
  timingArgs?: string[];
  /** torch.compile's own limit (default 120 s). */
  compileLimitS?: number;
  /** The whole runner process's limit (default 600 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The runner client (tests give a fake one). */
  measure?: typeof measureBaseline;
}

const timeOf = (t: PyTiming): PytorchBaselineTime => ({
  medianMs: t.medianMs, timer: t.timer, samples: t.samplesMs?.length ?? t.samples,
  ...(t.gated && t.gated.deviceMedianMs > 0 ? { gpuMs: t.gated.deviceMedianMs } : {}),
  ...(typeof t.hostCallMedianMs === 'number' ? { hostCallMs: t.hostCallMedianMs } : {}),
  ...(typeof t.perCallMs === 'number' ? { perCallMs: t.perCallMs } : {}),
});

/** The event's record from what the runner wrote (or did not). */
export function baselinesFromFile(
  task: Task, where: { device: 'cuda' | 'cpu'; deviceName: string; torch: string | null },
  file: BaselineFile | null, failure: { kind: string; message: string } | undefined, measuredAt = new Date().toISOString(),
): PytorchBaselines {
  const c = file?.compiled;
  const eager = file?.eager ? timeOf(file.eager) : null;
  const compile = c?.ok ? { ...timeOf(c), compileS: c.compileS } : null;
  const compileNote = compile ? null : c && !c.ok ? c.why : eager ? 'the runner gave no torch.compile result' : 'not run: the eager baseline failed';
  return {
    size: task.timed[0], device: where.device, deviceName: where.deviceName, torch: file?.torch ?? where.torch, guarantee: 'trusted-python',
    eager, compile, compileNote,
    failure: eager ? null : `[${failure?.kind ?? 'runtime'}] ${(failure?.message ?? 'the runner gave no eager time').split('\n')[0].slice(0, 400)}`,
    measuredAt,
  };
}

/** A plan that measures nothing, as the event records it. */
export function skippedBaselines(task: Task, p: Extract<BaselinePlan, { skip: string }>): PytorchBaselines {
  return {
    size: task.timed[0], device: p.device, deviceName: p.deviceName, torch: p.torch, guarantee: 'trusted-python',
    eager: null, compile: null, compileNote: `not run: ${p.skip}`, failure: `not measured: ${p.skip}`, measuredAt: new Date().toISOString(),
  };
}

/** Times the task's Model eagerly and through torch.compile on `t`; never throws for a failed measurement (the record says why). */
export async function measurePytorchBaselines(task: Task, t: BaselineTarget, o: BaselineMeasureOptions): Promise<PytorchBaselines> {
  const size = task.timed[0];
  if (size === undefined) throw new Error(`task ${task.manifest.name} has no timed size`);
  const workDir = path.join(o.workRoot, 'pytorch-baselines', task.hash.slice(0, 16), randomBytes(6).toString('hex'));
  const measure = o.measure ?? measureBaseline;
  const slot = t.device === 'cuda' && t.queue ? await t.queue.acquire('exclusive') : null;
  try {
    const r = await measure(task.referencePath, {
      python: t.python, workDir, timeoutMs: o.timeoutMs ?? 600_000, sandbox: false, device: t.device, compile: true, compileLimitS: o.compileLimitS,
      overrides: task.manifest.sizes[size], timingArgs: o.timingArgs, env: t.env, signal: o.signal,
    });
    return baselinesFromFile(task, t, r.file, r.failure);
  } catch (e) {
    return baselinesFromFile(task, t, null, { kind: 'runtime', message: e instanceof Error ? e.message : String(e) });
  } finally {
    slot?.release();
    removeRunDir(workDir);
  }
}

/** A baseline's GPU time beside its one-call figure, and whether that figure is mostly the host's. */
export function gpuNote(x: PytorchBaselineTime): string {
  if (x.gpuMs === undefined) return '';
  const host = isHostBound(x.gpuMs, x.medianMs) ? `; HOST-BOUND: the GPU works ${Math.round((100 * x.gpuMs) / x.medianMs)}% of it` : '';
  return `; GPU's own time ${x.gpuMs.toPrecision(3)} ms${x.hostCallMs !== undefined ? `, host issues the call in ${x.hostCallMs.toPrecision(3)} ms` : ''}${host}`;
}

/** The baselines in one line for a log: times, the clock, and why a time is missing. */
export function describeBaselines(b: PytorchBaselines): string {
  const where = b.device === 'cpu' ? 'CPU times, not a GPU\'s' : b.deviceName;
  const ms = (x: PytorchBaselineTime): string => `${x.medianMs.toPrecision(4)} ms (${x.timer}, ${x.samples} samples${gpuNote(x)})`;
  const eager = b.eager ? ms(b.eager) : `none — ${b.failure ?? 'not measured'}`;
  const compile = b.compile ? `${ms(b.compile)}, compiled in ${b.compile.compileS.toFixed(1)} s` : `none — ${b.compileNote ?? 'not run'}`;
  return `PyTorch baselines${b.device === 'cpu' ? ' [CPU]' : ''} (${where}, torch ${b.torch ?? '?'}, size ${b.size}, guarantee level ${b.guarantee}): eager ${eager}; torch.compile ${compile}`;
}
