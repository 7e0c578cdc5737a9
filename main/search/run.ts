// Everything an optimisation run needs, from plain (serialisable) options: the task, the backend
// (a GPU through the Evaluator, or a recorded space through the ReplayMeasurer), the session (new
// or resumed), the action space and the strategy. Shared by the CLI and the worker thread.
import { resolveTask } from '../task/resolve.js';
import type { Task } from '../task/manifest.js';
import { createSession, newSessionId, openSession, sessionsRoot, type Session } from '../session/store.js';
import { loadSpace, ReplayMeasurer, recordedArch } from '../eval/replay.js';
import { isSourceFree, originLabel, replayTask, resolveTaskOrSpace } from '../eval/space-task.js';
import { Evaluator } from '../eval/evaluate.js';
import { findToolchain } from '../toolchain/nvcc.js';
import { detectGpus } from '../gpu/detect.js';
import { KERNELDUEL_VERSION } from '../common/version.js';
import type { Measurer } from './measurer.js';
import type { Strategy } from './loop.js';
import type { ActionSpace } from './actions.js';
import { actionSpaceFor, isLlmStrategyName, makeStrategy, type RunStrategyName } from './strategies.js';
import { LlmProvider, type LlmSettingsInput } from '../llm/provider.js';
import { LlmStrategy, mixedStrategy } from './llm.js';

export type Backend = { kind: 'replay'; recording: string; seed?: number } | { kind: 'gpu'; gpu?: number; arch?: string; maxMs?: number; /** Compile-only even when a GPU is present. */ noGpu?: boolean };

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
  warnings: string[];
}

export async function prepareRun(o: RunOptions, hooks: RunHooks = {}): Promise<PreparedRun> {
  const warnings: string[] = [];
  const root = o.sessionsRoot ?? sessionsRoot();
  let session: Session | undefined;
  let task: Task;
  // A replayed space without kernel source is its own task (eval/space-task.ts).
  const recorded = o.backend.kind === 'replay' ? loadSpace(o.backend.recording) : null;
  if (o.resume) {
    session = openSession(root, o.resume);
    task = resolveTaskOrSpace(session.meta.task.dir);
    if (task.hash !== session.meta.task.manifestHash) warnings.push(`task ${task.manifest.name} changed since session ${session.meta.id} started`);
  } else task = recorded && o.backend.kind === 'replay' ? replayTask(o.task, o.backend.recording, recorded) : resolveTask(o.task);
  const llmPolicy = isLlmStrategyName(o.strategy);
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
  let gpuMeta: { name: string; uuid?: string; arch: string } | null = null;
  let seeds: number[] | undefined;
  if (o.backend.kind === 'replay') {
    const r = new ReplayMeasurer(task, recorded ?? o.backend.recording, { seed: o.backend.seed ?? o.seed, path: o.backend.recording });
    if (!r.taskHashMatches) warnings.push(`the recording ${r.recording} was made from different contents of task ${task.manifest.name}`);
    measurer = r;
    label = `REPLAY of ${r.recording} (${r.space.measured}, ${r.space.gpu.name}, ${r.space.date}${isSourceFree(r.space) ? `; ${originLabel(r.space)}; tunables only, no kernel source` : ''})`;
    gpuMeta = { name: `REPLAY ${r.space.gpu.name}`, uuid: r.space.gpu.uuid, arch: recordedArch(r.space) };
  } else {
    const tc = await findToolchain();
    if (!tc.nvcc) throw new Error(tc.problems.join(' ') || 'nvcc not found');
    const b = o.backend;
    let gpu = null;
    if (process.env.KERNELDUEL_NO_GPU !== '1' && !b.noGpu) {
      const det = await detectGpus();
      const usable = det.gpus.filter((g) => g.arch);
      gpu = b.gpu === undefined ? (usable[0] ?? null) : (usable.find((g) => g.index === b.gpu) ?? null);
      if (b.gpu !== undefined && !gpu) throw new Error(`--gpu ${b.gpu}: no such GPU`);
    }
    const ev = new Evaluator({ task, toolchain: tc, gpu, arch: b.arch, timing: b.maxMs ? { maxMs: b.maxMs } : undefined });
    measurer = ev;
    seeds = ev.seeds;
    label = gpu ? `GPU ${gpu.index} ${gpu.name}` : 'compile-only (no GPU)';
    gpuMeta = gpu ? { name: gpu.name, uuid: gpu.uuid, arch: ev.env.arch } : null;
  }
  session ??= createSession(root, {
    id: newSessionId(), task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: gpuMeta,
    settings: { strategy: o.strategy, budget: o.budget, seed: o.seed, ...(seeds ? { seeds } : {}), backend: o.backend.kind === 'replay' ? { kind: 'replay', recording: (measurer as ReplayMeasurer).recording } : { kind: 'gpu' },
      // The provider's settings without secrets (describe() never holds the key; it says whether one was set).
      ...(provider ? { llm: provider.describe() } : {}) },
    createdAt: new Date().toISOString(), kernelduelVersion: KERNELDUEL_VERSION,
  });
  if (o.backend.kind === 'replay' && !o.resume) {
    session.append({ type: 'note', level: 'info', message: `REPLAY: answers come from the recorded space ${(measurer as ReplayMeasurer).recording}, not from a live GPU` });
  }
  const space = await actionSpaceFor(task, measurer, { flags: o.flags, transforms: o.transforms });
  let strategy: Strategy;
  if (provider) {
    if (!provider.hasApiKey && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(provider.settings.baseURL)) {
      warnings.push(`no API key in $${provider.settings.apiKeyEnv}: ${provider.settings.baseURL} may refuse the requests`);
    }
    const llm = new LlmStrategy({
      task, session, provider, seed: o.seed, gpu: gpuMeta?.name ?? null, signal: hooks.signal,
      onDelta: (e) => hooks.onLlm?.({ type: 'llm.delta', ...e }),
      onPrompt: (p) => hooks.onLlm?.({ type: 'llm.prompt', promptId: p.promptId, answerIds: p.answerIds, chars: p.messages.reduce((a, m) => a + m.content.length, 0) }),
    });
    strategy = o.strategy === 'llm' ? llm : mixedStrategy({ llm, task, session, seed: o.seed });
  } else strategy = makeStrategy(o.strategy as Exclude<RunStrategyName, 'llm' | 'mixed'>, space, o.seed);
  return { task, measurer, session, space, strategy, label, warnings };
}
