// What the optimisation loop and the strategies need from a measurement backend: evaluate one
// variant, duel two variants, and (optionally) start a build early. The real `Evaluator`
// (main/engine/measure/evaluate.ts) and the recorded-space `ReplayMeasurer` (main/engine/measure/replay.ts) both
// satisfy it structurally, so every strategy runs unchanged on a GPU or on a recording.
import type { DuelResult, EvalResult, Failure, VariantSpec } from '../base/types.js';
import type { Task } from '../task/manifest.js';

export type MeasuredSpec = Pick<VariantSpec, 'source' | 'config' | 'flags'> & { transforms?: string[] };

export interface EvaluateOptions {
  signal?: AbortSignal;
  /** false: build and check only. */
  time?: boolean;
  onStage?: (stage: 'build' | 'check' | 'time') => void;
  /**
   * Stop timing (the first timed size) once the lower bound of the median's 95% CI lies above this
   * (ms): the loop passes a multiple of the best's median (LoopOptions.timeCutoff), since a variant
   * decidedly that much slower needs no precise time. The result's timing says so (cutoffMs). Only a
   * GPU's evaluation stops early; a replay answers from its recording.
   */
  cutoffMs?: number;
}

export interface Measurer {
  readonly task: Task;
  /** True when nothing can be timed (builds only). */
  readonly compileOnly: boolean;
  /** Build, check and time one variant. Failures come back in the result, never as exceptions. */
  evaluate(spec: MeasuredSpec, o?: EvaluateOptions): Promise<EvalResult>;
  /** Paired, interleaved timing of A against B. ratio > 1: A is faster. */
  duel(a: MeasuredSpec, b: MeasuredSpec, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }>;
  /** Start a build ahead of the measurement (real builds only; a replay has nothing to build). */
  build?(spec: MeasuredSpec, signal?: AbortSignal): Promise<unknown>;
  /** Build and capture a variant ahead of its measurement, where that may share the GPU (never throws). */
  prepare?(spec: MeasuredSpec, signal?: AbortSignal): Promise<void>;
}
