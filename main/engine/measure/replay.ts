// Recorded search spaces and the replay backend. A recording (`kernelduel-space/1`, stored at
// bench/spaces/<gpu>/<task>.json) holds every configuration of a task's space measured on a real
// GPU: its timing samples, ptxas resources and failures. The ReplayMeasurer answers evaluations
// and duels from such a recording so that strategies can be compared without a GPU, as Kernel
// Tuner's simulation mode does. Every answer is labelled `source: {kind: 'replay'}`: a replayed
// number is never presented as a fresh measurement.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { gunzipIfGzip } from '../base/gzip.js';
import type { BuildFlags, BuildResult, Config, DuelResult, EvalResult, Failure, KernelResources, TimingResult } from '../base/types.js';
import type { Task } from '../task/manifest.js';
import { configKey, defaultConfig } from '../task/space.js';
import { mulberry32 } from '../base/random.js';
import { duelStats, mean, medianCI } from './stats.js';
import type { EvaluateOptions, MeasuredSpec, Measurer } from './measurer.js';

export const SPACE_FORMAT = 'kernelduel-space/1';

const ResourcesSchema = z.object({
  name: z.string(),
  registers: z.number(),
  sharedBytes: z.number(),
  constantBytes: z.number(),
  stackBytes: z.number(),
  spillStoreBytes: z.number(),
  spillLoadBytes: z.number(),
});

const FailureSchema = z.object({
  kind: z.enum(['compile', 'runtime', 'timeout', 'correctness', 'constraints', 'rejected']),
  reason: z.string(),
  log: z.string().optional(),
});

const FlagsSchema = z.object({
  opt: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
  fastMath: z.boolean().optional(),
  maxrregcount: z.number().int().nonnegative().optional(),
  dlcm: z.enum(['ca', 'cg']).optional(),
  extra: z.array(z.string()).optional(),
});

export const SpaceEntrySchema = z
  .object({
    config: z.record(z.string(), z.number()),
    flags: FlagsSchema,
    transforms: z.array(z.string()).optional(),
    medianMs: z.number().positive().nullable(),
    samplesMs: z.array(z.number().positive()),
    relNoise: z.number().nonnegative(),
    resources: z.array(ResourcesSchema),
    failure: FailureSchema.nullable(),
    /** Fields the recording tool kept for this configuration besides its timing (Kernel Tuner's
     * compile_time, GFLOP/s, timestamp, …): carried unchanged so an export can give them back. */
    extra: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  })
  .refine((e) => (e.failure === null) === (e.medianMs !== null), { message: 'an entry has either a medianMs or a failure, not both' })
  .refine((e) => e.failure !== null || e.samplesMs.length > 0, { message: 'a timed entry needs its samples' });

export const RecordedSpaceSchema = z.object({
  format: z.literal(SPACE_FORMAT),
  task: z.string(),
  taskHash: z.string(),
  gpu: z.object({ name: z.string(), uuid: z.string(), computeCapability: z.string(), driver: z.string() }),
  nvcc: z.string(),
  date: z.string(),
  command: z.string(),
  /** 'real GPU' for recordings in bench/spaces; test fixtures say what they are. */
  measured: z.string(),
  /** Index of the manifest size the samples are for. */
  timedSize: z.number().int().nonnegative(),
  /** Provenance the fields above cannot carry (e.g. a recording resumed on another GPU of the same model). */
  notes: z.array(z.string()).optional(),
  /** The space's own tunables, in parameter order, when no KernelDuel task describes it (a space
   * imported from another tuner, without kernel source): such a space is a task of its own, for
   * REPLAY only (eval/space-task.ts). */
  tunables: z.record(z.string(), z.array(z.number()).min(1)).optional(),
  /** With `tunables`: the configuration a run evaluates first, as its baseline. */
  baseline: z.record(z.string(), z.number()).optional(),
  /** What `medianMs` holds: the median of the samples (KernelDuel's recordings; the default), or
   * Kernel Tuner's objective `time` (the mean of its samples), kept as recorded so that figures
   * on an imported space match Kernel Tuner's own. */
  objective: z.enum(['median', 'kernel-tuner-time']).optional(),
  /** Where an imported space came from (main/engine/interop). */
  origin: z
    .object({
      tool: z.string(),
      format: z.string(),
      file: z.string(),
      sha256: z.string(),
      importedAt: z.string(),
      kernel: z.string().optional(),
      problemSize: z.union([z.array(z.number()), z.number(), z.string()]).optional(),
      objective: z.string().optional(),
    })
    .optional(),
  entries: z.array(SpaceEntrySchema).min(1),
});

export type SpaceEntry = z.infer<typeof SpaceEntrySchema>;
export type RecordedSpace = z.infer<typeof RecordedSpaceSchema>;

