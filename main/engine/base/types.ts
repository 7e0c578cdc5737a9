// Core data types shared by the engine, the front doors and (through the API contract) the renderer.
// Plain data only: everything here survives JSON.stringify/parse unchanged.

/** The failure vocabulary of the open auto-tuning results schema, plus `rejected` for screening. */
export type FailureKind = 'compile' | 'runtime' | 'timeout' | 'correctness' | 'constraints' | 'rejected';

export interface Failure {
  kind: FailureKind;
  /** One line a kernel engineer can act on, e.g. "y[1023]: expected 0.25 got NaN (size 1, seed 2)". */
  reason: string;
  /** The relevant compiler/runtime log, truncated to a sane size. */
  log?: string;
}

/** Tunable values as they reach the source as `#define`s. */
export type Config = Record<string, number>;

/** nvcc choices a variant carries besides tunables. */
export interface BuildFlags {
  /** Optimisation level passed as -O (host) and -Xptxas -O (device). Default 3. */
  opt?: 0 | 1 | 2 | 3;
  fastMath?: boolean;
  maxrregcount?: number;
  /** -Xptxas -dlcm=ca|cg */
  dlcm?: 'ca' | 'cg';
  /** Extra raw flags (user-supplied variants only). */
  extra?: string[];
}

/** Per-kernel resource usage reported by `ptxas -v`. */
export interface KernelResources {
  /** Demangled when possible. */
  name: string;
  registers: number;
  sharedBytes: number;
  constantBytes: number;
  stackBytes: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
}

export interface BuildResult {
  ok: boolean;
  /** Absolute path of the built shared library when ok. */
  libPath?: string;
  arch: string;
  /** The exact nvcc command line. */
  command: string[];
  resources: KernelResources[];
  /** Compiler output (warnings too). */
  log: string;
  durationMs: number;
  failure?: Failure;
  /** Build-cache hit. */
  cached?: boolean;
}

/** One buffer's comparison against the reference for one size and seed. */
export interface BufferCheck {
  buffer: string;
  size: number;
  seed: number;
  elements: number;
  mismatches: number;
  maxAbsErr: number;
  maxRelErr: number;
  /** ||got-exp|| / ||exp|| */
  relL2: number;
  firstBad?: { index: number; expected: number; got: number };
}

/**
 * Where the judge got a variant's executor (the process that runs its device code): kept idle with
 * the variant loaded, a spare started ahead with its CUDA context up, a spare still making its
 * context (the wait is in the caller's time), or a new process.
 */
export type ExecutorFrom = 'idle' | 'spare' | 'spare-starting' | 'new';

export interface CheckResult {
  ok: boolean;
  checks: BufferCheck[];
  /** The check's executor, where the judge reports it (judges from 2026-12-08 on): where it came from and how long getting it took (ms). */
  executor?: { from: ExecutorFrom; ms: number };
  /** As the harness reported it for this run: where the references and the measurement were (processes that run no variant code), the capture process's system-call filter and sandbox. */
  isolation?: { refs: string; syscallFilter: string; measurement?: string; sandbox?: string; writes?: string };
  failure?: Failure;
  durationMs: number;
}

/** How the samples were taken: device events around the call on the legacy default stream
 * (which also waits for work on blocking streams) or, when work escaped that stream, host wall time
 * around the call plus a whole-device synchronise. */
export type TimerKind = 'events' | 'wall';

export interface ClockReading {
  smMHz: number | null;
  memMHz: number | null;
  tempC: number | null;
  powerW: number | null;
}

