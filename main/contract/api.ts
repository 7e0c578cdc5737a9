// The one API between KernelDuel's engine and its user interfaces. The Electron IPC transport and the
// browser's WebSocket transport both carry exactly these methods and events; every argument is
// validated against its schema at the boundary (main/core/dispatch.ts) before the engine sees it.
// Importable by the renderer: no Node imports here, only zod and plain types.
import { z } from 'zod';
import type { BuildFlags, CandidateLabel, Config, ConfirmLine, ConnectionReport, DuelResult, EvalResult, FailureKind, GpuActivity, GpuInfo, GuaranteeLevel, KernelResources, MeasurementSource, PythonFigure, PytorchBaselines, TieDuel, VariantRecord, Verdict } from '../engine/base/types.js';
import type { MethodName } from './methods.js';
import type { SessionPayload } from './session-payload.js';
// Every result says how much of the measurement-truth design stands behind it: `isolated` (the CUDA
// harness) or `python-in-process` (a Python ModelNew candidate; docs/PYTHON-CANDIDATES.md), and a
// Python candidate's label says whose kernels did the work.
export { GUARANTEE_LEVELS, CANDIDATE_LABELS, type GuaranteeLevel, type CandidateLabel } from '../engine/base/types.js';
import { LlmSettingsSchema, type LlmSettings } from '../engine/llm/settings.js';

export { METHOD_NAMES, isMethodName, type MethodName } from './methods.js';
export { decodeSession, encodeSession, compactRow, rooflinePoint, speedupOf, timelineOf, type SessionPayload, type VariantColumns } from './session-payload.js';
export { baselineFigureMs, isHostBound, placementsInExecutors } from '../engine/base/types.js';
/** The LLM provider settings' schema: the renderer validates its settings form with it. */
export { LlmSettingsSchema, type LlmSettings };
/** A pool run's GPU as the workbench shows it (RunState.gpus). */
export type { GpuActivity };

// ---------------------------------------------------------------------------------------------- argument schemas

/** Session ids are folder names: no separators, no leading dot. */
const SessionId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'not a session id');
/** Variant ids are short journal ids (v12) or anything a strategy issued, never a path. */
const VariantId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'not a variant id');
/** A task id: a built-in task's name, or the id tasks.open returned for a folder. */
const TaskId = z.string().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'not a task id');
const TaskFile = z.enum(['kernel', 'reference', 'manifest']);
const ConfigSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.number().finite());
const FlagsSchema = z.strictObject({
  opt: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
  fastMath: z.boolean().optional(),
  maxrregcount: z.number().int().min(16).max(255).optional(),
  dlcm: z.enum(['ca', 'cg']).optional(),
});
const Source = z.string().max(2_000_000);
const Empty = z.strictObject({}).optional();

