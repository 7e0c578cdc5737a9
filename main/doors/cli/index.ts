#!/usr/bin/env node
// KernelDuel's command line, a thin front door over the core (main/core): the GPU picker, the
// evaluator factory and the run lifecycle are the ones the app uses; this file parses arguments,
// reads tasks and sessions, and prints.
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chooseTaskDir, resolveTask, resolveTaskDir, builtinTaskNames } from '../../engine/task/resolve.js';
import { loadTask, type Task } from '../../engine/task/manifest.js';
import type { Evaluator } from '../../engine/measure/evaluate.js';
import type { BuildResult, Config, EvalResult, PythonFigure, VariantSpec } from '../../engine/base/types.js';
import { enumerateSpace } from '../../engine/task/space.js';
import { describeReach, spaceReach } from '../../engine/task/reach.js';
import { listSessions } from '../../engine/session/list.js';
import { openSession, openSessionReadOnly, readSessionMeta, sessionsRoot } from '../../engine/session/store.js';
import { pytorchBaselinesIn } from '../../engine/session/events.js';
import { exportVariant } from '../../engine/export/cu.js';
import type { LoopEvent } from '../../engine/search/loop.js';
import { KERNELDUEL_VERSION } from '../../engine/base/version.js';
import { builtinTasksDir } from '../../engine/base/paths.js';
import { LlmSettingsError, LlmSettingsSchema, parseLlmSettings, type LlmSettingsInput } from '../../engine/llm/settings.js';
import { ConfigError } from '../../engine/task/config.js';
import { describeMachine } from '../../core/environment.js';
import { gpuGroupsByModel, parseGpuPool, parseSimulatedFault, pickGpu, type GpuPoolChoice } from '../../core/gpus.js';
import type { SimulatedFault } from '../../engine/measure/simulated-gpus.js';
import { DEFAULT_BUFFER_SETS, DEFAULT_DUEL_NOISE, DEFAULT_TIME_CUTOFF, makeEvaluator } from '../../core/evaluators.js';
import { exportDataset } from '../../core/llm.js';
import { RUN_STRATEGY_NAMES, isRunStrategyName, isLlmStrategyName } from '../../core/strategies.js';
import type { RunOptions, LlmStreamEvent } from '../../core/run/prepare.js';
import { ResumeConflict, resumeRunOptions } from '../../core/run/resume.js';
import { startRun, type OptimisationMessage } from '../../core/run/worker.js';
import { describePlan, planEval, type EvalPlan } from '../../core/eval-plan.js';
import { baselinesSummary, describeResult, describeSession, fmtMs } from './format.js';
import { OptimizeProgress } from './progress.js';
import { registerSpaceCommands } from './spaces.js';
import { registerKernelBenchImport } from './kernelbench.js';
import { registerConfirm, runConfirm } from './confirm.js';
import { describePythonResult, evalPythonCandidate, findPython, PythonCandidateError } from '../../core/pytorch.js';
import { oneSetWords, placementsWords } from '../../contract/confirm-words.js';
import { placementsOf } from '../../core/compare.js';

class UsageError extends Error {}

const LLM_DEFAULTS = LlmSettingsSchema.parse({});

interface LlmFlags {
  llmBaseUrl?: string;
  llmModel?: string;
  llmKeyEnv?: string;
  llmTemperature?: number;
  llmMaxTokens?: number;
  llmTimeoutMs?: number;
}

/** The provider settings fields the --llm-* flags give, by settings name (only those given). */
function llmFlagFields(o: LlmFlags): Record<string, unknown> {
  const x: Record<string, unknown> = {};
  if (o.llmBaseUrl !== undefined) x.baseURL = o.llmBaseUrl;
  if (o.llmModel !== undefined) x.model = o.llmModel;
  if (o.llmKeyEnv !== undefined) x.apiKeyEnv = o.llmKeyEnv;
  if (o.llmTemperature !== undefined) x.temperature = o.llmTemperature;
  if (o.llmMaxTokens !== undefined) x.maxTokens = o.llmMaxTokens;
  if (o.llmTimeoutMs !== undefined) x.requestTimeoutMs = o.llmTimeoutMs;
  return x;
}

/** The provider settings the --llm-* flags give (validated), or undefined when none was given. */
function llmSettingsFromFlags(o: LlmFlags): LlmSettingsInput | undefined {
  const x = llmFlagFields(o);
  if (!Object.keys(x).length) return undefined;
  try {
    return parseLlmSettings(x);
  } catch (e) {
    if (e instanceof LlmSettingsError) {
      const flag: Record<string, string> = { baseURL: '--llm-base-url', model: '--llm-model', apiKeyEnv: '--llm-key-env', temperature: '--llm-temperature', maxTokens: '--llm-max-tokens', requestTimeoutMs: '--llm-timeout-ms' };
      throw new UsageError(e.issues.map((i) => `${flag[i.field] ?? i.field}: ${i.message}`).join('; '));
    }
    throw e;
  }
}

function out(json: boolean, data: unknown, text: () => string): void {
  process.stdout.write(json ? JSON.stringify(data, null, 2) + '\n' : text() + '\n');
}

function parseConfig(s: string | undefined): Config {
  if (!s) return {};
  const c: Config = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (!k || v === undefined || !Number.isFinite(Number(v))) throw new UsageError(`--config: "${kv}" is not NAME=number`);
    c[k.trim()] = Number(v);
  }
  return c;
}

/** The folder a task argument names (a note when a folder here shadows a built-in task's name). */
function chooseTaskDirOrNull(arg: string): string | null {
  try {
    return chooseTaskDir(arg).dir;
  } catch {
    return null;
  }
}

function taskDirOf(arg: string, log: (s: string) => void): string {
  const c = chooseTaskDir(arg);
  if (c.note) log(`note: ${c.note}`);
  return c.dir;
}

