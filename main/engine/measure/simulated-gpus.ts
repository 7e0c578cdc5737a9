// SIMULATED GPUs for a REPLAY pool: N lanes that answer from one recorded space (ReplayMeasurer),
// each after a latency of its own, one of them optionally failing or hanging at its k-th
// evaluation. They exist to prove the pool loop's scheduling, journal and fault path without a
// GPU (CI, `optimize --replay … --simulate-gpus`); every answer is labelled REPLAY and names the
// simulated GPU, never a real one. Nothing here measures anything.
import type { DuelResult, EvalResult, Failure } from '../base/types.js';
import type { Lane } from './lane.js';
import type { EvaluateOptions, MeasuredSpec, Measurer } from './measurer.js';
import type { ReplayMeasurer } from './replay.js';

export interface SimulatedFault {
  /** Which simulated GPU (0-based). */
  gpu: number;
  /** Its evaluation number (1-based) that fails or hangs; the GPU stays broken afterwards. */
  at: number;
  /** fail: the evaluation returns a runtime failure and the health check fails; hang: it never answers. */
  kind: 'fail' | 'hang';
}

export interface SimulatedGpusOptions {
  count: number;
  /** Latency of one evaluation per GPU, ms (a duel takes the same); the last value repeats. Default 5. */
  latencyMs?: number[];
  fault?: SimulatedFault;
}

/** `1:5:hang` / `0:3` (fail) -> a fault; throws a message naming the option for anything else. */
export function parseSimulatedFault(text: string, count: number): SimulatedFault {
  const m = /^(\d+):(\d+)(?::(fail|hang))?$/.exec(text.trim());
  if (!m) throw new Error(`--simulate-gpu-fault ${text}: expected GPU:EVALUATION[:fail|hang], e.g. 1:5:hang`);
  const gpu = Number(m[1]);
  if (gpu >= count) throw new Error(`--simulate-gpu-fault ${text}: there are ${count} simulated GPUs (0..${count - 1})`);
  if (Number(m[2]) < 1) throw new Error(`--simulate-gpu-fault ${text}: evaluations are counted from 1`);
  return { gpu, at: Number(m[2]), kind: (m[3] as 'fail' | 'hang' | undefined) ?? 'fail' };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** One simulated GPU: the recording's answers after a latency, labelled with this GPU. */
class SimulatedGpu implements Measurer {
  readonly compileOnly = false;
  evaluations = 0;
  broken: string | null = null;
  constructor(
    private readonly replay: ReplayMeasurer,
    readonly index: number,
    readonly uuid: string,
    private readonly latencyMs: number,
    private readonly fault: SimulatedFault | undefined,
  ) {}

  get task() {
    return this.replay.task;
  }

  private label(r: EvalResult): EvalResult {
    return r.source.kind === 'replay' ? { ...r, source: { ...r.source, simulatedGpu: { index: this.index, uuid: this.uuid } } } : r;
  }

  /** Resolves when the signal aborts (a hung GPU never answers otherwise). */
  private hang(signal?: AbortSignal): Promise<never> {
    return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted while the simulated GPU hung')), { once: true }));
  }

  async evaluate(spec: MeasuredSpec, o: EvaluateOptions = {}): Promise<EvalResult> {
    this.evaluations++;
    const f = this.fault;
    if (f && f.gpu === this.index && this.evaluations >= f.at) this.broken ??= `simulated ${f.kind} at its evaluation ${f.at}`;
    if (this.broken && f?.kind === 'hang') return this.hang(o.signal);
    await sleep(this.latencyMs, o.signal);
    if (this.broken) {
      const failure: Failure = { kind: 'runtime', reason: `simulated GPU ${this.index} fault (REPLAY): ${this.broken}` };
      return this.label({ build: { ok: true, arch: '', command: ['replay'], resources: [], log: '', durationMs: 0, cached: true }, failure, source: { kind: 'replay', recording: this.replay.recording } });
    }
    return this.label(await this.replay.evaluate(spec, o));
  }

  async duel(a: MeasuredSpec, b: MeasuredSpec, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    if (this.broken && this.fault?.kind === 'hang') return this.hang(signal);
    await sleep(this.latencyMs, signal);
    if (this.broken) return { failure: { kind: 'runtime', reason: `simulated GPU ${this.index} fault (REPLAY)` } };
    return this.replay.duel(a, b);
  }
}

/** N simulated GPUs of one model over one recording (REPLAY: see the header). */
export function simulatedGpuLanes(replay: ReplayMeasurer, o: SimulatedGpusOptions): Lane[] {
  if (!Number.isInteger(o.count) || o.count < 1 || o.count > 64) throw new Error(`--simulate-gpus ${o.count}: give 1 to 64 simulated GPUs`);
  const lat = o.latencyMs?.length ? o.latencyMs : [5];
  const name = `REPLAY ${replay.space.gpu.name} (simulated)`;
  return Array.from({ length: o.count }, (_, i) => {
    const uuid = `SIMULATED-GPU-${i}`;
    const gpu = new SimulatedGpu(replay, i, uuid, lat[Math.min(i, lat.length - 1)], o.fault);
    return {
      id: `sim${i}`,
      gpu: { index: i, uuid, name, model: name, simulated: true },
      measurer: gpu,
      // A simulated hang is seen as one after far longer than the GPU's latency (a few seconds at most).
      hangMs: Math.min(5000, Math.max(200, 50 * lat[Math.min(i, lat.length - 1)])),
      async health() {
        return gpu.broken;
      },
    } satisfies Lane;
  });
}
