// Runs the generic measurement harness (resources/harness/): builds it once per architecture and
// nvcc, writes plan files, runs one of its one-shot modes (probe, capture, self-tests) in a child
// process with limits and turns its result file (or its death) into a typed outcome. The judge,
// the long-lived process that checks and times, is main/engine/measure/judge.ts.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import type { Failure } from '../base/types.js';
import { resourcesDir } from '../base/paths.js';
import { runProcess, tail } from '../platform/proc/run.js';
import { withLockFile } from '../platform/gpu/lock.js';
import type { BuildEnv } from '../build/compile.js';
import { sizeLayout, type Task } from '../task/manifest.js';
import { SAME_TOL } from './stats.js';
import { bwrapArgs, defaultDataLimit, defaultNprocLimit, killMarkedProcesses, RUN_MARKER_ENV, sandboxStatus, SandboxError } from '../platform/sandbox/index.js';

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
  /**
   * 1: after the flush's memset, read a clean buffer of half its size, so the dirty lines the
   * memset leaves in L2 are written back before the timed call instead of during it. Off by
   * default: an experiment of issue 17 (does it take away the offset one process's times share?
   * It did not, and it takes 8-9 us out of every time on the H200); the memset flush is what
   * nvbench and Triton's do_bench do, and vs-pytorch times PyTorch with the same flush.
   */
  flushClean?: number;
  /**
   * With flushClean 1: how many bytes of clean buffer are read (a multiple of 16; plan line
   * `flushcleanbytes`). Unset: half the flush buffer. An experiment of issue 17: does the write-back
   * the clean read takes out of the timed call grow with the lines it evicts?
   */
  flushCleanBytes?: number;
  /**
   * N > 1: N flush buffers, each call's memset goes to the next one (plan line `flushsets`). Off by
   * default (1): an experiment of issue 17, does the one flush buffer's placement, fixed for a whole
   * process, make the offset that one process's times share?
   */
  flushSets?: number;
  /**
   * Which side of a duel allocates its buffers first (plan line `duelalloc`): 0 A (the default), 1 a
   * coin toss per duel, 2 B. A diagnostic: with large buffers at the start of their allocations
   * (spreadLarge 0) it flipped a placement-sensitive configuration's self duels from 30 of 30
   * `slower` to 30 of 30 `faster` (bench/results/README.md, 2026-12-07 08:41).
   */
  duelAllocOrder?: number;
  /** Which side of a duel warms up first (plan line `duelwarm`): 0 A (the default), 2 B. A diagnostic, like duelAllocOrder; not measured yet (its only run, on 20c14ea, crashed: fixed in 1228a4c). */
  duelWarmOrder?: number;
  /**
   * 1 (the default since 2026-12-07): every buffer, large ones too, sits at a random 256-byte-aligned
   * offset in 2 MiB of spare bytes behind a guard region (plan line `spreadlarge`); 0: only buffers
   * under 2 MiB do, large ones at the start of their allocations. Why: at the start of their
   * allocations the large buffers' relative places repeated set after set and decided duels: a
   * placement-sensitive softmax configuration on an H100 duelled itself `slower` 30 of 30 times,
   * `faster` 30 of 30 when the other side allocated first; with 1, 100 of 100 `same`
   * (resources/harness/kd_buffers.h, bench/results/README.md).
   */
  spreadLarge?: number;
  /**
   * 0: timing does not wait for the judge's executors started ahead of need to have CUDA up (plan
   * line `sparewait 0`), so another process's context creation (~150-250 ms) may overlap timed
   * calls. 1 (the default): it waits, and that wait is on each variant's path: a check right after
   * a result without a duel took 130-300 ms instead of ~23 (histogram, H100, 2026-12-07). An
   * experiment of issue 17 (`KERNELDUEL_SPARES_WAIT=0`): whether the overlap moves timings. 2
   * (`KERNELDUEL_SPARES_WAIT=2`, an experiment of 2026-12-08): evaluations wait, duels do not (every
   * duel after an evaluation waited for the spare spawned after it; captures already run beside
   * duels, whose interleaved pairs put a context made beside them on both sides).
   */
  sparesWait?: number;
  /**
   * N > 1: a variant's timed calls rotate over N executors of it, each a process with its own CUDA
   * context and buffer sets (plan line `timectx`; call i on executor i mod N). Off by default (1):
   * an experiment of issue 17, is the offset one process's times share the executor's own?
   */
  timingContexts?: number;
  /**
   * A duel stops once the CI half-width of its median log-ratio is below this (default: the same
   * as targetRelNoise). Its verdict's band is ±1% (SAME_TOL), so a duel may need less precision
   * than a time does; `optimize --duel-noise` sets it.
   */
  duelTargetRelNoise?: number;
  /**
   * Sets of buffers the timed calls rotate over (each set in new physical memory), so that no one
   * placement of the buffers decides a variant's time; fewer when they would not fit in a quarter
   * of the free GPU memory.
   */
  bufferSets: number;
}
// Four buffer sets and a median known to ±0.25% (95%): on the H200 (2026-12-02,
// bench/results/h200-timing-stability-diagnosis.md) one set and ±0.5% left the medians of five fresh
// processes 0.16-0.72% apart on softmax, transpose and stencil2d: each stopped at 100 ms with its
// median known to ±0.04-0.35%, and some buffer placements run ~0.5-1% faster than others (stencil2d:
// per-set medians 0.1587-0.1605 ms in one process); four sets gave 0.06-0.22% there. With these
// defaults, 7 of the 8 suite tasks spread 0.09-0.29%, histogram 0.65% (h200-timing-stability-db7293b.md).
// Eight sets since every buffer sits at a random place (spreadLarge): on an H100 (2026-12-07,
// bench/results/h100-80gb-hbm3-timing-stability-self100a-13c868a.md) the softmax best's placements
// spread 0.49% (sd) and 2 of its 100 self duels on 4 sets a side said `slower` (0.991, 0.992): the
// mean of 4 random placements a side left the two sides ~0.34% (sd) apart, so a 1-in-50 duel crossed
// the ±1% band; 8 sets a side halve that variance (duels time on the same sets as a timing does):
// resampling those set medians (bench/placement-resample.py) gives 1.78% of self duels beyond ±0.85%
// at 4 sets a side and 0.10% at 8. On 8 sets (another H100, -self100s8-cc596fd.md) the softmax and
// layernorm bests said `same` in 100 of 100 self duels each and the hostile corpus passed 54/54, but
// that H100's placements spread less (0.31%: 0.01% predicted even at 4 sets). 4 against 8 sets on one
// GPU (a fourth H100, -sets4v8-0b8634a.md): the softmax best 200/200 `same` either way, its interval
// over pairs and placements missing 1 in 23 of 200 with 4 sets and 6 with 8; that GPU spread 0.31-0.34%
// too, so a verdict that 8 sets change has not been seen on one GPU. Not yet run on an H200.
export const DEFAULT_TIMING: TimingSettings = { warmupMs: 50, minSamples: 10, maxSamples: 5000, targetRelNoise: 0.0025, minMs: 100, maxMs: 3000, flushBytes: 0, bufferSets: 8, spreadLarge: 1 };

