// The evaluation pipeline for one task on one GPU: build (parallel, cached) -> capture the GPU work
// the variant's entry point asks for (its host code runs only there, sandboxed) -> check it against
// the reference (every element, several sizes and seeds) and time it (L2 flushed, fresh inputs per
// call, random calls verified, until the median is tight) in the judge, which never runs variant
// code (docs/ISOLATION.md). Without a GPU it builds only and says so. GPU work is serialised per
// GPU through one queue per device, so two sessions never time on the same GPU at once.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { BuildResult, CheckResult, ClockReading, DuelResult, EvalResult, ExecutorFrom, Failure, MeasurementSource, TimingResult, VariantSpec } from '../base/types.js';
import type { Toolchain } from '../platform/toolchain/nvcc.js';
import type { GpuInfo } from '../base/types.js';
import { cudaDeviceSelector, normaliseGpuName, readClocks } from '../platform/gpu/detect.js';
import { withGpuLock } from '../platform/gpu/lock.js';
import { buildVariant, type BuildEnv } from '../build/compile.js';
import { DTYPE_BYTES, sizeLayout, type Task } from '../task/manifest.js';
import { workRoot as defaultWorkRoot } from '../base/paths.js';
import { DEFAULT_TIMING, ensureHarness, failureKind, harnessEnv, renderPlan, runHarness, type HarnessIsolation, type HarnessOutcome, type PlanInput, type ReferenceFilesPlan, type TimingSettings } from './harness.js';
import { Judge, JudgeError, type JudgeAnswer } from './judge.js';
import { screenSource } from '../source/screen.js';
import { noteOnce, sandboxMode, sandboxStatus } from '../platform/sandbox/index.js';
import { chooseTimer, duelStats, mean, medianCI, setSpread } from './stats.js';
import { defaultConfig } from '../task/space.js';
import { traceGpu } from './trace.js';

/** A library's short name in a trace: its build folder's. */
const libTag = (lib: string): string => basename(dirname(lib)).slice(0, 12);

/** Screens untrusted source (from a model or a user) before it is built: a `rejected` failure, or null when it may be built. */
export function screenVariant(task: Task, source: string): Failure | null {
  const s = screenSource(source, task);
  if (s.ok) return null;
  return { kind: 'rejected', reason: `screening: ${s.reason}`, log: s.violations.map((v) => `line ${v.line}: [${v.rule}] ${v.reason}`).join('\n') };
}

/**
 * What a job needs of its GPU. exclusive: the GPU alone (timing). shared: beside other shared and
 * capture jobs (a judge's check, the capture it needs). capture: a capture process started ahead
 * (Evaluator.prepare), beside shared jobs and, only where the evaluator is asked to
 * (`captureBesideDuels`), beside a paired job. paired: a duel, alone but for such captures: its two
 * sides are timed in interleaved pairs, so work beside it that does not follow one side lands on
 * both alike (a hypothesis to measure on a GPU before it becomes a default; see docs/GPU-RUNS.md).
 */
export type GpuSlotMode = 'shared' | 'exclusive' | 'capture' | 'paired';
/** A place in a GPU's queue: given back with release(). */
export interface GpuSlot {
  readonly mode: GpuSlotMode;
  release(): void;
}

/**
 * The one queue through which every GPU job passes. Timing (and anything else whose result depends
 * on having the GPU alone) is exclusive; work whose result does not depend on what else runs (a
 * capture process, a judge's check) is shared: shared jobs run together, never beside an exclusive
 * one, and a waiting exclusive job holds back shared ones that came after it (first come, first
 * served). Captures started ahead ('capture') are shared jobs that may also run beside a duel
 * ('paired'), which otherwise has the GPU alone (GpuSlotMode). Across KernelDuel processes a lock
 * file per GPU is held while this process has any job on it (given back a moment after the last
 * one ends, so back-to-back jobs do not hand it around).
 */
export class GpuQueue {
  private shared = 0;
  private captures = 0;
  private exclusive = false;
  private paired = false;
  /** Whether a capture ran beside the paired job that holds (or last held) its place. */
  private pairedBeside = false;
  private readonly waiters: Array<{ mode: GpuSlotMode; go: () => void }> = [];
  /** Called when the next paired job (a duel) gets its place (see nextPaired). */
  private pairedWatchers: Array<() => void> = [];
  private holders = 0;
  private fileRelease: (() => void) | null = null;
  private fileAcquiring: Promise<void> | null = null;
  private releaseTimer: NodeJS.Timeout | null = null;
  constructor(readonly key: string) {}
  /** Jobs waiting or running. */
  get pending(): number {
    return this.waiters.length + this.running;
  }
  /**
   * Whether a capture has run beside the paired job (a duel) that holds its place now, so far; read
   * by that job before it gives its place back (after that: the last paired job's answer).
   */
  get captureBesidePaired(): boolean {
    return this.pairedBeside;
  }
  /** Jobs running now. */
  get running(): number {
    return this.shared + this.captures + (this.exclusive ? 1 : 0) + (this.paired ? 1 : 0);
  }

  /** Whether a job of this mode may start beside what runs now. */
  private fits(mode: GpuSlotMode): boolean {
    if (this.exclusive) return false;
    if (mode === 'exclusive') return this.shared + this.captures === 0 && !this.paired;
    if (mode === 'paired') return this.shared === 0 && !this.paired;
    if (mode === 'shared') return !this.paired;
    return true; // capture
  }

  private pump(): void {
    // First come, first served: the first waiter that cannot start holds back those after it.
    while (this.waiters.length && this.fits(this.waiters[0].mode)) {
      const w = this.waiters.shift()!;
      if (w.mode === 'exclusive') this.exclusive = true;
      else if (w.mode === 'paired') {
        this.paired = true;
        this.pairedBeside = this.captures > 0;
        const watchers = this.pairedWatchers;
        this.pairedWatchers = [];
        for (const f of watchers) f();
      }
      else if (w.mode === 'capture') {
        this.captures++;
        if (this.paired) this.pairedBeside = true;
      } else this.shared++;
      w.go();
    }
  }

  private async holdFile(): Promise<void> {
    this.holders++;
    if (this.releaseTimer) {
      clearTimeout(this.releaseTimer);
      this.releaseTimer = null;
    }
    if (this.fileRelease) return;
    this.fileAcquiring ??= new Promise<void>((resolve, reject) => {
      const held = new Promise<void>((r) => {
        withGpuLock(this.key, () => {
          this.fileRelease = r;
          this.fileAcquiring = null;
          resolve();
          return held;
        }, { onWait: (owner) => process.stderr.write(`kernelduel: GPU ${this.key} is measuring for another KernelDuel process (${owner}); waiting\n`) }).catch((e: unknown) => {
          this.fileAcquiring = null;
          reject(e as Error);
        });
      });
    });
    await this.fileAcquiring;
  }