export const ParamSchemas = {
  'env.describe': Empty,
  'tasks.list': Empty,
  'tasks.get': z.strictObject({ taskId: TaskId }),
  'tasks.open': z.strictObject({ dir: z.string().min(1).max(4096) }),
  'tasks.validateManifest': z.strictObject({ text: z.string().max(1_000_000) }),
  'tasks.readFile': z.strictObject({ taskId: TaskId, file: TaskFile }),
  'tasks.saveFile': z.strictObject({ taskId: TaskId, file: TaskFile, text: Source }),
  /**
   * Another tuner's recorded results uploaded from the workbench (a Kernel Tuner cache, .json or
   * .json.gz, or a T4 results file), written as a REPLAY-only task to $KERNELDUEL_HOME/spaces/<gpu>/<name>.json
   * (where `kernelduel import` writes and the task list looks); an existing space of that name is
   * replaced only with `replace`. The file travels base64-encoded inside one message (at most 8 MiB).
   */
  'spaces.import': z.strictObject({
    fileName: z.string().min(1).max(255).regex(/^[^/\\]+$/, 'a file name, not a path'),
    contentBase64: z.string().min(1).max(11_000_000),
    name: z.string().min(1).max(64).regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _').optional(),
    gpuName: z.string().min(1).max(200).optional(),
    replace: z.boolean().optional(),
  }),
  'eval.build': z.strictObject({ taskId: TaskId, source: Source, config: ConfigSchema.optional(), flags: FlagsSchema.optional() }),
  // precise: the precise timing (engine/measure/harness.ts PRECISE_TIMING: at least 2.5 s over 4 executors), for a final figure.
  'eval.run': z.strictObject({ taskId: TaskId, source: Source, config: ConfigSchema.optional(), flags: FlagsSchema.optional(), gpu: z.number().int().min(0).nullable().optional(), precise: z.boolean().optional() }),
  'runs.list': Empty,
  'runs.start': z.strictObject({
    task: TaskId,
    /** Strategies llm and mixed use the saved LLM settings (llm.saveSettings). */
    strategy: z.string().min(1).max(64).regex(/^[a-z0-9][a-z0-9_-]*$/, 'not a strategy name'),
    budget: z.number().int().min(0).max(100_000),
    /** GPU index, or null for compile-only (or replay, or a pool). */
    gpu: z.number().int().min(0).nullable(),
    /** One run on a pool of GPUs of one model: every usable GPU, or these indices (with gpu null). */
    gpus: z.union([z.literal('all'), z.array(z.number().int().min(0)).min(1).max(64)]).optional(),
    seed: z.number().int().min(0).max(2 ** 31).optional(),
    /** A recorded space to replay (strategies that replay). */
    recording: z.string().max(4096).optional(),
    /** With a recording: replay it on this many SIMULATED GPUs (a demo and test of pool runs; labelled REPLAY). */
    simulateGpus: z.number().int().min(1).max(16).optional(),
    /** A PyTorch-reference task: time its eager / torch.compile baselines once before the search (default true). */
    pytorchBaselines: z.boolean().optional(),
  }),
  'runs.pause': z.strictObject({ sessionId: SessionId }),
  'runs.resume': z.strictObject({ sessionId: SessionId }),
  'runs.stop': z.strictObject({ sessionId: SessionId }),
  'sessions.list': Empty,
  'sessions.get': z.strictObject({ id: SessionId }),
  /** Best-so-far curves of the baseline strategies replayed on the recording a REPLAY session used. */
  'sessions.baselines': z.strictObject({ id: SessionId }),
  /** A session's log rebuilt from its journal (what the run said as it went), for a session opened after its run. */
  'sessions.log': z.strictObject({ id: SessionId }),
  // The session's baseline and `top` (default 3) fastest variants measured again with the precise timing (kernelduel confirm).
  'sessions.confirm': z.strictObject({ id: SessionId, top: z.number().int().min(1).max(50).optional(), gpu: z.number().int().min(0).optional() }),
  'variants.get': z.strictObject({ sessionId: SessionId, variantId: VariantId }),
  /** The variant's PTX and SASS: built here (compile-only, the build cache) and disassembled with the CUDA toolkit's cuobjdump. */
  'variants.code': z.strictObject({ sessionId: SessionId, variantId: VariantId }),
  'variants.compare': z.strictObject({ sessionId: SessionId, a: VariantId, b: VariantId }),
  'export.variant': z.strictObject({ sessionId: SessionId, variantId: z.union([z.literal('best'), VariantId]) }),
  'export.report': z.strictObject({ sessionId: SessionId, format: z.enum(['md', 'html', 'json']) }),
  'llm.getSettings': Empty,
  /** The key travels only here, only in the desktop app (to the OS keychain); it never comes back. */
  'llm.saveSettings': z.strictObject({ settings: LlmSettingsSchema, apiKey: z.string().min(1).max(4096).optional(), clearApiKey: z.boolean().optional() }),
  /**
   * Tests the saved settings with the saved key, or unsaved settings: with the key given here, else
   * with the saved key only when they keep the saved base URL and key variable (main/engine/llm/connection-test.ts).
   */
  'llm.testConnection': z.strictObject({ settings: LlmSettingsSchema.optional(), apiKey: z.string().min(1).max(4096).optional() }).optional(),
  /** The prompt the LLM policy would send next for a task (with a session: drawn from its measured variants). */
  'llm.previewPrompt': z.strictObject({ taskId: TaskId, sessionId: SessionId.optional() }),
} as const satisfies Record<MethodName, z.ZodType>;

export type Params<M extends MethodName> = z.input<(typeof ParamSchemas)[M]>;

// ---------------------------------------------------------------------------------------------- result types

export interface StrategyInfo {
  name: string;
  description: string;
  /** Answers from a recorded space instead of the GPU: results are labelled REPLAY. */
  replay: boolean;
}