/**
 * The precise timing (`kernelduel eval --precise`, the workbench's "precise" Evaluate): at least
 * 2.5 s of timed calls rotating over 4 executors of the variant (4 CUDA contexts, each with the
 * default's buffer sets: 32 placements; 16 when the figures below were taken), for a final figure
 * rather than for search. On the H200 (2026-12-05,
 * bench/results/h200-timing-stability-precise-fb4ded5.md) the medians of 5 fresh processes then
 * spread 0.02-0.18% on all 8 suite tasks, where the default timing's (about 0.1-0.35 s on 4 sets)
 * spread up to 0.54-0.69% on layernorm and histogram in the same session
 * (h200-timing-stability-contexts-fb4ded5.md, -contexts-lnhist-fb4ded5.md): one process's few
 * placements and its own offset decide more of its median than its samples' noise does.
 */
export const PRECISE_TIMING: Partial<TimingSettings> = { minMs: 2500, maxMs: 5000, targetRelNoise: 0.001, maxSamples: 20000, timingContexts: 4 };

export interface PlanInput {
  task: Task;
  sizes: number[];
  seeds: number[];
  /** Fewer seeds for some sizes (large outputs), by size index. */
  sizeSeeds?: Record<number, number[]>;
  timed: number[];
  timing: TimingSettings;
  /** Timed calls verified against the reference at random (besides the last); default 3. */
  verifySamples?: number;
  /**
   * A PyTorch task's reference data (main/engine/pytorch/reference-data.ts): the judge takes inputs,
   * weights and expected outputs from these files instead of generating inputs and running a
   * reference library. Only the judge's plan carries it; the capture process's never does.
   */
  reference?: ReferenceFilesPlan;
}