  private dropFile(): void {
    this.holders--;
    if (this.holders > 0 || !this.fileRelease) return;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = null;
      if (this.holders === 0 && this.fileRelease) {
        const r = this.fileRelease;
        this.fileRelease = null;
        r();
      }
    }, 30);
    this.releaseTimer.unref();
  }

  /** Waits for a place of this kind; the caller must release it. `what` names the job in a KERNELDUEL_TRACE trace. */
  async acquire(mode: GpuSlotMode, what = ''): Promise<GpuSlot> {
    traceGpu({ q: this.key, ev: 'ask', mode, what });
    await new Promise<void>((go) => {
      this.waiters.push({ mode, go: () => {
        traceGpu({ q: this.key, ev: 'got', mode, what });
        go();
      } });
      this.pump();
    });
    try {
      await this.holdFile();
    } catch (e) {
      this.holders--;
      this.leave(mode);
      throw e;
    }
    let released = false;
    return {
      mode,
      release: () => {
        if (released) return;
        released = true;
        traceGpu({ q: this.key, ev: 'gave', mode, what });
        this.dropFile();
        this.leave(mode);
      },
    };
  }

  private leave(mode: GpuSlotMode): void {
    if (mode === 'shared') this.shared--;
    else if (mode === 'capture') this.captures--;
    else if (mode === 'paired') this.paired = false;
    else this.exclusive = false;
    this.pump();
  }

  /** Runs fn with the GPU to itself (no other job of this process, nor of another KernelDuel process). */
  async add<T>(fn: () => Promise<T>, what = ''): Promise<T> {
    return this.run('exclusive', fn, what);
  }

  /** Runs fn beside other shared jobs, never beside an exclusive one. */
  async share<T>(fn: () => Promise<T>, what = ''): Promise<T> {
    return this.run('shared', fn, what);
  }

  /**
   * Settles when the next paired job (a duel) gets its place, or after timeoutMs: a capture that
   * may run beside a duel waits for one, so that it does not hold back the timing that follows a
   * check (a capture asked for beside a check would).
   */
  nextPaired(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        this.pairedWatchers = this.pairedWatchers.filter((f) => f !== finish);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      timer.unref?.();
      signal?.addEventListener('abort', finish, { once: true });
      this.pairedWatchers.push(finish);
    });
  }

  /** Runs fn in a place of the given mode (GpuSlotMode). */
  async run<T>(mode: GpuSlotMode, fn: () => Promise<T>, what = ''): Promise<T> {
    const slot = await this.acquire(mode, what);
    try {
      return await fn();
    } finally {
      slot.release();
    }
  }
}
const gpuQueues = new Map<string, GpuQueue>();
/** The queue of one GPU (null: no GPU), keyed as every evaluator on it keys it. */
export function gpuQueueOf(gpu: { uuid: string; index: number } | null): GpuQueue {
  return gpuQueue(gpu ? gpu.uuid || String(gpu.index) : 'none');
}

export function gpuQueue(key: string): GpuQueue {
  let q = gpuQueues.get(key);
  if (!q) {
    q = new GpuQueue(key);
    gpuQueues.set(key, q);
  }
  return q;
}

export interface EvalOptions {
  signal?: AbortSignal;
  /** false: check only. */
  time?: boolean;
  onStage?: (stage: 'build' | 'check' | 'time') => void;
  screen?: boolean;
  /** Keep the GPU to this evaluation from its capture on (no other capture or check beside it). */
  exclusive?: boolean;
  /** Stop timing once the median is decidedly above this (ms): see the Measurer's EvaluateOptions.cutoffMs. */
  cutoffMs?: number;
}

export interface EvaluatorOptions {
  task: Task;
  toolchain: Toolchain;
  /** null: compile-only (no GPU). */
  gpu: GpuInfo | null;
  /** nvcc -arch; defaults to the GPU's, or sm_90 when compile-only. */
  arch?: string;
  workRoot?: string;
  /** How many check seeds (default three); the judge draws the seeds themselves, so only the count is used. */
  seeds?: number[];
  timing?: Partial<TimingSettings>;
  checkTimeoutMs?: number;
  timeTimeoutMs?: number;
  /** Limit of the capture process (the only one that runs a variant's host code); default 60 s. */
  captureTimeoutMs?: number;
  /** Check with fewer seeds the sizes whose outputs exceed this many bytes (default 128 MiB). */
  bigOutputBytes?: number;
  /** Screen every source before building it (untrusted code: from a model or a user); see screenVariant. Default false. */
  screen?: boolean;
  /** Timed calls verified against the reference at random, besides the last (default 3). */
  verifySamples?: number;
  /**
   * A PyTorch-reference task's reference data: computed by PyTorch on this evaluator's GPU before
   * any variant runs (main/core/evaluators.ts supplies main/engine/pytorch/reference-data.ts), for
   * the judge to read from files. Without it such a task's CUDA variants are not checked.
   */
  referenceData?: (r: ReferenceDataRequest) => Promise<ReferenceDataHandle>;
  /** Captures shared with the other evaluators of one pool run (see CaptureShare); default: this evaluator's own. */
  captureShare?: CaptureShare;
  /**
   * Captures started ahead (prepare) may run beside duels, not only beside checks (GpuSlotMode
   * 'capture' and 'paired'). On by default since 2026-12-04 (KERNELDUEL_CAPTURE_BESIDE_DUELS=0 turns
   * it off): on an H200, 6-13% more evaluations a minute with the same bests, self duels beside
   * context creation 200/200 "same", and every hostile variant's capture run beside honest self
   * duels left all 221 of them "same" (`./test-gpu beside-duels` 52/52, docs/GPU-RUNS.md).
   */
  captureBesideDuels?: boolean;
  /**
   * Captures started ahead (prepare) start gated: the capture process makes its CUDA context, locks
   * down and starts the runtime-code recorder while the GPU may be timing another variant (none of
   * the variant has run yet), and goes on only once its place on the GPU comes, to take the
   * context's ~250 ms off the GPU's critical path. An evaluation that needs a capture still waiting for its
   * place lets it go on under its own. Off by default (KERNELDUEL_CAPTURE_GATE=1 turns it on): on
   * an H200 and an H100 (2026-12-05, bench/results/h*-capture-gate*) it moved the context's time
   * off the duel (duels 469 -> 398 ms) onto the check and timing beside which the context is now
   * made (check 22 -> 55 ms, timing 280 -> 318 ms), for -4% to +11% evaluations a minute and the
   * same bests: no clear gain, so not the default.
   */
  captureGate?: boolean;
}

/** The place on the GPU a capture started ahead takes (Evaluator.prepare): what it waits for before it asks, and the place. */
interface CaptureSlot {
  wait?: () => Promise<void>;
  run: <T>(fn: () => Promise<T>) => Promise<T>;
}

/** A capture's work description, as kept for later evaluations and duels of the same library. */
export interface CaptureEntry {
  desc: string;
  body?: CaptureBody;
  phases?: CapturePhases;
}
type CaptureOutcome = { desc?: string; body?: CaptureBody; failure?: Failure; durationMs: number; digest?: string; phases?: CapturePhases };

/**
 * Captures shared by the evaluators of one pool run (one per GPU, same task and options). A capture
 * records what a variant's entry point asks the GPU to do; on another GPU of the same model under
 * the same plan the same library asks for the same work, so a duel on GPU B against a variant
 * checked and timed on GPU A reuses A's capture instead of running the variant's host code again
 * with B's queue held (~0.3 s on an H200). The key holds the GPU model and the plan: GPUs of
 * different models never share one. It is the description that passed the check, so the duel
 * times exactly the work that was checked.
 */
