// What the front doors need of PyTorch-reference tasks: which Python (with torch) runs them, and the
// evaluation of a KernelBench-style Python candidate (`ModelNew`) against such a task, with its
// guarantee level and label. The doors may not reach the platform or pytorch layers' values
// themselves (scripts/layers.mjs), so they ask here. The measuring is engine/pytorch/candidate.ts.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPython } from '../engine/platform/toolchain/python.js';
import { changedFlags, measureBaseline, measureCandidate, type PyTiming } from '../engine/pytorch/candidate.js';
import type { Task } from '../engine/task/manifest.js';
import { GUARANTEE_LEVELS, isHostBound, type CandidateLabel, type GuaranteeLevel } from '../engine/base/types.js';

export { findPython, type PythonEnv } from '../engine/platform/toolchain/python.js';

export interface PythonEvalOptions {
  device?: 'cuda' | 'cpu' | 'auto';
  /** Also time torch.compile (its own process; costs its compile time). */
  compile?: boolean;
  checks?: number;
  /** Per-process limit (default 300 s: a first load_inline build can take a minute). */
  timeoutMs?: number;
  onStage?: (s: string) => void;
}

/** One size of a task, measured. */
export interface PythonSizeResult {
  size: Record<string, number>;
  label: CandidateLabel;
  correct: boolean | null;
  correct1e2: boolean | null;
  /** Why the first wrong check was wrong. */
  wrong?: string;
  customShare: number | null;
  ownKernels: string[];
  topKernels: Array<{ name: string; us: number; source: string }>;
  time: PyTiming | null;
  eager: PyTiming | null;
  compiled: (PyTiming & { compileS: number }) | null;
  compileNote?: string;
  speedupEager: number | null;
  speedupCompile: number | null;
  /** The same by the GPU's own times (samples behind a gate: Python's launch left out); null without them (CPU, older runners). */
  speedupEagerGpu: number | null;
  speedupCompileGpu: number | null;
  /** The reference's outputs were the same for every input set: a constant output passes every check. */
  referenceConstant?: boolean;
  flagsChanged: string[];
  failedBuilds: string[];
  failure?: { kind: string; message: string };
  sandboxed: boolean;
  sandboxProblem?: string;
  device: string | null;
}

export interface PythonEvalResult {
  task: string;
  candidate: string;
  guarantee: GuaranteeLevel;
  guaranteeText: (typeof GUARANTEE_LEVELS)[GuaranteeLevel];
  python: string;
  torch: string | null;
  sizes: PythonSizeResult[];
}

export class PythonCandidateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonCandidateError';
  }
}

