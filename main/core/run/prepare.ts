// Everything an optimisation run needs, from plain (serialisable) options: the task, the backend
// (a GPU through the Evaluator, or a recorded space through the ReplayMeasurer), the session (new
// or resumed), the action space and the strategy. Run by the run lifecycle (worker.ts) for every
// front door, with the one GPU picker (../gpus.ts) and the one evaluator factory (../evaluators.ts).
import { resolveTask } from '../../engine/task/resolve.js';
import type { Task } from '../../engine/task/manifest.js';
import { describeReach, spaceReach } from '../../engine/task/reach.js';
import { enumerateSpace } from '../../engine/task/space.js';
import { createSession, newSessionId, openSession, sessionsRoot, type Session } from '../../engine/session/store.js';
import { loadSpace, ReplayMeasurer, recordedArch } from '../../engine/measure/replay.js';
import { isSourceFree, originLabel, replayTask, resolveTaskOrSpace } from '../../engine/measure/space-task.js';
import { CaptureShare, gpuQueueOf, type Evaluator } from '../../engine/measure/evaluate.js';
import { pickGpu, pickGpus, type GpuPoolChoice } from '../gpus.js';
import { evaluatorLane, type Lane } from '../../engine/measure/lane.js';
import { simulatedGpuLanes, type SimulatedFault } from '../../engine/measure/simulated-gpus.js';
import { makeEvaluator } from '../evaluators.js';
import { KERNELDUEL_VERSION } from '../../engine/base/version.js';
import type { Measurer } from '../../engine/measure/measurer.js';
import { DEFAULT_TIME_CUTOFF, type Strategy } from '../../engine/search/loop.js';
import type { ActionSpace } from '../../engine/search/actions.js';
import { actionSpaceFor, isLlmStrategyName, makeStrategy, type RunStrategyName } from '../../engine/search/strategies.js';
import { LlmProvider } from '../../engine/llm/provider.js';
import type { LlmSettingsInput } from '../../engine/llm/settings.js';
import { LlmStrategy, mixedStrategy } from '../../engine/search/llm.js';
import { findPython } from '../../engine/platform/toolchain/python.js';
import { workRoot } from '../../engine/base/paths.js';
import { promptDevice, PythonMeasurer } from '../python-measurer.js';
import type { BaselinePlan } from '../pytorch-baselines.js';
import { cudaDeviceSelector } from '../../engine/platform/gpu/detect.js';
import type { Config, GpuInfo, PythonFigure } from '../../engine/base/types.js';

export type Backend =
  | {
      kind: 'replay'; recording: string; seed?: number;
      /** A pool of SIMULATED GPUs answering from the recording (REPLAY; tests and demos of the pool loop). */
      simulateGpus?: { count: number; latencyMs?: number[]; fault?: SimulatedFault };
    }
  | {
      kind: 'gpu'; gpu?: number; arch?: string; maxMs?: number;
      /** A duel's own noise target (`--duel-noise`; default: the timing's). */
      duelNoise?: number;
      /** `--duel-skip`: no duel for a variant at least this fraction slower than its opponent, their intervals apart (search/loop.ts). */
      duelSkip?: number;
      /** `--time-cutoff`: timing stops at this multiple of the best's median (0: off; default DEFAULT_TIME_CUTOFF). */
      timeCutoff?: number;
      /** One run on a pool of GPUs (`--gpus all|0,1,3`): one evaluation queue and judge per GPU. */
      gpus?: GpuPoolChoice;
      /** Compile-only even when a GPU is present. */
      noGpu?: boolean;
      /** This GPU only (a resumed session's): refused when it is not usable here. */
      uuid?: string;
      gpuName?: string;
    }
  | {
      /** KernelBench-style Python candidates (`ModelNew`) of a PyTorch-reference task, judged by
       * resources/python/kd_candidate.py (guarantee level python-in-process): on the GPU when the
       * Python's torch has CUDA, else (or with device cpu) on the CPU, every time labelled CPU. */
      kind: 'python'; device?: 'cuda' | 'cpu' | 'auto';
      /** Pairs of fresh-process measurements per duel (default 3). */
      duelRounds?: number;
      /** What variants are ranked and duelled by on a GPU (PythonFigure; default per-call). */
      figure?: PythonFigure;
      /** The runner's timing options (--min-samples N ...), e.g. shorter ones in tests. */
      timingArgs?: string[];
    };