export interface EnvDTO {
  host: { cpu: string; cores: number; memTotalBytes: number; os: string; hostname: string };
  gpus: GpuInfo[];
  gpuSource: string;
  driverVersion: string | null;
  toolchain: { nvcc: string | null; version: string | null; targets: string[]; cudaHome: string | null };
  canCompile: boolean;
  canRun: boolean;
  /** What works here, in sentences (from the engine). */
  messages: string[];
  strategies: StrategyInfo[];
  /** The transport serving this UI. */
  mode: 'electron' | 'browser';
}

export interface ManifestIssueDTO {
  field: string;
  message: string;
  line?: number;
}

export interface TaskSummary {
  id: string;
  name: string;
  description: string;
  dir: string;
  builtin: boolean;
  /** Valid configurations of the tunables; null when they cannot be enumerated. */
  spaceSize: number | null;
  /** Set when some configurations lie in islands no one-tunable step reaches from the baseline's (main/engine/task/reach.ts): says how many and which values. */
  spaceNote?: string;
  tunables: Record<string, number[]>;
  /** Recorded spaces of this task (for replay runs), absolute paths. */
  recordings: string[];
  /** Set for a recorded space without kernel source (imported from another tuner): it can only be
   * replayed; says where it came from. */
  replayOnly?: string;
  /** Why the task does not load (the others fields are then partial). */
  error?: string;
  issues?: ManifestIssueDTO[];
}

/** The configurations of a recorded space as measured when it was recorded (no GPU runs to show it). */
export interface RecordedTable {
  gpu: string;
  configurations: number;
  failed: number;
  /** What each row's time is: the median of its samples (KernelDuel's recordings) or Kernel Tuner's objective `time`, the mean of its samples, kept as recorded. */
  time: 'median' | 'mean (Kernel Tuner time)';
  /** The fastest configurations (at most RECORDED_TABLE_ROWS), fastest first; ofBest = best time / this time (`medianMs` holds `time`). */
  fastest: Array<{ config: Config; medianMs: number; ofBest: number; baseline: boolean }>;
  /** The baseline's row when it is not among the fastest (null when it was not recorded or failed). */
  baseline: { config: Config; medianMs: number; ofBest: number; rank: number } | null;
}
export const RECORDED_TABLE_ROWS = 25;

export interface TaskDetail extends TaskSummary {
  /** Built-in tasks are read-only (they ship with the app). */
  readOnly: boolean;
  files: { manifest: string; kernel: string; reference: string };
  manifestText: string;
  kernel: string;
  reference: string;
  entrySignature: string | null;
  /** The reference is a PyTorch module (`reference` is its Python source, read-only): the task takes
   * Python candidates (ModelNew) as well as CUDA entry points. */
  pytorch?: boolean;
  defaults: Config;
  sizes: Array<Record<string, number>>;
  /** A recorded space without kernel source (replayOnly): what its recording holds, fastest first. */
  recorded?: RecordedTable;
}

export interface CompilerMessageDTO {
  line: number;
  column?: number;
  severity: 'error' | 'warning';
  message: string;
}

export interface BuildOutcome {
  ok: boolean;
  arch: string;
  command: string[];
  messages: CompilerMessageDTO[];
  resources: KernelResources[];
  log: string;
  durationMs: number;
  cached: boolean;
  failure?: { kind: FailureKind; reason: string };
}

export type RunPhase = 'starting' | 'running' | 'paused' | 'stopping' | 'stopped' | 'finished' | 'failed';

export interface RunState {
  sessionId: string;
  task: string;
  strategy: string;
  budget: number;
  evaluated: number;
  phase: RunPhase;
  startedAt: string;
  /** Seconds left at the current pace; null until one variant was measured. */
  etaSeconds: number | null;
  bestSpeedup: number | null;
  bestMs: number | null;
  replay: boolean;
  compileOnly: boolean;
  error?: string;
  /** A pool run's GPUs as they work (busy / idle / removed, the variant each measures, their rates). */
  gpus?: GpuActivity[];
}

export interface SessionSummaryDTO {
  id: string;
  task: string;
  createdAt: string;
  strategy: string;
  budget: number | null;
  variants: number;
  results: number;
  status: string | null;
  best: { variantId: string; medianMs: number; speedup: number | null } | null;
  /** The session's confirmation (kernelduel confirm): its best and that best's precise speedup (absent: none). */
  confirmed?: { variantId: string; speedup: number | null };
  gpu: string | null;
  replay: boolean;
  error?: string;
}