export interface TimingResult {
  /** Index of the size in the manifest. */
  size: number;
  /** Every raw sample, milliseconds (the ones the timer chose). */
  samplesMs: number[];
  /** Event-timed and wall-timed samples, both kept. */
  eventMs: number[];
  wallMs: number[];
  timer: TimerKind;
  /** Why the wall timer was used, when it was. */
  timerNote?: string;
  medianMs: number;
  meanMs: number;
  minMs: number;
  /** 95% confidence interval of the median (order statistics). */
  ciLowMs: number;
  ciHighMs: number;
  /** Half-width of the median's CI over the median. */
  relNoise: number;
  converged: boolean;
  warmupCalls: number;
  /** Timed calls whose outputs were verified against the reference (chosen at random, and the last). */
  verifiedCalls?: number;
  /**
   * Where the timing's wall time went besides the samples, as the judge reports it (judges from
   * 2026-12-08 on): allocating the buffer sets and the warm-up calls before the samples (setupMs),
   * the whole sampling loop (timedMs), and within it the verified calls' reference runs and
   * comparisons (verifyMs). A slow reference makes verifyMs most of a fast variant's timing (histogram's
   * naive one did, H100, 2026-12-07).
   */
  setupMs?: number;
  verifyMs?: number;
  timedMs?: number;
  /**
   * Sets of buffers the timed calls rotated over (call i on set i mod bufferSets), as the judge
   * reports; with `contexts` executors, every (executor, set) pair counts as one.
   */
  bufferSets?: number;
  /** Executors (CUDA contexts) the timed calls rotated over, call i on executor i mod contexts; absent: one. */
  contexts?: number;
  /** Each buffer set's median (with 2 or more sets; measure/stats.ts setSpread). */
  perSetMedianMs?: number[];
  /**
   * sd of the per-set medians' mean over the median: the placements' share of the median's
   * uncertainty, which relNoise (samples taken as independent) does not hold and more samples do
   * not shrink (setSpread).
   */
  setRelSd?: number;
  /**
   * Set when the timing stopped early at a cutoff (EvaluateOptions.cutoffMs, a multiple of the best's
   * median): the lower bound of the median's CI had passed it, so the variant is decidedly that much
   * slower. Its median is what its samples say, but from fewer of them than a converged timing's.
   */
  cutoffMs?: number;
  l2FlushBytes: number;
  clocksStart?: ClockReading;
  clocksEnd?: ClockReading;
}

export type Verdict = 'faster' | 'slower' | 'same' | 'unsure';

/** A paired, interleaved measurement of A against B in one process. */
export interface DuelResult {
  size: number;
  /**
   * Before the first timed size's set-up (on that size's entry; judges from 2026-12-08 on): where
   * both executors came from, how long getting them took, and the wait for the spares' contexts (ms).
   */
  start?: { a: ExecutorFrom; b: ExecutorFrom; executorsMs: number; sparesWaitMs: number };
  /** As Timing's: the duel's buffer sets and warm-up, its pairs' loop, and the verified pairs' reference runs within it. */
  setupMs?: number;
  verifyMs?: number;
  timedMs?: number;
  aMs: number[];
  bMs: number[];
  /** Speedup of A over B: median over pairs of tB/tA, with a 95% CI. */
  ratio: number;
  ratioLow: number;
  ratioHigh: number;
  verdict: Verdict;
  timer: TimerKind;
  pairs: number;
  /** Buffer sets the pairs rotated over (pair i on set i mod sets of each side), as the judge reports. */
  sets?: number;
  /**
   * sd of the per-set median ratios' mean over the ratio: the placements' share of the ratio's
   * uncertainty, which its CI (pairs taken as independent) does not hold (stats.ts setSpread).
   * Reported only: the verdict is the CI's.
   */
  setRelSd?: number;
  /**
   * The 95% interval over the pairs *and* the buffer placements (stats.ts intervalWithPlacements,
   * with setRelSd), where the duel has sets. Reported only: the verdict is the pairs' interval's
   * (the confirmation's tie duels judge by this one). Self duels on an H100 (2026-12-07) missed 1
   * less often with it, but a placement-sensitive configuration's side bias fooled both intervals
   * alike, so the search's verdicts were left as they are; the bias itself came from the large
   * buffers' fixed places and is gone with every buffer placed at random (TimingSettings.spreadLarge).
   */
  placementsLow?: number;
  placementsHigh?: number;
  /**
   * Set when this duel ran with a capture beside it (captureBesideDuels), failed, and was run again
   * with the GPU alone: the first attempt's failure. The figures are the second attempt's.
   */
  ranAloneAfter?: string;
}

/** Where a measurement came from: a real GPU, or answered from a recorded space (always labelled). */
export type MeasurementSource =
  | { kind: 'gpu'; gpu: string; uuid?: string }
  /** simulatedGpu: answered by one simulated GPU of a REPLAY pool (main/engine/measure/simulated-gpus.ts), never a real one. */
  | { kind: 'replay'; recording: string; simulatedGpu?: { index: number; uuid: string } }
  /** Timed on the CPU (a Python candidate run with a torch that has no CUDA, e.g. Debian's
   * python3-torch): CPU times, always labelled CPU, never a GPU's figure. `what`: the device and torch. */
  | { kind: 'cpu'; what: string }
  | { kind: 'none' };