/** The folder and manifest of a PyTorch task's reference data, as the judge's plan carries it. */
export interface ReferenceFilesPlan {
  dir: string;
  samples: Array<{ size: number; id: number; timing: boolean }>;
  files: Array<{ size: number; id: number; arg: number; bytes: number; sha256: string; rel: string }>;
}

export function renderPlan(p: PlanInput, nonce: string): string {
  const lines = ['kdplan 1', `nonce ${nonce}`, `seeds ${p.seeds.join(' ')}`];
  for (const [dt, t] of Object.entries(p.task.tolerance)) lines.push(`tol ${dt} ${t.rtol} ${t.atol}`);
  const t = p.timing;
  lines.push(`timing ${t.warmupMs} ${t.minSamples} ${t.maxSamples} ${t.targetRelNoise} ${t.minMs} ${t.maxMs} ${t.flushBytes}`);
  for (const i of p.timed) lines.push(`timed ${i}`);
  if (p.verifySamples !== undefined) lines.push(`verify ${p.verifySamples}`);
  lines.push(`sets ${t.bufferSets}`, `sametol ${SAME_TOL}`);
  if (t.flushClean) lines.push(`flushclean ${t.flushClean}`);
  if (t.flushCleanBytes !== undefined) {
    if (!t.flushClean) throw new Error('flushCleanBytes needs flushClean 1 (it sizes the clean read after the memset)');
    if (!(Number.isInteger(t.flushCleanBytes) && t.flushCleanBytes >= 16 && t.flushCleanBytes % 16 === 0 && t.flushCleanBytes <= 2 ** 34)) throw new Error(`flushCleanBytes must be a multiple of 16 from 16 to 2^34 (got ${t.flushCleanBytes})`);
    lines.push(`flushcleanbytes ${t.flushCleanBytes}`);
  }
  if (t.duelAllocOrder !== undefined && t.duelAllocOrder !== 0) {
    if (!(t.duelAllocOrder === 1 || t.duelAllocOrder === 2)) throw new Error(`duelAllocOrder must be 0 (A first), 1 (a coin toss per duel) or 2 (B first) (got ${t.duelAllocOrder})`);
    lines.push(`duelalloc ${t.duelAllocOrder}`);
  }
  if (t.duelWarmOrder !== undefined && t.duelWarmOrder !== 0) {
    if (t.duelWarmOrder !== 2) throw new Error(`duelWarmOrder must be 0 (A first) or 2 (B first) (got ${t.duelWarmOrder})`);
    lines.push(`duelwarm ${t.duelWarmOrder}`);
  }
  if (t.spreadLarge !== undefined && t.spreadLarge !== 0) {
    if (t.spreadLarge !== 1) throw new Error(`spreadLarge must be 0 or 1 (got ${t.spreadLarge})`);
    lines.push('spreadlarge 1');
  }
  if (t.sparesWait !== undefined && t.sparesWait !== 1) {
    if (t.sparesWait !== 0 && t.sparesWait !== 2) throw new Error(`sparesWait must be 0, 1 or 2 (got ${t.sparesWait})`);
    lines.push(`sparewait ${t.sparesWait}`);
  }
  if (t.flushSets !== undefined && t.flushSets !== 1) {
    if (!(Number.isInteger(t.flushSets) && t.flushSets >= 1 && t.flushSets <= 16)) throw new Error(`flushSets must be a whole number from 1 to 16 (got ${t.flushSets})`);
    lines.push(`flushsets ${t.flushSets}`);
  }
  if (t.timingContexts !== undefined && t.timingContexts !== 1) {
    if (!(Number.isInteger(t.timingContexts) && t.timingContexts >= 1 && t.timingContexts <= 4)) throw new Error(`timingContexts must be a whole number from 1 to 4 (got ${t.timingContexts})`);
    lines.push(`timectx ${t.timingContexts}`);
  }
  if (t.duelTargetRelNoise) lines.push(`dueltarget ${t.duelTargetRelNoise}`);
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
  if (p.reference) {
    const r = p.reference;
    if (/\s/.test(r.dir)) throw new Error(`the reference data's folder ${JSON.stringify(r.dir)} holds white space`);
    lines.push(`reference files ${r.dir}`);
    for (const s of r.samples) lines.push(`refsample ${s.size} ${s.id} ${s.timing ? 'timing' : 'check'}`);
    for (const f of r.files) {
      if (/\s/.test(f.rel)) throw new Error(`a reference data file's name holds white space: ${JSON.stringify(f.rel)}`);
      lines.push(`reffile ${f.size} ${f.id} ${f.arg} ${f.bytes} ${f.sha256} ${f.rel}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** The harness's sources: harness.cu (one CUDA translation unit with the kd_*.h headers) and kd_interpose.cpp. */
export function harnessSources(): string[] {
  const dir = join(resourcesDir(), 'harness');
  return readdirSync(dir).filter((f) => /\.(cu|h|cpp)$/.test(f)).sort().map((f) => join(dir, f));
}

/** Harness builds in progress in this process, by binary path: evaluators of several GPUs share one build. */
const harnessBuilds = new Map<string, Promise<string>>();

export async function ensureHarness(env: BuildEnv): Promise<string> {
  const srcPath = join(resourcesDir(), 'harness', 'harness.cu');
  const hash = createHash('sha256').update(env.nvccVersion).update(env.arch);
  for (const f of harnessSources()) hash.update(f.slice(f.lastIndexOf('/') + 1)).update(readFileSync(f));
  const key = hash.digest('hex').slice(0, 16);
  const dir = join(env.workRoot, 'harness', key);
  const bin = join(dir, 'kd_harness');
  if (existsSync(bin)) return bin;
  const inProgress = harnessBuilds.get(bin);
  if (inProgress) return inProgress;
  // One build across processes too (the app and a CLI run started together on a fresh machine, or
  // test files sharing a work root): a lock file beside the build's folder (taken over when its
  // owner died); whoever gets it second finds the binary built.
  const building = withLockFile(`${dir}.lock`, async () => (existsSync(bin) ? bin : buildHarness(env, srcPath, dir, bin)), { pollMs: 200 }, 'the harness build').finally(() => harnessBuilds.delete(bin));
  harnessBuilds.set(bin, building);
  return building;
}

async function buildHarness(env: BuildEnv, srcPath: string, dir: string, bin: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `kd_harness.${process.pid}.tmp`);
  // -export-dynamic: the CUDA runtime calls a captured variant makes resolve to kd_interpose.cpp's wrappers.
  const args = [`-arch=${env.arch}`, '-O2', '-std=c++17', '-cudart', 'shared', '-Xlinker', '-export-dynamic', '-o', tmp, srcPath, join(resourcesDir(), 'harness', 'kd_interpose.cpp'), '-ldl'];
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

/** The one-shot modes, plus the harness's self-test modes that need no GPU (for the test suite). */
export type HarnessMode = 'probe' | 'capture' | 'filter-selftest' | 'writes-selftest' | 'fatbin-selftest' | 'workdesc-selftest' | 'reffiles-selftest';

export interface HarnessOutcome<B> {
  ok: boolean;
  body?: B;
  failure?: Failure;
  durationMs: number;
  /** When the process was started and when its end was seen (ms since the epoch, the engine's clock). */
  startedAtMs?: number;
  endedAtMs?: number;
  /** With a gate (capture): when the engine let the process go on (ms since the epoch); absent when it never did. */
  goAtMs?: number;
  stdoutTail: string;
}

export interface HarnessRunOptions {
  harness: string;
  mode: HarnessMode;
  plan: PlanInput | null;
  /** Arguments after <plan> <result>: the variant's library and the work description for capture. */
  libs: string[];
  workDir: string;
  /** CUDA_VISIBLE_DEVICES for the run (see cudaDeviceSelector), or null to leave it as it is. */
  gpu: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Isolation of this run (main/sandbox); default: everything the machine allows. */
  isolation?: HarnessIsolation;
  /**
   * Capture only: start the process gated (resources/harness/kd_capture.h await_gate): it makes its
   * CUDA context, locks down and says it is ready before any of the variant runs; `open()` decides
   * when it goes on (true) or ends (false). timeoutMs counts from then.
   */
  gate?: { open: () => Promise<boolean> };
}

export interface HarnessIsolation {
  /** false: never wrap in bubblewrap (used when the GPU does not work inside it). Default true (when available). */
  sandbox?: boolean;
  /** RLIMIT_DATA bytes; null: none. Default defaultDataLimit(). */
  dataBytes?: number | null;
  /** RLIMIT_NPROC; null: none. Default defaultNprocLimit(). */
  nproc?: number | null;
  /** Extra folders the run may read. */
  readable?: string[];
  /** false: the harness does not install its system-call filter (KERNELDUEL_SYSCALL_FILTER=off). Default true. */
  syscallFilter?: boolean;
  /** Folders the run must not see (inside bubblewrap: an empty tmpfs over each), e.g. a PyTorch task's reference data. */
  hidden?: string[];
}

/** What a gated capture process says on stdout once it is ready (before any of the variant runs). */
export const HARNESS_READY_LINE = 'kd-ready';
/** How long a gated capture process may take to be ready (process, sandbox, CUDA context, lockdown). */
export const HARNESS_READY_TIMEOUT_MS = 60_000;

/** Bytes of output a harness run may write before it is killed as a flood. */
export const HARNESS_OUTPUT_CAP = 256 << 10;

interface RawResult<B> {
  kdresult: number;
  nonce: string;
  status: string;
  error?: string;
  body: B;
}

/**
 * The environment of a harness process (every mode, the judge too): the GPU it may see, eager
 * module loading, and the harness's system-call filter switched off where the probe dropped it or
 * the user turned it off (KERNELDUEL_SYSCALL_FILTER=off); any other value is not passed on.
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
        const readable = [o.harness, ...o.libs.filter((l) => !l.startsWith(o.workDir)), ...(iso.readable ?? [])];
        const writable = [o.workDir];
        sandbox = { bwrap: st.bwrap, args: bwrapArgs({ writable, readable, cwd: o.workDir, hidden: iso.hidden }) };
        env.CUDA_CACHE_DISABLE = '1'; // the JIT cache in $HOME is read-only in the sandbox
      }
    } catch (e) {
      if (e instanceof SandboxError) return { ok: false, durationMs: 0, stdoutTail: '', failure: { kind: 'runtime', reason: e.message } };
      throw e;
    }
  }
  const startedAtMs = Date.now();
  const r = await runProcess(o.harness, [o.mode, planPath, resultPath, ...o.libs, ...(o.gate ? ['gate'] : [])], {
    cwd: o.workDir,
    env,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    maxOutputBytes: HARNESS_OUTPUT_CAP,
    killOnOutputCap: true,
    ...(o.gate ? { gate: { line: HARNESS_READY_LINE, open: o.gate.open, readyTimeoutMs: HARNESS_READY_TIMEOUT_MS } } : {}),
    cpuSeconds: Math.ceil(o.timeoutMs / 1000) + 30,
    dataBytes: iso.dataBytes === null ? undefined : (iso.dataBytes ?? defaultDataLimit()),
    nproc: iso.nproc === null ? undefined : (iso.nproc ?? defaultNprocLimit()),
    sandbox,
  });
  const endedAtMs = Date.now();
  const what = o.mode;
  // Without a PID namespace, processes the run hid from the process-group kill (setsid) go now.
  if (!sandbox) killMarkedProcesses(nonce);
  const stdoutTail = tail(r.stdout + r.stderr, 4000);
  const base = { durationMs: r.durationMs, startedAtMs, endedAtMs, ...(r.goAtMs !== undefined ? { goAtMs: r.goAtMs } : {}), stdoutTail };
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
  if (r.cancelled) return { ok: false, ...base, failure: { kind: 'runtime', reason: 'cancelled' } };
  if (r.timedOut) {
    return { ok: false, ...base, failure: { kind: 'timeout', reason: `${what} did not finish within ${(o.timeoutMs / 1000).toFixed(0)} s (the process group was killed): a hang or an infinite loop`, log: stdoutTail } };
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
    return { ok: false, ...base, failure: { kind: 'runtime', reason: `the ${what} process ${how}${raw && raw.nonce !== nonce ? ' (its result file was forged)' : ''}`, log: stdoutTail } };
  }
  if (raw.status === 'ok') return { ok: true, ...base, body: raw.body };
  return { ok: false, ...base, body: raw.body, failure: { kind: failureKind(raw.status), reason: raw.error ?? raw.status, log: stdoutTail } };
}

/** A harness status word in the failure vocabulary (unknown words count as runtime). */
export function failureKind(status: string): Failure['kind'] {
  return status === 'correctness' || status === 'constraints' || status === 'timeout' ? status : 'runtime';
}