export type VariantStatus = 'pending' | 'timed' | 'built' | 'failed';

/**
 * One variant as the tree, the table and the plots show it (sessions.get): only what they need. The
 * source, samples, build log, PTX/SASS and the rest come with variants.get / variants.code when a
 * variant is opened.
 */
export interface VariantRow {
  id: string;
  parents: string[];
  origin: string;
  config: Config;
  flags: BuildFlags;
  transforms: string[];
  status: VariantStatus;
  failure: { kind: FailureKind; reason: string } | null;
  medianMs: number | null;
  /** Baseline median / this median. */
  speedup: number | null;
  registers: number | null;
  sharedBytes: number | null;
  spillBytes: number | null;
  /** What measured it (gpu, replay, cpu, …), null before a result. */
  source: MeasurementSource['kind'] | null;
  /** A Python candidate's label (whose kernels did the work), null for CUDA variants and before a result. */
  label: CandidateLabel | null;
  /** Order in which the result was recorded (1-based), null while pending. */
  evalIndex: number | null;
}

/** One variant's row with what its detail shows besides (variants.get, a run's events): the median's interval, when it was proposed, what measured it. */
export interface FullVariantRow extends VariantRow {
  createdAt: string;
  ciLowMs: number | null;
  ciHighMs: number | null;
}

export interface DuelDTO {
  a: string;
  b: string;
  size: number;
  ratio: number;
  ratioLow: number;
  ratioHigh: number;
  verdict: Verdict;
  pairs: number;
  /** P(a faster than b) from the preference model, recorded before the duel was measured. */
  prediction?: PairPrediction;
  /** A duel over buffer sets: its interval over the pairs and the placements (reported; the verdict is the pairs' interval's). */
  placements?: PlacementsInterval;
  /** Buffer sets a side, where the duel recorded them (1: one placement of each variant, no interval over placements). */
  sets?: number;
}

export interface PlotPoint {
  /** 1-based evaluation number (0 is the baseline). */
  index: number;
  variantId: string;
  speedup: number | null;
  bestSpeedup: number | null;
  /** What the strategy was rewarded (log-speedup when the strategy records none). */
  reward: number | null;
}

export interface ParamEffect {
  param: string;
  value: number;
  count: number;
  meanSpeedup: number | null;
  failures: number;
}

export interface RooflinePoint {
  variantId: string;
  /** The size index its median was timed at. */
  size: number;
  intensity: number;
  gflops: number;
  gbps: number;
  speedup: number | null;
}

export interface SizeWork {
  size: number;
  bytes: number;
  flops: number;
}

export interface SessionPlots {
  timeline: PlotPoint[];
  /** Reward of a baseline strategy on the same space, when a replay comparison recorded one. */
  baselines: Array<{ name: string; points: Array<{ index: number; bestSpeedup: number }> }>;
  paramEffects: ParamEffect[];
  /** Preference-model accuracy over time, when the strategy records it. */
  modelAccuracy: Array<{ index: number; accuracy: number }>;
  /** Roofs in GB/s (memory, measured copy bandwidth) and GFLOP/s (compute, measured FP32 SGEMM); null when not measured on this GPU (limitsNote says so). */
  roofline: {
    points: RooflinePoint[];
    /** Bytes and FLOPs of one call at each size a point was timed at. */
    work: SizeWork[];
    peakGbps: number | null;
    peakGflops: number | null;
    limitsSource: string | null;
    limitsNote: string | null;
  } | null;
  rewardLabel: string;
}

/**
 * A session as the workbench shows it. Its rows are VariantRows in the renderer (sessions.get sends a
 * SessionPayload, decoded by decodeSession: main/contract/session-payload.ts); the core keeps full
 * FullVariantRows (its report shows the intervals).
 */