export interface RunOptions {
  /** Task folder or built-in task name (ignored when resuming: the session names its task). */
  task: string;
  strategy: RunStrategyName;
  budget: number;
  seed: number;
  backend: Backend;
  /** Sessions folder (default sessionsRoot()). */
  sessionsRoot?: string;
  resume?: string;
  /** Vary compiler flags / source transforms on a GPU (default true). */
  flags?: boolean;
  transforms?: boolean;
  /** LLM provider settings (strategies llm and mixed); a resumed session keeps its own unless given. */
  llm?: LlmSettingsInput;
  /** The API key itself (e.g. from the OS keychain); never stored. Default: the environment variable the settings name. */
  apiKey?: string;
  /** Time the PyTorch baselines (eager, torch.compile) of a PyTorch-reference task once per session (default true). */
  pytorchBaselines?: boolean;
  /** Limits of a pool run's fault handling (main/engine/search/pool.ts); defaults there. */
  pool?: { hangMs?: number; healthMs?: number; lookaheadPerLane?: number };
}

/** What the LLM policy streams while it asks the model (not journaled: the answers are, on their variants). */
export type LlmStreamEvent =
  | { type: 'llm.prompt'; promptId: string; answerIds: string[]; chars: number }
  | { type: 'llm.delta'; promptId: string; answerId: string; delta: string; attempt: number };

/** Callbacks that cannot travel in serialisable options. */
export interface RunHooks {
  onLlm?: (e: LlmStreamEvent) => void;
  /** Cancels model requests in flight (the loop has its own signal). */
  signal?: AbortSignal;
}

export interface PreparedRun {
  task: Task;
  measurer: Measurer;
  session: Session;
  space: ActionSpace;
  strategy: Strategy;
  /** What measured: a GPU, none (compile-only) or REPLAY of a recording. */
  label: string;
  /** nvcc's target (null for a replay). */
  arch: string | null;
  warnings: string[];
  /** A pool run's GPUs (`--gpus`, or simulated ones): the pool loop measures on these; `measurer` is the first one's. */
  lanes?: Lane[];
  /** A PyTorch-reference task's baselines: where to time them, or why not; null: not such a task, or not asked for. */
  pytorchBaselines: BaselinePlan | null;
  /** The loop's `--time-cutoff` (LoopOptions.timeCutoff): the given one, else DEFAULT_TIME_CUTOFF on a GPU; undefined where nothing is timed on one. */
  timeCutoff?: number;
}