/** One GPU of a run's pool as the workbench and the CLI show it (main/engine/search/pool.ts). */
export interface GpuActivity {
  /** The lane's id in the pool, e.g. `gpu1` (or `sim1` for a simulated GPU of a REPLAY pool). */
  id: string;
  index: number;
  uuid: string;
  name: string;
  /** busy: measuring a variant (or its duel); removed: taken out of the pool after a fault. */
  state: 'idle' | 'busy' | 'removed';
  /** The variant being measured, when busy. */
  variantId: string | null;
  /** Results this GPU measured (the baseline included). */
  evaluated: number;
  /** Evaluations per minute since the pool started. */
  evalsPerMinute: number | null;
  /** Share of the pool's wall time this GPU spent measuring. */
  busyFraction: number | null;
  /** Why it was removed. */
  removedReason?: string;
  /** True for a simulated GPU of a REPLAY pool. */
  simulated?: boolean;
}

/** A confirmation's duel of its best (A) against a variant tied with it (B): interleaved pairs in one process with the precise timing (engine/session/confirm.ts). */
export interface TieDuel {
  variantId: string;
  /**
   * The best's speed over the tied variant's (> 1: the best is faster), median over pairs, and its
   * 95% interval over the pairs and the placements (the pairs' interval widened by `setRelSd`).
   */
  ratio: number;
  ratioLow: number;
  ratioHigh: number;
  /** The pairs' own 95% interval (pairs taken as independent, as the duel's verdict in a search). */
  pairsLow: number;
  pairsHigh: number;
  /** The best against the tied variant, from the interval over pairs and placements: 'faster' (the best is faster), 'slower', 'same', 'unsure'. */
  verdict: Verdict;
  pairs: number;
  /** The buffer placements' share of the ratio's uncertainty (relative sd), when the judge reported it (DuelResult.setRelSd). */
  setRelSd?: number;
  at: string;
}

/** One variant's line of a session's confirmation (kernelduel confirm: engine/session/confirm.ts): the search's median beside the precise one. */
export interface ConfirmLine {
  variantId: string;
  origin: string;
  /** The search's median (timing[0]) when it was measured; null when it was not timed. */
  searchMs: number | null;
  /** The confirmation's median (timing[0]), null when it failed. */
  ms: number | null;
  /** The confirmation median's 95% interval (its samples taken as independent). */
  ciLowMs: number | null;
  ciHighMs: number | null;
  /**
   * The buffer placements' share of that median (relative sd of the per-placement medians' mean:
   * TimingResult.setRelSd), which the interval leaves out and which decides how far a fresh
   * process's median may land; null when unknown (one placement, or failed).
   */
  placementSd: number | null;
  /** Precise baseline / precise variant (>1: faster), null without both. */
  speedup: number | null;
  /**
   * Bounds of that ratio: from the two medians' 95% intervals (baseline low / variant high .. baseline
   * high / variant low), widened by what fresh precise timings of the two spread, which an interval
   * of one process leaves out (engine/session/confirm.ts reproducibilityOf: at least
   * PRECISE_REPRODUCIBILITY, more where their buffer placements run apart).
   */
  speedupLow: number | null;
  speedupHigh: number | null;
  /** Why the confirmation has no time (it failed its check, its build, the GPU...). */
  failure: string | null;
  /** When it was confirmed (journal time). */
  at: string;
}

