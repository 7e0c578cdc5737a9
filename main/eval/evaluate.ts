// The evaluation pipeline for one task on one GPU: build (parallel, cached) -> check against the
// reference (every element, several sizes and seeds) -> time (L2 flushed, whole-device sync,
// until the median is tight). Without a GPU it builds only and says so. GPU work is serialised
// per GPU through one queue per device, so two sessions never time on the same GPU at once.
import { createHash, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import PQueue from 'p-queue';
import type { BuildResult, CheckResult, ClockReading, DuelResult, EvalResult, Failure, MeasurementSource, TimingResult, VariantSpec } from '../common/types.js';
import type { Toolchain } from '../toolchain/nvcc.js';
import type { GpuInfo } from '../gpu/detect.js';
import { cudaDeviceSelector, readClocks } from '../gpu/detect.js';
import { withGpuLock } from '../gpu/lock.js';
import { buildVariant, type BuildEnv } from '../build/compile.js';
import { DTYPE_BYTES, sizeLayout, type Task } from '../task/manifest.js';
import { workRoot as defaultWorkRoot } from '../common/paths.js';
import { DEFAULT_TIMING, ensureHarness, runHarness, type HarnessIsolation, type PlanInput, type TimingSettings } from './harness.js';
import { screenSource } from '../llm/screen.js';
import { noteOnce, sandboxMode } from '../sandbox/index.js';
import { chooseTimer, duelStats, mean, medianCI } from './stats.js';
import { defaultConfig } from '../task/space.js';

/** Screens untrusted source (from a model or a user) before it is built: a `rejected` failure, or null when it may be built. */
export function screenVariant(task: Task, source: string): Failure | null {
  const s = screenSource(source, task);
  if (s.ok) return null;
  return { kind: 'rejected', reason: `screening: ${s.reason}`, log: s.violations.map((v) => `line ${v.line}: [${v.rule}] ${v.reason}`).join('\n') };
}

/**
 * The one queue through which every measurement on a GPU passes: one job at a time in this
 * process, and (through a lock file per GPU) one at a time across KernelDuel processes.
 */
export class GpuQueue {
  private readonly q = new PQueue({ concurrency: 1 });
  constructor(readonly key: string) {}
  /** Jobs waiting or running. */
  get pending(): number {
    return this.q.size + this.q.pending;
  }
  /** Jobs running now (0 or 1). */
  get running(): number {
    return this.q.pending;
  }
  add<T>(fn: () => Promise<T>): Promise<T> {
    return this.q.add(() =>
      withGpuLock(this.key, fn, { onWait: (owner) => process.stderr.write(`kernelduel: GPU ${this.key} is measuring for another KernelDuel process (${owner}); waiting\n`) }),
    ) as Promise<T>;
  }
}
const gpuQueues = new Map<string, GpuQueue>();
export function gpuQueue(key: string): GpuQueue {
  let q = gpuQueues.get(key);
  if (!q) {
    q = new GpuQueue(key);
    gpuQueues.set(key, q);
  }
  return q;
}

export interface EvaluatorOptions {
  task: Task;
  toolchain: Toolchain;
  /** null: compile-only (no GPU). */
  gpu: GpuInfo | null;
  /** nvcc -arch; defaults to the GPU's, or sm_90 when compile-only. */
  arch?: string;
  workRoot?: string;
  /** Seeds for the correctness checks; default three fresh random seeds. */
  seeds?: number[];
  timing?: Partial<TimingSettings>;
  checkTimeoutMs?: number;
  timeTimeoutMs?: number;
  /** Check and time in two harness processes, as before checktime (also KERNELDUEL_SEPARATE_TIMING=1). */
  separateTiming?: boolean;
  /** Check with fewer seeds the sizes whose outputs exceed this many bytes (default 128 MiB). */
  bigOutputBytes?: number;
  /** Screen every source before building it (untrusted code: from a model or a user); see screenVariant. Default false. */
  screen?: boolean;
}

export interface ProbeInfo {
  name: string;
  cc: string;
  sms: number;
  l2Bytes: number;
  globalMemBytes: number;
  emptyWallMs: number;
  /** 'active', or why the harness's system-call filter is not installed. */
  syscallFilter?: string;
  /** 'hidden (…)', or why checks cannot hide the reference folder (Landlock) here. */
  hideRefs?: string;
}

export class Evaluator {
  readonly task: Task;
  readonly env: BuildEnv;
  readonly gpu: GpuInfo | null;
  readonly seeds: number[];
  readonly timing: TimingSettings;
  private readonly opts: EvaluatorOptions;
  private harnessPath: Promise<string> | null = null;
  private refReady: Promise<void> | null = null;
  private probeInfo: Promise<ProbeInfo> | null = null;
  /** How harness runs are isolated here, settled by the probe (see probe()). */
  private iso: HarnessIsolation = {};
  /** The isolation the probe settled on (every limit, less any the GPU does not work under here). */
  get isolation(): HarnessIsolation {
    return this.iso;
  }
  readonly refdir: string;

  /**
   * The isolation a check run (or a sweep line) reported, passed through; one that could not hide
   * the references says so once per reason, whatever the probe found.
   */
  checkIsolation(iso: CheckResult['isolation']): CheckResult['isolation'] {
    if (iso && !/^(hidden|off)/.test(iso.refs) && this.iso.hideRefs !== false) noteOnce(`check-refs:${iso.refs}`, `a check could not hide the reference outputs from the variant (Landlock): ${iso.refs}`);
    return iso;
  }

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
    this.timing = { ...DEFAULT_TIMING, ...(opts.timing ?? {}) };
    const key = createHash('sha256').update(this.task.hash).update(JSON.stringify(this.seeds)).update(arch).digest('hex').slice(0, 16);
    this.refdir = join(this.env.workRoot, 'refs', `${this.task.manifest.name}-${key}`);
  }

  get compileOnly(): boolean {
    return this.gpu === null;
  }

  private get source(): MeasurementSource {
    return this.gpu ? { kind: 'gpu', gpu: this.gpu.name, uuid: this.gpu.uuid } : { kind: 'none' };
  }

  /** The GPU queue this evaluator measures through (shared per GPU). */
  queue(): GpuQueue {
    return gpuQueue(this.gpu ? this.gpu.uuid || String(this.gpu.index) : 'none');
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

  plan(): PlanInput {
    return {
      task: this.task,
      sizes: this.task.manifest.sizes.map((_, i) => i),
      seeds: this.seeds,
      sizeSeeds: this.sizeSeeds(),
      timed: this.task.timed,
      refdir: this.refdir,
      timing: this.timing,
    };
  }

  /** Device facts from the harness itself (L2 size, launch+sync overhead). */
  probe(signal?: AbortSignal): Promise<ProbeInfo> {
    if (!this.gpu) return Promise.reject(new Error('no GPU: cannot probe'));
    // The probe also settles the isolation: it runs with every limit first; should the GPU not
    // work inside the sandbox or under the memory limit on this machine, the limit that breaks it
    // is dropped (said once) rather than every measurement failing.
    this.probeInfo ??= this.harness().then((h) =>
      this.queue().add(async () => {
        const attempts: Array<{ iso: HarnessIsolation; drop: string }> = [
          { iso: {}, drop: '' },
          { iso: { sandbox: false }, drop: 'the bubblewrap sandbox' },
          { iso: { dataBytes: null }, drop: 'the memory limit (RLIMIT_DATA)' },
          { iso: { syscallFilter: false }, drop: "the harness's system-call filter" },
          { iso: { hideRefs: false }, drop: 'the Landlock rules that hide the reference outputs' },
          { iso: { sandbox: false, dataBytes: null, nproc: null, syscallFilter: false, hideRefs: false }, drop: 'the sandbox, the system-call filter, Landlock and the memory and process limits' },
        ].filter((a) => !(a.iso.sandbox === false && sandboxMode() === 'require'));
        let first: string | null = null;
        // The probe tries Landlock on an empty folder beside its own (see the harness's lock_down);
        // inside the sandbox that folder must be bound like the reference folder of a check.
        const trial = join(this.env.workRoot, 'probe-hidden-trial');
        mkdirSync(trial, { recursive: true });
        for (const a of attempts) {
          const r = await runHarness<ProbeInfo>({ harness: h, mode: 'probe', plan: null, libs: [], workDir: join(this.env.workRoot, 'probe'), gpu: cudaDeviceSelector(this.gpu!), timeoutMs: 60_000, signal, isolation: { ...a.iso, readable: [trial] } });
          if (r.ok && r.body) {
            this.iso = a.iso;
            if (a.drop) noteOnce(`probe-drop:${a.drop}`, `the GPU does not work here under ${a.drop} (${first}); measuring without it`);
            const filter = r.body.syscallFilter;
            if (filter && filter !== 'active' && a.iso.syscallFilter !== false) noteOnce(`syscall-filter:${filter}`, `the harness's system-call filter (no new processes, no network sockets, no signals to other processes) is not installed here: ${filter}`);
            const hidden = r.body.hideRefs;
            if (hidden && !hidden.startsWith('hidden') && a.iso.hideRefs !== false) noteOnce(`hide-refs:${hidden}`, `checks cannot hide the reference outputs from the variant here (Landlock): ${hidden}; a variant that evades the screen could read them`);
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

  /** Builds and runs the trusted reference once per evaluator, writing its outputs for checks. */
  reference(signal?: AbortSignal): Promise<void> {
    this.refReady ??= (async () => {
      if (existsSync(join(this.refdir, 'done')) ) return;
      await this.probe(signal);
      const b = await this.buildReference(signal);
      if (b.failure) throw new Error(`${b.failure.reason}\n${b.failure.log ?? ''}`);
      const h = await this.harness();
      mkdirSync(this.refdir, { recursive: true });
      const r = await this.queue().add(() =>
        runHarness({ harness: h, mode: 'ref', plan: this.plan(), libs: [b.libPath!], workDir: this.refdir, gpu: cudaDeviceSelector(this.gpu!), timeoutMs: this.opts.checkTimeoutMs ?? 300_000, signal, isolation: this.iso }),
      );
      if (!r || !r.ok) throw new Error(`the reference of task ${this.task.manifest.name} failed to run: ${r?.failure?.reason}\n${r?.stdoutTail ?? ''}`);
      writeFileSync(join(this.refdir, 'done'), new Date().toISOString());
    })();
    this.refReady.catch(() => {
      this.refReady = null;
    });
    return this.refReady;
  }

  /** Builds the trusted reference (cached like any build); a failure names the reference file. */
  async buildReference(signal?: AbortSignal): Promise<BuildResult> {
    const b = await buildVariant(this.task, { source: this.task.referenceSource, config: defaultConfig(this.task), flags: { opt: 3 } }, this.env, signal);
    if (b.ok && b.libPath) return b;
    const why = b.failure?.reason ?? 'no library was written';
    return { ...b, ok: false, failure: { kind: b.failure?.kind ?? 'compile', reason: `the reference of task ${this.task.manifest.name} (${this.task.referencePath}) does not build: ${why}`, log: b.failure?.log } };
  }

  build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, signal?: AbortSignal) {
    return buildVariant(this.task, spec, this.env, signal);
  }

  private workDir(libPath: string): string {
    return join(libPath, '..', 'runs');
  }

  /** Build, check and time one variant. Failures come back in the result, never as exceptions. */
  async evaluate(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>, o: { signal?: AbortSignal; time?: boolean; onStage?: (stage: 'build' | 'check' | 'time') => void; screen?: boolean } = {}): Promise<EvalResult> {
    if (o.screen ?? this.opts.screen) {
      const failure = screenVariant(this.task, spec.source);
      if (failure) return { build: { ok: false, arch: this.env.arch, command: [], resources: [], log: '', durationMs: 0, failure }, failure, source: this.source };
    }
    o.onStage?.('build');
    const build = await this.build(spec, o.signal);
    if (!build.ok || !build.libPath) return { build, failure: build.failure, source: this.source };
    if (!this.gpu) {
      // Compile-only still builds the reference: a broken one must not pass for lack of a GPU.
      const ref = await this.buildReference(o.signal);
      return ref.failure ? { build, failure: ref.failure, source: this.source, compileOnly: true } : { build, source: this.source, compileOnly: true };
    }
    try {
      await this.probe(o.signal);
      await this.reference(o.signal);
    } catch (e) {
      return { build, source: this.source, failure: { kind: 'runtime', reason: (e as Error).message.split('\n')[0], log: (e as Error).message } };
    }
    const h = await this.harness();
    const probe = await this.probe(o.signal);
    const lib = build.libPath;
    const checkTimeoutMs = this.opts.checkTimeoutMs ?? 120_000;
    const timeTimeoutMs = this.opts.timeTimeoutMs ?? this.task.timed.length * (this.timing.maxMs + 60_000) + 30_000;
    type CheckBody = Pick<CheckResult, 'checks' | 'isolation'>;
    type TimeBody = { l2FlushBytes: number; timings: Array<{ size: number; warmupCalls: number; converged: boolean; eventMs: number[]; wallMs: number[] }> };
    const timingOf = (t: TimeBody, clocksStart?: ClockReading, clocksEnd?: ClockReading): TimingResult[] =>
      t.timings.map((x) => {
        const { timer, note } = chooseTimer(x.eventMs, x.wallMs, probe.emptyWallMs);
        const samples = timer === 'wall' ? x.wallMs : x.eventMs;
        const ci = medianCI(samples);
        return {
          size: x.size, samplesMs: samples, eventMs: x.eventMs, wallMs: x.wallMs, timer, timerNote: note,
          medianMs: ci.median, meanMs: mean(samples), minMs: Math.min(...samples), ciLowMs: ci.low, ciHighMs: ci.high, relNoise: ci.relNoise,
          converged: x.converged && ci.relNoise <= this.timing.targetRelNoise * 1.5, warmupCalls: x.warmupCalls, l2FlushBytes: t.l2FlushBytes, clocksStart, clocksEnd,
        };
      });
    const gpuSel = cudaDeviceSelector(this.gpu!);
    const separate = o.time === false || this.opts.separateTiming || process.env.KERNELDUEL_SEPARATE_TIMING === '1';
    // Clocks are read just before and just after the measuring process, never while it times.
    const clocks = async (): Promise<ClockReading | undefined> => (await readClocks(this.gpu!.index).catch(() => null)) ?? undefined;
    return (await this.queue().add(async () => {
      if (!separate) {
        // Check and time in one harness process (one CUDA context, one reading of the references).
        o.onStage?.('check');
        const clocksStart = await clocks();
        const ct = await runHarness<Partial<CheckBody & TimeBody>>({
          harness: h, mode: 'checktime', plan: this.plan(), libs: [lib], workDir: this.workDir(lib), gpu: gpuSel,
          timeoutMs: checkTimeoutMs + timeTimeoutMs, checkTimeoutMs, signal: o.signal, isolation: this.iso,
          onTimingStarted: () => o.onStage?.('time'),
        });
        const clocksEnd = await clocks();
        const checkPassed = ct.ok || ct.stage === 'time';
        const checkResult = { ok: checkPassed, checks: ct.body?.checks ?? [], isolation: this.checkIsolation(ct.body?.isolation), failure: checkPassed ? undefined : ct.failure, durationMs: ct.durationMs };
        if (!checkPassed) return { build, check: checkResult, failure: ct.failure, source: this.source };
        if (!ct.ok || !ct.body?.timings) return { build, check: checkResult, failure: ct.failure ?? { kind: 'runtime', reason: 'the checktime run gave no timings' }, source: this.source };
        return { build, check: checkResult, timing: timingOf(ct.body as TimeBody, clocksStart, clocksEnd), source: this.source };
      }
      o.onStage?.('check');
      const check = await runHarness<CheckBody>({
        harness: h, mode: 'check', plan: this.plan(), libs: [lib], workDir: this.workDir(lib), gpu: gpuSel, timeoutMs: checkTimeoutMs, signal: o.signal, isolation: this.iso,
      });
      const checkResult = { ok: check.ok, checks: check.body?.checks ?? [], isolation: this.checkIsolation(check.body?.isolation), failure: check.failure, durationMs: check.durationMs };
      if (!check.ok) return { build, check: checkResult, failure: check.failure, source: this.source };
      if (o.time === false) return { build, check: checkResult, source: this.source };
      o.onStage?.('time');
      const clocksStart = await clocks();
      const t = await runHarness<TimeBody>({
        harness: h, mode: 'time', plan: this.plan(), libs: [lib], workDir: this.workDir(lib), gpu: gpuSel, timeoutMs: timeTimeoutMs, signal: o.signal, isolation: this.iso,
      });
      const clocksEnd = await clocks();
      if (!t.ok || !t.body) return { build, check: checkResult, failure: t.failure, source: this.source };
      return { build, check: checkResult, timing: timingOf(t.body, clocksStart, clocksEnd), source: this.source };
    })) as EvalResult;
  }

  /** Paired, interleaved timing of A against B in one process. ratio > 1: A is faster. */
  async duel(a: Pick<VariantSpec, 'source' | 'config' | 'flags'>, b: Pick<VariantSpec, 'source' | 'config' | 'flags'>, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }> {
    if (!this.gpu) return { failure: { kind: 'runtime', reason: 'no GPU: a duel needs a GPU' } };
    const [ba, bb] = await Promise.all([this.build(a, signal), this.build(b, signal)]);
    if (!ba.ok || !bb.ok) return { failure: ba.failure ?? bb.failure };
    const h = await this.harness();
    const probe = await this.probe(signal);
    const r = await this.queue().add(() =>
      runHarness<{ duels: Array<{ size: number; aEventMs: number[]; aWallMs: number[]; bEventMs: number[]; bWallMs: number[] }> }>({
        harness: h, mode: 'duel', plan: this.plan(), libs: [ba.libPath!, bb.libPath!], workDir: join(this.env.workRoot, 'duels'), gpu: cudaDeviceSelector(this.gpu!),
        timeoutMs: this.task.timed.length * (this.timing.maxMs * 2 + 60_000) + 30_000, signal, isolation: this.iso,
      }),
    );
    if (!r || !r.ok || !r.body) return { failure: r?.failure ?? { kind: 'runtime', reason: 'duel failed' } };
    return { duels: r.body.duels.map((d) => duelStats(d.size, d.aEventMs, d.aWallMs, d.bEventMs, d.bWallMs, probe.emptyWallMs)) };
  }

  /** Reference files written (for tests and clean-up). */
  referenceFiles(): string[] {
    return existsSync(this.refdir) ? readdirSync(this.refdir) : [];
  }
}