/** Evaluates `candidatePath` (a Python file defining ModelNew) against a PyTorch-reference task: for each timed size, correctness, the kernels its forward launched (label, custom share), its time and the eager (and torch.compile) baselines timed the same way. */
export async function evalPythonCandidate(task: Task, candidatePath: string, o: PythonEvalOptions = {}): Promise<PythonEvalResult> {
  if (!task.pytorch) throw new PythonCandidateError(`task ${task.manifest.name} has a CUDA reference (${path.basename(task.referencePath)}): a Python candidate (ModelNew) needs a PyTorch-reference task (reference.pytorch in task.yaml; \`kernelduel import kernelbench\` writes them)`);
  const candidate = path.resolve(candidatePath);
  let source: string;
  try {
    source = readFileSync(candidate, 'utf8');
  } catch (e) {
    throw new PythonCandidateError(`cannot read ${candidatePath}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!/\bclass\s+ModelNew\b/.test(source)) throw new PythonCandidateError(`${candidatePath} defines no class ModelNew (a KernelBench-style candidate defines ModelNew with the same constructor arguments as the task's Model)`);
  const py = await findPython();
  if (!py.python || !py.can.cpuReference) throw new PythonCandidateError(`evaluating a Python candidate runs it with PyTorch: ${py.problems.join(' ')}`);
  const device = o.device ?? 'auto';
  if (device === 'cuda' && !py.can.gpuReference) throw new PythonCandidateError(`--device cuda: ${py.problems.join(' ')}`);
  // One folder per candidate content: its load_inline builds are reused by the next evaluation.
  const hash = createHash('sha256').update(source).update('\0').update(task.hash).digest('hex').slice(0, 16);
  const root = path.join(os.tmpdir(), 'kernelduel-python', hash);
  const sizes: PythonSizeResult[] = [];
  for (const si of task.timed) {
    const size = task.manifest.sizes[si];
    o.onStage?.(`size ${JSON.stringify(size)}: checking, recording kernels and timing (eager too)`);
    const m = await measureCandidate(task.referencePath, candidate, {
      python: py.python, workDir: path.join(root, `run-${si}`), extDir: path.join(root, 'ext'), timeoutMs: o.timeoutMs ?? 300_000, sandbox: true,
      device, eager: true, checks: o.checks, overrides: size,
    });
    const eager = m.file?.eager ?? null;
    let compiled: PythonSizeResult['compiled'] = null;
    let compileNote: string | undefined;
    if (o.compile && m.time) {
      o.onStage?.('torch.compile baseline');
      const b = await measureBaseline(task.referencePath, { python: py.python, workDir: path.join(root, `compile-${si}`), timeoutMs: o.timeoutMs ?? 300_000, sandbox: false, device, compile: true, overrides: size });
      const c = b.file?.compiled;
      if (c?.ok) compiled = { ...c, compileS: c.compileS };
      else compileNote = c && !c.ok ? c.why : b.failure?.message;
    } else if (o.compile) compileNote = 'not run: the candidate was not timed';
    sizes.push({
      size, label: m.label, correct: m.correct, correct1e2: m.correct1e2,
      wrong: m.file?.checks?.find((c) => !c.ok)?.why ?? undefined,
      customShare: m.customShare, ownKernels: m.file?.own ?? [],
      topKernels: (m.file?.kernels?.kernels ?? []).slice(0, 5).map((k) => ({ name: k.name, us: k.us, source: k.source })),
      time: m.time, eager, compiled, compileNote,
      speedupEager: m.time && eager ? eager.medianMs / m.time.medianMs : null,
      speedupCompile: m.time && compiled ? compiled.medianMs / m.time.medianMs : null,
      speedupEagerGpu: gpuRatio(eager, m.time),
      speedupCompileGpu: gpuRatio(compiled, m.time),
      ...(m.file?.referenceConstant?.constant ? { referenceConstant: true } : {}),
      flagsChanged: changedFlags(m.file),
      failedBuilds: (m.file?.loads ?? []).filter((l) => !l.ok).map((l) => `${l.name}: ${(l.error ?? '').split('\n')[0]}`),
      failure: m.failure, sandboxed: m.process.sandboxed, sandboxProblem: m.process.sandboxProblem, device: m.file?.device ?? null,
    });
  }
  return { task: task.manifest.name, candidate, guarantee: 'python-in-process', guaranteeText: GUARANTEE_LEVELS['python-in-process'], python: py.python, torch: py.torch, sizes };
}

const gpuMs = (t: PyTiming | null): number | null => t?.gated?.deviceMedianMs || null;
const gpuRatio = (base: PyTiming | null, cand: PyTiming | null): number | null => {
  const b = gpuMs(base);
  const c = gpuMs(cand);
  return b && c ? b / c : null;
};

/** The GPU's own times of a size, in one line, or null where there are none. */
function gpuLine(s: PythonSizeResult): string | null {
  const c = gpuMs(s.time);
  if (!c) return null;
  const hostBound = (t: PyTiming | null): boolean => !!t && isHostBound(gpuMs(t), t.medianMs);
  const hb = [hostBound(s.time) ? 'the candidate' : '', hostBound(s.eager) ? 'eager' : '', hostBound(s.compiled) ? 'torch.compile' : ''].filter(Boolean);
  const host = (t: PyTiming | null): string => (typeof t?.hostCallMedianMs === 'number' ? `${t.hostCallMedianMs.toFixed(4)} ms` : '—');
  return `    GPU's own time: ${c.toFixed(4)} ms (host issues the call in ${host(s.time)})` +
    `${s.speedupEagerGpu ? `; eager ${(gpuMs(s.eager) as number).toFixed(4)} ms → ${s.speedupEagerGpu.toFixed(3)}× by GPU time` : ''}` +
    `${s.speedupCompileGpu ? `; torch.compile ${(gpuMs(s.compiled) as number).toFixed(4)} ms → ${s.speedupCompileGpu.toFixed(3)}×` : ''}` +
    `${hb.length ? ` — HOST-BOUND (${hb.join(', ')}): the one-call figure is mostly Python launching kernels, and moves with the host; the GPU time does not` : ''}`;
}

const perCallMs = (t: PyTiming | null): number | null => t?.perCallMs ?? null;

/** The per-call figure (what `optimize` ranks Python candidates by on a GPU), in one line, or null where there is none. */
function perCallLine(s: PythonSizeResult): string | null {
  const c = perCallMs(s.time);
  if (!c) return null;
  const e = perCallMs(s.eager);
  return `    per call (the larger of the GPU's own time and the host's call time, per gated sample; what optimize ranks by): ${c.toFixed(4)} ms${e ? `; eager ${e.toFixed(4)} ms → ${(e / c).toFixed(3)}×` : ''}`;
}

/** The CLI's text for a Python candidate's result: the guarantee level first, then per size. */
export function describePythonResult(r: PythonEvalResult): string {
  const ms = (t: { medianMs: number } | null): string => (t ? `${t.medianMs.toFixed(4)} ms` : '—');
  const lines = [
    `${r.task}: ${path.basename(r.candidate)} — guarantee level ${r.guarantee.toUpperCase()}: ${r.guaranteeText.title}; not ranked beside isolated (CUDA harness) results`,
  ];
  for (const s of r.sizes) {
    const where = `${s.device ?? '?'}${s.sandboxed ? ', sandboxed' : `, NOT sandboxed${s.sandboxProblem ? ` (${s.sandboxProblem})` : ''}`}`;
    lines.push(`  size ${Object.entries(s.size).map(([k, v]) => `${k}=${v}`).join(' ')} (${where})`);
    const share = s.customShare === null ? 'not recorded' : `${(s.customShare * 100).toFixed(1)}% of device time in its own kernels`;
    lines.push(`    label: ${s.label.toUpperCase()} (${share}${s.ownKernels.length ? `; defines ${s.ownKernels.join(', ')}` : '; defines no kernel'})`);
    if (s.failedBuilds.length) lines.push(`    failed builds: ${s.failedBuilds.join('; ')}`);
    if (s.failure) lines.push(`    FAILED [${s.failure.kind}]: ${s.failure.message.split('\n')[0]}`);
    if (s.correct !== null) lines.push(`    correct: ${s.correct ? 'yes' : 'NO'} at KernelBench's tolerance (fp32 1e-4), ${s.correct1e2 ? 'yes' : 'NO'} at 1e-2${s.wrong ? ` — ${s.wrong}` : ''}`);
    if (s.flagsChanged.length) lines.push(`    changed at import: ${s.flagsChanged.join(', ')}`);
    if (s.referenceConstant) lines.push('    WARNING: the reference gave the same outputs for every input set: a constant output passes every check, so a speedup here says nothing about a kernel');
    if (s.time) {
      lines.push(`    time: ${ms(s.time)} (${s.time.timer}, ${s.time.samples} samples, rsd ${(s.time.rsd * 100).toFixed(1)}%, ${s.time.verifiedCalls} timed calls verified)${s.time.wallExceedsEvents ? ' — the host clock saw clearly more than the CUDA events (work off the timed stream, or a host-bound forward)' : ''}`);
      lines.push(`    eager: ${ms(s.eager)}${s.speedupEager ? ` → ${s.speedupEager.toFixed(3)}× vs eager` : ''}; torch.compile: ${s.compiled ? `${ms(s.compiled)} → ${s.speedupCompile?.toFixed(3)}×` : (s.compileNote ?? 'not asked (--compile)')}`);
      const g = gpuLine(s);
      if (g) lines.push(g);
      const pc = perCallLine(s);
      if (pc) lines.push(pc);
    }
    if (s.topKernels.length) lines.push(`    kernels: ${s.topKernels.slice(0, 3).map((k) => `[${k.source}] ${k.name.slice(0, 70)} ${k.us.toFixed(1)} us`).join('; ')}`);
  }
  return lines.join('\n');
}
