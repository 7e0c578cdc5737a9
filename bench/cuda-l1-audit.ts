// Audit of CUDA-L1's released H100 candidates for KernelBench levels 1 and 2 (issue 15): every
// candidate through KernelDuel's Python candidate runner (resources/python/kd_candidate.py) on this
// machine's GPU — builds?, correct at KernelBench's tolerance and at 1e-2, the share of device time
// in kernels compiled from its own source, its label (custom / pytorch-only / fallback / failed),
// time and speedup vs eager and vs torch.compile (timed by the same method), CUDA-L1's claimed
// speedup beside it. Writes <out>/<prefix>.json and .md after every candidate (resumable: rows
// already there are kept, --redo measures the selected ones again), so a killed or deadline-stopped
// run keeps its work.
//
//   bench cuda-l1-audit --data shared/peers/cuda-l1/h100-levels-1-2.json [--out bench/results]
//     [--prefix h200-cuda-l1-audit] [--work /tmp/kd-cuda-l1-audit] [--deadline-s 420]
//     [--limit N] [--shard I/N] [--tasks 1/1,2/96] [--build-jobs N] [--measure-jobs N]
//     [--build-limit-s 150] [--measure-limit-s 150] [--compile] [--compile-pass] [--compile-limit-s 60] [--redo]
//     [--overlap-builds] [--warmup-ms MS] [--prewarm-ms MS] [--gated-samples N] [--quiet-timing]
//
// torch.compile baselines cost 10-60 s each: --compile adds one per correct candidate in the same
// run; --compile-pass runs only them, for rows already measured that lack one (resumable too).
// A control candidate written for KernelDuel (bench/cuda-l1-audit/control-*.py: a correct
// load_inline ReLU) runs first: when it does not build, or is not labelled `custom`, the build
// failures and labels below say more about this machine's toolchain than about CUDA-L1.
//
// Builds (load_inline) run in parallel (--build-jobs, MAX_JOBS=2 each) into one extension folder per
// candidate (a cache: a later run on the same machine reuses it), all of them before the first
// measurement: a timing sample is the larger of the CUDA events and the host clock, and compilers
// busy on every core lengthen the host clock of a short forward (on the H200, 2026-12-01, eager
// sigmoid read 0.045 ms beside 7 builds, 0.020 ms in a later process with no build running). --overlap-builds measures while
// builds run (faster, and said in every row it touches). Measurements run --measure-jobs at a time;
// their GPU work takes a shared lock file shared and their timing sections take it exclusively, so
// no two time at once and nothing of theirs runs on the GPU beside a timing section (torch.compile's
// first call, where it compiles, holds it shared too). Nothing else should use the GPU meanwhile.
// Python with torch is found like everywhere (KERNELDUEL_PYTHON, then python3); its torch, CUDA,
// triton and torch.compile are recorded, and a missing piece is said and skipped, not fatal.
// Not a CUDA-harness measurement: every row carries the guarantee level `python-in-process`.
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { benchArgs as parseArgs } from './lib/args.js';
import { findPython } from '../main/engine/platform/toolchain/python.js';
import { pool } from './lib/pool.js';
import { buildCandidate, buildErrorLine, changedFlags, measureBaseline, measureCandidate, pythonTorchEnv, type CandidateOutcome, type PyEnvFile } from '../main/engine/pytorch/candidate.js';
import { GUARANTEE_LEVELS, isHostBound, type CandidateLabel } from '../main/engine/base/types.js';

const { values: v } = parseArgs({
  options: {
    data: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    prefix: { type: 'string', default: 'h200-cuda-l1-audit' },
    work: { type: 'string', default: '/tmp/kd-cuda-l1-audit' },
    'deadline-s': { type: 'string', default: '420' },
    limit: { type: 'string' },
    shard: { type: 'string' },
    tasks: { type: 'string' },
    'build-jobs': { type: 'string' },
    'measure-jobs': { type: 'string', default: '3' },
    'build-limit-s': { type: 'string', default: '150' },
    'measure-limit-s': { type: 'string', default: '150' },
    'compile-limit-s': { type: 'string', default: '60' },
    'warmup-ms': { type: 'string', default: '0' },
    'prewarm-ms': { type: 'string', default: '0' },
    'gated-samples': { type: 'string', default: '10' },
    'quiet-timing': { type: 'boolean', default: false },
    compile: { type: 'boolean', default: false },
    'compile-pass': { type: 'boolean', default: false },
    redo: { type: 'boolean', default: false },
    'overlap-builds': { type: 'boolean', default: false },
    device: { type: 'string', default: 'auto' },
  },
});