export interface SessionDetail<Row extends VariantRow = VariantRow> {
  summary: SessionSummaryDTO;
  task: { name: string; dir: string };
  gpu: { name: string; uuid?: string; arch: string } | null;
  settings: Record<string, unknown>;
  variants: Row[];
  duels: DuelDTO[];
  notes: Array<{ level: 'info' | 'warn' | 'error'; message: string }>;
  baselineId: string | null;
  bestId: string | null;
  /** Set when any result came from a recorded space: the UI labels the session REPLAY. */
  replay: { recording: string } | null;
  /** Set for a session of Python candidates (ModelNew): where they ran (cpu: every time is a CPU
   * time, never a GPU's), the guarantee level of every result, and the PyTorch reference's source. */
  python?: PythonSessionDTO | null;
  /** A PyTorch-reference task's eager / torch.compile baselines, timed once by the session (absent in sessions made before them). */
  pytorchBaselines?: PytorchBaselinesDTO | null;
  plots: SessionPlots;
  run: RunState | null;
  /** The session's confirmation (kernelduel confirm, sessions.confirm); null: none (absent in older cores). */
  confirm?: ConfirmDTO | null;
}

/**
 * What one evaluation of a workbench run's SIMULATED GPU takes (runs.start simulateGpus; core/run/runs.ts): long enough
 * that the host's own work between results (journal, strategy, events) is a small part of each GPU's
 * busy share (at 20 ms two simulated GPUs read 54% and 73% busy for ~45% of real waiting; at 100 ms
 * 83% and 89% for ~80%), short enough for a demo of a pool run.
 */
export const SIMULATED_GPU_LATENCY_MS = 100;

/** One variant of a confirmation as sent (engine/base/types.ts ConfirmLine; no samples). */
export interface ConfirmLineDTO extends ConfirmLine {
  /** The GPU that measured it (its result's source), null when none did. */
  gpu: string | null;
  samples: number | null;
  /** The executors (CUDA contexts) the timed calls rotated over, and the buffer placements in all (every executor's sets together). */
  contexts: number | null;
  bufferSets: number | null;
}

/** A session's confirmation: the baseline, the confirmed variants (fastest first), and whether the precise ranking differs from the search's. */
export interface ConfirmDTO {
  timing: 'precise';
  baseline: ConfirmLineDTO | null;
  variants: ConfirmLineDTO[];
  bestId: string | null;
  /** The search's best, when the precise timing ranks another variant first. */
  searchBestId: string | null;
  /** Variants within the precise timing's reproducibility of the best, and that bound (engine/session/confirm.ts: at least PRECISE_REPRODUCIBILITY, more where the confirmed variants' buffer placements run apart). */
  tiedWithBest: string[];
  reproducibility: number;
  /** The best's duel against each tied variant (its speed over theirs, > 1: the best is faster), where one was measured. */
  tieDuels: TieDuelDTO[];
}

/** A confirmation's duel of its best against a tied variant, as the engine reports it (no samples in it). */
export type TieDuelDTO = TieDuel;

export interface PythonSessionDTO {
  device: 'cuda' | 'cpu';
  guarantee: GuaranteeLevel;
  /** What the guarantee level means, in one line, and its lists (GUARANTEE_LEVELS). */
  guaranteeTitle: string;
  holds: string[];
  doesNotHold: string[];
  /** The reference file's name and source (read-only). */
  referenceFile: string;
  reference: string;
}

/** A session's PyTorch baselines (journal event pytorch-baselines) as the plots and the variant detail use them. */
export interface PytorchBaselinesDTO extends PytorchBaselines {
  /** What the guarantee level means, in one line (GUARANTEE_LEVELS). */
  guaranteeTitle: string;
  /** Where each sits on the plots' "speedup vs baseline" axis: the session baseline's median over its median (null without both). */
  eagerSpeedup: number | null;
  compileSpeedup: number | null;
  /** The figure the session's variants hold (a Python-candidate session: per-call or one-call); the baselines are compared by the same one. Absent: one-call (CUDA sessions, older ones). */
  figure?: PythonFigure;
}

/** What the LLM answered for a variant it proposed: its three parts (the code is the variant's source). */
export interface LlmPartsDTO {
  model: string;
  promptId: string;
  answerId: string;
  analysis: string;
  design: string;
  code: string;
  exemplars: Array<{ id: string; speedup: number }>;
  missing?: string[];
  error?: string;
}