export class CaptureShare {
  readonly done = new Map<string, CaptureEntry>();
  readonly running = new Map<string, Promise<CaptureOutcome>>();
}

/** What the evaluator asks of a PyTorch task's reference data: check samples per size, for its GPU. */
export interface ReferenceDataRequest {
  gpu: GpuInfo;
  checks: number;
  checksBySize: Record<number, number>;
  signal?: AbortSignal;
}
/** A PyTorch task's reference data: folder and manifest (for the judge's plan), and its removal. */
export interface ReferenceDataHandle extends ReferenceFilesPlan {
  bytes: number;
  seconds: number;
  cleanup(): void;
}

export interface ProbeInfo {
  name: string;
  cc: string;
  sms: number;
  l2Bytes: number;
  globalMemBytes: number;
  emptyWallMs: number;
  /** 'active', or why the harness's system-call filter is not installed (in the capture process). */
  syscallFilter?: string;
  /** 'only to <folder> (Landlock ABI n)', or why the capture process's writes are not restricted. */
  writes?: string;
  /** 'ok', or the driver functions the harness lacks. */
  driverApi?: string;
  /** 'ok', or why stream capture does not work here. */
  capture?: string;
}

/** What the capture process (the only one that runs a variant's host code) reports. */
interface CaptureBody {
  syscallFilter?: string;
  writes?: string;
  sizes?: Array<{ size: number; ops: number; kernels: number; scratchBytes: number }>;
  modules?: string[];
  /** Whether the code libraries load at run time (cuBLAS 13's kernels) was recorded: 'recording', or why not. */
  runtimeCode?: string;
  /** When its phases ended (ms since the epoch, in this order: see CAPTURE_PHASE_MARKS). */
  phasesMs?: Partial<Record<(typeof CAPTURE_PHASE_MARKS)[number], number>>;
}

/**
 * The capture process's phase ends as the harness reports them, in order: main() began, the CUDA
 * context was created (cudaFree(0)), the system-call filter and the write restriction were in
 * place, the runtime-code recorder (CUPTI) was set up, the engine let a gated process go on (the
 * same time as the recorder's when not gated), the variant's library was loaded, the first
 * size's buffers were ready, every size was called and captured, the description was written.
 */
/** The line that starts a judge's timing: "go", or "go CUTOFF" (ms) to stop once the median is decidedly above it (kd_judge.h). */
export function goLine(cutoffMs: number | undefined): string {
  return cutoffMs !== undefined && Number.isFinite(cutoffMs) && cutoffMs > 0 ? `go ${cutoffMs.toPrecision(6)}` : 'go';
}

const CAPTURE_PHASE_MARKS = ['main', 'context', 'locked', 'runtimeCode', 'go', 'loaded', 'ready', 'sizes', 'written'] as const;
/** The stage each interval between those marks (with the process's start before and its end after) is reported as. */
export const CAPTURE_PHASE_STAGES = ['captureStartMs', 'captureContextMs', 'captureLockdownMs', 'captureRuntimeCodeMs', 'captureWaitMs', 'captureLoadMs', 'captureBuffersMs', 'captureCallsMs', 'captureWriteMs', 'captureExitMs'] as const;
export type CapturePhases = Record<(typeof CAPTURE_PHASE_STAGES)[number], number>;

/**
 * Where a capture process's time went (ms), from the harness's phase ends and the engine's own
 * start and end of the process: start (process and sandbox start, to main()), context (the CUDA
 * context), lockdown (system-call filter, Landlock), runtime code (CUPTI), wait (a gated process
 * waiting for its place on the GPU, outside it; 0 when not gated), load (the variant's
 * library), buffers (the first size's), calls (every size's two calls, the capture and the graph
 * walk), write (the work description), exit (the process's teardown, the CUDA context's included,
 * until the engine sees its end). Diagnostic only: the variant's host code runs in that process and
 * could misreport its phases, so nothing is decided on them; undefined unless they are in order.
 */
export function capturePhases(body: CaptureBody | undefined, startedAtMs: number | undefined, endedAtMs: number | undefined): CapturePhases | undefined {
  const p0 = body?.phasesMs;
  if (!p0 || startedAtMs === undefined || endedAtMs === undefined) return undefined;
  const p: Record<string, number | undefined> = { ...p0, go: p0.go ?? p0.runtimeCode }; // a harness before the gate reports no "go"
  const marks = [startedAtMs, ...CAPTURE_PHASE_MARKS.map((k) => p[k]), endedAtMs];
  // A millisecond of slack: the engine's clock reads whole milliseconds.
  if (!marks.every((m): m is number => typeof m === 'number' && Number.isFinite(m)) || marks.some((m, i) => i > 0 && m < marks[i - 1]! - 1)) return undefined;
  const at = marks as number[];
  return Object.fromEntries(CAPTURE_PHASE_STAGES.map((k, i) => [k, Math.max(0, Math.round((at[i + 1] - at[i]) * 10) / 10)])) as CapturePhases;
}
// executor (CheckResult.executor), sparesWaitMs and a duel's start: judges from 2026-12-08 01:00 on.
type CheckBody = Pick<CheckResult, 'checks'> & { isolation?: { refs: string; measurement: string }; executor?: { from?: unknown; ms?: unknown } };
// setupMs, verifyMs, timedMs: judges from 2026-12-08 on (see Timing).
type TimeBody = { l2FlushBytes: number; sparesWaitMs?: number; clocks?: { start: ClockReading; end: ClockReading }; timings: Array<{ size: number; bufferSets?: number; contexts?: number; warmupCalls: number; converged: boolean; verified: number; cutoffMs?: number; setupMs?: number; verifyMs?: number; timedMs?: number; eventMs: number[]; wallMs: number[] }> };
type DuelBody = { duels: Array<{ size: number; start?: { a?: unknown; b?: unknown; executorsMs?: unknown; sparesWaitMs?: unknown }; sets?: number; setupMs?: number; verifyMs?: number; timedMs?: number; aEventMs: number[]; aWallMs: number[]; bEventMs: number[]; bWallMs: number[] }> };

/** A duration the judge reported, or undefined when it is missing or not a finite, non-negative number. */
const msOf = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);

/** The judge's split of a timing's (or duel's) wall time, where it reports one (Timing.setupMs). */
type WallParts = Pick<TimingResult, 'setupMs' | 'verifyMs' | 'timedMs'>;
function wallParts(x: WallParts): WallParts {
  const out: WallParts = {};
  for (const k of ['setupMs', 'verifyMs', 'timedMs'] as const) {
    const ms = msOf(x[k]);
    if (ms !== undefined) out[k] = ms;
  }
  return out;
}

const EXECUTOR_FROM: readonly ExecutorFrom[] = ['idle', 'spare', 'spare-starting', 'new'];
const fromOf = (x: unknown): ExecutorFrom | undefined => EXECUTOR_FROM.find((f) => f === x);

/** The check's executor as the judge reports it (CheckResult.executor); undefined from older judges or a malformed field. */
function executorOf(x: CheckBody['executor']): CheckResult['executor'] {
  const from = fromOf(x?.from);
  const ms = msOf(x?.ms);
  return from && ms !== undefined ? { from, ms } : undefined;
}

