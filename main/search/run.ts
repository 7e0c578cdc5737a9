// Everything an optimisation run needs, from plain (serialisable) options: the task, the backend
// (a GPU through the Evaluator, or a recorded space through the ReplayMeasurer), the session (new
// or resumed), the action space and the strategy. Shared by the CLI and the worker thread.
import { resolveTask } from '../task/resolve.js';
import type { Task } from '../task/manifest.js';
import { createSession, newSessionId, openSession, sessionsRoot, type Session } from '../session/store.js';
import { ReplayMeasurer } from '../eval/replay.js';
import { Evaluator } from '../eval/evaluate.js';
import { findToolchain } from '../toolchain/nvcc.js';
import { detectGpus } from '../gpu/detect.js';
import { KERNELDUEL_VERSION } from '../common/version.js';
import type { Measurer } from './measurer.js';
import type { Strategy } from './loop.js';
import type { ActionSpace } from './actions.js';
import { actionSpaceFor, makeStrategy, type StrategyName } from './strategies.js';

export type Backend = { kind: 'replay'; recording: string; seed?: number } | { kind: 'gpu'; gpu?: number; arch?: string; maxMs?: number };

export interface RunOptions {
  /** Task folder or built-in task name (ignored when resuming: the session names its task). */
  task: string;
  strategy: StrategyName;
  budget: number;
  seed: number;
  backend: Backend;
  /** Sessions folder (default sessionsRoot()). */
  sessionsRoot?: string;
  resume?: string;
  /** Vary compiler flags / source transforms on a GPU (default true). */
  flags?: boolean;
  transforms?: boolean;
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

export async function prepareRun(o: RunOptions): Promise<PreparedRun> {
  const warnings: string[] = [];
  const root = o.sessionsRoot ?? sessionsRoot();
  let session: Session | undefined;
  let task: Task;
  if (o.resume) {
    session = openSession(root, o.resume);
    task = resolveTask(session.meta.task.dir);
    if (task.hash !== session.meta.task.manifestHash) warnings.push(`task ${task.manifest.name} changed since session ${session.meta.id} started`);
  } else task = resolveTask(o.task);
  let measurer: Measurer;
  let label: string;
  let gpuMeta: { name: string; uuid?: string; arch: string } | null = null;
  let seeds: number[] | undefined;
  if (o.backend.kind === 'replay') {
    const r = new ReplayMeasurer(task, o.backend.recording, { seed: o.backend.seed ?? o.seed });
    if (!r.taskHashMatches) warnings.push(`the recording ${r.recording} was made from different contents of task ${task.manifest.name}`);
    measurer = r;
    label = `REPLAY of ${r.recording} (${r.space.measured}, ${r.space.gpu.name}, ${r.space.date})`;
    gpuMeta = { name: `REPLAY ${r.space.gpu.name}`, uuid: r.space.gpu.uuid, arch: `sm_${r.space.gpu.computeCapability.replace('.', '')}` };
  } else {
    const tc = await findToolchain();
    if (!tc.nvcc) throw new Error(tc.problems.join(' ') || 'nvcc not found');
    const b = o.backend;
    let gpu = null;
    if (process.env.KERNELDUEL_NO_GPU !== '1') {
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
    settings: { strategy: o.strategy, budget: o.budget, seed: o.seed, ...(seeds ? { seeds } : {}), backend: o.backend.kind === 'replay' ? { kind: 'replay', recording: (measurer as ReplayMeasurer).recording } : { kind: 'gpu' } },
    createdAt: new Date().toISOString(), kernelduelVersion: KERNELDUEL_VERSION,
  });
  const space = await actionSpaceFor(task, measurer, { flags: o.flags, transforms: o.transforms });
  const strategy = makeStrategy(o.strategy, space, o.seed);
  return { task, measurer, session, space, strategy, label, warnings };
}
