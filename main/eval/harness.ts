// Runs the generic measurement harness (resources/harness/harness.cu): builds it once per
// architecture and nvcc, writes plan files, runs one mode in a child process with limits and
// turns its result file (or its death) into a typed outcome.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import type { Failure } from '../common/types.js';
import { resourcesDir } from '../common/paths.js';
import { runProcess, tail } from '../proc/run.js';
import type { BuildEnv } from '../build/compile.js';
import { sizeLayout, type Task } from '../task/manifest.js';
import { bwrapArgs, defaultDataLimit, defaultNprocLimit, killMarkedProcesses, RUN_MARKER_ENV, sandboxStatus, SandboxError } from '../sandbox/index.js';

export interface TimingSettings {
  warmupMs: number;
  minSamples: number;
  maxSamples: number;
  /** Stop when the median's CI half-width over the median is below this. */
  targetRelNoise: number;
  minMs: number;
  maxMs: number;
  /** 0: four times the GPU's L2 (at least 64 MiB). */
  flushBytes: number;
}
export const DEFAULT_TIMING: TimingSettings = { warmupMs: 50, minSamples: 10, maxSamples: 5000, targetRelNoise: 0.005, minMs: 100, maxMs: 3000, flushBytes: 0 };

export interface PlanInput {
  task: Task;
  sizes: number[];
  seeds: number[];
  /** Fewer seeds for some sizes (large outputs), by size index. */
  sizeSeeds?: Record<number, number[]>;
  timed: number[];
  refdir: string;
  timing: TimingSettings;
}

export function renderPlan(p: PlanInput, nonce: string): string {
  const lines = ['kdplan 1', `nonce ${nonce}`, `refdir ${p.refdir}`, `seeds ${p.seeds.join(' ')}`];
  for (const [dt, t] of Object.entries(p.task.tolerance)) lines.push(`tol ${dt} ${t.rtol} ${t.atol}`);
  const t = p.timing;
  lines.push(`timing ${t.warmupMs} ${t.minSamples} ${t.maxSamples} ${t.targetRelNoise} ${t.minMs} ${t.maxMs} ${t.flushBytes}`);
  for (const i of p.timed) lines.push(`timed ${i}`);
  for (const si of p.sizes) {
    const lay = sizeLayout(p.task, si);
    lines.push(`size ${si}`);
    const ss = p.sizeSeeds?.[si];
    if (ss?.length) lines.push(`sizeseeds ${ss.join(' ')}`);
    for (const a of lay.args) {
      if (a.kind === 'buffer') lines.push(`buffer ${a.name} ${a.dtype} ${a.role} ${a.elements} ${a.fill.kind} ${a.fill.lo} ${a.fill.hi}`);
      else lines.push(`scalar ${a.name} ${a.dtype} ${a.value}`);
    }
  }
  return lines.join('\n') + '\n';
}

export async function ensureHarness(env: BuildEnv): Promise<string> {
  const srcPath = join(resourcesDir(), 'harness', 'harness.cu');
  const src = readFileSync(srcPath, 'utf8');
  const key = createHash('sha256').update(src).update(env.nvccVersion).update(env.arch).digest('hex').slice(0, 16);
  const dir = join(env.workRoot, 'harness', key);
  const bin = join(dir, 'kd_harness');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `kd_harness.${process.pid}.tmp`);
  const args = [`-arch=${env.arch}`, '-O2', '-std=c++17', '-cudart', 'shared', '-o', tmp, srcPath, '-ldl'];
  if (env.libDir) args.push('-Xlinker', `-rpath=${env.libDir}`);
  const r = await runProcess(env.nvcc, args, { cwd: dir, timeoutMs: 300_000 });
  if (r.code !== 0 || !existsSync(tmp)) {
    throw new Error(`cannot build the measurement harness (${srcPath}) with ${env.nvcc}:\n${tail(r.stdout + r.stderr, 4000)}`);
  }
  renameSync(tmp, bin);
  return bin;
}

function signalName(n: number): string | null {
  for (const [name, num] of Object.entries(osConstants.signals)) if (num === n) return name;
  return null;
}

/** The run modes, plus the harness's self-test modes that need no GPU (for the test suite). */
export type HarnessMode = 'probe' | 'ref' | 'check' | 'time' | 'checktime' | 'duel' | 'hide-selftest' | 'filter-selftest' | 'compare-selftest';

export interface HarnessOutcome<B> {
  ok: boolean;
  /** checktime: the stage the run ended in ('check' also when the process died without a result). */
  stage?: 'check' | 'time';
  body?: B;
  failure?: Failure;
  durationMs: number;
  stdoutTail: string;
}