function num(name: string, s: string | undefined, fallback: number): number {
  if (s === undefined) return fallback;
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number (got ${s})`);
  return n;
}

const started = Date.now();
const deadlineMs = started + num('deadline-s', v['deadline-s'], 420) * 1000;
const buildJobs = Math.max(1, num('build-jobs', v['build-jobs'], Math.max(1, Math.floor((cpus().length - 2) / 2))));
const measureJobs = Math.max(1, num('measure-jobs', v['measure-jobs'], 3));
const buildLimitMs = num('build-limit-s', v['build-limit-s'], 150) * 1000;
const measureLimitMs = num('measure-limit-s', v['measure-limit-s'], 150) * 1000;
const compileLimitS = num('compile-limit-s', v['compile-limit-s'], 60);
// The runner's timing settings (resources/python/kd_candidate.py): warm-up calls until --warmup-ms have
// passed, and the GPU kept busy --prewarm-ms before each sample's flush (both 0: its defaults).
// --gated-samples N (default 10) adds N samples behind a gate after the timing: the GPU's own time for
// the call, without Python's launch time, which for forwards under ~0.3 ms is most of the one-call
// figure and moved 2-4x between processes on the H200 (bench/results/h200-eager-noise.md). Each row
// gives both: speedup vs eager by one call (KernelBench's method; reproducible only where the row is
// not host-bound) and by the GPU's own time (reproducible; host work shown beside it as host-call ms).
// --quiet-timing: each measuring process holds the audit's lock shared for all its work and times
// only while every other one waits (the runner's --quiet-lock), so no sibling's CPU work runs beside
// a timing section; builds are apart anyway (see the top of this file).
const timing = { warmupMs: num('warmup-ms', v['warmup-ms'], 0), prewarmMs: num('prewarm-ms', v['prewarm-ms'], 0), gatedSamples: Math.floor(num('gated-samples', v['gated-samples'], 10)), quiet: !!v['quiet-timing'] };
const timingArgs = [
  ...(timing.quiet ? ['--quiet-lock'] : []),
  ...(timing.warmupMs ? ['--warmup-ms', String(timing.warmupMs)] : []),
  ...(timing.prewarmMs ? ['--prewarm-ms', String(timing.prewarmMs)] : []),
  '--gated-samples', String(timing.gatedSamples),
];
const outDir = resolve(v.out ?? 'bench/results');
const work = resolve(v.work ?? '/tmp/kd-cuda-l1-audit');
const device = (v.device === 'cpu' || v.device === 'cuda' ? v.device : 'auto') as 'cpu' | 'cuda' | 'auto';

const DATA_CANDIDATES = [v.data, process.env.KD_CUDA_L1_JSON, 'shared/peers/cuda-l1/h100-levels-1-2.json', '../shared/peers/cuda-l1/h100-levels-1-2.json', '/work/shared/peers/cuda-l1/h100-levels-1-2.json'].filter((p): p is string => !!p);
const dataPath = DATA_CANDIDATES.find((p) => existsSync(p));
if (!dataPath) throw new Error(`CUDA-L1's candidates not found (tried ${DATA_CANDIDATES.join(', ')}): pass --data <h100-levels-1-2.json>`);

interface Entry { task_id: number | string; ref_code: string; custom_code?: string | null; score?: string | number | null }
const raw = JSON.parse(readFileSync(dataPath, 'utf8')) as Record<string, Entry[]>;

interface Item { id: string; level: number; task: number; ref: string; code: string; claimed: number | null; hasGlobal: boolean; builds: boolean; hash: string }
const all: Item[] = [];
for (const [lvl, entries] of Object.entries(raw)) {
  for (const e of entries) {
    if (!e.custom_code || !e.ref_code) continue;
    const claimed = e.score === undefined || e.score === null ? null : Number(e.score);
    all.push({
      id: `${lvl}/${e.task_id}`, level: Number(lvl), task: Number(e.task_id), ref: e.ref_code, code: e.custom_code,
      claimed: claimed !== null && Number.isFinite(claimed) ? claimed : null,
      hasGlobal: /__global__/.test(e.custom_code),
      builds: /load_inline|cpp_extension|\bload\s*\(/.test(e.custom_code),
      hash: createHash('sha256').update(e.ref_code).update('\0').update(e.custom_code).digest('hex').slice(0, 12),
    });
  }
}
all.sort((a, b) => a.level - b.level || a.task - b.task);

// The control (not CUDA-L1's): run first, kept out of the summary's numbers.
const benchData = process.env.KERNELDUEL_BENCH_DATA ?? dirname(fileURLToPath(import.meta.url));
const controlDir = join(benchData, 'cuda-l1-audit');
const control: Item = {
  id: 'control', level: 0, task: 0, claimed: null, hasGlobal: true, builds: true,
  ref: readFileSync(join(controlDir, 'control-problem.py'), 'utf8'), code: readFileSync(join(controlDir, 'control-candidate.py'), 'utf8'), hash: 'control',
};

let selected = all;
if (v.tasks) {
  const want = new Set(v.tasks.split(',').map((s) => s.trim()).filter((t) => t !== 'control')); // the control always runs
  const unknown = [...want].filter((t) => !all.some((i) => i.id === t));
  if (unknown.length) throw new Error(`--tasks: no candidate for ${unknown.join(', ')} (level/task_id, e.g. 1/1,2/96)`);
  selected = all.filter((i) => want.has(i.id));
}
if (v.shard) {
  const m = /^(\d+)\/(\d+)$/.exec(v.shard);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new Error(`--shard must be I/N with 1 <= I <= N (got ${v.shard})`);
  const [i, n] = [Number(m[1]), Number(m[2])];
  selected = selected.filter((_, k) => k % n === i - 1);
}

// ------------------------------------------------------------------------------------------- rows

interface Row {
  id: string;
  level: number;
  task: number;
  claimed: number | null;
  hasGlobal: boolean;
  usesExtension: boolean;
  build: { ok: boolean | null; seconds: number | null; failedLoads: string[]; note?: string };
  label: CandidateLabel;
  correct: boolean | null;
  correct1e2: boolean | null;
  customShare: number | null;
  ownKernels: string[];
  topKernels: string[];
  candidateMs: number | null;
  eagerMs: number | null;
  compileMs: number | null;
  compileNote?: string;
  /** Eager again, timed in the torch.compile process (a check on the eager time's stability). */
  eagerMsCompileRun?: number | null;
  speedupEager: number | null;
  speedupCompile: number | null;
  claimHolds: boolean | null;
  timer: string | null;
  wallExceedsEvents: boolean | null;
  /** Timed while candidates' builds ran on the CPU (--overlap-builds; every row written before 2026-12-01 18:40 lacks this field and was). */
  timedBesideBuilds?: boolean;
  /** The runner's timing settings this row was measured with (rows before 2026-12-01 21:30 lack it: both 0). */
  timing?: { warmupMs: number; prewarmMs: number; gatedSamples?: number; quiet?: boolean };
  /** The same, for the torch.compile process (the compile pass may run with other settings). */
  compileTiming?: { warmupMs: number; prewarmMs: number; gatedSamples?: number; quiet?: boolean };
  /** The host's median time for the forward call to return (Python launching its kernels), eager and candidate (runs after 2026-12-01 21:30). */
  eagerHostCallMs?: number | null;
  candidateHostCallMs?: number | null;
  /** The GPU's own time behind a gate (--gated-samples; rows before 2026-12-02 had it only as diagnostics, most had none). */
  eagerDeviceMs?: number | null;
  candidateDeviceMs?: number | null;
  /** Speedup vs eager by the GPU's own times (eagerDeviceMs / candidateDeviceMs). */
  speedupEagerGpu?: number | null;
  /** The same claim check by the GPU's own times. */
  claimHoldsGpu?: boolean | null;
  /** Eager's GPU time in the torch.compile process (the cross-process check of the GPU figure). */
  eagerDeviceMsCompileRun?: number | null;
  /** torch.compile's GPU time, and the speedup over it by GPU times. */
  compileDeviceMs?: number | null;
  speedupCompileGpu?: number | null;
  /**
   * Eager's or the candidate's one-call figure is mostly not the GPU's work: its GPU time is under 80%
   * of it (rows without GPU times: host call >= 80% of the figure). Such a figure is Python's launch
   * speed and moves with the CPU; the row's GPU-time speedup does not.
   */
  hostBound?: boolean | null;
  /** The reference gave the same outputs for every input set: a constant output passes every check, so the row says nothing about a kernel (runs from 2026-12-02). */
  referenceConstant?: boolean | null;
  /** The candidate's fastest call on input sets it had never seen (each timed once after the samples; runs from 2026-12-02): a cache of results cannot lower it. */
  candidateFirstUseMs?: number | null;
  failure?: { kind: string; message: string };
  /** The first check that failed at KernelBench's tolerance, and why. */
  wrong?: string;
  /** Precision flags the candidate changed at import (TF32 on, cudnn.benchmark): hack 5 of the field notes when it needs them to pass. */
  flagsChanged: string[];
  sandboxed: boolean;
  guarantee: 'python-in-process';
  seconds: number;
}

const jsonPath = join(outDir, `${v.prefix}.json`);
const mdPath = join(outDir, `${v.prefix}.md`);
const rows = new Map<string, Row>();
// --redo measures the selected candidates again (all of them, or those --tasks / --shard / --limit
// name, and the control); every other row of the file is kept, and a selected row the deadline
// does not reach keeps its earlier figures (said under "not run this time"). Before 2026-12-02 it
// dropped the whole file, so `--redo --tasks` left only the named rows.
if (existsSync(jsonPath)) {
  try {
    const prev = JSON.parse(readFileSync(jsonPath, 'utf8')) as { rows?: Row[] };
    for (const r of prev.rows ?? []) rows.set(r.id, r);
  } catch (e) {
    if (!v.redo) throw new Error(`${jsonPath} exists but does not parse (${(e as Error).message}): move it away or pass --redo`, { cause: e });
  }
}
const limitN = v.limit === undefined ? undefined : num('limit', v.limit, 0);
const todo = v['compile-pass'] ? [] : v.redo ? [control, ...selected.slice(0, limitN)] : [
  ...(rows.has('control') ? [] : [control]),
  ...selected.filter((i) => !rows.has(i.id)).slice(0, limitN),
];
/** A child's time limit: its own, but never much past the deadline (a killed child keeps what its file had). */
const bounded = (limitMs: number): number => Math.max(20_000, Math.min(limitMs, deadlineMs - Date.now() + 30_000));

/** The eager time of the torch.compile process within 10% of the audit's own (or no compile time to judge). */
const eagerAgrees = (r: { eagerMs: number | null; eagerMsCompileRun?: number | null }): boolean =>
  !r.eagerMs || !r.eagerMsCompileRun || Math.abs(r.eagerMsCompileRun / r.eagerMs - 1) <= 0.1;
const geomean = (xs: number[]): number | null => (xs.length ? Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length) : null);
const f2 = (x: number | null | undefined, d = 2): string => (x === null || x === undefined ? '—' : x.toFixed(d));

let env: PyEnvFile | { ok: false; why: string } = { ok: false, why: 'not probed yet' };
let pythonNote = '';
/** Why the control did not run this time, when it did not (see runDevice below). */
let controlSkipped: string | undefined;
const notRun: string[] = [];

function summary(): Record<string, unknown> {
  const rs = [...rows.values()].filter((r) => r.id !== 'control');
  const c = rows.get('control');
  // Rows whose reference output is the same for every input prove nothing about a kernel: counted, never in a geomean or a claim check.
  const constant = rs.filter((r) => r.referenceConstant === true);
  const correct = rs.filter((r) => r.correct === true && r.speedupEager !== null && r.referenceConstant !== true);
  const correct2 = rs.filter((r) => r.correct1e2 === true && r.speedupEager !== null && r.referenceConstant !== true);
  const custom50 = correct.filter((r) => (r.customShare ?? 0) >= 0.5);
  const withClaim = correct2.filter((r) => r.claimed !== null && r.speedupEager !== null);
  // The torch.compile process times eager again: where its eager disagrees with the audit's own by
  // more than 10%, that process's timing was disturbed and its torch.compile time is not trusted.
  const agree = rs.filter((r) => r.eagerMs && r.eagerMsCompileRun).map((r) => (r.eagerMsCompileRun as number) / (r.eagerMs as number)).sort((a, b) => a - b);
  const compileTrusted = correct.filter((r) => r.speedupCompile !== null && eagerAgrees(r));
  const byLabel: Record<string, number> = {};
  for (const r of rs) byLabel[r.label] = (byLabel[r.label] ?? 0) + 1;
  // By the GPU's own times (rows measured with gated samples): what the candidate's GPU work gains.
  const gpu = correct.filter((r) => typeof r.speedupEagerGpu === 'number');
  const gpuClaim = withClaim.filter((r) => typeof r.claimHoldsGpu === 'boolean');
  const agreeGpu = rs.filter((r) => r.eagerDeviceMs && r.eagerDeviceMsCompileRun).map((r) => (r.eagerDeviceMsCompileRun as number) / (r.eagerDeviceMs as number)).sort((a, b) => a - b);
  const ratioStats = (xs: number[]) => (xs.length ? { n: xs.length, min: xs[0], median: xs[Math.floor(xs.length / 2)], max: xs[xs.length - 1], within10pct: xs.filter((x) => Math.abs(x - 1) <= 0.1).length } : null);
  return {
    candidates: all.length,
    control: c ? { label: c.label, correct: c.correct, customShare: c.customShare, build: c.build, failure: c.failure, speedupEager: c.speedupEager } : null,
    ...(controlSkipped && !c ? { controlNote: controlSkipped } : {}),
    toolchainOk: c ? c.build.ok === true && c.label === 'custom' && c.correct === true && (c.customShare ?? 0) >= 0.5 : null,
    audited: rs.length,
    builtOk: rs.filter((r) => r.usesExtension && r.build.ok).length,
    usesExtension: rs.filter((r) => r.usesExtension).length,
    withGlobalKernel: rs.filter((r) => r.hasGlobal).length,
    byLabel,
    correctKernelBenchTol: rs.filter((r) => r.correct === true).length,
    correct1e2: rs.filter((r) => r.correct1e2 === true).length,
    geomeanVsEagerCorrect: geomean(correct.map((r) => r.speedupEager as number)),
    geomeanClaimedSameSet: geomean(correct.filter((r) => r.claimed !== null && r.claimed > 0).map((r) => r.claimed as number)),
    geomeanVsCompileCorrect: geomean(correct.filter((r) => r.speedupCompile !== null).map((r) => r.speedupCompile as number)),
    geomeanVsCompileCorrectEagerAgrees: geomean(compileTrusted.map((r) => r.speedupCompile as number)),
    compileTimed: correct.filter((r) => r.speedupCompile !== null).length,
    compileEagerAgrees: compileTrusted.length,
    eagerRatioCompileRun: ratioStats(agree),
    gpuTimed: gpu.length,
    geomeanVsEagerGpuCorrect: geomean(gpu.map((r) => r.speedupEagerGpu as number)),
    geomeanClaimedGpuSet: geomean(gpu.filter((r) => r.claimed !== null && r.claimed > 0).map((r) => r.claimed as number)),
    geomeanVsCompileGpuCorrect: geomean(gpu.filter((r) => typeof r.speedupCompileGpu === 'number').map((r) => r.speedupCompileGpu as number)),
    compileGpuTimed: gpu.filter((r) => typeof r.speedupCompileGpu === 'number').length,
    geomeanVsEagerGpuCustom50: geomean(gpu.filter((r) => (r.customShare ?? 0) >= 0.5).map((r) => r.speedupEagerGpu as number)),
    claimsCheckedGpu: gpuClaim.length,
    claimsHoldGpuWithin20pct: gpuClaim.filter((r) => r.claimHoldsGpu).length,
    eagerGpuRatioCompileRun: ratioStats(agreeGpu),
    geomeanVsEagerCustom50: geomean(custom50.map((r) => r.speedupEager as number)),
    // Rows whose eager and candidate figures are the GPU's (not Python's launch time), where known.
    hostBoundKnown: correct.filter((r) => r.hostBound !== undefined && r.hostBound !== null).length,
    hostBound: correct.filter((r) => r.hostBound === true).length,
    geomeanVsEagerNotHostBound: geomean(correct.filter((r) => r.hostBound === false).map((r) => r.speedupEager as number)),
    geomeanClaimedNotHostBound: geomean(correct.filter((r) => r.hostBound === false && r.claimed !== null && r.claimed > 0).map((r) => r.claimed as number)),
    custom50: custom50.length,
    claimsChecked: withClaim.length,
    timedBesideBuilds: rs.filter((r) => r.candidateMs !== null && r.timedBesideBuilds !== false).length,
    claimsHoldWithin20pct: withClaim.filter((r) => r.claimHolds).length,
    timedCount: rs.filter((r) => r.candidateMs !== null).length,
    referenceConstant: constant.map((r) => r.id),
    changePrecisionFlags: rs.filter((r) => (r.flagsChanged ?? []).some((f) => /tf32|Precision/i.test(f))).map((r) => r.id),
  };
}

function write(final: boolean): void {
  mkdirSync(outDir, { recursive: true });
  const s = summary();
  const rs = [...rows.values()].sort((a, b) => a.level - b.level || a.task - b.task);
  const audited = rs.filter((r) => r.id !== 'control');
  const doc = {
    what: 'CUDA-L1 H100 candidates (KernelBench levels 1-2) re-measured by KernelDuel\'s Python candidate runner',
    guarantee: { level: 'python-in-process', ...GUARANTEE_LEVELS['python-in-process'] },
    simulated: false,
    host: hostname(),
    env,
    pythonNote,
    data: resolve(dataPath as string),
    command: `bench cuda-l1-audit ${process.argv.slice(2).join(' ')}`,
    startedAt: new Date(started).toISOString(),
    writtenAt: new Date().toISOString(),
    complete: final && audited.length === all.length,
    notRunThisTime: notRun,
    method: {
      correctness: 'checks on fresh seeds (default 3), every element, against the problem\'s Model run with torch\'s default flags (as KernelBench); KernelBench tolerance (fp32 atol=rtol=1e-4, 16-bit 1e-2) and 1e-2; weights from torch.manual_seed(42) before each model is built',
      timing: 'per sample: L2 flush (256 MiB), device sync, CUDA events and host clock to a device-wide sync; sample = max(event, host - empty-call floor); median; >= 10 samples, >= 0.3 s or rsd < 2%, <= 3 s; eager timed the same way in the same process before the candidate was imported; torch.compile (default mode) in a separate process',
      timingSettings: timing,
      gpuTime: 'after the timing, --gated-samples samples behind a gate (a spinning kernel queued before the start event, 4x the host call time, 1-50 ms), so the events see the GPU\'s work, not Python launching it; sample = max(events, host clock less floor and gate); outputs checked and some verified as in the timing; host call time reported beside it',
      customShare: 'torch.profiler CUDA records of two forwards; own = kernel whose function name is a __global__ or @triton.jit function of the candidate source',
      claimHolds: 'measured speedup vs eager >= 0.8 x claimed (correct at 1e-2); claimHoldsGpu: the same by GPU times',
    },
    summary: s,
    rows: rs,
  };
  const tmp = `${jsonPath}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc, null, 1));
  renameSync(tmp, jsonPath);
  const envLine = 'torch' in env ? `torch ${env.torch ?? 'missing'}, CUDA ${env.cudaVersion ?? 'none'}, device ${env.device ?? 'none'} (sm ${env.capability ?? '?'}), triton ${env.triton ?? 'missing'}, torch.compile ${env.compile ? 'present' : 'missing'}` : `environment not probed: ${env.why}`;
  const md = [
    `# CUDA-L1's released H100 kernels (KernelBench levels 1–2), re-measured`,
    '',
    `Guarantee level of every row: **python-in-process** (the candidate's host code runs in the measuring process; see docs/PYTHON-CANDIDATES.md). Not a CUDA-harness (isolated) result. Measured, not simulated.`,
    '',
    `- Host ${hostname()}: ${envLine}. ${pythonNote}`,
    `- Command: \`${doc.command}\`; written ${doc.writtenAt}; ${audited.length} of ${all.length} candidates audited${doc.complete ? '' : ' (incomplete: run again to resume)'}.`,
    `- Control (a correct load_inline ReLU written for KernelDuel): ${s.control === null ? controlSkipped ?? 'not run' : s.toolchainOk ? '**built, correct, labelled custom**: the toolchain works, build failures below are the candidates\' own' : `**NOT OK** (${JSON.stringify(s.control)}): build failures and labels below may be this machine's, not CUDA-L1's`}.`,
    `- Labels: ${Object.entries(s.byLabel as Record<string, number>).map(([k, n]) => `${k} ${n}`).join(', ') || 'none yet'}. Candidates using a C++/CUDA extension: ${s.usesExtension} (built: ${s.builtOk}); with a \`__global__\` kernel: ${s.withGlobalKernel}.`,
    `- Correct at KernelBench's tolerance: **${s.correctKernelBenchTol}**; at 1e-2: **${s.correct1e2}**.`,
    `- Geometric mean speedup vs eager over correct candidates, one call (KernelBench's method, host-bound rows included): **${f2(s.geomeanVsEagerCorrect as number | null)}×** (CUDA-L1 claimed ${f2(s.geomeanClaimedSameSet as number | null)}× for the same set); vs torch.compile: ${f2(s.geomeanVsCompileCorrect as number | null)}× over ${s.compileTimed} timed (${f2(s.geomeanVsCompileCorrectEagerAgrees as number | null)}× over the ${s.compileEagerAgrees} whose torch.compile process timed eager within 10% of the audit's eager); over the ${s.custom50} whose own kernels did ≥ 50% of the device time: ${f2(s.geomeanVsEagerCustom50 as number | null)}×.`,
    `- Claimed speedups that hold within 20% (measured ≥ 0.8 × claimed, correct at 1e-2): **${s.claimsHoldWithin20pct} of ${s.claimsChecked}**.`,
    `- Rows timed while builds ran on the CPU (†: the host clock of a short forward can read long there; before 2026-12-01 18:40 every run did so): ${s.timedBesideBuilds} of ${s.timedCount}.`,
    `- Candidates that turn TF32 on (or lower float32 matmul precision) at import: ${(s.changePrecisionFlags as string[]).join(', ') || 'none'}.`,
    `- References whose outputs were the same for every input set (c: a constant output passes every check; left out of every geomean and claim count): ${(s.referenceConstant as string[]).join(', ') || 'none'}.`,
    (s.hostBoundKnown as number) > 0 ? `- Host-bound (h: the GPU's own time is under 80% of the eager or the candidate one-call figure; the rest is Python launching kernels, which moved 2–4× between processes on the H200; rows without GPU times: host call ≥ 80% of the figure): ${s.hostBound} of ${s.hostBoundKnown} correct rows; over the other ${(s.hostBoundKnown as number) - (s.hostBound as number)}, geomean vs eager ${f2(s.geomeanVsEagerNotHostBound as number | null)}× (claimed ${f2(s.geomeanClaimedNotHostBound as number | null)}×).` : null,
    s.eagerRatioCompileRun ? `- Eager timed again in the torch.compile processes, ÷ the audit's eager: median ${f2((s.eagerRatioCompileRun as { median: number }).median, 3)}, range ${f2((s.eagerRatioCompileRun as { min: number }).min, 3)}–${f2((s.eagerRatioCompileRun as { max: number }).max, 3)}, within 10% for ${(s.eagerRatioCompileRun as { within10pct: number }).within10pct} of ${(s.eagerRatioCompileRun as { n: number }).n} (‡: outside 10%, that torch.compile time is not trusted).` : null,
    (s.gpuTimed as number) > 0 ? `- **By the GPU's own times** (samples behind a gate: Python's launch time left out, shown as host ms beside; ${s.gpuTimed} correct rows): geomean vs eager **${f2(s.geomeanVsEagerGpuCorrect as number | null)}×** (claimed ${f2(s.geomeanClaimedGpuSet as number | null)}× for the same set); vs torch.compile ${f2(s.geomeanVsCompileGpuCorrect as number | null)}× over ${s.compileGpuTimed}; custom ≥ 50%: ${f2(s.geomeanVsEagerGpuCustom50 as number | null)}×; claims that hold within 20% by GPU time: **${s.claimsHoldGpuWithin20pct} of ${s.claimsCheckedGpu}**.` : null,
    s.eagerGpuRatioCompileRun ? `- Eager's GPU time again in the torch.compile processes, ÷ the audit's: median ${f2((s.eagerGpuRatioCompileRun as { median: number }).median, 3)}, range ${f2((s.eagerGpuRatioCompileRun as { min: number }).min, 3)}–${f2((s.eagerGpuRatioCompileRun as { max: number }).max, 3)}, within 10% for ${(s.eagerGpuRatioCompileRun as { within10pct: number }).within10pct} of ${(s.eagerGpuRatioCompileRun as { n: number }).n}.` : null,
    notRun.length ? `- Not run this time: ${notRun.join('; ')}.` : null,
    '',
    'ms: one call as KernelBench times it (L2 flushed, device idle, events), Python\'s launch time included; GPU ms: the GPU\'s own time (candidate / eager), host ms: the host\'s time to issue the call (candidate / eager); vs eager (GPU): by GPU times.',
    '',
    '| task | claimed | label | own share | correct (KB / 1e-2) | ms | eager ms | compile ms | vs eager | vs compile | GPU ms | host ms | vs eager (GPU) | holds | build | why |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rs.map((r) => `| ${r.id}${r.referenceConstant ? ' c' : ''} | ${f2(r.claimed)} | ${r.label} | ${r.customShare === null ? '—' : `${Math.round(r.customShare * 100)}%`} | ${r.correct === null ? '—' : r.correct ? 'yes' : 'no'} / ${r.correct1e2 === null ? '—' : r.correct1e2 ? 'yes' : 'no'} | ${f2(r.candidateMs, 3)}${r.candidateMs !== null && r.timedBesideBuilds !== false ? ' †' : ''}${r.hostBound ? ' h' : ''} | ${f2(r.eagerMs, 3)} | ${f2(r.compileMs, 3)}${eagerAgrees(r) ? '' : ' ‡'} | ${f2(r.speedupEager)} | ${f2(r.speedupCompile)} | ${f2(r.candidateDeviceMs, 4)} / ${f2(r.eagerDeviceMs, 4)} | ${f2(r.candidateHostCallMs, 3)} / ${f2(r.eagerHostCallMs, 3)} | ${f2(r.speedupEagerGpu)} | ${r.claimHolds === null ? '—' : r.claimHolds ? 'yes' : 'no'}${typeof r.claimHoldsGpu === 'boolean' ? ` (GPU ${r.claimHoldsGpu ? 'yes' : 'no'})` : ''} | ${!r.usesExtension ? 'none' : r.build.ok ? `ok ${f2(r.build.seconds, 0)} s` : r.build.ok === false ? 'FAILED' : '—'} | ${(r.failure ? `${r.failure.kind}: ${r.failure.message}` : [r.wrong ? `wrong: ${r.wrong}` : '', ...r.build.failedLoads].filter(Boolean).join('; ')).replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 160)} |`),
    '',
  ].filter((x) => x !== null).join('\n');
  writeFileSync(mdPath, md);
}