export async function prepareRun(o: RunOptions, hooks: RunHooks = {}): Promise<PreparedRun> {
  const warnings: string[] = [];
  const root = o.sessionsRoot ?? sessionsRoot();
  let session: Session | undefined;
  let task: Task;
  // A replayed space without kernel source is its own task (engine/measure/space-task.ts).
  const recorded = o.backend.kind === 'replay' ? loadSpace(o.backend.recording) : null;
  if (o.resume) {
    session = openSession(root, o.resume);
    task = resolveTaskOrSpace(session.meta.task.dir);
    if (task.hash !== session.meta.task.manifestHash) warnings.push(`task ${task.manifest.name} changed since session ${session.meta.id} started`);
  } else task = recorded && o.backend.kind === 'replay' ? replayTask(o.task, o.backend.recording, recorded) : resolveTask(o.task);
  // The space, enumerated once here for every front door: a new run on a task whose restrictions
  // exclude every configuration (or whose space is too large) fails before its session exists. Its
  // islands that one-tunable steps never enter, when they are a small share (random picks rarely land
  // there either), are a warning: the task author may want to reparametrise (engine/task/reach.ts).
  if (o.backend.kind !== 'replay' && o.backend.kind !== 'python' && Object.keys(task.manifest.tunables ?? {}).length) {
    let configs: Config[] | null = null;
    try {
      configs = enumerateSpace(task);
    } catch (e) {
      if (!o.resume) throw e;
      // a resumed session's task that changed since: its own warning above says so
    }
    if (configs) {
      const r = spaceReach(task, configs);
      const note = describeReach(task, r);
      if (note && (r.configs - r.reached) * 4 < r.configs) warnings.push(`task ${task.manifest.name}: ${note}`);
    }
  }
  const llmPolicy = isLlmStrategyName(o.strategy);
  if (o.backend.kind === 'python' && o.strategy !== 'llm') {
    throw new Error(`strategy ${o.strategy} cannot propose Python candidates: the built-in offline strategies search a CUDA entry point's tunables, compiler flags and source transforms, and a ModelNew file has none of them. Python candidates come from the language model: --strategy llm`);
  }
  if (llmPolicy && o.backend.kind === 'replay') {
    throw new Error(`the ${o.strategy} policy writes new code, which a recorded space cannot answer: run it on a GPU, or compile-only without one`);
  }
  let provider: LlmProvider | undefined;
  if (llmPolicy) {
    const stored = session?.meta.settings.llm;
    const { apiKeySet: _set, ...storedSettings } = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>;
    void _set;
    provider = new LlmProvider(o.llm ?? storedSettings, { apiKey: o.apiKey });
  }
  let measurer: Measurer;
  let label: string;
  let gpuMeta: { name: string; uuid?: string; arch: string } | null;
  let seeds: number[] | undefined;
  let arch: string | null = null;
  let lanes: Lane[] | undefined;
  let poolGpus: Array<{ index: number; uuid: string; name: string }> | undefined;
  /** The GPU the run times on (the first of a pool), for the PyTorch baselines. */
  let runGpu: GpuInfo | null = null;
  if (o.backend.kind === 'python') {
    const pm = await pythonMeasurer(task, o.backend);
    measurer = pm;
    task = pm.task;
    label = pm.label;
    gpuMeta = pm.device === 'cuda' ? { name: pm.gpuName, arch: 'torch' } : null;
  } else if (o.backend.kind === 'replay') {
    const r = new ReplayMeasurer(task, recorded ?? o.backend.recording, { seed: o.backend.seed ?? o.seed, path: o.backend.recording });
    if (!r.taskHashMatches) warnings.push(`the recording ${r.recording} was made from different contents of task ${task.manifest.name}`);
    measurer = r;
    label = `REPLAY of ${r.recording} (${r.space.measured}, ${r.space.gpu.name}, ${r.space.date}${isSourceFree(r.space) ? `; ${originLabel(r.space)}; tunables only, no kernel source` : ''})`;
    gpuMeta = { name: `REPLAY ${r.space.gpu.name}`, uuid: r.space.gpu.uuid, arch: recordedArch(r.space) };
    if (o.backend.simulateGpus) {
      lanes = simulatedGpuLanes(r, o.backend.simulateGpus);
      label += ` on ${lanes.length} SIMULATED GPUs`;
    }
  } else if (o.backend.gpus !== undefined && !o.backend.noGpu) {
    const b = o.backend;
    const gpus = await pickGpus(b.gpus!, { model: b.gpuName });
    const evs = [];
    // One set of captures for the pool: a duel on one GPU reuses another's capture of the same
    // library (GPUs of the same model only: the share is keyed by model and plan).
    const captureShare = new CaptureShare();
    for (const g of gpus) evs.push(await makeEvaluator(task, { gpu: g, arch: b.arch, maxMs: b.maxMs, duelNoise: b.duelNoise, captureShare }));
    lanes = evs.map(evaluatorLane);
    measurer = evs[0];
    seeds = evs[0].seeds;
    arch = evs[0].env.arch;
    label = `${gpus.length} GPU${gpus.length === 1 ? '' : 's'} (${gpus.map((g) => g.index).join(',')}) ${gpus[0].name}`;
    gpuMeta = { name: gpus[0].name, uuid: gpus[0].uuid, arch };
    poolGpus = gpus.map((g) => ({ index: g.index, uuid: g.uuid, name: g.name }));
    runGpu = gpus[0];
  } else {
    const b = o.backend;
    const gpu = await pickGpu({ index: b.noGpu ? null : b.gpu, uuid: b.uuid, name: b.gpuName });
    const ev = await makeEvaluator(task, { gpu, arch: b.arch, maxMs: b.maxMs, duelNoise: b.duelNoise });
    measurer = ev;
    seeds = ev.seeds;
    arch = ev.env.arch;
    label = gpu ? `GPU ${gpu.index} ${gpu.name}` : 'compile-only (no GPU)';
    gpuMeta = gpu ? { name: gpu.name, uuid: gpu.uuid, arch: ev.env.arch } : null;
    runGpu = gpu;
  }
  // `--time-cutoff`, resolved once: recorded in a new session's settings and handed to the loop
  // (a session recorded before the option has none and gets the default when resumed).
  const timeCutoff = o.backend.kind === 'gpu' ? (o.backend.timeCutoff ?? (measurer.compileOnly ? undefined : DEFAULT_TIME_CUTOFF)) : undefined;
  session ??= createSession(root, {
    id: newSessionId(), task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: gpuMeta,
    // Everything --resume continues with (main/core/run/resume.ts reads it back).
    settings: { strategy: o.strategy, budget: o.budget, seed: o.seed, ...(seeds ? { seeds } : {}),
      backend: o.backend.kind === 'replay'
        ? { kind: 'replay', recording: (measurer as ReplayMeasurer).recording, seed: o.backend.seed ?? o.seed,
            ...(o.backend.simulateGpus ? { simulateGpus: { count: o.backend.simulateGpus.count, ...(o.backend.simulateGpus.latencyMs ? { latencyMs: o.backend.simulateGpus.latencyMs } : {}) } } : {}) }
        : o.backend.kind === 'python'
        ? { kind: 'python', device: (measurer as PythonMeasurer).device, python: (measurer as PythonMeasurer).python, torch: (measurer as PythonMeasurer).torch,
            figure: (measurer as PythonMeasurer).figure,
            ...(o.backend.duelRounds ? { duelRounds: o.backend.duelRounds } : {}), ...(o.backend.timingArgs ? { timingArgs: o.backend.timingArgs } : {}) }
        : { kind: 'gpu', arch: (measurer as Evaluator).env.arch, ...(o.backend.maxMs ? { maxMs: o.backend.maxMs } : {}), ...(o.backend.duelNoise ? { duelNoise: o.backend.duelNoise } : {}), ...(o.backend.duelSkip ? { duelSkip: o.backend.duelSkip } : {}), ...(timeCutoff !== undefined ? { timeCutoff } : {}), compileOnly: measurer.compileOnly, ...(poolGpus ? { gpus: poolGpus } : {}) },
      flags: o.flags !== false, transforms: o.transforms !== false,
      ...(o.pytorchBaselines === false ? { pytorchBaselines: false } : {}),
      // The provider's settings without secrets (describe() never holds the key; it says whether one was set).
      ...(provider ? { llm: provider.describe() } : {}) },
    createdAt: new Date().toISOString(), kernelduelVersion: KERNELDUEL_VERSION,
  });
  if (o.backend.kind === 'replay' && !o.resume) {
    session.append({ type: 'note', level: 'info', message: `REPLAY: answers come from the recorded space ${(measurer as ReplayMeasurer).recording}, not from a live GPU` });
  }
  if (o.backend.kind === 'python' && !o.resume) {
    session.append({ type: 'note', level: (measurer as PythonMeasurer).device === 'cpu' ? 'warn' : 'info', message: `Python candidates: ${label}` });
  }
  // A Python run has no tunables, flags or transforms to search (its strategy is the LLM's).
  const space = await actionSpaceFor(task, measurer, o.backend.kind === 'python' ? { flags: false, transforms: false } : { flags: o.flags, transforms: o.transforms });
  let strategy: Strategy;
  if (provider) {
    if (!provider.hasApiKey && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(provider.settings.baseURL)) {
      warnings.push(`no API key in $${provider.settings.apiKeyEnv}: ${provider.settings.baseURL} may refuse the requests`);
    }
    const llm = new LlmStrategy({
      task, session, provider, seed: o.seed, gpu: gpuMeta?.name ?? null, signal: hooks.signal,
      ...(measurer instanceof PythonMeasurer ? { candidates: 'python' as const, device: promptDevice({ device: measurer.device, gpuName: measurer.gpuName, figure: measurer.figure, cpuWhy: measurer.cpuWhy }) } : {}),
      onDelta: (e) => hooks.onLlm?.({ type: 'llm.delta', ...e }),
      onPrompt: (p) => hooks.onLlm?.({ type: 'llm.prompt', promptId: p.promptId, answerIds: p.answerIds, chars: p.messages.reduce((a, m) => a + m.content.length, 0) }),
    });
    strategy = o.strategy === 'llm' ? llm : mixedStrategy({ llm, task, session, seed: o.seed });
  } else strategy = makeStrategy(o.strategy as Exclude<RunStrategyName, 'llm' | 'mixed'>, space, o.seed);
  if (lanes && !o.resume) session.append({ type: 'note', level: 'info', message: `GPU pool of ${lanes.length}: ${lanes.map((l) => `${l.id} ${l.gpu.name}${l.gpu.uuid ? ` ${l.gpu.uuid}` : ''}`).join('; ')}` });
  const wantBaselines = task.pytorch && o.pytorchBaselines !== false && session.meta.settings.pytorchBaselines !== false;
  const pytorchBaselines = wantBaselines ? await baselinePlan(o.backend, measurer, runGpu) : null;
  return { task, measurer, session, space, strategy, label, arch, warnings, pytorchBaselines, ...(lanes ? { lanes } : {}), ...(timeCutoff !== undefined ? { timeCutoff } : {}) };
}