export interface EvalResult {
  build: BuildResult;
  check?: CheckResult;
  timing?: TimingResult[];
  failure?: Failure;
  source: MeasurementSource;
  /** Build-only evaluation (no GPU present). */
  compileOnly?: boolean;
  /**
   * Where the evaluation's wall time went, in milliseconds (live GPU evaluations): waiting for the
   * GPU queue, the sandboxed capture process (start, CUDA context, the variant's host code), the
   * judge's check (executor start, every size and seed) and its timing.
   */
  stages?: {
    queuedMs: number; captureMs: number; checkMs: number; timeMs: number;
    /**
     * The capture process's own phases (see capturePhases in measure/evaluate.ts), also when it ran
     * ahead of the evaluation beside other work (captureMs is then the wait for it, often 0).
     */
    captureStartMs?: number; captureContextMs?: number; captureLockdownMs?: number; captureRuntimeCodeMs?: number;
    /** A gated capture process (EvaluatorOptions.captureGate) waiting, ready, for its place on the GPU: outside it, beside other work. */
    captureWaitMs?: number; captureLoadMs?: number;
    captureBuffersMs?: number; captureCallsMs?: number; captureWriteMs?: number; captureExitMs?: number;
    /** Parts of timeMs, summed over the timed sizes (Timing.setupMs, verifyMs): the buffer sets and warm-up, and the verified calls' reference runs. */
    timeSetupMs?: number; timeVerifyMs?: number;
    /** Part of checkMs: getting the check's executor (CheckResult.executor). Part of timeMs: waiting for the judge's spare executors' contexts before the first size's set-up. */
    checkExecMs?: number; timeSparesWaitMs?: number;
  };
  /** Set for a Python (`ModelNew`) candidate judged by resources/python/kd_candidate.py (docs/PYTHON-CANDIDATES.md). */
  python?: PythonResultInfo;
  /**
   * Set when CUDA-L1's re-measure rule measured a suspicious speedup again in a fresh process
   * (search/llm.ts remeasureIfSuspicious): both medians (the second null when that run failed) and
   * how far apart they are.
   */
  remeasured?: { firstMedianMs: number; secondMedianMs: number | null; relDiff?: number };
}

/**
 * The figure a Python candidate's timing holds, what an optimisation run ranks and duels by:
 * - `per-call`: per gated sample, the larger of the GPU's own time (behind a gate, so Python's launch
 *   is left out) and the host's time to issue the call: one call's cost when calls follow each other.
 *   On the H200 eager's GPU time reproduced within 10% across processes for 151 of 153 CUDA-L1
 *   references, against 67 of 153 for the one-call figure (bench/results/h200-cuda-l1-audit.md).
 * - `one-call`: KernelBench's figure, one call after a device synchronise with Python's launch of
 *   every kernel inside it; for short forwards it moved 2-4x between processes (h200-eager-noise.md).
 * On the CPU the two are the same thing (there is no gate), and the timing is the one-call figure.
 */
export type PythonFigure = 'per-call' | 'one-call';

/** What stands behind a Python candidate's result, beside the usual build / check / timing. */
export interface PythonResultInfo {
  guarantee: GuaranteeLevel;
  label: CandidateLabel;
  /** Correct at KernelBench's tolerance (fp32 1e-4) / at 1e-2; null: not reached. */
  correct: boolean | null;
  correct1e2: boolean | null;
  /** Share of device time in kernels compiled from its own source (null: not recorded, e.g. on the CPU). */
  customShare: number | null;
  /** `cpu`, or the GPU's name. */
  device: string;
  torch: string | null;
  /** Kernels its source defines (__global__, @triton.jit). */
  ownKernels: string[];
  topKernels: Array<{ name: string; us: number; source: string }>;
  /** load_inline / load builds that failed (name: first line of the error). */
  failedBuilds: string[];
  /** Precision flags it changed at import (`name: before -> after`). */
  flagsChanged: string[];
  /** The runner ran inside bubblewrap (false: `sandboxProblem` says why not). */
  sandboxed: boolean;
  sandboxProblem?: string;
  /**
   * The GPU's own time for the call (samples behind a gate: Python's launch left out) and the
   * host's time to issue it, at the first timed size (runners from 2026-12-02, GPU only). Where the
   * GPU time is well under the median, the median is mostly Python's launch time and moves from
   * process to process.
   */
  gpuMs?: number;
  hostCallMs?: number;
  /** The fastest call on input sets it had never seen (a cache of results cannot lower it). */
  firstUseMs?: number;
  /**
   * Which figure the timing holds (PythonFigure): `per-call` (the default of runs since 2026-12-02
   * on a GPU) or KernelBench's `one-call`; with per-call, oneCallMs is KernelBench's figure beside it.
   */
  figure?: PythonFigure;
  oneCallMs?: number;
  /** The reference gave the same outputs for every input set: a constant passes every check. */
  referenceConstant?: boolean;
}

/** A candidate kernel: source plus everything needed to rebuild it exactly. */
export interface VariantSpec {
  /** Full CUDA source of the variant. */
  source: string;
  config: Config;
  flags: BuildFlags;
  /** Source transforms applied (issue 3), for features and the UI. */
  transforms?: string[];
  /** Who proposed it. */
  origin: 'baseline' | 'user' | 'random' | 'policy' | 'llm' | 'anneal' | 'genetic' | 'exhaustive' | string;
}

export interface VariantRecord extends VariantSpec {
  id: string;
  parents: string[];
  createdAt: string;
}

