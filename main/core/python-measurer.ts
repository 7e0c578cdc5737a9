// The measurement backend of an optimisation run whose variants are KernelBench-style Python
// candidates (`ModelNew`) of a PyTorch-reference task: each variant's source is a Python file, run
// by the trusted runner (resources/python/kd_candidate.py, through engine/pytorch/candidate.ts) in a
// sandboxed child process. Its results are ordinary EvalResults (build / check / timing) with a
// `python` part (guarantee level `python-in-process`, label, custom share); on a torch without CUDA
// they are CPU times, their source `{kind: 'cpu'}`, labelled CPU wherever they are shown.
// A duel times A and B alternately, each in a fresh process of its own (random order per round),
// and compares the two medians of each round (logRatioCI): coarser than the CUDA judge's
// interleaved calls, but neither side's code runs in the process that times the other.
// Lives in the core because it is the one place that may join the pytorch and measure layers.
import { createHash, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DuelResult, EvalResult, Failure, FailureKind, PythonFigure, PythonResultInfo, TimingResult } from '../engine/base/types.js';
import type { EvaluateOptions, MeasuredSpec, Measurer } from '../engine/measure/measurer.js';
import type { Task } from '../engine/task/manifest.js';
import { changedFlags, measureCandidate, type CandidateOutcome } from '../engine/pytorch/candidate.js';
import { mean, medianCI, verdictOf } from '../engine/measure/stats.js';

export type PythonDevice = 'cuda' | 'cpu';

export interface PythonMeasurerOptions {
  python: string;
  torch: string | null;
  device: PythonDevice;
  /** The GPU's name (device cuda). */
  deviceName?: string;
  /** This torch has CUDA (device cpu was then asked for: --device cpu). */
  cudaAvailable?: boolean;
  /** Folder for candidate files, run folders and extension builds. */
  workRoot: string;
  /** Per runner process (default 300 s: a first load_inline build can take a minute). */
  timeoutMs?: number;
  /** Checks per evaluation (fresh seeds each; default the runner's 3). */
  checks?: number;
  /** The runner's timing options (--min-samples ...), e.g. shorter ones in tests. */
  timingArgs?: string[];
  /** Rounds of a duel (pairs of fresh-process measurements; default 3). */
  duelRounds?: number;
  /** What the timing holds and the run ranks and duels by (PythonFigure; default per-call, on a GPU). */
  figure?: PythonFigure;
}

/** What the prompt says of a per-call figure (after "Measured on: GPU <name>"). */
export const PER_CALL_PROMPT = "; each time is one forward's cost when forwards follow each other: the larger of the GPU's own time for its kernels and the host's time to launch them (Python overhead counts where it exceeds the GPU work)";

/** Where a Python run's candidates are measured, as the LLM prompt says it ("Measured on: ..."). */
export function promptDevice(o: { device: PythonDevice; gpuName: string; figure: PythonFigure; cpuWhy?: string }): string {
  if (o.device === 'cpu') return `CPU${o.cpuWhy ? ` (${o.cpuWhy})` : ''}: the times below are CPU times, not a GPU's`;
  return `GPU ${o.gpuName}${o.figure === 'per-call' ? PER_CALL_PROMPT : ''}`;
}

/** Gated samples a per-call figure is taken from, unless the run's timing options say otherwise. */
export const PER_CALL_GATED_SAMPLES = 20;

/** The trusted eager baseline as a candidate: the reference file itself, with ModelNew = Model. */
export function eagerBaselineSource(task: Task): string {
  return `${task.referenceSource.trimEnd()}\n\n\n# KernelDuel: the baseline is the reference module itself, run eagerly by PyTorch.\nclass ModelNew(Model):\n    pass\n`;
}

/** The task as a Python-candidate run sees it: its baseline is the eager reference (a PyTorch task's kernel.cu is a CUDA entry point). */
export function pythonCandidateTask(task: Task): Task {
  if (!task.pytorch) throw new Error(`task ${task.manifest.name} has a CUDA reference: Python candidates (ModelNew) need a PyTorch-reference task (reference.pytorch in task.yaml; \`kernelduel import kernelbench\` writes them)`);
  return { ...task, baselineSource: eagerBaselineSource(task), baselinePath: task.referencePath, baselinePlaceholder: false };
}