interface OptimizeFlags extends LlmFlags {
  strategy: string;
  budget: number;
  seed: number;
  replay?: string;
  tunablesOnly?: boolean;
  resume?: string;
  gpu?: number;
  /** `all` or `0,1,3`: one run on a pool of GPUs. */
  gpus?: string;
  /** With --gpus: GPUs of different models, one session per model. */
  mixedModels?: boolean;
  /** With --replay: a pool of SIMULATED GPUs. */
  simulateGpus?: number;
  simulateGpuLatency?: string;
  simulateGpuFault?: string;
  arch?: string;
  maxMs?: number;
  /** A duel's own noise target (CUDA candidates on a GPU). */
  duelNoise?: number;
  /** No duel for a variant this fraction or more slower than its opponent, intervals apart (CUDA candidates on a GPU). */
  duelSkip?: number;
  /** Timing stops at this multiple of the best's median (0: off; CUDA candidates on a GPU). */
  timeCutoff?: number;
  /** python: KernelBench-style ModelNew candidates of a PyTorch-reference task. */
  candidates?: string;
  /** Python candidates: cuda or cpu (default: CUDA when torch has it). */
  device?: string;
  duelRounds?: number;
  /** Python candidates: per-call (default on a GPU) or one-call (KernelBench's). */
  figure?: string;
  /** false with --no-pytorch-baselines. */
  pytorchBaselines?: boolean;
  /** --confirm [top]: after the run, the baseline and the top fastest variants measured again with the precise timing. */
  confirm?: boolean | string;
  json?: boolean;
}