/** An NVIDIA GPU as detection reports it (nvidia-smi, else systeminformation). */
export interface GpuInfo {
  index: number;
  name: string;
  uuid: string;
  /** "9.0"; '' when unknown. */
  computeCapability: string;
  /** "sm_90"; '' when unknown. */
  arch: string;
  memoryTotalMiB: number;
  smClockMHz: number | null;
  memClockMHz: number | null;
  maxSmClockMHz: number | null;
  maxMemClockMHz: number | null;
  driverVersion: string;
}

/** What a test of the LLM provider's settings found (the key itself never appears here). */
export interface ConnectionReport {
  ok: boolean;
  baseURL: string;
  model: string;
  /** Models the server lists, when it lists them. */
  models?: string[];
  modelListed?: boolean;
  /** The reply to a one-word test prompt. */
  reply?: string;
  latencyMs: number;
  error?: { kind: string; message: string; status?: number };
}

// ------------------------------------------------------------------ Python (ModelNew) candidates

/**
 * How much of the measurement-truth design (docs/ISOLATION.md) stands behind a result. `isolated`:
 * the CUDA harness (capture / executor / judge: no untrusted host code where numbers are made).
 * `python-in-process`: a KernelBench-style Python candidate run by resources/python/kd_candidate.py,
 * whose host code runs in the measuring process (docs/PYTHON-CANDIDATES.md). `trusted-python`: the
 * task's own PyTorch Model (eager, torch.compile) timed by that runner, no candidate code in the
 * process (the PyTorch baselines). Never rank them side by side without the label.
 */
export type GuaranteeLevel = 'isolated' | 'python-in-process' | 'trusted-python';

/** What held and what did not, per level (kd_candidate.py's GUARANTEE carries the same lists; a test keeps them equal). */
export const GUARANTEE_LEVELS: Record<GuaranteeLevel, { title: string; holds: readonly string[]; doesNotHold: readonly string[] }> = {
  isolated: {
    title: 'the CUDA harness: no untrusted host code runs where numbers are made',
    holds: ['every guarantee of docs/ISOLATION.md'],
    doesNotHold: ['what docs/ISOLATION.md lists under "What is not promised"'],
  },
  'python-in-process': {
    title: "the candidate's host code runs in the measuring process",
    holds: [
      'sizes and inputs come from the problem file, drawn under fresh seeds the candidate never saw before it ran',
      'reference outputs are computed before any candidate code is imported',
      "every output element is checked; on CUDA the caching allocator's free memory is poisoned (NaN) before every check",
      '1 in 8 timed calls and the last are verified against the reference',
      'every output of every call is a plain tensor whose storage holds all its elements (no subclass or lazy tensor that computes when read)',
      "every output has the reference's dtype and device",
      'the functions the checks and the timing call (torch.isclose and kin, tensor methods, CUDA events, the clock) are the same objects after the import, the construction, the checks and the timing',
      "the GPU's own time (samples behind a gate) is reported beside the one-call time, with the host's time to issue the call",
      'calls on input sets never seen before are timed once each among the samples and verified; samples costing under half of those fail (a cache of results), when other never-seen sets at the end say so too',
      'each sample flushes L2 and ends with a device-wide synchronise, cross-checked with the host clock (work on other streams is counted)',
      'the kernels launched are recorded; a candidate whose own kernels did no work is labelled, not reported as a custom kernel',
    ],
    doesNotHold: [
      "the candidate's host code runs in the measuring process: it could patch the timer, torch, the checker or the runner's memory (the CUDA harness's capture/executor/judge split does not exist here)",
      'timed calls reuse a few input sets (fresh copies): a cache keyed on input contents is caught only where it makes them cost under half of calls on first-seen inputs (5 sets, fewer where their memory would pass 4 GiB)',
      'no system-call filter or Landlock (the CUDA harness has them); the bubblewrap sandbox only where bwrap works (each result says)',
      'the result file is written by the process that ran candidate code',
    ],
  },
  'trusted-python': {
    title: "trusted PyTorch code (the task's own Model, eager or torch.compile) timed by the Python runner: no candidate code runs in that process",
    holds: [
      'sizes and inputs come from the problem file, weights from Model(*get_init_inputs()) under a fixed seed',
      'each sample flushes L2 and ends with a device-wide synchronise, cross-checked with the host clock (the same timing method as Python candidates)',
      'no candidate code is imported or run in the process that times it',
    ],
    doesNotHold: [
      'not the CUDA harness: the forward is timed from Python, its host overhead counted (as KernelBench counts it)',
      'timed calls reuse a few input sets (fresh copies)',
    ],
  },
};