/** Flags with defaults made explicit, so `{}` and `{opt: 3}` are the same variant. */
export function flagsKey(f: BuildFlags | undefined): string {
  const x = f ?? {};
  return `O${x.opt ?? 3},fm${x.fastMath ? 1 : 0},r${x.maxrregcount ?? 0},dlcm${x.dlcm ?? '-'}${x.extra?.length ? `,x${x.extra.join(' ')}` : ''}`;
}

/** Identity of a variant within a recording: tunables, flags and transforms (order-free). */
export function variantKey(v: { config: Config; flags?: BuildFlags; transforms?: string[] }): string {
  return `${configKey(v.config)}|${flagsKey(v.flags)}|${[...(v.transforms ?? [])].sort().join(';')}`;
}

/** The nvcc target a recording's GPU had ('unknown' when the recording tool did not say, e.g. Kernel Tuner). */
export function recordedArch(space: Pick<RecordedSpace, 'gpu'>): string {
  const cc = space.gpu.computeCapability;
  return /^\d+\.\d+$/.test(cc) ? `sm_${cc.replace('.', '')}` : 'unknown';
}

/** Spaces this process has validated already (a replay of a large space need not validate it again per seed). */
const validated = new WeakSet<RecordedSpace>();

/** Validates a recording given as data; errors name the field (and `what`, the file or label). */
export function parseSpace(json: unknown, what: string): RecordedSpace {
  if (validated.has(json as RecordedSpace)) return json as RecordedSpace;
  const p = RecordedSpaceSchema.safeParse(json);
  if (!p.success) {
    const i = p.error.issues[0];
    throw new Error(`${what} is not a ${SPACE_FORMAT} recording (${i.path.join('.') || '(root)'}: ${i.message})`);
  }
  validated.add(p.data);
  return p.data;
}

/** Reads and validates a recording; errors name the file and the field. */
export function loadSpace(path: string): RecordedSpace {
  let json: unknown;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read the recorded space ${path}: ${(e as Error).message}`, { cause: e });
  }
  // Another tool's file given where a KernelDuel recording belongs: say how to bring it in.
  const importFirst = (what: string, format: string): Error => new Error(`${path} is ${what}, not a KernelDuel recorded space: import it first with \`kernelduel import ${format} ${path}\`, then replay the space it writes`);
  try {
    json = JSON.parse(gunzipIfGzip(bytes, path).toString('utf8'));
  } catch (e) {
    throw new Error(`cannot read the recorded space ${path}: ${(e as Error).message}`, { cause: e });
  }
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    if ('cache' in o && 'tune_params' in o) throw importFirst('a Kernel Tuner cache', 'kernel-tuner');
    // (interop/t4.ts's looksLikeT4, which this layer may not import)
    if (Array.isArray(o.results)) throw importFirst('a T4 results file', 't4');
  }
  return parseSpace(json, path);
}

export interface ReplayOptions {
  /** Seed of the duel resampling (duels pair resampled recorded samples). */
  seed?: number;
  /** Pairs per duel (default: the larger sample count, 10..60). */
  duelPairs?: number;
  /** The file a space given as data was read from (labels every answer; default "(in memory)"). */
  path?: string;
}

/** Answers evaluations and duels from a recorded space. Satisfies `Measurer`. */
export class ReplayMeasurer implements Measurer {
  readonly task: Task;
  readonly space: RecordedSpace;
  readonly recording: string;
  readonly compileOnly = false;
  /** The recording was made from the same task contents as the task given. */
  readonly taskHashMatches: boolean;
  private readonly byKey = new Map<string, SpaceEntry>();
  /** The task's tunables that no recorded configuration names: the recording predates them (issue 17 added some to the suite tasks, their defaults keeping the kernels recorded before), so a recorded configuration stands for them at their defaults. */
  readonly predates: string[];
  /** Those tunables at the task's defaults: what every recorded configuration stands for. */
  readonly predatedDefaults: Config;
  private readonly rng: () => number;
  private readonly opts: ReplayOptions;
  /** Evaluations and duels answered (a budget check for tests and benchmarks). */
  evaluations = 0;
  duels = 0;

  constructor(task: Task, space: RecordedSpace | string, opts: ReplayOptions = {}) {
    this.task = task;
    this.recording = typeof space === 'string' ? resolve(space) : opts.path ? resolve(opts.path) : '(in memory)';
    this.space = typeof space === 'string' ? loadSpace(space) : parseSpace(space, this.recording);
    if (this.space.task !== task.manifest.name) throw new Error(`recording ${this.recording} is for task ${this.space.task}, not ${task.manifest.name}`);
    this.taskHashMatches = this.space.taskHash === task.hash;
    const defaults = defaultConfig(task);
    const named = new Set(this.space.entries.flatMap((e) => Object.keys(e.config)));
    this.predates = Object.keys(task.manifest.tunables ?? {}).filter((k) => !named.has(k) && k in defaults);
    this.predatedDefaults = Object.fromEntries(this.predates.map((k) => [k, defaults[k]]));
    for (const e of this.space.entries) this.byKey.set(variantKey(this.predates.length ? { ...e, config: { ...this.predatedDefaults, ...e.config } } : e), e);
    this.opts = opts;
    this.rng = mulberry32(opts.seed ?? 1);
  }

