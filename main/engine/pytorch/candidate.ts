// The client of resources/python/kd_candidate.py (protocol kd-candidate/1): runs a KernelBench-style
// Python candidate (`ModelNew`) or a problem's baselines (eager, torch.compile) in a child Python
// process and reads back the result file it writes. Candidate code (build, measure) runs inside the
// bubblewrap sandbox when it works here, with a wall-clock limit that kills the process group; the
// result says which. It does not decide what a result means (core/pytorch.ts, bench/cuda-l1-audit.ts).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { runProcess, type RunResult } from '../platform/proc/run.js';
import { bwrapArgs, defaultDataLimit, sandboxStatus } from '../platform/sandbox/index.js';
import { resourcesDir } from '../base/paths.js';
import type { CandidateLabel, GuaranteeLevel } from '../base/types.js';

export const CANDIDATE_PROTOCOL = 'kd-candidate/1';

/** The trusted runner: resources/python/kd_candidate.py. */
export function candidateScript(): string {
  return path.join(resourcesDir(), 'python', 'kd_candidate.py');
}

const FailureSchema = z.object({ kind: z.string(), message: z.string(), trace: z.string().optional() });

const TimingSchema = z.object({
  medianMs: z.number(),
  meanMs: z.number(),
  minMs: z.number(),
  rsd: z.number(),
  samples: z.number(),
  /** Every sample the median was taken from (runners before it was added have none). */
  samplesMs: z.array(z.number()).optional(),
  eventMedianMs: z.number().nullable(),
  wallMedianMs: z.number(),
  floorMs: z.number(),
  timer: z.enum(['events', 'wall']),
  wallExceedsEvents: z.boolean(),
  verifiedCalls: z.number(),
  inputSets: z.number(),
  /** Warm-up calls made, and the settings that shaped the samples (runners before 2026-12-01 21:30 have none). */
  warmupCalls: z.number().optional(),
  warmupMs: z.number().optional(),
  /** The GPU kept busy this long (a spinning kernel) before each sample's flush; 0: not. */
  prewarmMs: z.number().optional(),
  /** The median time for the call to return on the host (Python launching the kernels); near the event time, the figure is the host's. */
  hostCallMedianMs: z.number().nullable().optional(),
  /**
   * The GPU's own time for the call (--gated-samples, 10 by default since 2026-12-02; before, 0 and
   * diagnostics only): samples behind a gate, so Python's launch time stays out. Starved: samples
   * whose call took longer on the host than the gate (they time host waits too).
   */
  gated: z.object({
    deviceMedianMs: z.number(), gateMs: z.number(), samples: z.number(), starved: z.number(),
    eventMedianMs: z.number().optional(), wallNetMedianMs: z.number().optional(),
    /** The gated empty call's host ms beyond its gate (runners from 2026-12-02): subtracted from each sample's host clock. */
    floorMs: z.number().optional(),
    /** Each gated sample (ms), and each one's per-call cost: the larger of it and that call's host time (runners from 2026-12-02). */
    samplesMs: z.array(z.number()).optional(), perCallSamplesMs: z.array(z.number()).optional(), minMs: z.number().optional(), rsd: z.number().optional(), verifiedCalls: z.number().optional(),
  }).optional(),
  /** One call's cost when calls follow each other: the median over gated samples of the larger of the GPU's own time and that call's host time (gated.perCallSamplesMs). */
  perCallMs: z.number().optional(),
  /** Calls on input sets never seen before, each timed once after the samples and verified (candidates; runners from 2026-12-02): no cache of earlier results can lower them. */
  firstUse: z.object({
    medianMs: z.number(), minMs: z.number().optional(), samplesMs: z.array(z.number()), samples: z.number(), at: z.array(z.number()).optional(),
    /** More first-use calls at the end, made only when the first ones made the timed calls look served from a cache. */
    confirm: z.object({ minMs: z.number(), samplesMs: z.array(z.number()), samples: z.number() }).optional(),
  }).optional(),
});
export type PyTiming = z.infer<typeof TimingSchema>;