// ------------------------------------------------------------------------------------------- items

function itemDir(i: Item): string {
  const d = join(work, `${i.level}_${i.task}_${i.hash}`);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, 'problem.py'), i.ref);
  writeFileSync(join(d, 'candidate.py'), i.code);
  return d;
}

async function main(): Promise<void> {
  mkdirSync(work, { recursive: true });
  const py = await findPython();
  if (!py.python) {
    env = { ok: false, why: py.problems.join(' ') };
    pythonNote = 'No Python with torch: nothing audited.';
    write(false);
    throw new Error(`no Python with torch here: ${py.problems.join(' ')}`);
  }
  const python = py.python;
  env = await pythonTorchEnv(python, join(work, 'env'));
  pythonNote = `Python ${python}.`;
  const cudaOk = 'cuda' in env && env.cuda;
  if (!cudaOk && device !== 'cpu') pythonNote += ' torch sees no CUDA device: running on the CPU (no kernel records, labels from builds only, times are CPU times).';
  const wantCompile = !!(v.compile || v['compile-pass']);
  const compileOk = wantCompile && 'compile' in env && env.compile === true && cudaOk && env.triton !== null;
  if (!compileOk) pythonNote += !wantCompile ? ' torch.compile baselines not run this time (--compile or --compile-pass runs them).' : ` torch.compile baselines skipped: ${!('compile' in env) || !env.compile ? 'this torch has no torch.compile' : !cudaOk ? 'no CUDA' : 'triton is missing'}.`;
  if ('torch' in env && env.ninja === null) pythonNote += ' ninja is not on PATH: torch cannot build load_inline extensions here, so every extension build fails for the machine, not the candidate.';
  const runDevice = cudaOk ? device : 'cpu';
  // The control is a CUDA kernel built with load_inline: on the CPU it can only fail (for the
  // machine, not the toolchain it is there to check), and its 16M-element problem takes ~20 s of
  // CPU each run. So it runs only where the candidates run on a GPU; its row says why otherwise.
  if (runDevice === 'cpu') {
    const at = todo.indexOf(control);
    if (at >= 0) todo.splice(at, 1);
    controlSkipped = 'not run: the candidates run on the CPU here, and the control checks the CUDA toolchain';
  }
  mkdirSync(join(work, 'lock'), { recursive: true });
  const lockFile = join(work, 'lock', 'gpu.lock');
  writeFileSync(lockFile, '');
  process.stderr.write(`cuda-l1-audit: ${todo.length} to do (${rows.size} already in ${jsonPath}); builds ${buildJobs} at a time, measurements ${measureJobs}; deadline in ${Math.round((deadlineMs - Date.now()) / 1000)} s\n`);
  write(false);

  /** The torch.compile baseline of one task (its own process, no candidate code), or why there is none. */
  const compileBaseline = async (i: Item, d: string): Promise<{ ms: number | null; note?: string; eagerMs?: number; eagerDeviceMs?: number; deviceMs?: number }> => {
    if (Date.now() + compileLimitS * 1000 > deadlineMs) return { ms: null, note: 'not run: deadline' };
    const bl = await measureBaseline(join(d, 'problem.py'), { python, workDir: join(d, 'compile-run'), timeoutMs: bounded((compileLimitS + 60) * 1000), sandbox: false, device: runDevice, lockFile, compile: true, compileLimitS, timingArgs, env: { TORCHINDUCTOR_CACHE_DIR: join(work, 'inductor') } });
    const c = bl.file?.compiled;
    const eagerMs = bl.file?.eager?.medianMs;
    const eagerDeviceMs = bl.file?.eager?.gated?.deviceMedianMs;
    if (c && c.ok) return { ms: c.medianMs, deviceMs: c.gated?.deviceMedianMs, eagerMs, eagerDeviceMs, note: c.matchesEager1e2 ? undefined : 'torch.compile output differs from eager at 1e-2' };
    return { ms: null, eagerMs, eagerDeviceMs, note: c && !c.ok ? c.why : bl.failure?.message ?? 'no result' };
  };

  if (v['compile-pass']) {
    const need = [...rows.values()].filter((r) => r.id !== 'control' && r.correct1e2 && r.candidateMs !== null && r.compileMs === null);
    const byId = new Map(selected.map((i) => [i.id, i]));
    process.stderr.write(`cuda-l1-audit: torch.compile baselines for ${need.length} rows\n`);
    if (!compileOk) {
      write(true);
      throw new Error(`--compile-pass: ${pythonNote}`);
    }
    await pool(need, measureJobs, async (r) => {
      const i = byId.get(r.id);
      if (!i) return;
      const c = await compileBaseline(i, itemDir(i));
      r.compileMs = c.ms;
      r.compileNote = c.note;
      r.eagerMsCompileRun = c.eagerMs ?? null;
      r.eagerDeviceMsCompileRun = c.eagerDeviceMs ?? null;
      r.compileDeviceMs = c.deviceMs ?? null;
      r.compileTiming = timing;
      r.speedupCompile = c.ms && r.candidateMs ? c.ms / r.candidateMs : null;
      r.speedupCompileGpu = c.deviceMs && r.candidateDeviceMs ? c.deviceMs / r.candidateDeviceMs : null;
      write(false);
      process.stderr.write(`${r.id}: torch.compile ${f2(c.ms, 3)} ms (${c.note ?? 'ok'})\n`);
    });
    write(true);
    process.stdout.write(`${JSON.stringify(summary())}\nwrote ${jsonPath} and ${mdPath}\n`);
    return;
  }

  const builds = new Map<string, Promise<{ ok: boolean; seconds: number | null; failedLoads: string[]; note?: string }>>();
  const buildQueue = todo.filter((i) => i.builds);
  // Builds start at once, in parallel; each measurement waits for its own build.
  const buildResolvers = new Map<string, (r: { ok: boolean; seconds: number | null; failedLoads: string[]; note?: string }) => void>();
  for (const i of buildQueue) builds.set(i.id, new Promise((res) => buildResolvers.set(i.id, res)));
  const buildsDone = pool(buildQueue, buildJobs, async (i) => {
    const resolveBuild = buildResolvers.get(i.id) as (r: { ok: boolean; seconds: number | null; failedLoads: string[]; note?: string }) => void;
    if (Date.now() > deadlineMs) return resolveBuild({ ok: false, seconds: null, failedLoads: [], note: 'not built: deadline' });
    const d = itemDir(i);
    const ext = join(d, 'ext');
    const cached = join(ext, 'kd-build.json');
    if (existsSync(cached)) {
      try {
        const b = JSON.parse(readFileSync(cached, 'utf8')) as { ok: boolean; seconds?: number; loads?: Array<{ ok: boolean; name: string; error?: string }> };
        return resolveBuild({ ok: b.ok && (b.loads ?? []).every((l) => l.ok), seconds: b.seconds ?? null, failedLoads: (b.loads ?? []).filter((l) => !l.ok).map((l) => `${l.name}: ${(l.error ?? '').split('\n')[0]}`), note: 'cached' });
      } catch { /* rebuild */ }
    }
    const r = await buildCandidate(join(d, 'problem.py'), join(d, 'candidate.py'), { python, workDir: join(d, 'build-run'), extDir: ext, timeoutMs: bounded(buildLimitMs), sandbox: true, device: runDevice, env: { MAX_JOBS: '2' } });
    const loads = r.file?.loads ?? [];
    resolveBuild({
      ok: !!r.file?.ok && loads.every((l) => l.ok), seconds: r.file?.seconds ?? r.process.durationMs / 1000,
      failedLoads: [...loads.filter((l) => !l.ok).map((l) => `${l.name}: ${buildErrorLine(l.error ?? '')}`), ...(r.failure ? [`${r.failure.kind}: ${r.failure.message}`] : [])],
    });
  });

  // Every build first (see the top of this file), unless --overlap-builds: then candidates that need
  // no build first, and the others in the order their builds finish.
  const overlap = !!v['overlap-builds'];
  if (!overlap && buildQueue.length) {
    process.stderr.write(`cuda-l1-audit: ${buildQueue.length} builds before any measurement\n`);
    await buildsDone;
  }
  // Builds apart (the default): the candidates with an extension first, since whether their own
  // kernels run is what the audit is for (on 2026-12-01 a deadline cut all 68 of them, measured last).
  const order = overlap ? [...todo.filter((i) => !i.builds), ...todo.filter((i) => i.builds)] : [...todo.filter((i) => i.builds), ...todo.filter((i) => !i.builds)];
  await pool(order, measureJobs, async (i) => {
    const b = builds.get(i.id);
    const build = b ? await b : { ok: null, seconds: null, failedLoads: [] as string[] };
    if (Date.now() > deadlineMs) {
      notRun.push(`${i.id} (deadline${rows.has(i.id) ? '; its earlier row kept' : ''})`);
      return;
    }
    const d = itemDir(i);
    const t0 = Date.now();
    const limitMs = bounded(measureLimitMs);
    const m: CandidateOutcome = await measureCandidate(join(d, 'problem.py'), join(d, 'candidate.py'), {
      python, workDir: join(d, 'measure-run'), extDir: join(d, 'ext'), timeoutMs: limitMs, sandbox: true, device: runDevice, lockFile, eager: true, timingArgs, env: { MAX_JOBS: '2' },
    });
    // a limit the deadline shortened (2026-12-02: 2/71, building its extension in its first forward,
    // got 60 s of its 150) is the run's cut, not the candidate's failure: left for the next run
    if (m.failure?.kind === 'timeout' && limitMs < measureLimitMs) {
      notRun.push(`${i.id} (cut by the deadline after ${Math.round(limitMs / 1000)} s of its ${Math.round(measureLimitMs / 1000)} s${rows.has(i.id) ? '; its earlier row kept' : ''})`);
      return;
    }
    const eagerMs = m.file?.eager?.medianMs ?? null;
    let compileMs: number | null = null;
    let compileNote: string | undefined;
    let eagerMsCompileRun: number | null = null;
    let eagerDeviceMsCompileRun: number | null = null;
    let compileDeviceMs: number | null = null;
    let compileTiming: Row['compileTiming'];
    if (compileOk && m.correct1e2 && m.time) {
      const c = await compileBaseline(i, d);
      compileTiming = timing;
      compileMs = c.ms;
      compileNote = c.note;
      eagerMsCompileRun = c.eagerMs ?? null;
      eagerDeviceMsCompileRun = c.eagerDeviceMs ?? null;
      compileDeviceMs = c.deviceMs ?? null;
    } else if (!compileOk) compileNote = 'not run (see the environment line)';
    else compileNote = 'not run: candidate incorrect or not timed';
    const candMs = m.time?.medianMs ?? null;
    const eagerHostCallMs = m.file?.eager?.hostCallMedianMs ?? null;
    const candidateHostCallMs = m.time?.hostCallMedianMs ?? null;
    const eagerDeviceMs = m.file?.eager?.gated?.deviceMedianMs ?? null;
    const candidateDeviceMs = m.time?.gated?.deviceMedianMs ?? null;
    // On the CPU every figure is the host's: no GPU to be bound by, so no judgement.
    const hostBound = eagerMs === null || candMs === null || runDevice === 'cpu' ? null
      : eagerDeviceMs !== null && candidateDeviceMs !== null ? isHostBound(eagerDeviceMs, eagerMs) || isHostBound(candidateDeviceMs, candMs)
        : eagerHostCallMs === null || candidateHostCallMs === null ? null
          : eagerHostCallMs >= 0.8 * eagerMs || candidateHostCallMs >= 0.8 * candMs;
    const speedupEager = candMs && eagerMs ? eagerMs / candMs : null;
    const speedupEagerGpu = candidateDeviceMs && eagerDeviceMs ? eagerDeviceMs / candidateDeviceMs : null;
    const row: Row = {
      id: i.id, level: i.level, task: i.task, claimed: i.claimed, hasGlobal: i.hasGlobal, usesExtension: i.builds,
      build: { ok: build.ok, seconds: build.seconds, failedLoads: [...build.failedLoads, ...(m.file?.loads ?? []).filter((l) => !l.ok && !l.cached).map((l) => `${l.name}: ${buildErrorLine(l.error ?? '')}`)], ...('note' in build && build.note ? { note: build.note } : {}) },
      label: m.label, correct: m.correct, correct1e2: m.correct1e2, customShare: m.customShare,
      ownKernels: m.file?.own ?? [],
      topKernels: (m.file?.kernels?.kernels ?? []).slice(0, 3).map((k) => `${k.source}: ${k.name.slice(0, 80)} (${k.us.toFixed(1)} us)`),
      candidateMs: candMs, eagerMs, compileMs, compileNote, eagerMsCompileRun,
      speedupEager, speedupCompile: candMs && compileMs ? compileMs / candMs : null,
      claimHolds: speedupEager !== null && i.claimed !== null && m.correct1e2 ? speedupEager >= 0.8 * i.claimed : null,
      speedupEagerGpu, speedupCompileGpu: compileDeviceMs && candidateDeviceMs ? compileDeviceMs / candidateDeviceMs : null,
      claimHoldsGpu: speedupEagerGpu !== null && i.claimed !== null && m.correct1e2 ? speedupEagerGpu >= 0.8 * i.claimed : null,
      compileDeviceMs, eagerDeviceMsCompileRun,
      timer: m.time?.timer ?? null, wallExceedsEvents: m.time?.wallExceedsEvents ?? null,
      timedBesideBuilds: overlap && buildQueue.length > 0,
      timing,
      ...(compileTiming ? { compileTiming } : {}),
      eagerHostCallMs, candidateHostCallMs, hostBound,
      eagerDeviceMs, candidateDeviceMs,
      referenceConstant: m.file?.referenceConstant ? m.file.referenceConstant.constant : null,
      candidateFirstUseMs: m.time?.firstUse?.minMs ?? null,
      failure: m.failure ? { kind: m.failure.kind, message: m.failure.message.slice(0, 600) } : undefined,
      wrong: m.file?.checks?.find((c) => !c.ok)?.why ?? undefined,
      flagsChanged: changedFlags(m.file),
      sandboxed: m.process.sandboxed, guarantee: 'python-in-process', seconds: (Date.now() - t0) / 1000,
    };
    rows.set(i.id, row);
    write(false);
    process.stderr.write(`${i.id}: ${row.label}, correct ${row.correct}/${row.correct1e2}, share ${f2(row.customShare)}, ${f2(row.speedupEager)}x eager (claimed ${f2(row.claimed)}), ${Math.round(row.seconds)} s\n`);
  });
  await buildsDone;
  write(true);
  const s = summary();
  process.stdout.write(`${JSON.stringify(s)}\nwrote ${jsonPath} and ${mdPath}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`cuda-l1-audit: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
