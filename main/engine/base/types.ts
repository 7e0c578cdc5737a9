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

export interface CheckResult {
  ok: boolean;
  checks: BufferCheck[];
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
  l2FlushBytes: number;
  clocksStart?: ClockReading;
  clocksEnd?: ClockReading;
}

export type Verdict = 'faster' | 'slower' | 'same' | 'unsure';

/** A paired, interleaved measurement of A against B in one process. */
export interface DuelResult {
  size: number;
  aMs: number[];
  bMs: number[];
  /** Speedup of A over B: median over pairs of tB/tA, with a 95% CI. */
  ratio: number;
  ratioLow: number;
  ratioHigh: number;
  verdict: Verdict;
  timer: TimerKind;
  pairs: number;
}

/** Where a measurement came from: a real GPU, or answered from a recorded space (always labelled). */
export type MeasurementSource = { kind: 'gpu'; gpu: string; uuid?: string } | { kind: 'replay'; recording: string } | { kind: 'none' };

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
  stages?: { queuedMs: number; captureMs: number; checkMs: number; timeMs: number };
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