const LoadSchema = z.object({ kind: z.string(), name: z.string(), key: z.string().optional(), ok: z.boolean(), error: z.string().optional(), seconds: z.number().optional(), cached: z.boolean().optional() });
export type ExtensionLoad = z.infer<typeof LoadSchema>;

const OutputCheckSchema = z.object({
  index: z.number(), dtype: z.string(), shape: z.array(z.number()), ok: z.boolean(), ok1e2: z.boolean(),
  tol: z.number().optional(), maxAbs: z.number().optional(), maxRel: z.number().optional(), nonfinite: z.number().optional(), why: z.string().optional(),
});
const CheckSchema = z.object({ check: z.number(), ok: z.boolean(), ok1e2: z.boolean(), why: z.string().nullable(), outputs: z.array(OutputCheckSchema) });

const KernelsSchema = z.object({
  totalUs: z.number().optional(),
  bySource: z.record(z.string(), z.number()).optional(),
  customShare: z.number().optional(),
  kernelCount: z.number().optional(),
  kernels: z.array(z.object({ name: z.string(), us: z.number(), count: z.number(), source: z.string() })).optional(),
  why: z.string().optional(),
});

const GuaranteeSchema = z.object({ level: z.literal('python-in-process'), holds: z.array(z.string()), doesNotHold: z.array(z.string()) });

export const MeasureFileSchema = z.object({
  ok: z.boolean(),
  protocol: z.string(),
  command: z.literal('measure'),
  device: z.string(),
  torch: z.string(),
  guarantee: GuaranteeSchema,
  stage: z.string(),
  referencePrecision: z.string().optional(),
  /** The reference's outputs were identical for every input set (fresh seeds): a constant passes every check. uniform: per output, the one value all its elements have (or null). */
  referenceConstant: z.object({ constant: z.boolean(), uniform: z.array(z.number().nullable()).optional() }).nullable().optional(),
  /** Why fewer first-use input sets than asked for were made (their memory). */
  firstUseNote: z.string().optional(),
  loads: z.array(LoadSchema),
  own: z.array(z.string()).optional(),
  /** torch's precision flags before the candidate's import and after it (TF32, cudnn.benchmark...). */
  flagsBefore: z.record(z.string(), z.union([z.boolean(), z.string()])).optional(),
  flagsAfterImport: z.record(z.string(), z.union([z.boolean(), z.string()])).optional(),
  /** Parameters or buffers the candidate's module gained after it was built (a buffer its first forward creates): left as they are when its state is restored before each check. */
  stateAddedKeys: z.array(z.string()).optional(),
  buildS: z.number().optional(),
  checks: z.array(CheckSchema).optional(),
  correct: z.boolean().optional(),
  correct1e2: z.boolean().optional(),
  kernels: KernelsSchema.optional(),
  customShare: z.number().nullable().optional(),
  label: z.enum(['custom', 'pytorch-only', 'fallback', 'failed', 'unprofiled']).optional(),
  time: TimingSchema.nullable().optional(),
  eager: TimingSchema.optional(),
  timeSkipped: z.string().optional(),
  failure: FailureSchema.optional(),
});
export type MeasureFile = z.infer<typeof MeasureFileSchema>;

export const BaselineFileSchema = z.object({
  ok: z.boolean(),
  command: z.literal('baseline'),
  device: z.string(),
  torch: z.string(),
  eager: TimingSchema.optional(),
  compiled: z.union([
    TimingSchema.extend({ ok: z.literal(true), compileS: z.number(), matchesEager: z.boolean(), matchesEager1e2: z.boolean() }),
    z.object({ ok: z.literal(false), why: z.string(), skipped: z.boolean().optional(), afterS: z.number().optional() }),
  ]).optional(),
  failure: FailureSchema.optional(),
});
export type BaselineFile = z.infer<typeof BaselineFileSchema>;