/** Where a PyTorch task's baselines are timed: the run's own device (a CPU run's are CPU times), or why they are not. */
async function baselinePlan(b: Backend, measurer: Measurer, gpu: GpuInfo | null): Promise<BaselinePlan> {
  if (measurer instanceof PythonMeasurer) {
    return { target: { device: measurer.device, deviceName: measurer.gpuName, python: measurer.python, torch: measurer.torch } };
  }
  if (b.kind === 'replay') return { skip: 'REPLAY: the PyTorch baselines are measured live only', device: 'cuda', deviceName: 'REPLAY', torch: null };
  if (!gpu || measurer.compileOnly) return { skip: 'compile-only run (no GPU): nothing is timed here', device: 'cuda', deviceName: 'none', torch: null };
  const py = await findPython();
  if (!py.python || !py.can.gpuReference) {
    return { skip: `no CUDA in Python's torch (${py.problems.join(' ') || 'torch sees no GPU'}): CPU times would stand beside this run's GPU times`, device: 'cuda', deviceName: gpu.name, torch: py.torch };
  }
  return { target: { device: 'cuda', deviceName: gpu.name, python: py.python, torch: py.torch, env: { CUDA_VISIBLE_DEVICES: cudaDeviceSelector(gpu) }, queue: gpuQueueOf(gpu) } };
}