/** What the GPU could hold and what the variant achieved, from its build's resources, the GPU's limits and the task's metrics. */
export interface VariantPerfDTO {
  /** Threads per block of its kernel launch; null when unknown (threadsFrom says why). */
  threadsPerBlock: number | null;
  threadsFrom: string;
  /** Theoretical occupancy of its (first) kernel on one SM; null with occupancyNote saying why. */
  occupancy: {
    value: number;
    blocksPerSm: number;
    warpsPerSm: number;
    maxWarpsPerSm: number;
    limiter: 'blocks' | 'warps' | 'registers' | 'shared memory';
    /** Blocks per SM each resource allows. */
    limits: Record<'blocks' | 'warps' | 'registers' | 'shared memory', number>;
    cc: string;
    kernel: string;
  } | null;
  occupancyNote: string | null;
  /** Achieved rates at the timed size (bytes and flops from the task's metrics over the median time). */
  achievedGbps: number | null;
  achievedGflops: number | null;
  /** Arithmetic intensity, FLOP per byte. */
  intensity: number | null;
  /** The attainable rate at this intensity (min of the roofs) and the share of it achieved, 0..1. */
  roofGflops: number | null;
  pctOfRoof: number | null;
  /** Which roof binds at this intensity. */
  bound: 'memory' | 'compute' | null;
  /** Where the roofs come from, or why there are none. */
  roofNote: string;
}

export interface VariantDetail {
  variant: VariantRecord;
  result: EvalResult | null;
  row: FullVariantRow;
  /** Present for variants the LLM policy proposed. */
  llm: LlmPartsDTO | null;
  /** The source as nvcc compiled it: the tunables' -D values in place of the template's defaults (transforms are already in the source). */
  effectiveSource: string;
  perf: VariantPerfDTO;
}

/** A variant's device code: PTX and SASS where the toolkit could produce them, and why not where it could not. */
export interface KernelCodeDTO {
  arch: string;
  ptx: string | null;
  sass: string | null;
  /** How each was produced, or why it was not (e.g. no cuobjdump in the CUDA toolkit). */
  notes: string[];
  /** The build was taken from the build cache. */
  cached: boolean;
}

/** One line of a session's log. */
export interface LogLineDTO {
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
}

export interface LlmSettingsDTO {
  settings: LlmSettings;
  apiKey: {
    /** A key is available to runs (the key itself never leaves the engine). */
    set: boolean;
    source: 'keychain' | 'env' | 'none';
    /** The environment variable read when no key is in the keychain. */
    env: string;
    /** Keys can be saved (the desktop app, with OS encryption available); in browser mode only the environment variable is read. */
    canStore: boolean;
  };
  mode: 'electron' | 'browser';
}

/** A connection test's report, and why it went without the saved key when it did. */
export type ConnectionReportDTO = ConnectionReport & { note?: string };

export interface PromptPreviewDTO {
  promptId: string;
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  exemplars: string[];
  /** Where the exemplars come from. */
  note: string;
}

export interface PairPrediction {
  /** Probability the model gave to "a is faster than b". */
  pAFaster: number;
  model: string;
}

/** A duel's 95% interval over its pairs and its buffer placements (engine/measure/stats.ts intervalWithPlacements). */
export interface PlacementsInterval {
  low: number;
  high: number;
  /** sd of the buffer sets' median ratios' mean, over the ratio. */
  setRelSd: number;
  sets: number;
}

export interface CompareResult {
  sessionId: string;
  a: VariantDetail;
  b: VariantDetail;
  /** Speedup of a over b (b's time / a's time), with a 95% interval. */
  /** method: an interleaved duel on the GPU, a duel resampled from a recorded space (REPLAY), or separate measurements. */
  /**
   * placements (a duel with buffer sets): the 95% interval over the pairs and the buffer placements,
   * the placements' sd (of the sets' median ratios' mean) and the sets. Reported beside the
   * verdict, which is the pairs' interval's. oneSet: a GPU duel on one buffer set a side (one
   * placement each: no interval over placements; confirm-words.ts oneSetWords).
   */
  ratio: { value: number; low: number; high: number; verdict: Verdict; method: 'duel' | 'replay-duel' | 'independent'; placements?: PlacementsInterval; oneSet?: boolean } | null;
  duel: DuelResult | null;
  prediction: PairPrediction | null;
  notes: string[];
}

/** The baseline strategies on the same recorded space as a REPLAY session (all of it REPLAY). */
export interface BaselineCurvesDTO {
  /** The recording replayed; null for a session that is not a replay (then there are no curves). */
  recording: string | null;
  /** Evaluations each baseline ran (the session's, at most 1,000). */
  evaluations: number;
  seeds: number;
  /** Per strategy: the median over the seeds of the best-so-far speedup over the baseline variant. */
  curves: Array<{ name: string; points: Array<{ index: number; bestSpeedup: number }> }>;
  note: string;
}