/** A duel's start as the judge reports it on its first timed size (DuelResult.start). */
function duelStartOf(x: DuelBody['duels'][number]['start']): DuelResult['start'] {
  const a = fromOf(x?.a), b = fromOf(x?.b), executorsMs = msOf(x?.executorsMs), sparesWaitMs = msOf(x?.sparesWaitMs);
  return a && b && executorsMs !== undefined && sparesWaitMs !== undefined ? { a, b, executorsMs, sparesWaitMs } : undefined;
}

/** The time stage's parts summed over the timed sizes (EvalResult.stages.timeSetupMs, timeVerifyMs), where the judge reports them. */
function timeParts(timings: TimeBody['timings'] | undefined): { timeSetupMs?: number; timeVerifyMs?: number } {
  const parts = (timings ?? []).map(wallParts);
  if (!parts.length || parts.some((p) => p.setupMs === undefined || p.verifyMs === undefined)) return {};
  return { timeSetupMs: parts.reduce((a, p) => a + p.setupMs!, 0), timeVerifyMs: parts.reduce((a, p) => a + p.verifyMs!, 0) };
}

/**
 * Folders whose libraries may supply device code a variant's work uses (cuBLAS and the like):
 * the CUDA toolkit's and the system's library folders, never KernelDuel's work folder.
 */
export function deviceCodeRoots(tc: Pick<Toolchain, 'cudaHome' | 'libDir'>): string[] {
  const roots = new Set<string>();
  const add = (p: string | null | undefined): void => {
    if (!p) return;
    try {
      roots.add(realpathSync(p));
    } catch {
      /* absent */
    }
  };
  add(tc.cudaHome);
  add(tc.libDir);
  for (const p of ['/usr/lib', '/usr/lib64', '/lib', '/lib64', '/usr/local/lib', '/usr/local/cuda', '/opt/nvidia']) add(p);
  try {
    for (const d of readdirSync('/usr/local')) if (d.startsWith('cuda')) add(join('/usr/local', d));
  } catch {
    /* no /usr/local */
  }
  return [...roots];
}