/** The Python-candidate backend: finds Python with torch and the device it can time on (a clear error naming what is missing). */
async function pythonMeasurer(task: Task, b: Extract<Backend, { kind: 'python' }>): Promise<PythonMeasurer> {
  if (!task.pytorch) throw new Error(`task ${task.manifest.name} has a CUDA reference (${task.referencePath}): Python candidates (ModelNew) need a PyTorch-reference task (reference.pytorch in task.yaml; \`kernelduel import kernelbench\` writes them)`);
  const py = await findPython();
  if (!py.python || !py.can.cpuReference) throw new Error(`Python candidates run with PyTorch: ${py.problems.join(' ')}`);
  const want = b.device ?? 'auto';
  if (want === 'cuda' && !py.can.gpuReference) throw new Error(`--device cuda: ${py.problems.join(' ') || `${py.python}'s torch sees no CUDA device`}`);
  const device = want === 'cpu' || !py.can.gpuReference ? 'cpu' : 'cuda';
  return new PythonMeasurer(task, {
    python: py.python, torch: py.torch, device, cudaAvailable: py.can.gpuReference, deviceName: device === 'cuda' ? (py.devices[0] ?? 'cuda') : undefined,
    workRoot: workRoot(), duelRounds: b.duelRounds, timingArgs: b.timingArgs, ...(b.figure ? { figure: b.figure } : {}),
  });
}