export const BuildFileSchema = z.object({
  ok: z.boolean(),
  command: z.literal('build'),
  loads: z.array(LoadSchema),
  own: z.array(z.string()).optional(),
  seconds: z.number().optional(),
  failure: FailureSchema.optional(),
});
export type BuildFile = z.infer<typeof BuildFileSchema>;

export const PyEnvFileSchema = z.object({
  ok: z.boolean(),
  python: z.string(),
  torch: z.string().nullable(),
  cuda: z.boolean(),
  cudaVersion: z.string().nullable(),
  device: z.string().nullable(),
  capability: z.string().nullable(),
  triton: z.string().nullable(),
  compile: z.boolean().nullable(),
  nvcc: z.string().nullable(),
}).passthrough();
export type PyEnvFile = z.infer<typeof PyEnvFileSchema>;

/** How a run of the runner went, apart from what its file says. */
export interface RunnerProcess {
  /** The bubblewrap sandbox wrapped it (false: not asked, or bwrap does not work here; `sandboxProblem` says why). */
  sandboxed: boolean;
  sandboxProblem?: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The last lines of what it printed (candidates print). */
  tail: string;
}

export interface RunnerOptions {
  python: string;
  /** A folder for this run (the result file, HOME, caches); created; writable inside the sandbox. */
  workDir: string;
  /** Further folders the run may write (the extension build folder, a shared compile cache). */
  writable?: string[];
  /** Files it must read (problem, candidate). */
  readable?: string[];
  timeoutMs: number;
  /** Run inside bubblewrap when it works here (candidate code: always true). */
  sandbox: boolean;
  device?: 'cuda' | 'cpu' | 'auto';
  /** A lock file shared by runners on one GPU (timing exclusive, other GPU work shared). */
  lockFile?: string;
  /** Extra environment (MAX_JOBS for builds, TORCHINDUCTOR_CACHE_DIR ...). */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

function tailOf(r: RunResult): string {
  const s = `${r.stdout}\n${r.stderr}`.trim().split('\n');
  return s.slice(-12).join('\n').slice(-3000);
}

/** Runs `kd_candidate.py <args> --out <file>` and parses the file with `schema` (null when it wrote none or it does not parse). */
export async function runRunner<T>(args: string[], schema: z.ZodType<T>, o: RunnerOptions): Promise<{ file: T | null; process: RunnerProcess; parseError?: string; early?: { kind: string; message: string } }> {
  mkdirSync(o.workDir, { recursive: true });
  const out = path.join(o.workDir, `result-${randomBytes(6).toString('hex')}.json`);
  const script = candidateScript();
  let sandbox: { bwrap: string; args: string[] } | undefined;
  let sandboxProblem: string | undefined;
  if (o.sandbox) {
    const st = await sandboxStatus();
    if (st.active && st.bwrap) {
      const writable = [o.workDir, ...(o.writable ?? [])];
      for (const w of writable) mkdirSync(w, { recursive: true });
      if (o.lockFile && existsSync(o.lockFile)) {
        // the files alone: other runs' folders stay out of reach (the turnstile of --quiet-lock beside the lock)
        const turn = `${o.lockFile}.turn`;
        if (!existsSync(turn)) writeFileSync(turn, '', { flag: 'a' });
        writable.push(o.lockFile, turn);
      }
      // The runner's whole folder: it imports kd_reference.py beside it (a checkout under /tmp, where
      // the sandbox mounts a fresh /tmp, would otherwise show it the script alone).
      sandbox = { bwrap: st.bwrap, args: bwrapArgs({ writable, readable: [path.dirname(script), ...(o.readable ?? [])], cwd: o.workDir }) };
    } else sandboxProblem = st.problem ?? 'the sandbox is turned off (KERNELDUEL_SANDBOX=off)';
  }
  const extra = [...(o.device ? ['--device', o.device] : []), ...(o.lockFile ? ['--lock', o.lockFile] : [])];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: o.workDir,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    TRITON_CACHE_DIR: path.join(o.workDir, 'triton'),
    ...o.env,
  };
  const r = await runProcess(o.python, [script, ...args, '--out', out, ...(args[0] === 'env' || args[0] === 'classify' ? [] : extra)], {
    cwd: o.workDir, env, timeoutMs: o.timeoutMs, maxOutputBytes: 256 << 10, signal: o.signal, sandbox,
    dataBytes: o.device === 'cpu' ? defaultDataLimit() : undefined,
  });
  const proc: RunnerProcess = { sandboxed: !!sandbox, sandboxProblem, exitCode: r.code, timedOut: r.timedOut, durationMs: r.durationMs, tail: tailOf(r) };
  if (r.spawnError) return { file: null, process: proc, parseError: r.spawnError };
  if (!existsSync(out)) return { file: null, process: proc, parseError: 'it wrote no result file' };
  try {
    const raw: unknown = JSON.parse(readFileSync(out, 'utf8'));
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      // A runner that stopped before it could write its full record (no CUDA, no torch, bad
      // arguments) writes only {ok: false, failure}: its reason, not the schema's complaints.
      const early = EarlyFailureSchema.safeParse(raw);
      if (early.success) return { file: null, process: proc, parseError: early.data.failure.message, early: early.data.failure };
      return { file: null, process: proc, parseError: `${out}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
    }
    return { file: parsed.data, process: proc };
  } catch (e) {
    return { file: null, process: proc, parseError: `${out}: ${(e as Error).message}` };
  } finally {
    rmSync(out, { force: true });
  }
}

/** One Python candidate's measured result, with what stands behind it. */
export interface CandidateOutcome {
  guarantee: GuaranteeLevel;
  label: CandidateLabel;
  /** Correct at KernelBench's tolerance (fp32 1e-4, 16-bit 1e-2) / at 1e-2; null: not reached. */
  correct: boolean | null;
  correct1e2: boolean | null;
  /** Share of device time in kernels compiled from its own source (null: not recorded). */
  customShare: number | null;
  time: PyTiming | null;
  failure?: { kind: string; message: string };
  file: MeasureFile | null;
  process: RunnerProcess;
}

const EarlyFailureSchema = z.object({ ok: z.literal(false), failure: z.object({ kind: z.string(), message: z.string() }) });

function stageFailure(kind: string, p: RunnerProcess, what: string, parseError?: string): { kind: string; message: string } {
  if (p.timedOut) return { kind: 'timeout', message: `${what} passed its time limit (${Math.round(p.durationMs / 1000)} s)` };
  return { kind, message: `${what} ${parseError ?? `exited with ${p.exitCode}`}${p.tail ? `: ${p.tail.split('\n').slice(-3).join(' | ')}` : ''}` };
}

/** Measures a candidate (correctness, kernels, label, time) against a problem file. */
export async function measureCandidate(problem: string, candidate: string, o: RunnerOptions & { extDir?: string; checks?: number; eager?: boolean; overrides?: Record<string, number>; timingArgs?: string[] }): Promise<CandidateOutcome> {
  const args = ['measure', problem, candidate, ...(o.extDir ? ['--ext-dir', o.extDir] : []), ...(o.checks ? ['--checks', String(o.checks)] : []), ...(o.eager ? ['--eager'] : []), ...setArgs(o.overrides), ...(o.timingArgs ?? [])];
  const { file, process: p, parseError, early } = await runRunner(args, MeasureFileSchema, { ...o, sandbox: true, writable: [...(o.writable ?? []), ...(o.extDir ? [o.extDir] : [])], readable: [...(o.readable ?? []), problem, candidate] });
  if (!file) return { guarantee: 'python-in-process', label: 'failed', correct: null, correct1e2: null, customShare: null, time: null, failure: early ?? stageFailure('runtime', p, 'the candidate runner', parseError), file: null, process: p };
  // A run killed mid-way keeps its stages: the label needs the forward to have run.
  const label: CandidateLabel = file.label ?? 'failed';
  const failure = file.failure ?? (p.timedOut ? stageFailure('timeout', p, `the candidate runner (at stage ${file.stage})`) : undefined);
  return {
    guarantee: 'python-in-process', label, correct: file.correct ?? null, correct1e2: file.correct1e2 ?? null,
    customShare: file.customShare ?? null, time: file.time ?? null, failure, file, process: p,
  };
}

/** A task's size as the runner's --set NAME=VALUE options (the problem's module-level constants). */
function setArgs(overrides: Record<string, number> | undefined): string[] {
  return Object.entries(overrides ?? {}).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}

/** The precision flags the candidate changed at import (TF32 on, cudnn.benchmark...), as `name: before -> after`. */
export function changedFlags(f: MeasureFile | null): string[] {
  if (!f?.flagsBefore || !f.flagsAfterImport) return [];
  const before = f.flagsBefore;
  return Object.entries(f.flagsAfterImport).filter(([k, v]) => before[k] !== v).map(([k, v]) => `${k}: ${String(before[k])} -> ${String(v)}`);
}

/** Builds a candidate (import + ModelNew), its load_inline builds landing in `extDir` for measureCandidate to reuse. */
export async function buildCandidate(problem: string, candidate: string, o: RunnerOptions & { extDir: string }): Promise<{ file: BuildFile | null; process: RunnerProcess; failure?: { kind: string; message: string } }> {
  const { file, process: p, parseError, early } = await runRunner(['build', candidate, '--problem', problem, '--ext-dir', o.extDir], BuildFileSchema, { ...o, sandbox: true, writable: [...(o.writable ?? []), o.extDir], readable: [...(o.readable ?? []), problem, candidate] });
  if (!file) return { file: null, process: p, failure: early ?? stageFailure('build', p, 'the build', parseError) };
  return { file, process: p, failure: file.failure ?? (p.timedOut ? stageFailure('timeout', p, 'the build') : undefined) };
}

/** Times a problem's Model eager (and compiled, `compile`): no candidate code in that process. */
export async function measureBaseline(problem: string, o: RunnerOptions & { compile?: boolean; compileLimitS?: number; overrides?: Record<string, number>; timingArgs?: string[] }): Promise<{ file: BaselineFile | null; process: RunnerProcess; failure?: { kind: string; message: string } }> {
  const args = ['baseline', problem, ...(o.compile ? ['--compile', '--compile-limit-s', String(o.compileLimitS ?? 120)] : []), ...setArgs(o.overrides), ...(o.timingArgs ?? [])];
  const { file, process: p, parseError, early } = await runRunner(args, BaselineFileSchema, { ...o, readable: [...(o.readable ?? []), problem] });
  if (!file) return { file: null, process: p, failure: early ?? stageFailure('runtime', p, 'the baseline', parseError) };
  return { file, process: p, failure: file.failure ?? (p.timedOut ? stageFailure('timeout', p, 'the baseline') : undefined) };
}

/** Python, torch, CUDA, the device, triton and torch.compile as this Python sees them. */
export async function pythonTorchEnv(python: string, workDir: string): Promise<PyEnvFile | { ok: false; why: string }> {
  const { file, process: p, parseError } = await runRunner(['env'], PyEnvFileSchema, { python, workDir, timeoutMs: 120_000, sandbox: false });
  return file ?? { ok: false, why: parseError ?? `exit ${p.exitCode}: ${p.tail}` };
}

/**
 * The line of a failed build that says why: the compiler's own `error` lines (nvcc's `file(12): error: ...`,
 * g++'s `file:12:3: error: ...`, the linker's), up to two, else the first line. torch's
 * "Error building extension 'x'" and ninja's command lines say nothing about the cause.
 */
export function buildErrorLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const said = lines.filter((l) => /(^|[\s:)])(fatal )?error( [A-Z]*\d+)?\s*:/i.test(l) && !/Error building extension/.test(l) && !/^FAILED:/.test(l));
  const pick = said.length ? said.slice(0, 2).join(' / ') : (lines[0] ?? '');
  return pick.slice(0, 400);
}

/** Removes a run folder (the caller's, after reading what it needs). */
export function removeRunDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