export interface HarnessRunOptions {
  harness: string;
  mode: HarnessMode;
  /** checktime: the check stage must end within this (the harness creates <result>.time when it starts timing); the whole run within timeoutMs. */
  checkTimeoutMs?: number;
  /** checktime: called once when the harness starts timing (the check passed). */
  onTimingStarted?: () => void;
  plan: PlanInput | null;
  libs: string[];
  workDir: string;
  /** CUDA_VISIBLE_DEVICES for the run (see cudaDeviceSelector), or null to leave it as it is. */
  gpu: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Isolation of this run (main/sandbox); default: everything the machine allows. */
  isolation?: HarnessIsolation;
}

export interface HarnessIsolation {
  /** false: never wrap in bubblewrap (used when the GPU does not work inside it). Default true (when available). */
  sandbox?: boolean;
  /** RLIMIT_DATA bytes; null: none. Default defaultDataLimit(). */
  dataBytes?: number | null;
  /** RLIMIT_NPROC; null: none. Default defaultNprocLimit(). */
  nproc?: number | null;
  /** Extra folders the run may read (the refdir of a check). */
  readable?: string[];
  /** false: the harness does not install its system-call filter (KERNELDUEL_SYSCALL_FILTER=off). Default true. */
  syscallFilter?: boolean;
  /** false: checks do not hide the reference folder with Landlock (KERNELDUEL_HIDE_REFS=off). Default true. */
  hideRefs?: boolean;
}

/** Bytes of output a harness run may write before it is killed as a flood. */
export const HARNESS_OUTPUT_CAP = 256 << 10;

interface RawResult<B> {
  kdresult: number;
  nonce: string;
  status: string;
  /** checktime: the stage the run ended in. */
  stage?: 'check' | 'time';
  error?: string;
  body: B;
}

/**
 * The environment of a harness process (every mode, the sweep too): the GPU it may see, eager
 * module loading, and the harness's own layers switched off where the probe dropped them or the
 * user turned them off (KERNELDUEL_SYSCALL_FILTER=off, KERNELDUEL_HIDE_REFS=off); any other value
 * of those is not passed on.
 */
export function harnessEnv(gpu: string | null, iso: HarnessIsolation): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (gpu !== null) env.CUDA_VISIBLE_DEVICES = gpu;
  env.CUDA_MODULE_LOADING = 'EAGER';
  const off = (name: string, dropped: boolean): void => {
    if (dropped || process.env[name] === 'off') env[name] = 'off';
    else delete env[name];
  };
  off('KERNELDUEL_SYSCALL_FILTER', iso.syscallFilter === false);
  off('KERNELDUEL_HIDE_REFS', iso.hideRefs === false);
  return env;
}