  /** Labels the recording in results: a path when loaded from a file. */
  static fromFile(task: Task, path: string, opts?: ReplayOptions): ReplayMeasurer {
    return new ReplayMeasurer(task, path, opts);
  }

  entry(v: { config: Config; flags?: BuildFlags; transforms?: string[] }): SpaceEntry | undefined {
    return this.byKey.get(variantKey(v));
  }

  has(v: { config: Config; flags?: BuildFlags; transforms?: string[] }): boolean {
    return this.byKey.has(variantKey(v));
  }

  /** The fastest recorded median (the optimum strategies are scored against). */
  optimumMs(): number {
    let best = Infinity;
    for (const e of this.space.entries) if (e.medianMs !== null && e.medianMs < best) best = e.medianMs;
    return best;
  }

  private source(): EvalResult['source'] {
    return { kind: 'replay', recording: this.recording };
  }

  private buildOf(e: SpaceEntry | undefined): BuildResult {
    const failedBuild = e?.failure && (e.failure.kind === 'compile' || (e.failure.kind === 'timeout' && e.samplesMs.length === 0 && e.resources.length === 0));
    return {
      ok: !!e && !failedBuild,
      arch: recordedArch(this.space),
      command: ['replay', this.recording],
      resources: (e?.resources ?? []) as KernelResources[],
      log: '',
      durationMs: 0,
      cached: true,
      ...(failedBuild && e?.failure ? { failure: e.failure as Failure } : {}),
    };
  }

  private timingOf(e: SpaceEntry): TimingResult {
    const s = e.samplesMs;
    const ci = medianCI(s);
    return {
      size: this.space.timedSize, samplesMs: s, eventMs: s, wallMs: s, timer: 'events',
      medianMs: e.medianMs ?? ci.median, meanMs: mean(s), minMs: Math.min(...s), ciLowMs: ci.low, ciHighMs: ci.high,
      relNoise: e.relNoise, converged: true, warmupCalls: 0, l2FlushBytes: 0,
    };
  }

  async evaluate(spec: MeasuredSpec, o: EvaluateOptions = {}): Promise<EvalResult> {
    this.evaluations++;
    const e = this.entry(spec);
    if (!e) {
      const failure: Failure = { kind: 'constraints', reason: `not in the recorded space (${variantKey(spec)})` };
      return { build: { ...this.buildOf(undefined), failure }, failure, source: this.source() };
    }
    o.onStage?.('build');
    const build = this.buildOf(e);
    if (e.failure) {
      const failure = e.failure as Failure;
      if (!build.ok) return { build, failure, source: this.source() };
      o.onStage?.('check');
      const check = { ok: failure.kind !== 'correctness', checks: [], durationMs: 0, ...(failure.kind === 'correctness' ? { failure } : {}) };
      return { build, check, failure, source: this.source() };
    }
    o.onStage?.('check');
    const check = { ok: true, checks: [], durationMs: 0 };
    if (o.time === false) return { build, check, source: this.source() };
    o.onStage?.('time');
    return { build, check, timing: [this.timingOf(e)], source: this.source() };
  }

  /** Pairs samples resampled (seeded) from the two recordings and runs the usual duel statistics. */
  async duel(a: MeasuredSpec, b: MeasuredSpec): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    this.duels++;
    const ea = this.entry(a);
    const eb = this.entry(b);
    for (const [e, s] of [[ea, a], [eb, b]] as const) {
      if (!e) return { failure: { kind: 'constraints', reason: `not in the recorded space (${variantKey(s)})` } };
      if (e.failure) return { failure: e.failure as Failure };
    }
    const sa = ea!.samplesMs;
    const sb = eb!.samplesMs;
    const n = this.opts.duelPairs ?? Math.min(60, Math.max(10, sa.length, sb.length));
    const pick = (s: number[]): number => s[Math.floor(this.rng() * s.length)];
    const ra: number[] = [];
    const rb: number[] = [];
    for (let i = 0; i < n; i++) {
      ra.push(pick(sa));
      rb.push(pick(sb));
    }
    return { duels: [duelStats(this.space.timedSize, ra, ra, rb, rb)] };
  }
}

/**
 * COUNTERFACTUAL replay, for studying search strategies only (bench/action-space.ts, tests): every
 * variant is answered with its configuration's recording at -O3, whatever its flags and transforms,
 * i.e. as if they changed nothing. Never a stand-in for a measurement of those variants.
 */
export class TunablesOnlyReplay extends ReplayMeasurer {
  override entry(v: { config: Config; flags?: BuildFlags; transforms?: string[] }): SpaceEntry | undefined {
    return super.entry({ config: v.config });
  }
  override has(v: { config: Config; flags?: BuildFlags; transforms?: string[] }): boolean {
    return super.has({ config: v.config });
  }
}