const RUNNER_KIND: Record<string, FailureKind> = { import: 'compile', construct: 'compile', build: 'compile', timeout: 'timeout', correctness: 'correctness' };

const sha16 = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

export class PythonMeasurer implements Measurer {
  readonly compileOnly = false;
  readonly task: Task;
  private readonly o: PythonMeasurerOptions;

  constructor(task: Task, o: PythonMeasurerOptions) {
    this.task = pythonCandidateTask(task);
    this.o = o;
  }

  get device(): PythonDevice {
    return this.o.device;
  }

  /** Why the CPU, in words: a torch without CUDA, or --device cpu (for the prompt). */
  get cpuWhy(): string {
    return this.o.cudaAvailable ? '--device cpu' : 'torch without CUDA';
  }

  get python(): string {
    return this.o.python;
  }

  get torch(): string | null {
    return this.o.torch;
  }

  /** The figure this run's timings hold: per-call on a GPU unless one-call was asked for; on the CPU one-call (there is no gate). */
  get figure(): PythonFigure {
    return this.o.device === 'cpu' ? 'one-call' : (this.o.figure ?? 'per-call');
  }

  /** The runner's timing options: the run's own, plus enough gated samples for a per-call figure. */
  get runnerTimingArgs(): string[] | undefined {
    const t = this.o.timingArgs;
    if (this.figure !== 'per-call' || t?.includes('--gated-samples')) return t;
    return [...(t ?? []), '--gated-samples', String(PER_CALL_GATED_SAMPLES)];
  }

  /** The GPU's name ('cpu' on the CPU). */
  get gpuName(): string {
    return this.o.device === 'cuda' ? (this.o.deviceName ?? 'cuda') : 'cpu';
  }

  /** What measured, in words (CPU runs say so). */
  get label(): string {
    return this.o.device === 'cpu'
      ? `CPU (${this.cpuWhy}, torch ${this.o.torch ?? '?'}): Python candidates checked and timed on the CPU — CPU times, not a GPU's; guarantee level python-in-process`
      : `GPU ${this.o.deviceName ?? 'cuda'}: Python candidates (guarantee level python-in-process), ranked by ${this.figure === 'per-call' ? "per-call time (the larger of the GPU's own time and the host's time to issue the call; KernelBench's one-call figure is kept beside it)" : "KernelBench's one-call time (Python's launch of every kernel included)"}`;
  }