/** The pool options of `optimize`: --gpus on GPUs, --simulate-gpus on a replay; a UsageError naming the option for a bad one. */
function poolBackendOptions(o: OptimizeFlags): { gpus?: GpuPoolChoice; simulateGpus?: { count: number; latencyMs?: number[]; fault?: SimulatedFault } } {
  if (o.gpus !== undefined && o.gpu !== undefined) throw new UsageError('give --gpu N (one GPU) or --gpus LIST (a pool), not both');
  if (o.gpus !== undefined && o.replay) throw new UsageError('--gpus measures on GPUs; a --replay answers from a recording (use --simulate-gpus N to replay on simulated GPUs)');
  const sim = o.simulateGpus !== undefined || o.simulateGpuLatency !== undefined || o.simulateGpuFault !== undefined;
  if (sim && !o.replay) throw new UsageError('--simulate-gpus, --simulate-gpu-latency and --simulate-gpu-fault need --replay <space.json> (simulated GPUs answer from a recording)');
  try {
    if (o.gpus !== undefined) return { gpus: parseGpuPool(o.gpus) };
    if (!sim) return {};
    const count = o.simulateGpus ?? 2;
    if (!Number.isInteger(count) || count < 1 || count > 64) throw new Error(`--simulate-gpus ${o.simulateGpus}: give 1 to 64 simulated GPUs`);
    const latencyMs = o.simulateGpuLatency?.split(',').map((x) => Number(x.trim()));
    if (latencyMs?.some((x) => !Number.isFinite(x) || x < 0)) throw new Error(`--simulate-gpu-latency ${o.simulateGpuLatency}: give milliseconds per simulated GPU, e.g. 20,40`);
    const fault = o.simulateGpuFault !== undefined ? parseSimulatedFault(o.simulateGpuFault, count) : undefined;
    return { simulateGpus: { count, ...(latencyMs ? { latencyMs } : {}), ...(fault ? { fault } : {}) } };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * The run options of `optimize`: a new session's from the flags (defaults for those not given), or
 * a resumed session's own (resumeRunOptions), refusing flags given that differ from them.
 */
function optimizeRunOptions(taskArg: string | undefined, o: OptimizeFlags, given: (option: string) => boolean): RunOptions {
  if (!Number.isInteger(o.budget) || o.budget < 0) throw new UsageError('--budget must be a non-negative integer');
  if (!isRunStrategyName(o.strategy)) throw new UsageError(`--strategy: unknown strategy ${o.strategy}`);
  if (o.duelNoise !== undefined && !(o.duelNoise > 0 && o.duelNoise <= 0.05)) throw new UsageError(`--duel-noise must be a fraction above 0 and at most 0.05 (got ${o.duelNoise})`);
  if (o.duelSkip !== undefined && !(o.duelSkip >= 0.01 && o.duelSkip <= 1)) throw new UsageError(`--duel-skip must be a fraction from 0.01 to 1 (got ${o.duelSkip}): a duel's "same" band is ±1%, so a smaller one could skip a duel whose verdict is open`);
  if (o.timeCutoff !== undefined && !(o.timeCutoff === 0 || (o.timeCutoff >= 1.5 && o.timeCutoff <= 1000))) throw new UsageError(`--time-cutoff must be 0 (off) or a multiple of the best's median from 1.5 to 1000 (got ${o.timeCutoff})`);
  if (o.resume) {
    const root = sessionsRoot();
    const meta = readSessionMeta(root, o.resume);
    const pick = <K extends keyof OptimizeFlags>(k: K): OptimizeFlags[K] | undefined => (given(k) ? o[k] : undefined);
    // A session of a replayed space without kernel source has a task name that is no folder: naming
    // it again is naming the session's own task, not a task folder to look for.
    const ownSpaceTask = taskArg !== undefined && taskArg === meta.task.name && chooseTaskDirOrNull(taskArg) === null;
    try {
      const r = resumeRunOptions(meta, {
        ...(taskArg !== undefined && !ownSpaceTask ? { taskDir: resolveTaskDir(taskArg) } : {}),
        strategy: pick('strategy'), budget: pick('budget'), seed: pick('seed'), replay: o.replay !== undefined ? resolve(o.replay) : undefined,
        tunablesOnly: pick('tunablesOnly'), gpu: pick('gpu'), arch: pick('arch'), maxMs: pick('maxMs'), duelNoise: pick('duelNoise'), duelSkip: pick('duelSkip'), timeCutoff: pick('timeCutoff'), llm: llmFlagFields(o),
        ...(o.gpus !== undefined ? { gpus: poolBackendOptions(o).gpus } : {}),
      });
      return { task: meta.task.dir, resume: meta.id, sessionsRoot: root, ...r };
    } catch (e) {
      if (e instanceof ResumeConflict) throw new UsageError(e.message);
      throw e;
    }
  }
  if (taskArg === undefined) throw new UsageError('optimize needs a task (a built-in name or a task folder), or --resume <session>');
  if (o.candidates !== undefined && o.candidates !== 'python' && o.candidates !== 'cuda') throw new UsageError(`--candidates must be python or cuda (got ${o.candidates})`);
  if (o.device !== undefined && o.device !== 'cuda' && o.device !== 'cpu') throw new UsageError(`--device must be cuda or cpu (got ${o.device})`);
  if (o.duelRounds !== undefined && !(Number.isInteger(o.duelRounds) && o.duelRounds >= 1)) throw new UsageError('--duel-rounds must be a positive integer');
  if (o.figure !== undefined && o.figure !== 'per-call' && o.figure !== 'one-call') throw new UsageError(`--figure must be per-call or one-call (got ${o.figure})`);
  if (!o.replay && o.candidates !== 'cuda') {
    const t = resolveTask(taskDirOf(taskArg, () => undefined));
    // A PyTorch task whose kernel.cu is still the import's placeholder has no CUDA baseline: its candidates are Python.
    const python = o.candidates === 'python' || (o.candidates === undefined && !!t.pytorch && !!t.baselinePlaceholder);
    if (python) {
      if (!t.pytorch) throw new UsageError(`--candidates python: task ${t.manifest.name} has a CUDA reference; Python candidates (ModelNew) need a PyTorch-reference task (\`kernelduel import kernelbench\` writes them)`);
      for (const [opt, v] of [['--gpus', o.gpus], ['--gpu', o.gpu], ['--arch', o.arch], ['--max-ms', o.maxMs], ['--duel-noise', o.duelNoise], ['--duel-skip', o.duelSkip], ['--time-cutoff', o.timeCutoff], ['--tunables-only', o.tunablesOnly]] as const) {
        if (v !== undefined) throw new UsageError(`${opt} applies to CUDA candidates; Python candidates run where torch runs (--device cuda|cpu)`);
      }
      if (o.candidates === undefined && !o.json) process.stderr.write(`task ${t.manifest.name}: its kernel.cu is the import's placeholder, so the candidates are Python (ModelNew) files; --candidates cuda for CUDA entry points\n`);
      const llm = llmSettingsFromFlags(o);
      return {
        task: t.dir, strategy: o.strategy as RunOptions['strategy'], budget: o.budget, seed: o.seed,
        backend: { kind: 'python', ...(o.device ? { device: o.device as 'cuda' | 'cpu' } : {}), ...(o.duelRounds ? { duelRounds: o.duelRounds } : {}), ...(o.figure ? { figure: o.figure as PythonFigure } : {}) },
        flags: false, transforms: false, ...(o.pytorchBaselines === false ? { pytorchBaselines: false } : {}),
        ...(llm ? { llm } : isLlmStrategyName(o.strategy) ? { llm: {} } : {}),
      };
    }
  }
  if (o.device !== undefined || o.duelRounds !== undefined || o.figure !== undefined) throw new UsageError('--device, --duel-rounds and --figure apply to Python candidates (--candidates python)');
  if (o.replay && o.duelNoise !== undefined) throw new UsageError('--duel-noise applies to duels measured on a GPU; a --replay answers duels from the recording');
  if (o.replay && o.duelSkip !== undefined) throw new UsageError('--duel-skip applies to duels measured on a GPU; a --replay answers duels from the recording');
  if (o.replay && o.timeCutoff !== undefined) throw new UsageError('--time-cutoff applies to timings measured on a GPU; a --replay answers from the recording');
  const pool = poolBackendOptions(o);
  // A replayed space without kernel source is its own task: its name is no folder (core/run/prepare.ts checks it).
  if (!o.replay || chooseTaskDirOrNull(taskArg)) taskArg = taskDirOf(taskArg, (s) => process.stderr.write(s + '\n'));
  const llm = llmSettingsFromFlags(o);
  if (llm && !isLlmStrategyName(o.strategy)) throw new UsageError(`--llm-* options apply to --strategy llm or mixed, not ${o.strategy}`);
  return {
    task: taskArg, strategy: o.strategy, budget: o.budget, seed: o.seed,
    backend: o.replay
      ? { kind: 'replay', recording: resolve(o.replay), seed: o.seed, ...(pool.simulateGpus ? { simulateGpus: pool.simulateGpus } : {}) }
      : { kind: 'gpu', gpu: o.gpu, arch: o.arch, maxMs: o.maxMs, ...(o.duelNoise !== undefined ? { duelNoise: o.duelNoise } : {}), ...(o.duelSkip !== undefined ? { duelSkip: o.duelSkip } : {}), ...(o.timeCutoff !== undefined ? { timeCutoff: o.timeCutoff } : {}), ...(pool.gpus ? { gpus: pool.gpus } : {}) },
    flags: !o.tunablesOnly, transforms: !o.tunablesOnly, ...(o.pytorchBaselines === false ? { pytorchBaselines: false } : {}),
    ...(llm ? { llm } : isLlmStrategyName(o.strategy) ? { llm: {} } : {}),
  };
}

/** The evaluator `eval` builds and measures with: the first usable GPU, or the one --gpu names; none: compile-only. */
async function evaluatorFor(task: Task, o: { gpu?: number; arch?: string; maxMs?: number; bufferSets?: number; precise?: boolean }, log: (s: string) => void): Promise<Evaluator> {
  if (o.bufferSets !== undefined && !(Number.isInteger(o.bufferSets) && o.bufferSets >= 1 && o.bufferSets <= 64)) {
    throw new UsageError(`--buffer-sets must be a whole number from 1 to 64 (got ${o.bufferSets})`);
  }
  if (o.precise && (o.maxMs !== undefined || o.bufferSets !== undefined)) throw new UsageError('--precise sets its own time and buffer sets: leave out --max-ms and --buffer-sets with it');
  const gpu = await pickGpu({ index: o.gpu }, { onNote: (p) => log(`note: ${p}`) });
  const ev = await makeEvaluator(task, { gpu, arch: o.arch, maxMs: o.maxMs, bufferSets: o.bufferSets, precise: o.precise });
  if (!gpu) log(`compile-only: no usable NVIDIA GPU, so variants are built (for ${ev.env.arch}) but not checked or timed`);
  return ev;
}

const program = new Command();
program.name('kernelduel').description('Make CUDA kernels faster on your own NVIDIA GPU, by contrastive comparison of variants.').version(KERNELDUEL_VERSION);

program
  .command('gpus')
  .description('list NVIDIA GPUs, the CUDA toolchain and what works on this machine')
  .option('--json', 'machine-readable output')
  .action(async (o: { json?: boolean }) => {
    const env = await describeMachine();
    out(!!o.json, env, () => {
      const lines = [`host: ${env.host.cpu} (${env.host.cores} cores), ${(env.host.memTotalBytes / 2 ** 30).toFixed(0)} GiB, ${env.host.os}`];
      lines.push(env.toolchain.nvcc ? `nvcc: ${env.toolchain.nvcc} (${env.toolchain.version}); targets ${env.toolchain.targets.join(' ')}` : 'nvcc: not found');
      if (!env.gpu.gpus.length) lines.push('GPUs: none');
      for (const g of env.gpu.gpus) {
        lines.push(`GPU ${g.index}: ${g.name}  cc ${g.computeCapability || '?'} (${g.arch || '?'})  ${(g.memoryTotalMiB / 1024).toFixed(0)} GiB  SM ${g.smClockMHz ?? '?'}/${g.maxSmClockMHz ?? '?'} MHz  mem ${g.memClockMHz ?? '?'}/${g.maxMemClockMHz ?? '?'} MHz  driver ${g.driverVersion}  ${g.uuid}`);
      }
      lines.push(...env.messages.map((m) => `- ${m}`));
      return lines.join('\n');
    });
  });

program
  .command('tasks')
  .description('list the built-in example tasks')
  .option('--json', 'machine-readable output')
  .action((o: { json?: boolean }) => {
    const tasks = builtinTaskNames().map((n) => {
      try {
        const t = loadTask(join(builtinTasksDir(), n));
        let space: number | string = 0;
        let note: string | null = null;
        try {
          const configs = enumerateSpace(t);
          space = configs.length;
          note = describeReach(t, spaceReach(t, configs));
        } catch (e) {
          space = (e as Error).message;
        }
        return { name: n, description: t.manifest.description ?? '', dir: t.dir, space, ...(note ? { note } : {}) };
      } catch (e) {
        return { name: n, error: (e as Error).message };
      }
    });
    out(!!o.json, tasks, () => tasks.map((t) => ('error' in t ? `${t.name}: ERROR ${t.error}` : `${t.name.padEnd(12)} ${String(t.space).padStart(6)} configs  ${t.description}${'note' in t && t.note ? `\n${' '.repeat(13)}note: ${t.note}` : ''}`)).join('\n'));
  });

program
  .command('eval')
  .description('build, check and time a variant of a task (default: its baseline)')
  .argument('<task>', 'task folder or built-in task name')
  .argument('[variant]', 'a .cu file with the entry point (default: the task\'s baseline kernel), or a .py file defining ModelNew (KernelBench style) for a PyTorch-reference task')
  .option('--duel <other>', 'also time the variant against another .cu, interleaved in one process')
  .option('--config <k=v,...>', 'tunable values (#defines; a variant file\'s own #defines are kept for the others)')
  .option('--allow-off-list', 'let --config values outside a tunable\'s list in task.yaml through (said in the output)')
  .option('--fast-math', 'build with --use_fast_math')
  .option('--gpu <index>', 'GPU index', (v) => Number(v))
  .option('--arch <sm_XX>', 'nvcc architecture (default: the GPU\'s; sm_90 when compile-only)')
  .option('--max-ms <ms>', 'time cap per size for sampling', (v) => Number(v))
  .option('--buffer-sets <n>', `sets of buffers (each in new memory) the timed calls rotate over, 1-64 (default ${DEFAULT_BUFFER_SETS}); more average out placement, e.g. for atomics that land in a small buffer`, (v) => Number(v))
  .option('--precise', 'time for a final figure: at least 2.5 s of calls over 4 executors of the variant (16 buffer placements), so that fresh processes agree to ~0.2% (the default timing, made for search, to ~0.5-0.7%)')
  .option('--compile', 'Python candidates: also time torch.compile of the reference (its own process)')
  .option('--device <cuda|cpu>', 'Python candidates: where to run (default: CUDA when torch has it)')
  .option('--json', 'machine-readable output')
  .action(async (taskArg: string, variantArg: string | undefined, o: { duel?: string; config?: string; allowOffList?: boolean; fastMath?: boolean; gpu?: number; arch?: string; maxMs?: number; bufferSets?: number; precise?: boolean; compile?: boolean; device?: string; json?: boolean }) => {
    const log = (s: string): void => void process.stderr.write(s + '\n');
    const task = loadTask(taskDirOf(taskArg, log));
    if (variantArg?.endsWith('.py')) {
      if (o.duel || o.config || o.fastMath || o.precise) throw new UsageError('--duel, --config, --fast-math and --precise apply to CUDA variants, not to a Python candidate');
      if (o.device !== undefined && o.device !== 'cuda' && o.device !== 'cpu') throw new UsageError(`--device must be cuda or cpu (got ${o.device})`);
      try {
        const r = await evalPythonCandidate(task, variantArg, { device: o.device as 'cuda' | 'cpu' | undefined, compile: o.compile, onStage: (s) => !o.json && log(`  ${s}…`) });
        out(!!o.json, r, () => describePythonResult(r));
        if (r.sizes.some((s) => s.failure || s.correct !== true)) process.exitCode = 1;
      } catch (e) {
        if (e instanceof PythonCandidateError) throw new UsageError(e.message);
        throw e;
      }
      return;
    }
    if (o.compile || o.device) throw new UsageError('--compile and --device apply to Python candidates (a .py variant)');
    const readSrc = (p: string): { path: string; source: string } => {
      try {
        return { path: p, source: readFileSync(resolve(p), 'utf8') };
      } catch (e) {
        throw new UsageError(`cannot read ${p}: ${(e as NodeJS.ErrnoException).code ?? e}`);
      }
    };
    const choices = { config: parseConfig(o.config), allowOffList: o.allowOffList, fastMath: o.fastMath };
    let plan: EvalPlan;
    let otherPlan: EvalPlan | undefined;
    try {
      plan = planEval(task, variantArg ? readSrc(variantArg) : null, choices);
      if (o.duel) otherPlan = planEval(task, readSrc(o.duel), choices);
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.message);
      throw e;
    }
    const ev = await evaluatorFor(task, o, log);
    const spec = plan.spec;
    if (!o.json) {
      log(`${task.manifest.name}: ${variantArg ?? 'baseline'} on ${ev.gpu ? `GPU ${ev.gpu.index} ${ev.gpu.name}` : 'no GPU (compile-only)'}`);
      for (const l of describePlan(plan)) log(`  ${l}`);
    }
    const result = await ev.evaluate(spec, { onStage: (s) => !o.json && log(`  ${s}…`) });
    let duel: Awaited<ReturnType<Evaluator['duel']>> | undefined;
    let otherBuild: BuildResult | undefined;
    if (otherPlan && !result.failure) {
      const other: VariantSpec = { ...otherPlan.spec, origin: 'user' };
      if (!o.json) for (const l of describePlan(otherPlan)) log(`  ${o.duel}: ${l}`);
      if (ev.gpu) {
        const otherRes = await ev.evaluate(other, { time: false });
        duel = otherRes.failure ? { failure: otherRes.failure } : await ev.duel(spec, other);
      } else {
        // Without a GPU both are built (a broken one fails now), and the duel is said to need a GPU.
        otherBuild = await ev.build(other);
        if (!otherBuild.ok) duel = { failure: otherBuild.failure ?? { kind: 'compile', reason: `${o.duel} does not build` } };
      }
    }
    const duelNote = otherPlan && !ev.gpu && otherBuild?.ok ? `duel: ${o.duel} builds too; timing the duel needs a GPU (compile-only here)` : undefined;
    // A PyTorch task's CUDA entry point is checked against reference data PyTorch computes on the
    // GPU: without one it was built, not checked, and the command fails saying so.
    const notChecked = task.pytorch && result.compileOnly && !result.failure
      ? `not checked: task ${task.manifest.name} has a PyTorch reference, and its CUDA entry points are checked and timed against reference data PyTorch computes on an NVIDIA GPU (docs/PYTHON-CANDIDATES.md); this machine has none, so the variant was only built`
      : undefined;
    const variant = { file: plan.file, config: Object.fromEntries(plan.config.effective.map((e) => [e.name, e.value])), configFrom: Object.fromEntries(plan.config.effective.map((e) => [e.name, e.from])), flags: spec.flags, transforms: plan.transforms, notes: plan.notes };
    out(!!o.json, { task: task.manifest.name, variant, result, duel, ...(otherBuild ? { duelBuild: otherBuild } : {}), ...(duelNote ? { duelNote } : {}), ...(notChecked ? { notChecked } : {}) }, () => {
      const lines = [describeResult(task, result)];
      if (notChecked) lines.push(notChecked);
      if (duel?.failure) lines.push(`duel: the other variant failed: [${duel.failure.kind}] ${duel.failure.reason}`);
      if (duelNote) lines.push(duelNote);
      for (const d of duel?.duels ?? []) {
        lines.push(`duel (size ${d.size}): ${variantArg ?? 'baseline'} is ${d.verdict} — ${d.ratio.toFixed(4)}× [${d.ratioLow.toFixed(4)}, ${d.ratioHigh.toFixed(4)}] over ${d.pairs} interleaved pairs (${d.timer})`);
        const placements = placementsOf(d);
        if (placements) lines.push(`  ${placementsWords(d.verdict, placements)}`);
        if (d.sets === 1) lines.push(`  ${oneSetWords(d.verdict)}`);
      }
      return lines.join('\n');
    });
    if (result.failure || duel?.failure || notChecked) process.exitCode = 2;
  });

program
  .command('optimize')
  .description('search for faster variants of a task and keep every measurement in a session')
  .argument('[task]', 'task folder or built-in task name (with --resume: the session\'s)')
  .addOption(new Option('--strategy <name>', 'search strategy (llm, mixed: a language model writes new code)').choices([...RUN_STRATEGY_NAMES]).default('random'))
  .option('--budget <n>', 'variants to measure besides the baseline', (v) => Number(v), 50)
  .option('--seed <n>', 'random seed of the strategy', (v) => Number(v), 1)
  .option('--replay <space.json>', 'answer measurements from a recorded space (no GPU; every result is labelled REPLAY)')
  .option('--tunables-only', 'vary only the tunables (no compiler flags, no source transforms)')
  .option('--resume <session>', 'continue a session that was stopped or killed, with its own strategy, budget, seed, backend and flags')
  .option('--gpu <index>', 'GPU index', (v) => Number(v))
  .option('--gpus <all|0,1,3>', 'one run on several GPUs of one model: one evaluation queue per GPU, builds shared')
  .option('--mixed-models', 'with --gpus: GPUs of different models run at once, one session (and one best) per model; their times are never compared')
  .option('--simulate-gpus <n>', 'with --replay: a pool of n SIMULATED GPUs answering from the recording (tests the pool; default 2)', (v) => Number(v))
  .option('--simulate-gpu-latency <ms,...>', 'with --replay: milliseconds per evaluation of each simulated GPU')
  .option('--simulate-gpu-fault <gpu:eval[:fail|hang]>', 'with --replay: a simulated GPU that fails (or hangs) at its n-th evaluation')
  .option('--arch <sm_XX>', 'nvcc architecture')
  .option('--max-ms <ms>', 'time cap per size for sampling', (v) => Number(v))
  .option('--duel-noise <fraction>', `CUDA candidates: a duel stops once its ratio's median is known to ±this, 0-0.05 (default ${DEFAULT_DUEL_NOISE}, the timing's own); its verdict's band is ±1%, so 0.005 trades precision for shorter duels`, (v) => Number(v))
  .option('--time-cutoff <multiple>', `CUDA candidates: a variant's timing stops once its median is decidedly (95% interval) above this multiple of the best's median, and it is compared with the best by the medians, without a duel: it needs no precise time. 0: off (every timing runs to its precision or time cap). Default: ${DEFAULT_TIME_CUTOFF}`, (v) => Number(v))
  .option('--duel-skip <fraction>', 'CUDA candidates: no duel for a variant whose median is at least this fraction (0.01-1) slower than its opponent\'s with their 95% intervals apart (its verdict could only be "slower"); the search keeps the medians\' comparison. Default: every timed variant duels', (v) => Number(v))
  .option('--candidates <python|cuda>', 'PyTorch-reference tasks: KernelBench-style Python candidates (ModelNew, written by --strategy llm) or CUDA entry points (default: python when kernel.cu is the import\'s placeholder)')
  .option('--device <cuda|cpu>', 'Python candidates: where to run them (default: CUDA when torch has it; on the CPU every time is labelled CPU)')
  .option('--duel-rounds <n>', 'Python candidates: pairs of fresh-process measurements per duel (default 3)', (v) => Number(v))
  .option('--figure <per-call|one-call>', "Python candidates on a GPU: what variants are ranked and duelled by: per-call (default: per gated sample, the larger of the GPU's own time and the host's time to issue the call; reproduces across processes) or one-call (KernelBench's: one call after a synchronise, Python's launch inside; moved 2-4x between processes for short forwards on an H200)")
  .option('--no-pytorch-baselines', 'PyTorch-reference tasks: do not time the eager / torch.compile baselines before the search (timed once per session by default)')
  .option('--llm-base-url <url>', `OpenAI-compatible base URL (llm/mixed; default ${LLM_DEFAULTS.baseURL})`)
  .option('--llm-model <name>', `model name (default ${LLM_DEFAULTS.model})`)
  .option('--llm-key-env <VAR>', `environment variable holding the API key (default ${LLM_DEFAULTS.apiKeyEnv}); the key is never stored`)
  .option('--llm-temperature <t>', `sampling temperature 0..2 (default ${LLM_DEFAULTS.temperature})`, (v) => Number(v))
  .option('--llm-max-tokens <n>', `answer token limit (default ${LLM_DEFAULTS.maxTokens})`, (v) => Number(v))
  .option('--llm-timeout-ms <ms>', `whole-request timeout (default ${LLM_DEFAULTS.requestTimeoutMs})`, (v) => Number(v))
  .option('--confirm [top]', 'after the run, measure the baseline and the top (default 3) fastest variants again with the precise timing, for the figure one reports (as kernelduel confirm does; ~10 s a variant)')
  .option('--json', 'machine-readable output (one JSON event per line)')
  .action(async (taskArg: string | undefined, o: OptimizeFlags, cmd: Command) => {
    const runOptions = optimizeRunOptions(taskArg, o, (name) => cmd.getOptionValueSource(name) === 'cli');
    const b = runOptions.backend;
    if (o.confirm !== undefined) {
      if (b.kind === 'replay') throw new UsageError('--confirm measures variants again on a GPU; a --replay answers from a recording');
      if (b.kind === 'python') throw new UsageError('--confirm re-times CUDA variants with the judge\'s precise timing; Python candidates are timed by the Python runner');
      if (o.mixedModels) throw new UsageError('--confirm goes with one session: confirm each of a --mixed-models run\'s sessions with kernelduel confirm <session>');
      if (typeof o.confirm === 'string' && !(/^\d+$/.test(o.confirm) && Number(o.confirm) >= 1 && Number(o.confirm) <= 50)) throw new UsageError(`--confirm ${o.confirm}: give how many of the fastest variants to confirm, 1 to 50 (or leave it out: 3)`);
    }
    if (o.mixedModels && !(b.kind === 'gpu' && b.gpus !== undefined && !runOptions.resume)) throw new UsageError('--mixed-models goes with --gpus on a new session (it splits the GPUs into one session per model)');
    if (o.mixedModels && b.kind === 'gpu' && b.gpus !== undefined) {
      // GPUs of different models: one session per model, all running at once; never compared across models.
      const groups = await gpuGroupsByModel(b.gpus);
      const log = (s: string): void => void process.stderr.write(s + '\n');
      if (!o.json) log(`--mixed-models: ${groups.length} model${groups.length === 1 ? '' : 's'}, one session each, budget ${runOptions.budget} each: ${groups.map((g) => `${g.name} (GPUs ${g.indices.join(',')})`).join('; ')}`);
      const bests = await Promise.all(groups.map((g) => runOptimize({ ...runOptions, backend: { ...b, gpus: g.indices } }, o, g.name)));
      if (!o.json) for (const [i, g] of groups.entries()) log(`best on ${g.name}: ${bests[i]}`);
      return;
    }
    await runOptimize(runOptions, o);
  });

/** One optimisation run with its progress and final lines; `model`: the GPU model of one session of a --mixed-models run (prefixed to its lines). */
async function runOptimize(runOptions: RunOptions, o: OptimizeFlags, model?: string): Promise<string> {
  const log = (s: string): void => void process.stderr.write(`${model ? `[${model}] ` : ''}${s}\n`);
  const root = runOptions.sessionsRoot ?? sessionsRoot();
  const { strategy: strategyName, budget } = runOptions;
  const replay = runOptions.backend.kind === 'replay';
  // Python candidates: where torch runs decides the label (CPU times are never a GPU's).
  if (runOptions.backend.kind === 'python' && !runOptions.backend.device) {
    const py = await findPython();
    runOptions = { ...runOptions, backend: { ...runOptions.backend, device: py.can.gpuReference ? 'cuda' : 'cpu' } };
  }
  const cpu = runOptions.backend.kind === 'python' && runOptions.backend.device === 'cpu';
  const tag = replay ? ' [REPLAY]' : cpu ? ' [CPU]' : '';
  // The model's answer as it is written (not with --json): each answer under its id.
  let streaming: string | null = null;
  const onLlm = (e: LlmStreamEvent): void => {
    if (o.json) {
      if (e.type === 'llm.prompt') process.stdout.write(JSON.stringify(e) + '\n');
      return;
    }
    if (e.type === 'llm.prompt') {
      if (streaming) process.stderr.write('\n');
      streaming = null;
      log(`asking the model: prompt ${e.promptId} (${e.chars} characters), ${e.answerIds.length} answer(s)`);
      return;
    }
    if (streaming !== e.answerId) {
      process.stderr.write(`${streaming ? '\n' : ''}--- ${e.answerId}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''} ---\n`);
      streaming = e.answerId;
    }
    process.stderr.write(e.delta);
  };
  const progress = o.json ? null : new OptimizeProgress({ budget, tty: !model && !!process.stderr.isTTY, tag, write: log });
  let stopped = false;
  const onEvent = (e: LoopEvent): void => {
    if (o.json) {
      const x = e.type === 'result' ? { ...e, result: { failure: e.result.failure, medianMs: e.result.timing?.[0]?.medianMs, samples: e.result.timing?.[0]?.samplesMs.length, ...(e.result.timing?.[0]?.cutoffMs !== undefined ? { cutoffMs: e.result.timing[0].cutoffMs } : {}), source: e.result.source, stages: e.result.stages } } : e;
      process.stdout.write(JSON.stringify(replay ? { ...x, replay: true } : cpu ? { ...x, cpu: true } : x) + '\n');
      return;
    }
    if (e.type === 'result' && streaming) {
      process.stderr.write('\n');
      streaming = null;
    }
    progress?.event(e);
  };
  /** What the run says once its session exists. */
  const onStarted = (m: Extract<OptimisationMessage, { type: 'started' }>): void => {
    const meta = readSessionMeta(root, m.sessionId);
    if (isLlmStrategyName(strategyName)) {
      const d = meta.settings.llm as { baseURL?: string; model?: string; apiKeySet?: boolean; apiKeyEnv?: string } | undefined;
      if (d && !o.json) log(`llm: ${d.model} at ${d.baseURL}${d.apiKeySet ? ` (key from $${d.apiKeyEnv})` : ' (no API key)'}`);
    }
    for (const w of m.warnings) log(`warning: ${w}`);
    if (!replay && m.compileOnly) log(`compile-only: no usable NVIDIA GPU${runOptions.resume ? ' (or the session is compile-only)' : ''}, so variants are built (for ${m.arch}) but not checked or timed`);
    if (!o.json) log(`session ${m.sessionId} (${m.sessionDir}): ${runOptions.resume ? 'resumed, ' : ''}${meta.task.name}, ${strategyName}, budget ${budget}, seed ${runOptions.seed}${runOptions.flags === false && runOptions.backend.kind !== 'python' ? ', tunables only' : ''}, ${m.label}`);
    if (replay && !o.json) log('REPLAY: every time below is answered from the recording, not measured now');
    if (cpu && !o.json) log('CPU: Python candidates are checked and timed on the CPU; every time below is a CPU time, not a GPU\'s (guarantee level python-in-process)');
  };
  // The run lifecycle every front door uses (main/core/run/worker.ts), in this process.
  const run = startRun(runOptions, false);
  const stop = (): void => {
    log('\nstopping after the current measurement (Ctrl-C again to kill; the session keeps everything measured so far)');
    stopped = true;
    run.stop();
    process.once('SIGINT', () => process.exit(130));
  };
  let started: Extract<OptimisationMessage, { type: 'started' }> | null = null;
  let failed: Extract<OptimisationMessage, { type: 'error' }> | null = null;
  try {
    for await (const m of run.events) {
      if (m.type === 'started') {
        started = m;
        onStarted(m);
        process.once('SIGINT', stop);
      } else if (m.type === 'event') onEvent(m.event);
      else if (m.type === 'llm') onLlm(m.event);
      else if (m.type === 'pytorch-baselines') {
        if (o.json) process.stdout.write(JSON.stringify({ type: 'pytorch-baselines', baselines: m.baselines }) + '\n');
        else log(m.line);
      } else if (m.type === 'error') failed = m;
    }
  } finally {
    progress?.stop();
    process.removeListener('SIGINT', stop);
  }
  if (failed) {
    // Before the session exists: a problem with the options or the machine (a task's own error keeps its name).
    if (!started && failed.name !== 'TaskError') throw new UsageError(failed.message);
    throw Object.assign(new Error(failed.message), { name: failed.name, stack: failed.stack ?? `${failed.name}: ${failed.message}` });
  }
  if (!started) throw new UsageError('the run ended before it started');
  const snap = openSessionReadOnly(root, started.sessionId);
  const best = snap.best();
  const baselines = pytorchBaselinesIn(snap.events());
  snap.close();
  const taskName = snap.meta.task.name;
  const bestFigure = best ? snap.resultOf(best.variant.id)?.python?.figure : undefined;
  if (baselines && !o.json) log(baselinesSummary(baselines, best?.medianMs ?? null, bestFigure));
  if (!o.json && runOptions.backend.kind === 'python') {
    const py = best ? snap.resultOf(best.variant.id)?.python : undefined;
    if (best) log(`best${tag}: ${best.variant.id}${best.variant.origin === 'baseline' ? ' (the baseline: the reference run eagerly)' : ''} ${fmtMs(best.medianMs)}${best.speedup ? `, ${best.speedup.toFixed(2)}× the eager baseline${cpu ? ' on the CPU' : ''}` : ''}${py ? `; label ${py.label.toUpperCase()}, guarantee level ${py.guarantee}` : ''}`);
    else log('no Python candidate was checked correct and timed');
    log(`its source is kept in the session's journal: open session ${started.sessionId} in the workbench (kernelduel export writes CUDA variants only)`);
  } else if (!o.json) {
    if (best) {
      log(`best${tag}: ${best.variant.id} ${fmtMs(best.medianMs)}${best.speedup ? `, ${best.speedup.toFixed(2)}× the baseline` : ''}; config ${JSON.stringify(best.variant.config)}${best.variant.transforms?.length ? ` transforms ${best.variant.transforms.join(' ')}` : ''}${JSON.stringify(best.variant.flags) !== '{"opt":3}' ? ` flags ${JSON.stringify(best.variant.flags)}` : ''}`);
      // A recorded space without kernel source (imported from Kernel Tuner or a T4 file) has nothing to export as .cu.
      if (best.variant.source === '') log(`the recording has no kernel source: the configuration above is the result (kernelduel export-space writes the recording for Kernel Tuner's simulation mode)`);
      else {
        if (!replay && o.confirm === undefined) log(`for the figure to report: kernelduel confirm ${started.sessionId} (the baseline and the 3 fastest again with the precise timing, ~10 s a variant)`);
        log(`export it with: kernelduel export ${started.sessionId} --best -o ${taskName}-best.cu`);
      }
    } else log(`no variant was timed (${started.compileOnly ? 'compile-only' : 'all failed'}); export one by its id: kernelduel export ${started.sessionId} --variant <id> -o ${taskName}-variant.cu`);
  }
  if (o.confirm !== undefined && !stopped && !replay && runOptions.backend.kind !== 'python') {
    if (started.compileOnly) log('--confirm: nothing to confirm, the run was compile-only (no GPU timed it)');
    else if (!best) log('--confirm: nothing to confirm, no variant was checked correct and timed');
    else await runConfirm(started.sessionId, { top: typeof o.confirm === 'string' ? Number(o.confirm) : 3, json: o.json }, log);
  }
  return `session ${started.sessionId}, ${best ? `${best.variant.id} ${fmtMs(best.medianMs)}${best.speedup ? `, ${best.speedup.toFixed(2)}× its baseline on this model` : ''}` : 'no variant timed'}`;
}

program
  .command('sessions')
  .description('list sessions (in $KERNELDUEL_HOME/sessions, default ~/.kernelduel/sessions): task, strategy, where measured, results, status, best')
  .option('--json', 'machine-readable output')
  .action((o: { json?: boolean }) => {
    const list = listSessions(sessionsRoot());
    out(!!o.json, list, () =>
      list.length ? list.map(describeSession).join('\n') : `no sessions in ${sessionsRoot()}`,
    );
  });

program
  .command('export')
  .description('write a variant of a session to a .cu file with its provenance')
  .argument('<session>', 'session id or folder')
  .option('--best', 'the fastest correct variant (default; after kernelduel confirm, the fastest by the precise timing)')
  .option('--variant <id>', 'a specific variant')
  .requiredOption('-o, --out <file>', 'output .cu file')
  .option('--json', 'machine-readable output')
  .action((sid: string, o: { best?: boolean; variant?: string; out: string; json?: boolean }) => {
    const session = sid.includes('/') ? openSession(sid) : openSession(sessionsRoot(), sid);
    const r = exportVariant(session, o.variant ?? 'best', resolve(o.out));
    out(!!o.json, r, () => `wrote ${r.path} (variant ${r.variantId}${r.chosenBy === 'confirmed' ? ', the fastest by the session\'s precise confirmation' : ''}${r.speedup ? `, ${r.speedup.toFixed(2)}× the baseline` : ''}${r.confirmedSpeedup ? `; confirmed ${r.confirmedSpeedup.toFixed(3)}× with the precise timing` : ''})`);
  });

program
  .command('serve')
  .description('serve the workbench to a browser (for a GPU in a headless server): the UI and its API, behind a random access token')
  .option('--host <addr>', 'address to bind (default 127.0.0.1; anything else exposes the engine to that network, token-protected)', '127.0.0.1')
  .option('--port <n>', 'port (0 picks a free one)', (v) => Number(v), 5317)
  .option('--allow-host <name>', 'a host name browsers may use besides this machine\'s names and addresses (repeatable; e.g. a DNS alias)', (v: string, prev: string[]) => [...prev, v], [] as string[])
  .option('--static <dir>', 'built renderer folder (default: out/renderer of this checkout)')
  .option('--open', 'open the URL in the default browser')
  .option('--json', 'print {url, host, port} as one JSON line')
  .action(async (o: { host: string; port: number; allowHost: string[]; static?: string; open?: boolean; json?: boolean }) => {
    if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new UsageError('--port must be an integer 0..65535');
    const { startWebServer, defaultStaticDir, openInBrowser } = await import('../web/server.js');
    const srv = await startWebServer({ host: o.host, port: o.port, allowHosts: o.allowHost, staticDir: o.static ? resolve(o.static) : defaultStaticDir() });
    if (o.json) process.stdout.write(JSON.stringify({ url: srv.url, host: srv.host, port: srv.port }) + '\n');
    else {
      process.stdout.write(`KernelDuel workbench: ${srv.url}\n`);
      if (o.host !== '127.0.0.1' && o.host !== 'localhost') process.stderr.write(`warning: bound to ${o.host}: anyone on that network who has the URL can run builds on this machine\n`);
      process.stderr.write('(Ctrl-C stops the server; runs in progress are stopped and keep what they measured)\n');
    }
    if (o.open) openInBrowser(srv.url, (why) => process.stderr.write(`(${why}: open the URL above in a browser yourself)\n`));
    const shutdown = (): void => {
      void srv.close().then(() => process.exit(0));
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  });

program
  .command('export-dataset')
  .description('write the (prompt, answer, reward) triples of a session\'s LLM policy as JSONL, grouped per prompt (GRPO-style)')
  .argument('<session>', 'session id or folder')
  .requiredOption('-o, --out <file>', 'output .jsonl file')
  .option('--json', 'machine-readable output')
  .action((sid: string, o: { out: string; json?: boolean }) => {
    const session = sid.includes('/') ? openSession(sid) : openSession(sessionsRoot(), sid);
    const r = exportDataset(session, resolve(o.out));
    session.close();
    out(!!o.json, r, () => `wrote ${r.path}: ${r.rows} answers in ${r.groups} prompt groups (${r.measured} measured)`);
  });

registerKernelBenchImport(program);
registerConfirm(program);

/** Errors of JavaScript itself: bugs, shown with their stack. */
const BUG_ERRORS = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'EvalError', 'URIError', 'AggregateError']);

registerSpaceCommands(program);

/** Errors meant for the user (bad input, a damaged session, a full disk, a GPU that is not here): their
 * message says what is wrong and what to do, so no stack trace. JavaScript's own errors (TypeError...)
 * are bugs and keep theirs (also when a run reports one by name), and KERNELDUEL_DEBUG=1 shows every stack. */
function isUserError(e: unknown): e is Error {
  if (!(e instanceof Error) || process.env.KERNELDUEL_DEBUG === '1') return false;
  return !BUG_ERRORS.has(e.name);
}

program.parseAsync(process.argv).catch((e: unknown) => {
  if (isUserError(e)) process.stderr.write(`kernelduel: ${e.message}\n${e.name === 'TaskError' ? 'fix the task folder and run again (the format: docs/TASK-FORMAT.md)\n' : ''}`);
  else process.stderr.write(`kernelduel: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});

export type { EvalResult };