/** What spaces.import wrote: the new REPLAY-only task and what its recording holds. */
export interface SpaceImportDTO {
  /** The task id to open (tasks.get) and to run (runs.start with its recording). */
  taskId: string;
  name: string;
  /** The recording written (absolute path on the machine that serves the workbench). */
  path: string;
  format: 'kernel-tuner cache' | 't4';
  gpu: string;
  configurations: number;
  failed: number;
  tunables: number;
  /** An earlier space of this name was replaced. */
  replaced: boolean;
  warnings: string[];
}

export interface ExportFile {
  fileName: string;
  content: string;
  mimeType: string;
}

export interface Results {
  'env.describe': EnvDTO;
  'tasks.list': TaskSummary[];
  'tasks.get': TaskDetail;
  'tasks.open': TaskDetail;
  'tasks.validateManifest': { ok: boolean; issues: ManifestIssueDTO[] };
  'tasks.readFile': { path: string; text: string };
  'tasks.saveFile': { path: string; issues: ManifestIssueDTO[] };
  'spaces.import': SpaceImportDTO;
  'eval.build': BuildOutcome;
  'eval.run': { build: BuildOutcome; result: EvalResult };
  'runs.list': RunState[];
  'runs.start': RunState;
  'runs.pause': RunState;
  'runs.resume': RunState;
  'runs.stop': RunState;
  'sessions.list': SessionSummaryDTO[];
  /** Compact: decode it with decodeSession (main/contract/session-payload.ts). */
  'sessions.get': SessionPayload;
  'sessions.baselines': BaselineCurvesDTO;
  'sessions.log': LogLineDTO[];
  'sessions.confirm': ConfirmDTO;
  'variants.get': VariantDetail;
  'variants.compare': CompareResult;
  'variants.code': KernelCodeDTO;
  'export.variant': ExportFile;
  'export.report': ExportFile;
  'llm.getSettings': LlmSettingsDTO;
  'llm.saveSettings': LlmSettingsDTO;
  'llm.testConnection': ConnectionReportDTO;
  'llm.previewPrompt': PromptPreviewDTO;
}

export type Result<M extends MethodName> = Results[M];

// ---------------------------------------------------------------------------------------------- envelopes and events

export type ApiErrorCode = 'unknown_method' | 'bad_args' | 'not_found' | 'failed' | 'forbidden';

export interface ApiError {
  code: ApiErrorCode;
  message: string;
  /** Field-level problems of a bad argument. */
  issues?: Array<{ path: string; message: string }>;
}

export type Envelope<T = unknown> = { ok: true; result: T } | { ok: false; error: ApiError };

export type ApiEvent =
  | { type: 'run.state'; state: RunState }
  | { type: 'run.variant'; sessionId: string; row: FullVariantRow }
  | { type: 'run.result'; sessionId: string; row: FullVariantRow; index: number; budget: number; bestSpeedup: number | null; bestMs: number | null }
  | { type: 'log'; sessionId: string | null; level: 'info' | 'warn' | 'error'; message: string; at: string }
  /** The LLM policy's answer text as the model writes it. */
  | { type: 'llm.delta'; sessionId: string; promptId: string; answerId: string; delta: string; attempt: number }
  | { type: 'llm.prompt'; sessionId: string; promptId: string; answerIds: string[]; chars: number };

export type ApiEventType = ApiEvent['type'];

/** WebSocket frames. Client -> server: a call. Server -> client: a reply to a call, or an event. */
export type ClientFrame = { id: number; method: MethodName; params?: unknown };
export type ServerFrame = { id: number; reply: Envelope } | { event: ApiEvent };

/** What a transport offers the renderer: the contract's methods and its events. */
export interface Transport {
  readonly kind: 'electron' | 'browser';
  call<M extends MethodName>(method: M, params: Params<M>): Promise<Result<M>>;
  subscribe(listener: (e: ApiEvent) => void): () => void;
}

/** Thrown by transports for an error envelope. */
export class ApiCallError extends Error {
  constructor(
    readonly method: string,
    readonly error: ApiError,
  ) {
    super(`${method}: ${error.message}`);
    this.name = 'ApiCallError';
  }
}