export async function runHarness<B>(o: HarnessRunOptions): Promise<HarnessOutcome<B>> {
  mkdirSync(o.workDir, { recursive: true });
  const nonce = randomBytes(12).toString('hex');
  const planPath = join(o.workDir, `plan-${o.mode}.txt`);
  const resultPath = join(o.workDir, `result-${o.mode}-${nonce}.json`);
  const placeholder: PlanInput | null = o.plan;
  writeFileSync(planPath, placeholder ? renderPlan(placeholder, nonce) : `kdplan 1\nnonce ${nonce}\n`);
  const iso = o.isolation ?? {};
  const env = harnessEnv(o.gpu, iso);
  env[RUN_MARKER_ENV] = nonce; // inherited by anything the run starts: killed with it (see below)
  let sandbox: { bwrap: string; args: string[] } | undefined;
  if (iso.sandbox !== false) {
    try {
      const st = await sandboxStatus();
      if (st.active && st.bwrap) {
        const readable = [o.harness, ...o.libs, ...(iso.readable ?? [])];
        if (o.plan && o.mode !== 'ref') readable.push(o.plan.refdir);
        const writable = [o.workDir];
        if (o.plan && o.mode === 'ref') writable.push(o.plan.refdir);
        sandbox = { bwrap: st.bwrap, args: bwrapArgs({ writable, readable, cwd: o.workDir }) };
        env.CUDA_CACHE_DISABLE = '1'; // the JIT cache in $HOME is read-only in the sandbox
      }
    } catch (e) {
      if (e instanceof SandboxError) return { ok: false, durationMs: 0, stdoutTail: '', failure: { kind: 'runtime', reason: e.message } };
      throw e;
    }
  }
  // checktime: a deadline for the check stage of its own (a hang in the check is found as soon as
  // in a check-only run), watched through the marker file the harness creates when timing starts.
  const stageMarker = `${resultPath}.time`;
  const stageAbort = new AbortController();
  let checkOverran = false;
  let watch: NodeJS.Timeout | undefined;
  if (o.mode === 'checktime') {
    const t0 = Date.now();
    let timing = false;
    watch = setInterval(() => {
      if (timing) return;
      if (existsSync(stageMarker)) {
        timing = true;
        o.onTimingStarted?.();
      } else if (o.checkTimeoutMs && Date.now() - t0 > o.checkTimeoutMs) {
        checkOverran = true;
        stageAbort.abort();
      }
    }, 100);
  }
  const r = await runProcess(o.harness, [o.mode, planPath, resultPath, ...o.libs], {
    cwd: o.workDir,
    env,
    timeoutMs: o.timeoutMs,
    signal: o.signal ? AbortSignal.any([o.signal, stageAbort.signal]) : stageAbort.signal,
    maxOutputBytes: HARNESS_OUTPUT_CAP,
    killOnOutputCap: true,
    cpuSeconds: Math.ceil(o.timeoutMs / 1000) + 30,
    dataBytes: iso.dataBytes === null ? undefined : (iso.dataBytes ?? defaultDataLimit()),
    nproc: iso.nproc === null ? undefined : (iso.nproc ?? defaultNprocLimit()),
    sandbox,
  });
  if (watch) clearInterval(watch);
  // checktime: where a run that left no result stopped (the marker exists once timing started).
  const reached: { stage?: 'check' | 'time' } = o.mode === 'checktime' ? { stage: existsSync(stageMarker) ? 'time' : 'check' } : {};
  rmSync(stageMarker, { force: true });
  const what = reached.stage ?? o.mode; // the stage a checktime run was in, for messages
  // Without a PID namespace, processes the run hid from the process-group kill (setsid) go now.
  if (!sandbox) killMarkedProcesses(nonce);
  const stdoutTail = tail(r.stdout + r.stderr, 4000);
  const base = { durationMs: r.durationMs, stdoutTail };
  if (r.outputFlood) {
    rmSync(resultPath, { force: true });
    return { ok: false, ...base, failure: { kind: 'runtime', reason: `the ${what} process wrote more than ${HARNESS_OUTPUT_CAP >> 10} KiB to stdout/stderr and was killed: a variant must not print`, log: stdoutTail } };
  }
  let raw: RawResult<B> | null = null;
  let unreadable: string | null = null;
  if (existsSync(resultPath)) {
    const text = readFileSync(resultPath, 'utf8');
    try {
      raw = JSON.parse(text) as RawResult<B>;
    } catch (e) {
      raw = null;
      unreadable = `${(e as Error).message}; it begins ${JSON.stringify(text.slice(0, 160))}`;
    }
    rmSync(resultPath, { force: true });
  }
  if (checkOverran && !o.signal?.aborted) {
    return { ok: false, ...base, stage: 'check', failure: { kind: 'timeout', reason: `check did not finish within ${(o.checkTimeoutMs! / 1000).toFixed(0)} s (the process group was killed): a hang or an infinite loop`, log: stdoutTail } };
  }
  if (r.cancelled) return { ok: false, ...base, failure: { kind: 'runtime', reason: 'cancelled' } };
  if (r.timedOut) {
    return { ok: false, ...base, ...reached, failure: { kind: 'timeout', reason: `${what} did not finish within ${(o.timeoutMs / 1000).toFixed(0)} s (the process group was killed): a hang or an infinite loop`, log: stdoutTail } };
  }
  if (!raw || raw.kdresult !== 1 || raw.nonce !== nonce) {
    // Inside bubblewrap a child killed by a signal shows as exit code 128 + the signal's number.
    const sig = r.signal ?? (sandbox && r.code !== null && r.code > 128 ? signalName(r.code - 128) : null);
    const how = sig
      ? `was killed by ${sig}`
      : r.spawnError
        ? `could not start (${r.spawnError})`
        : unreadable
          ? `exited with code ${r.code} and left a result that is not valid JSON (${unreadable})`
          : `exited with code ${r.code} without a result`;
    return { ok: false, ...base, ...reached, failure: { kind: 'runtime', reason: `the ${what} process ${how}${raw && raw.nonce !== nonce ? ' (its result file was forged)' : ''}`, log: stdoutTail } };
  }
  const stage = raw.stage === 'check' || raw.stage === 'time' ? { stage: raw.stage } : {};
  if (raw.status === 'ok') return { ok: true, ...base, ...stage, body: raw.body };
  const kind = raw.status === 'correctness' ? 'correctness' : 'runtime';
  return { ok: false, ...base, ...stage, body: raw.body, failure: { kind, reason: raw.error ?? raw.status, log: stdoutTail } };
}