/**
 * A one-call time is host-bound when the GPU's own time for the call (samples behind a gate) is
 * under this share of it: the rest is Python launching kernels, which moved 2-4x from process to
 * process on the H200 (bench/results/h200-eager-noise.md). The one rule for every place that says so.
 */
export const HOST_BOUND_GPU_SHARE = 0.8;
export function isHostBound(gpuMs: number | null | undefined, oneCallMs: number | null | undefined): boolean {
  return typeof gpuMs === 'number' && typeof oneCallMs === 'number' && gpuMs < HOST_BOUND_GPU_SHARE * oneCallMs;
}

/** One PyTorch baseline's time (kd_candidate.py `baseline`): its median, the clock that made it and the samples it was taken from. */
export interface PytorchBaselineTime {
  medianMs: number;
  timer: 'events' | 'wall';
  samples: number;
  /**
   * The GPU's own time for the call (samples behind a gate, so Python's launch time is left out),
   * and the host's time to issue the call. For a short forward medianMs is mostly the host's and
   * moves from process to process; this does not. Absent in records before 2026-12-02 and on the CPU.
   */
  gpuMs?: number;
  hostCallMs?: number;
  /**
   * The per-call figure (PythonFigure): the median over gated samples of the larger of the GPU's own
   * time and that call's host time. What a Python-candidate run ranked per-call is compared with.
   */
  perCallMs?: number;
}

/**
 * How a precise timing's samples were spread, in words: "16 placements in 4 executors". `bufferSets`
 * already counts every executor's sets together, so it is not written as a product ("4 executors ×
 * 16 placements" read as 64). Shared by the exported .cu header and the Export view.
 */
export function placementsInExecutors(bufferSets: number | null | undefined, contexts: number | null | undefined): string {
  const n = bufferSets ?? 1;
  const k = contexts ?? 1;
  return `${n} placement${n === 1 ? '' : 's'} in ${k} executor${k === 1 ? '' : 's'}`;
}

/** A baseline's time by the figure a session ranks by (per-call or one-call; absent: one-call). Null: none recorded, e.g. per-call in a record from before 2026-12-02. */
export function baselineFigureMs(b: { figure?: PythonFigure }, t: PytorchBaselineTime | null | undefined): number | null {
  if (!t) return null;
  return b.figure === 'per-call' ? (t.perCallMs ?? null) : t.medianMs;
}

/**
 * The PyTorch baselines of a PyTorch-reference task, measured once per optimisation session at the
 * task's timed size on the run's device (journal event `pytorch-baselines`). Eager is always asked
 * for, torch.compile where this torch has it; a time that is missing says why (`compileNote`,
 * `failure`), and is never replaced by a guess. `device` cpu: CPU times, labelled so everywhere.
 */
export interface PytorchBaselines {
  /** The task's size index they were timed at (its first timed size). */
  size: number;
  device: 'cuda' | 'cpu';
  /** The GPU's name, or 'cpu'. */
  deviceName: string;
  torch: string | null;
  guarantee: GuaranteeLevel;
  eager: PytorchBaselineTime | null;
  compile: (PytorchBaselineTime & { compileS: number }) | null;
  /** Why torch.compile has no time (e.g. "torch 1.13.1 has no torch.compile", "no CUDA"); null when it has one. */
  compileNote: string | null;
  /** Why the measurement gave no eager time (it failed, or was not made); the session went on. */
  failure: string | null;
  measuredAt: string;
}

/**
 * What a Python candidate's forward ran: `custom` (kernels compiled from its own source did some of
 * the device work), `pytorch-only` (none of its own kernels ran and nothing failed: a PyTorch
 * rewrite), `fallback` (an extension of its failed to build or load and what ran is its fallback
 * path), `failed` (no outputs: import, build, construction or the forward failed), `unprofiled` (it
 * ran, but no kernel record exists: CPU, or the profiler failed).
 */
export type CandidateLabel = 'custom' | 'pytorch-only' | 'fallback' | 'failed' | 'unprofiled';
export const CANDIDATE_LABELS: readonly CandidateLabel[] = ['custom', 'pytorch-only', 'fallback', 'failed', 'unprofiled'];