  /** The candidate's file: one per source content, so a re-measurement reuses its extension builds. */
  private fileFor(source: string): { file: string; key: string } {
    const key = sha16(source);
    const dir = path.join(this.o.workRoot, 'python-candidates', this.task.hash.slice(0, 16));
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${key}.py`);
    if (!existsSync(file)) writeFileSync(file, source);
    return { file, key };
  }

  private async run(spec: MeasuredSpec, sizeIndex: number, signal?: AbortSignal): Promise<CandidateOutcome> {
    const { file, key } = this.fileFor(spec.source);
    const root = path.join(this.o.workRoot, 'python-runs', this.task.hash.slice(0, 16), key);
    return measureCandidate(this.task.referencePath, file, {
      python: this.o.python, workDir: path.join(root, `run-${sizeIndex}-${randomInt(1e9)}`), extDir: path.join(root, 'ext'),
      timeoutMs: this.o.timeoutMs ?? 300_000, sandbox: true, device: this.o.device, checks: this.o.checks,
      overrides: this.task.manifest.sizes[sizeIndex], timingArgs: this.runnerTimingArgs, signal,
    });
  }

  async evaluate(spec: MeasuredSpec, o: EvaluateOptions = {}): Promise<EvalResult> {
    o.onStage?.('build');
    const timing: TimingResult[] = [];
    let last: EvalResult | null = null;
    for (const si of this.task.timed) {
      const m = await this.run(spec, si, o.signal);
      const r = toEvalResult(m, si, { device: this.o.device, deviceName: this.o.deviceName, torch: this.o.torch, figure: this.figure });
      if (r.failure || !r.timing?.length) return r;
      timing.push(...r.timing);
      last = r;
    }
    if (!last) throw new Error(`task ${this.task.manifest.name} has no timed size`);
    return { ...last, timing };
  }

  async duel(a: MeasuredSpec, b: MeasuredSpec, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    const size = this.task.timed[0];
    const aMs: number[] = [];
    const bMs: number[] = [];
    let wall = this.o.device === 'cpu';
    for (let round = 0; round < (this.o.duelRounds ?? 3); round++) {
      const order: Array<'a' | 'b'> = randomInt(2) ? ['a', 'b'] : ['b', 'a'];
      const got: Partial<Record<'a' | 'b', number>> = {};
      for (const side of order) {
        const m = await this.run(side === 'a' ? a : b, size, signal);
        if (signal?.aborted) return {};
        const r = toEvalResult(m, size, { device: this.o.device, deviceName: this.o.deviceName, torch: this.o.torch, figure: this.figure });
        if (r.failure || !r.timing?.length) return { failure: { kind: r.failure?.kind ?? 'runtime', reason: `duel round ${round + 1}, side ${side.toUpperCase()}: ${r.failure?.reason ?? 'not timed'}` } };
        got[side] = r.timing[0].medianMs;
        if (r.timing[0].timer === 'wall') wall = true;
      }
      aMs.push(got.a!);
      bMs.push(got.b!);
    }
    const ci = logRatioCI(aMs.map((x, i) => bMs[i] / Math.max(x, 1e-9)));
    return { duels: [{ size, aMs, bMs, ratio: ci.ratio, ratioLow: ci.low, ratioHigh: ci.high, verdict: Number.isFinite(ci.low) ? verdictOf(ci.low, ci.high) : 'unsure', timer: wall ? 'wall' : 'events', pairs: aMs.length }] };
  }
}

// Student's t, 97.5% quantile, by degrees of freedom 1..10 (beyond: 2.0, a little wide).
const T975 = [NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

/**
 * A duel's speedup from few pairs (one pair per round of two fresh processes): the geometric mean
 * of the ratios with a 95% t-interval on their logarithms (order statistics of 2 or 3 pairs give no
 * 95% interval at all). One pair: no interval (the verdict is then `unsure`).
 */
export function logRatioCI(ratios: number[]): { ratio: number; low: number; high: number } {
  const logs = ratios.map((r) => Math.log(r));
  const n = logs.length;
  const mean = logs.reduce((a, b) => a + b, 0) / Math.max(n, 1);
  if (n < 2) return { ratio: Math.exp(mean), low: NaN, high: NaN };
  const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const h = (T975[n - 1] ?? 2.0) * sd / Math.sqrt(n);
  return { ratio: Math.exp(mean), low: Math.exp(mean - h), high: Math.exp(mean + h) };
}

/** A runner outcome as an EvalResult: a fallback counts as failed (its custom kernel never ran), wrong outputs as a correctness failure. */
export function toEvalResult(m: CandidateOutcome, sizeIndex: number, where: { device: PythonDevice; deviceName?: string; torch: string | null; figure?: PythonFigure }): EvalResult {
  const f = m.file;
  const failedBuilds = (f?.loads ?? []).filter((l) => !l.ok).map((l) => `${l.name}: ${(l.error ?? '').split('\n')[0]}`);
  const python: PythonResultInfo = {
    guarantee: m.guarantee, label: m.label, correct: m.correct, correct1e2: m.correct1e2, customShare: m.customShare,
    device: where.device === 'cpu' ? 'cpu' : (where.deviceName ?? f?.device ?? 'cuda'), torch: f?.torch ?? where.torch,
    ownKernels: f?.own ?? [], topKernels: (f?.kernels?.kernels ?? []).slice(0, 5).map((k) => ({ name: k.name, us: k.us, source: k.source })),
    failedBuilds, flagsChanged: changedFlags(f), sandboxed: m.process.sandboxed, ...(m.process.sandboxProblem ? { sandboxProblem: m.process.sandboxProblem } : {}),
    ...(m.time?.gated ? { gpuMs: m.time.gated.deviceMedianMs } : {}),
    ...(typeof m.time?.hostCallMedianMs === 'number' ? { hostCallMs: m.time.hostCallMedianMs } : {}),
    ...(typeof m.time?.firstUse?.minMs === 'number' ? { firstUseMs: m.time.firstUse.minMs } : {}),
    ...(f?.referenceConstant?.constant ? { referenceConstant: true } : {}),
  };
  let failure: Failure | undefined;
  if (m.failure) failure = { kind: RUNNER_KIND[m.failure.kind] ?? (m.process.timedOut ? 'timeout' : 'runtime'), reason: `[${m.failure.kind}] ${m.failure.message.split('\n')[0]}`, log: m.failure.message.slice(0, 4000) };
  else if (m.label === 'fallback') failure = { kind: 'compile', reason: `fallback: its extension build failed (${failedBuilds.join('; ') || 'recorded by the runner'}) and what ran is its PyTorch fallback path — never counted as a custom kernel's time` };
  else if (m.correct === false) {
    const why = f?.checks?.find((c) => !c.ok)?.why ?? 'an output differs from the reference';
    failure = { kind: 'correctness', reason: `${why} (at KernelBench's tolerance; ${m.correct1e2 ? 'right' : 'wrong too'} at 1e-2)` };
  } else if (!m.time) failure = { kind: 'runtime', reason: `not timed: ${f?.timeSkipped ?? 'the runner gave no timing'}` };
  const compileFailed = failure?.kind === 'compile' || !f || f.stage === 'import' || f.stage === 'construct';
  const build: EvalResult['build'] = {
    ok: !compileFailed, arch: python.device, command: ['kd_candidate.py', 'measure'], resources: [],
    log: [...failedBuilds, m.process.tail].filter(Boolean).join('\n').slice(0, 8000), durationMs: Math.round((f?.buildS ?? 0) * 1000),
    ...(compileFailed && failure ? { failure } : {}),
  };
  const sandbox = m.process.sandboxed ? 'bubblewrap (no network, read-only file system but its folders)' : `none: ${m.process.sandboxProblem ?? 'not sandboxed'}`;
  const check: EvalResult['check'] | undefined = f?.checks?.length
    ? {
        ok: m.correct === true, checks: [], durationMs: 0,
        isolation: { refs: 'computed by PyTorch before any candidate code was imported (kd_candidate.py)', syscallFilter: 'none (python-in-process)', measurement: "in the candidate's own process (python-in-process)", sandbox },
        ...(failure?.kind === 'correctness' ? { failure } : {}),
      }
    : undefined;
  let timing: TimingResult[] | undefined;
  const t = m.time;
  if (t && !failure) {
    // per-call (a GPU run's default): the gated samples, each the larger of the GPU's own time and
    // its call's host time, with the runner's median of them; else the one-call samples
    const perCall = where.figure === 'per-call' && where.device === 'cuda' && typeof t.perCallMs === 'number' ? t.gated?.perCallSamplesMs : undefined;
    if (where.figure) python.figure = perCall?.length ? 'per-call' : 'one-call';
    if (perCall?.length) python.oneCallMs = t.medianMs;
    const samples = perCall?.length ? perCall : t.samplesMs?.length ? t.samplesMs : [t.medianMs];
    const ci = medianCI(samples);
    const avg = mean(samples);
    timing = [{
      size: sizeIndex, samplesMs: samples, eventMs: [], wallMs: [], l2FlushBytes: where.device === 'cuda' ? 256 << 20 : 0, ciLowMs: ci.low, ciHighMs: ci.high, relNoise: ci.relNoise, warmupCalls: 3,
      ...(perCall?.length
        ? {
            timer: 'events' as const, medianMs: t.perCallMs as number, meanMs: avg, minMs: Math.min(...perCall),
            timerNote: `per-call: each of ${perCall.length} gated samples is the larger of the GPU's own time (events behind a gate; the host clock less the gate where longer) and the host's time to issue that call; KernelBench's one-call median ${t.medianMs.toPrecision(4)} ms`,
            converged: Math.sqrt(mean(perCall.map((x) => (x - avg) ** 2))) / Math.max(avg, 1e-12) < 0.02, verifiedCalls: (t.verifiedCalls ?? 0) + (t.gated?.verifiedCalls ?? 0),
          }
        : { timer: t.timer, medianMs: t.medianMs, meanMs: t.meanMs, minMs: t.minMs, converged: t.rsd < 0.02, verifiedCalls: t.verifiedCalls }),
    }];
  }
  const source: EvalResult['source'] = where.device === 'cpu'
    ? { kind: 'cpu', what: `CPU, torch ${python.torch ?? '?'}` }
    : { kind: 'gpu', gpu: python.device };
  return { build, ...(check ? { check } : {}), ...(timing ? { timing } : {}), ...(failure ? { failure } : {}), source, python };
}