/** The sha256 of a file (a variant's library, checked around the runs of variant host code). */
function digestOf(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export class Evaluator {
  readonly task: Task;
  readonly env: BuildEnv;
  readonly gpu: GpuInfo | null;
  readonly seeds: number[];
  readonly timing: TimingSettings;
  private readonly opts: EvaluatorOptions;
  private harnessPath: Promise<string> | null = null;
  private judgeReady: Promise<Judge> | null = null;
  private judgeInst: Judge | null = null;
  private probeInfo: Promise<ProbeInfo> | null = null;
  /** How capture runs are isolated here, settled by the probe (see probe()). */
  private iso: HarnessIsolation = {};
  /** The isolation the probe settled on (every limit, less any the GPU does not work under here). */
  get isolation(): HarnessIsolation {
    return this.iso;
  }
  /** The judge's folder (plan file, its work). */
  readonly judgeDir: string;
  /** Work descriptions by captureKey (the sha256 of the library they were captured from, under this evaluator's plan). */
  private readonly captures: Map<string, CaptureEntry>;
  /** Whether the judge reports clocks itself (NVML): then nvidia-smi is not run around timing. */
  private judgeHasClocks = false;
  /** A PyTorch task's reference data, once computed (removed by close()). */
  private refData: ReferenceDataHandle | null = null;
  /** Whether the reference data's folder is hidden from the capture process (bubblewrap's private /dev/shm and /tmp). */
  private refsHidden = true;
  /** Captures running now, by the same key. */
  private readonly capturing: Map<string, Promise<CaptureOutcome>>;
  /** Gated captures of this evaluator still waiting for their place on the GPU, by captureKey: calling one lets it go on now. */
  private readonly gates = new Map<string, () => void>();
  /** What a shared capture's key starts with: GPU model and plan (see CaptureShare). */
  private captureScope: string | null = null;

  constructor(opts: EvaluatorOptions) {
    if (!opts.toolchain.nvcc || !opts.toolchain.version) {
      throw new Error(`cannot build variants: ${opts.toolchain.problems.join(' ') || 'nvcc not found'}`);
    }
    this.opts = opts;
    this.task = opts.task;
    this.gpu = opts.gpu;
    const arch = opts.arch ?? (opts.gpu?.arch || 'sm_90');
    this.env = { nvcc: opts.toolchain.nvcc, nvccVersion: opts.toolchain.version, arch, libDir: opts.toolchain.libDir, workRoot: opts.workRoot ?? defaultWorkRoot() };
    this.seeds = opts.seeds ?? [randomInt(1, 2 ** 31), randomInt(1, 2 ** 31), randomInt(1, 2 ** 31)];
    // KERNELDUEL_SPARES_WAIT=0 or 2: experiments (TimingSettings.sparesWait), for A/B runs of one bundle.
    const sparesEnv = process.env.KERNELDUEL_SPARES_WAIT;
    this.timing = { ...DEFAULT_TIMING, ...(sparesEnv === '0' || sparesEnv === '2' ? { sparesWait: Number(sparesEnv) } : {}), ...(opts.timing ?? {}) };
    this.captures = opts.captureShare?.done ?? new Map();
    this.capturing = opts.captureShare?.running ?? new Map();
    const key = createHash('sha256').update(this.task.hash).update(JSON.stringify(this.seeds)).update(arch).update(randomBytes(4)).digest('hex').slice(0, 16);
    this.judgeDir = join(this.env.workRoot, 'judges', `${this.task.manifest.name}-${key}`);
  }

  get compileOnly(): boolean {
    return this.gpu === null;
  }

  private get source(): MeasurementSource {
    return this.gpu ? { kind: 'gpu', gpu: this.gpu.name, uuid: this.gpu.uuid } : { kind: 'none' };
  }

  /** This GPU's own subfolder name for harness work (plan and result files), so GPUs of one pool never share one. */
  private get gpuDir(): string {
    return this.gpu ? (this.gpu.uuid || `gpu${this.gpu.index}`).replace(/[^A-Za-z0-9_-]/g, '_') : 'none';
  }

  /** The GPU queue this evaluator measures through (shared per GPU). */
  queue(): GpuQueue {
    return gpuQueueOf(this.gpu);
  }

  harness(): Promise<string> {
    this.harnessPath ??= ensureHarness(this.env);
    return this.harnessPath;
  }

  private sizeSeeds(): Record<number, number[]> {
    const big = this.opts.bigOutputBytes ?? 128 << 20;
    const out: Record<number, number[]> = {};
    this.task.manifest.sizes.forEach((_, i) => {
      const lay = sizeLayout(this.task, i);
      const outBytes = lay.args.reduce((acc, a) => acc + (a.kind === 'buffer' && a.role !== 'in' ? a.elements * DTYPE_BYTES[a.dtype] : 0), 0);
      if (outBytes > big) out[i] = this.seeds.slice(0, 2);
    });
    return out;
  }

  /**
   * The plan the harness processes read. It says how many check seeds each size gets, never which:
   * the judge draws them itself, so no file a variant could read holds them.
   */
  plan(): PlanInput {
    const sizeSeeds = Object.fromEntries(Object.entries(this.sizeSeeds()).map(([k, v]) => [k, v.map(() => 0)]));
    return {
      task: this.task,
      sizes: this.task.manifest.sizes.map((_, i) => i),
      seeds: this.seeds.map(() => 0),
      sizeSeeds,
      timed: this.task.timed,
      timing: this.timing,
      verifySamples: this.opts.verifySamples,
    };
  }

  /** Device facts from the harness itself (L2 size, launch+sync overhead), in the capture process's isolation. */
  probe(signal?: AbortSignal): Promise<ProbeInfo> {
    if (!this.gpu) return Promise.reject(new Error('no GPU: cannot probe'));
    // The probe also settles the capture process's isolation: it runs with every limit first;
    // should the GPU not work inside the sandbox or under the memory limit on this machine, the
    // limit that breaks it is dropped (said once) rather than every measurement failing.
    this.probeInfo ??= this.harness().then((h) =>
      this.queue().add(async () => {
        const attempts: Array<{ iso: HarnessIsolation; drop: string }> = [
          { iso: {}, drop: '' },
          { iso: { sandbox: false }, drop: 'the bubblewrap sandbox' },
          { iso: { dataBytes: null }, drop: 'the memory limit (RLIMIT_DATA)' },
          { iso: { syscallFilter: false }, drop: "the harness's system-call filter" },
          { iso: { sandbox: false, dataBytes: null, nproc: null, syscallFilter: false }, drop: 'the sandbox, the system-call filter and the memory and process limits' },
        ].filter((a) => !(a.iso.sandbox === false && sandboxMode() === 'require'));
        let first: string | null = null;
        for (const a of attempts) {
          const r = await runHarness<ProbeInfo>({ harness: h, mode: 'probe', plan: null, libs: [], workDir: join(this.env.workRoot, 'probe', this.gpuDir), gpu: cudaDeviceSelector(this.gpu!), timeoutMs: 60_000, signal, isolation: a.iso });
          if (r.ok && r.body) {
            this.iso = a.iso;
            if (a.drop) noteOnce(`probe-drop:${a.drop}`, `the GPU does not work here under ${a.drop} (${first}); variants' host code runs without it (the measurements do not depend on it: docs/ISOLATION.md)`);
            const filter = r.body.syscallFilter;
            if (filter && filter !== 'active' && a.iso.syscallFilter !== false) noteOnce(`syscall-filter:${filter}`, `the harness's system-call filter (no new processes, no network sockets, no signals to other processes) is not installed here: ${filter}`);
            const writes = r.body.writes;
            if (writes && !writes.startsWith('only to') && a.iso.sandbox === false)
              noteOnce(`writes:${writes}`, `variants' host code runs here without the sandbox and without Landlock (${writes}): it could write wherever you can, other variants' builds included`);
            if (r.body.driverApi && r.body.driverApi !== 'ok') throw new Error(`the CUDA driver here lacks what the harness needs (${r.body.driverApi}): KernelDuel needs a driver for CUDA 12.4 or newer`);
            if (r.body.capture && r.body.capture !== 'ok') throw new Error(`CUDA stream capture does not work here (${r.body.capture}): KernelDuel captures each variant's GPU work to time it without running its host code`);
            return r.body;
          }
          first ??= `${r.failure?.reason}\n${r.stdoutTail}`;
          if (signal?.aborted) break;
        }
        throw new Error(`the GPU probe failed: ${first}`);
      }) as Promise<ProbeInfo>,
    );
    return this.probeInfo;
  }

  /**
   * Builds the trusted reference and starts the judge (once per evaluator). For a PyTorch task, the
   * reference data is computed first (PyTorch on this GPU, into a private folder; the judge's plan
   * carries its manifest, the capture process's plan never does).
   */
  reference(signal?: AbortSignal): Promise<Judge> {
    this.judgeReady ??= (async () => {
      await this.probe(signal);
      let referenceLib: string;
      let planInput = this.plan();
      if (this.task.pytorch) {
        if (!this.opts.referenceData) throw new Error(`task ${this.task.manifest.name} has a PyTorch reference (${this.task.referencePath}): its CUDA variants are checked against reference data PyTorch computes, and this evaluator was made without a way to compute it`);
        const checksBySize = Object.fromEntries(Object.entries(this.sizeSeeds()).map(([k, v]) => [k, v.length]));
        // PyTorch runs on this GPU: with it to itself, as any measuring job (no timing beside it).
        const compute = this.opts.referenceData;
        this.refData ??= await this.queue().add(() => compute({ gpu: this.gpu!, checks: this.seeds.length, checksBySize, signal }));
        planInput = { ...planInput, reference: this.refData };
        referenceLib = 'files';
        // The folder is hidden from variants' host code only inside bubblewrap (an empty tmpfs over it).
        this.refsHidden = this.iso.sandbox !== false && (await sandboxStatus()).active;
        if (!this.refsHidden) noteOnce('refs-visible', `the capture process runs without the bubblewrap sandbox here, so a variant's host code could read the PyTorch reference data (${this.refData.dir}); results say so (check.isolation.refs)`);
      } else {
        const b = await this.buildReference(signal);
        if (b.failure || !b.libPath) throw new Error(`${b.failure?.reason}\n${b.failure?.log ?? ''}`);
        referenceLib = b.libPath;
      }
      const h = await this.harness();
      mkdirSync(this.judgeDir, { recursive: true });
      const planPath = join(this.judgeDir, 'plan.txt');
      writeFileSync(planPath, renderPlan(planInput, 'judge'), { mode: 0o600 });
      const env = harnessEnv(cudaDeviceSelector(this.gpu!), {});
      env.KERNELDUEL_DEVICE_CODE_ROOTS = deviceCodeRoots(this.opts.toolchain).join(':');
      env.KERNELDUEL_WORK_ROOT = this.env.workRoot;
      this.judgeInst = new Judge({ harness: h, planPath, referenceLib, env, cwd: this.judgeDir });
      return this.judgeInst;
    })();
    this.judgeReady.catch(() => {
      this.judgeReady = null;
    });
    return this.judgeReady;
  }

  /** Stops the judge (frees its GPU memory; a PyTorch task's reference data is removed); the next measurement starts a new one. */
  close(): void {
    this.judgeInst?.close();
    if (this.refData) {
      this.refData.cleanup();
      this.refData = null;
      this.judgeReady = null;
      this.judgeInst = null;
    }
  }

  /** Builds the trusted reference (cached like any build); a failure names the reference file. */
  async buildReference(signal?: AbortSignal): Promise<BuildResult> {
    if (this.task.pytorch) {
      const reason = `task ${this.task.manifest.name} has a PyTorch reference (${this.task.referencePath}): there is no CUDA reference to build; its reference data is computed by PyTorch on the GPU (see reference())`;
      return { ok: false, arch: this.env.arch, command: [], resources: [], log: '', durationMs: 0, failure: { kind: 'constraints', reason } };
    }
    const b = await this.build({ source: this.task.referenceSource, config: defaultConfig(this.task), flags: { opt: 3 } }, signal);
    if (b.ok && b.libPath) return b;
    const why = b.failure?.reason ?? 'no library was written';
    return { ...b, ok: false, failure: { kind: b.failure?.kind ?? 'compile', reason: `the reference of task ${this.task.manifest.name} (${this.task.referencePath}) does not build: ${why}`, log: b.failure?.log } };
  }

  build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, signal?: AbortSignal) {
    return buildVariant(this.task, spec, this.env, signal);
  }

  /** Runs the variant's host code once per size in the sandboxed capture process; the work description's path, or why not. */
  private async capture(lib: string, signal?: AbortSignal, slot?: CaptureSlot): Promise<CaptureOutcome> {
    // The judge loads the variant's device code from this file after the capture: it must be the
    // file that was built (without the sandbox, the variant's host code could rewrite it).
    const before = digestOf(lib);
    const key = this.captureKey(before);
    // The same library under the same plan asks for the same work: a duel reuses the capture of the
    // evaluation before it (the description is checked by the executor each time it is used), also
    // one made on another GPU of the same model in the same pool run (see CaptureShare).
    const cached = this.captures.get(key);
    if (cached && existsSync(cached.desc)) return { ...cached, durationMs: 0, digest: before };
    // One capture at a time per library: an evaluation waits for the capture prepare() started.
    const inflight = this.capturing.get(key);
    if (inflight) {
      // A gated capture (of this evaluator) still waiting for its own place goes on now, under the
      // caller's: the caller holds a place on this GPU and waits for this capture, so waiting for
      // another place could hold both back (first come, first served).
      if (!slot) this.gates.get(key)?.();
      const t0 = Date.now();
      const r = await inflight;
      return { ...r, durationMs: Date.now() - t0 };
    }
    const run = this.captureNow(lib, before, key, signal, slot);
    this.capturing.set(key, run);
    try {
      return await run;
    } finally {
      this.capturing.delete(key);
    }
  }

  /** Whether captures started ahead may run beside duels (EvaluatorOptions.captureBesideDuels). */
  get captureBesideDuels(): boolean {
    return this.opts.captureBesideDuels ?? process.env.KERNELDUEL_CAPTURE_BESIDE_DUELS !== '0';
  }

  /** A capture's key: the library's sha256, after the GPU model and the plan when captures are shared. */
  private captureKey(digest: string): string {
    if (!this.opts.captureShare) return digest;
    this.captureScope ??= createHash('sha256')
      .update(normaliseGpuName(this.gpu?.name ?? 'none'))
      .update(JSON.stringify({ ...this.plan(), task: this.task.hash }))
      .digest('hex')
      .slice(0, 16);
    return `${this.captureScope}:${digest}`;
  }

  /**
   * Runs the capture process. Without `slot` the caller already holds the GPU place it runs in. With
   * `slot` (prepare with captureGate on) the process starts gated, outside any place: once it is
   * ready (CUDA context, lockdown, recorder; nothing of the variant yet) it goes on inside `slot`,
   * which holds the place until the process has ended, or at once when a caller that holds a place
   * needs it (see capture).
   */
  private async captureNow(lib: string, before: string, key: string, signal?: AbortSignal, slot?: CaptureSlot): Promise<CaptureOutcome> {
    const h = await this.harness();
    // A folder per GPU: evaluators of several GPUs (a pool run) capture the same library at once.
    const dir = join(lib, '..', 'runs', this.gpuDir);
    mkdirSync(dir, { recursive: true });
    const desc = join(dir, `work-${randomBytes(6).toString('hex')}.kdw`);
    let gate: { open: () => Promise<boolean> } | undefined;
    let ended = false;
    let release: (() => void) | null = null;
    let resolveOpen: (go: boolean) => void = () => undefined;
    if (slot) {
      let granted = false;
      const opened = new Promise<boolean>((r) => (resolveOpen = r));
      const grant = (): boolean => {
        if (granted || ended) return false;
        granted = true;
        resolveOpen(true);
        return true;
      };
      this.gates.set(key, () => void grant());
      // What the place waits for (the next duel) starts now, with the process: a duel that begins
      // while the process makes its context is the one it runs beside.
      const waited = slot.wait ? slot.wait() : Promise.resolve();
      waited.catch(() => undefined);
      gate = {
        open: (): Promise<boolean> => {
          // The place is held from "go" until the process has ended (release below); a place that
          // comes after a caller let the process go on (or after it ended) is given back at once.
          void (async () => {
            await waited;
            if (granted || ended) return; // a caller let it go on meanwhile: no place to ask for
            await slot.run(() => new Promise<void>((done) => {
              if (grant()) release = done;
              else done();
            }));
          })().catch(() => resolveOpen(false));
          return opened;
        },
      };
    }
    let r: HarnessOutcome<CaptureBody>;
    try {
      r = await runHarness<CaptureBody>({
        harness: h, mode: 'capture', plan: this.plan(), libs: [lib, desc], workDir: dir, gpu: cudaDeviceSelector(this.gpu!),
        // A PyTorch task's reference data is hidden from the variant's host code wherever it is (bubblewrap).
        timeoutMs: this.opts.captureTimeoutMs ?? 60_000, signal, isolation: this.refData ? { ...this.iso, hidden: [this.refData.dir] } : this.iso,
        ...(gate ? { gate } : {}),
      });
    } finally {
      ended = true;
      if (slot) this.gates.delete(key);
      resolveOpen(false);
      (release as (() => void) | null)?.();
    }
    const phases = capturePhases(r.body, r.startedAtMs, r.endedAtMs);
    // A gated process's time on the GPU starts at "go"; before, it waited outside any place.
    const onGpuFrom = r.goAtMs ?? r.startedAtMs ?? 0;
    const durationMs = r.goAtMs !== undefined && r.endedAtMs !== undefined ? r.endedAtMs - r.goAtMs : r.durationMs;
    traceGpu({ q: this.queue().key, ev: 'capture', what: libTag(lib), start: onGpuFrom, end: r.endedAtMs ?? 0 });
    if (!r.ok) return { body: r.body, failure: { ...r.failure!, reason: `capture: ${r.failure!.reason}` }, durationMs };
    if (digestOf(lib) !== before) return { body: r.body, failure: { kind: 'runtime', reason: "capture: the variant's library changed while its host code ran (it rewrote its own build)" }, durationMs };
    if (!existsSync(desc)) return { body: r.body, failure: { kind: 'runtime', reason: 'capture: the capture process wrote no work description' }, durationMs };
    this.captures.set(key, { desc, body: r.body, phases });
    return { desc, body: r.body, durationMs, digest: before, phases };
  }

  /** Whether captures started ahead start gated (EvaluatorOptions.captureGate). */
  get captureGate(): boolean {
    return this.opts.captureGate ?? process.env.KERNELDUEL_CAPTURE_GATE === '1';
  }

  /** The isolation a check ran under: the judge's account plus the capture process's filter state. */
  private isolationOf(judged: CheckBody['isolation'], cap: CaptureBody | undefined): CheckResult['isolation'] {
    let refs = judged?.refs ?? 'judge';
    if (this.task.pytorch && !this.refsHidden) refs += "; NOT hidden from variants' host code here (no bubblewrap sandbox: the capture process could read the reference folder)";
    return { refs, measurement: judged?.measurement, syscallFilter: cap?.syscallFilter ?? 'unknown', writes: cap?.writes, sandbox: this.iso.sandbox === false ? 'off' : 'auto' };
  }

  /**
   * Build, check and time one variant. Failures come back in the result, never as exceptions. An
   * evaluation that shared the GPU (see below) and failed at run time is done once more with the
   * GPU to itself: another variant's capture running beside its check (holding GPU memory, say)
   * must not be able to make it fail.
   */
  async evaluate(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, o: EvalOptions = {}): Promise<EvalResult> {
    const { result, shared } = await this.evaluateOnce(spec, o);
    if (result.failure?.kind === 'runtime' && shared && !o.signal?.aborted) return (await this.evaluateOnce(spec, { ...o, exclusive: true })).result;
    return result;
  }

  private async evaluateOnce(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, o: EvalOptions): Promise<{ result: EvalResult; shared: boolean }> {
    if (o.screen ?? this.opts.screen) {
      const failure = screenVariant(this.task, spec.source);
      if (failure) return { shared: false, result: { build: { ok: false, arch: this.env.arch, command: [], resources: [], log: '', durationMs: 0, failure }, failure, source: this.source } };
    }
    o.onStage?.('build');
    const build = await this.build(spec, o.signal);
    if (!build.ok || !build.libPath) return { shared: false, result: { build, failure: build.failure, source: this.source } };
    if (!this.gpu) {
      // Compile-only still builds the reference: a broken one must not pass for lack of a GPU (a
      // PyTorch reference is not built).
      const refFailure = this.task.pytorch ? undefined : (await this.buildReference(o.signal)).failure;
      return { shared: false, result: refFailure ? { build, failure: refFailure, source: this.source, compileOnly: true } : { build, source: this.source, compileOnly: true } };
    }
    let judge: Judge;
    let probe: ProbeInfo;
    try {
      probe = await this.probe(o.signal);
      judge = await this.reference(o.signal);
    } catch (e) {
      return { shared: false, result: { build, source: this.source, failure: { kind: 'runtime', reason: (e as Error).message.split('\n')[0], log: (e as Error).message } } };
    }
    const lib = build.libPath;
    const checkTimeoutMs = this.opts.checkTimeoutMs ?? 120_000;
    const timeTimeoutMs = this.opts.timeTimeoutMs ?? this.task.timed.length * (this.timing.maxMs + 60_000) + 30_000;
    const time = o.time !== false;
    const clocks = async (): Promise<ClockReading | undefined> => (await readClocks(this.gpu!.index).catch(() => null)) ?? undefined;
    // The capture and the check run beside other variants' captures and checks (none of them is
    // timed); timing waits until the GPU is this evaluation's alone. Only where the capture
    // process's writes are confined to its own folder (Landlock), so no variant's host code can
    // touch another variant's library while that one is being checked; else everything is exclusive.
    const overlap = !o.exclusive && this.overlapAllowed(probe);
    const q = this.queue();
    const tQueued = Date.now();
    let slot = await q.acquire(overlap ? 'shared' : 'exclusive', `check ${libTag(lib)}`);
    const result = await (async (): Promise<EvalResult> => {
      o.onStage?.('check');
      const tStart = Date.now();
      const cap = await this.capture(lib, o.signal);
      if (cap.failure) {
        const check = { ok: false, checks: [], isolation: this.isolationOf(undefined, cap.body), failure: cap.failure, durationMs: cap.durationMs };
        return { build, check, failure: cap.failure, source: this.source };
      }
      let clocksStart: ClockReading | undefined;
      const t0 = Date.now();
      let tTime = 0;
      let tGo = 0;
      const stages = (): EvalResult['stages'] => {
        const end = Date.now();
        const exec = executorOf(ans?.body.executor);
        const sparesWait = msOf(ans?.body.sparesWaitMs);
        return {
          queuedMs: tStart - tQueued + (tGo && tTime ? tGo - tTime : 0), captureMs: cap.durationMs, checkMs: (tTime || end) - t0, timeMs: tGo ? end - tGo : 0, ...cap.phases, ...timeParts(ans?.body.timings),
          ...(exec ? { checkExecMs: exec.ms } : {}), ...(sparesWait !== undefined ? { timeSparesWaitMs: sparesWait } : {}),
        };
      };
      let ans: JudgeAnswer<Partial<CheckBody & TimeBody>> | undefined;
      try {
        ans = await judge.call<Partial<CheckBody & TimeBody>>(['eval', lib, cap.desc!, time ? '1' : '0', String(checkTimeoutMs), String(timeTimeoutMs)], checkTimeoutMs + timeTimeoutMs + 120_000, (ev) => {
          if (ev !== 'time') return;
          tTime = Date.now();
          o.onStage?.('time');
          // The check passed: the judge waits for "go" until the GPU is this evaluation's alone.
          void (async () => {
            try {
              if (slot.mode === 'shared') {
                slot.release();
                slot = await q.acquire('exclusive', `time ${libTag(lib)}`);
              }
              // The judge reads clocks itself just before and after it times (NVML); without NVML
              // nvidia-smi is asked here, before "go" and after the answer.
              if (!this.judgeHasClocks) clocksStart = await clocks();
              tGo = Date.now();
              judge.send(o.signal?.aborted ? 'stop' : goLine(o.cutoffMs));
            } catch {
              judge.send('stop');
            }
          })();
        });
      } catch (e) {
        const failure: Failure = { kind: e instanceof JudgeError ? e.kind : 'runtime', reason: (e as Error).message.split('\n')[0], log: (e as Error).message };
        return { build, check: { ok: false, checks: [], failure, durationMs: Date.now() - t0 }, failure, source: this.source };
      }
      if (ans.body.clocks) {
        this.judgeHasClocks = true;
        clocksStart = ans.body.clocks.start;
      }
      const clocksEnd = ans.body.clocks?.end ?? (time && tGo ? await clocks() : undefined);
      const failure: Failure | undefined = ans.status === 'ok' ? undefined : { kind: failureKind(ans.status), reason: ans.error ?? ans.status };
      const checkPassed = ans.status === 'ok' || ans.stage === 'time';
      const executor = executorOf(ans.body.executor);
      const checkResult: CheckResult = { ok: checkPassed, checks: ans.body.checks ?? [], isolation: this.isolationOf(ans.body.isolation, cap.body), ...(executor ? { executor } : {}), failure: checkPassed ? undefined : failure, durationMs: (tTime || Date.now()) - t0 };
      if (failure) return { build, check: checkResult, failure, source: this.source, stages: stages() };
      if (!time) return { build, check: checkResult, source: this.source, stages: stages() };
      if (!ans.body.timings) return { build, check: checkResult, failure: { kind: 'runtime', reason: 'the judge gave no timings' }, source: this.source, stages: stages() };
      return { build, check: checkResult, timing: this.timingOf(ans.body as TimeBody, probe, clocksStart, clocksEnd), source: this.source, stages: stages() };
    })().finally(() => slot.release());
    return { result, shared: overlap };
  }

  /** Whether captures and checks may share the GPU (see evaluate): only when capture writes are confined (Landlock). */
  private overlapAllowed(probe: ProbeInfo): boolean {
    if (process.env.KERNELDUEL_OVERLAP === '0') return false;
    return this.iso.sandbox !== false && this.iso.syscallFilter !== false && !!probe.writes?.startsWith('only to');
  }

  /**
   * Builds a variant and captures its work ahead of its evaluation (sharing the GPU, like a check),
   * so that evaluate() finds the capture done. Does nothing without a GPU, where captures may not
   * overlap (see evaluate) or when the build fails; never throws.
   */
  async prepare(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, signal?: AbortSignal): Promise<void> {
    try {
      if (!this.gpu || signal?.aborted) return;
      // A source the screen refuses is never built, so its host code never runs ahead either.
      if (this.opts.screen && screenVariant(this.task, spec.source)) return;
      const b = await this.build(spec, signal);
      if (!b.ok || !b.libPath) return;
      const probe = await this.probe(signal);
      if (!this.overlapAllowed(probe)) return;
      const what = `capture-ahead ${libTag(b.libPath)}`;
      const q = this.queue();
      // Beside the next duel (or after 2 s without one), not beside a check: a capture beside a
      // check holds back the timing that follows it. With captureGate the process starts now and
      // only its run from "go" on takes the place (see captureNow).
      const slot: CaptureSlot = this.captureBesideDuels
        ? {
          wait: async () => {
            await q.nextPaired(2000, signal);
            if (signal?.aborted) throw new Error('cancelled');
          },
          run: (fn) => q.run('capture', fn, what),
        }
        : { run: (fn) => q.share(fn, what) };
      // Without the gate the whole capture runs in that place, as it registers as in flight only
      // once it has it (an evaluation that needs it meanwhile captures in its own place instead).
      if (this.captureGate) await this.capture(b.libPath, signal, slot);
      else {
        await slot.wait?.();
        await slot.run(() => this.capture(b.libPath!, signal));
      }
    } catch {
      /* evaluate() says why */
    }
  }

  private timingOf(t: TimeBody, probe: ProbeInfo, clocksStart?: ClockReading, clocksEnd?: ClockReading): TimingResult[] {
    return t.timings.map((x) => {
      // The executor times the rebuilt work between two events on its own stream: see chooseTimer.
      const { timer, note } = chooseTimer(x.eventMs, x.wallMs, probe.emptyWallMs, { eventsBracketAll: true });
      const samples = timer === 'wall' ? x.wallMs : x.eventMs;
      const ci = medianCI(samples);
      const sets = x.bufferSets !== undefined ? setSpread(samples, x.bufferSets) : null;
      return {
        size: x.size, samplesMs: samples, eventMs: x.eventMs, wallMs: x.wallMs, timer, timerNote: note,
        medianMs: ci.median, meanMs: mean(samples), minMs: Math.min(...samples), ciLowMs: ci.low, ciHighMs: ci.high, relNoise: ci.relNoise,
        converged: x.converged && ci.relNoise <= this.timing.targetRelNoise * 1.5, warmupCalls: x.warmupCalls, verifiedCalls: x.verified,
        ...wallParts(x),
        ...(x.cutoffMs !== undefined && x.cutoffMs > 0 ? { cutoffMs: x.cutoffMs } : {}),
        ...(x.bufferSets !== undefined ? { bufferSets: x.bufferSets } : {}), ...(x.contexts !== undefined && x.contexts > 1 ? { contexts: x.contexts } : {}), ...(sets ? sets : {}), l2FlushBytes: t.l2FlushBytes, clocksStart, clocksEnd,
      };
    });
  }

  /** Paired, interleaved timing of A against B, each in an executor of its own. ratio > 1: A is faster. */
  async duel(a: Pick<VariantSpec, 'source' | 'config' | 'flags'>, b: Pick<VariantSpec, 'source' | 'config' | 'flags'>, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    const [ba, bb] = await Promise.all([this.build(a, signal), this.build(b, signal)]);
    if (!ba.ok || !bb.ok) return { failure: ba.failure ?? bb.failure };
    if (!this.gpu) return { failure: { kind: 'runtime', reason: 'no GPU: both variants built, but timing a duel needs a GPU' } };
    let probe: ProbeInfo;
    try {
      probe = await this.probe(signal);
      await this.reference(signal); // the reference is built and the judge started before the GPU's place is held
    } catch (e) {
      return { failure: { kind: 'runtime', reason: (e as Error).message.split('\n')[0], log: (e as Error).message } };
    }
    const timeoutMs = this.task.timed.length * (this.timing.maxMs * 2 + 60_000) + 30_000;
    const what = `duel ${libTag(ba.libPath!)} vs ${libTag(bb.libPath!)}`;
    const attempt = (mode: 'paired' | 'exclusive') => this.queue().run(mode, async () => {
      const r = await this.duelBody(ba.libPath!, bb.libPath!, probe, timeoutMs, signal);
      return { r, beside: mode === 'paired' && this.queue().captureBesidePaired };
    }, what);
    const first = await attempt(this.captureBesideDuels ? 'paired' : 'exclusive');
    if (!first.r.failure || !first.beside || signal?.aborted) return first.r;
    // A capture ran beside this duel and the duel failed: the capture may have caused it (a
    // variant's host code may take the GPU's memory, or its time), so the duel runs again with the
    // GPU alone and that answer stands.
    const again = (await attempt('exclusive')).r;
    const firstReason = first.r.failure.reason.split('\n')[0];
    if (again.failure) return { failure: { ...again.failure, reason: `${again.failure.reason} (also with the GPU alone; beside a capture: ${firstReason})` } };
    return { duels: again.duels?.map((d) => ({ ...d, ranAloneAfter: firstReason })) };
  }

  /** One duel's work with its place held: both sides' captures (cached where done), then the judge's paired timing. */
  private async duelBody(libA: string, libB: string, probe: ProbeInfo, timeoutMs: number, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    const ca = await this.capture(libA, signal);
    if (ca.failure) return { failure: { ...ca.failure, reason: `A: ${ca.failure.reason}` } };
    const cb = await this.capture(libB, signal);
    if (cb.failure) return { failure: { ...cb.failure, reason: `B: ${cb.failure.reason}` } };
    // B's host code ran after A's capture: A's library must still be the one A's capture saw.
    if (digestOf(libA) !== ca.digest) return { failure: { kind: 'runtime', reason: "A: the variant's library changed while the other variant's host code ran" } };
    try {
      // The judge duel() started (memoised; it starts a new process after one died).
      const judge = await this.reference(signal);
      const ans = await judge.call<DuelBody>(['duel', libA, ca.desc!, libB, cb.desc!, String(timeoutMs)], timeoutMs + 60_000);
      if (ans.status !== 'ok') return { failure: { kind: failureKind(ans.status), reason: ans.error ?? ans.status } };
      return {
        duels: ans.body.duels.map((d) => {
          const start = duelStartOf(d.start);
          return { ...duelStats(d.size, d.aEventMs, d.aWallMs, d.bEventMs, d.bWallMs, probe.emptyWallMs, { eventsBracketAll: true, sets: d.sets }), ...wallParts(d), ...(start ? { start } : {}) };
        }),
      };
    } catch (e) {
      return { failure: { kind: e instanceof JudgeError ? e.kind : 'runtime', reason: (e as Error).message.split('\n')[0], log: (e as Error).message } };
    }
  }
}
