// One GPU of a run's pool (`optimize --gpus`): the measurer bound to that GPU (its own GPU queue
// and lock, its own judge) and what the pool loop (main/engine/search/pool.ts) asks of it besides
// measuring: warm up before the first variant arrives, say whether the GPU still works after a
// runtime or timeout failure, and stop what it runs once it is given up on. This file makes a lane
// of a real Evaluator; simulated-gpus.ts makes REPLAY lanes. It schedules nothing itself.
import type { GpuInfo } from '../base/types.js';
import { normaliseGpuName } from '../platform/gpu/detect.js';
import { defaultConfig } from '../task/space.js';
import type { Evaluator } from './evaluate.js';
import type { Measurer } from './measurer.js';

export interface LaneGpu {
  index: number;
  uuid: string;
  name: string;
  /** What decides whether two GPUs' results may be compared: the normalised model name. */
  model: string;
  simulated?: boolean;
}

export interface Lane {
  /** `gpu<index>` (or `sim<index>`). */
  readonly id: string;
  readonly gpu: LaneGpu;
  readonly measurer: Measurer;
  /** A measurement that gives no answer for this long means this GPU hangs (default: the pool's). */
  readonly hangMs?: number;
  /** Starts what the first measurement needs (probe, reference build, judge); throws why the GPU cannot measure. */
  warm?(signal?: AbortSignal): Promise<void>;
  /** After a runtime or timeout failure: null when the GPU still works, else why it does not. */
  health?(signal?: AbortSignal): Promise<string | null>;
  /** Stops what the lane runs (its judge and executors) once the pool gave up on it. */
  abandon?(): void;
}

export function laneGpuOf(g: Pick<GpuInfo, 'index' | 'uuid' | 'name'>): LaneGpu {
  return { index: g.index, uuid: g.uuid, name: g.name, model: normaliseGpuName(g.name) };
}

/** The lane of a real GPU: the evaluator's probe, reference and judge warm it; the reference, checked again, is its health check. */
export function evaluatorLane(ev: Evaluator): Lane {
  if (!ev.gpu) throw new Error('a GPU pool needs GPUs: this evaluator is compile-only');
  const gpu = laneGpuOf(ev.gpu);
  return {
    id: `gpu${gpu.index}`,
    gpu,
    measurer: ev,
    async warm(signal) {
      await ev.probe(signal);
      const judge = await ev.reference(signal);
      await judge.start();
    },
    async health(signal) {
      // The trusted reference checked against itself: a GPU that cannot do that cannot measure.
      const r = await ev.evaluate({ source: ev.task.referenceSource, config: defaultConfig(ev.task), flags: { opt: 3 } }, { signal, time: false });
      return r.failure ? `the reference no longer checks on it (${r.failure.kind}: ${r.failure.reason.split('\n')[0]})` : null;
    },
    abandon() {
      ev.close();
    },
  };
}
