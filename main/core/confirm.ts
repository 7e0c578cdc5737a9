// `kernelduel confirm` (and `optimize --confirm`): a session's baseline and fastest variants measured
// again with the precise timing on the session's GPU (or another of its model), each checked again,
// journaled as `confirm` events (engine/session/confirm.ts); variants tied with the best are then
// timed against it in a duel with the same precise settings, journaled as `duel` events. Refused,
// with the reason, for sessions whose times no GPU here can measure again: REPLAY, compile-only,
// Python candidates, a run still appending to it.
import type { EvalResult, GpuInfo, VariantRecord } from '../engine/base/types.js';
import { normaliseGpuName } from '../engine/platform/gpu/detect.js';
import { resolveTaskOrSpace } from '../engine/measure/space-task.js';
import type { Task } from '../engine/task/manifest.js';
import { confirmCandidates, confirmSession, type ConfirmReport } from '../engine/session/confirm.js';
import { markRunning, runState } from '../engine/session/running.js';
import { pythonDeviceOf, runSettingsOf } from '../engine/session/run-settings.js';
import { openSession, sessionsRoot } from '../engine/session/store.js';
import type { Evaluator } from '../engine/measure/evaluate.js';
import { CoreError, errMsg } from './errors.js';
import { makeEvaluator } from './evaluators.js';
import { pickGpu } from './gpus.js';
import { recordingOf } from './sessions.js';

export interface ConfirmChoice {
  /** Session id (in the sessions folder) or a session folder. */
  session: string;
  /** How many of the search's fastest variants besides the baseline (default 3). */
  top?: number;
  /** A GPU index; default: the session's GPU, else the first of its model. */
  gpu?: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Things worth saying before measuring (another GPU of the model, a changed task). */
  onNote?: (s: string) => void;
  /** Where it measures, once the GPU is chosen. */
  onStart?: (s: { sessionId: string; gpu: GpuInfo; variants: number }) => void;
  onVariant?: (v: VariantRecord, i: number, n: number) => void;
  onResult?: (v: VariantRecord, r: EvalResult) => void;
  /** Before and after each duel of the best against a variant tied with it (engine/session/confirm.ts). */
  onTieDuel?: (best: VariantRecord, tied: VariantRecord, i: number, n: number) => void;
  onTieDuelDone?: (best: VariantRecord, tied: VariantRecord, failure: string | null) => void;
  /** Tests: the evaluator to measure with instead of the precise one makeEvaluator gives (with a duel, ties are duelled). */
  evaluatorFor?: (task: Task, gpu: GpuInfo) => Promise<Pick<Evaluator, 'evaluate' | 'close'> & Partial<Pick<Evaluator, 'duel'>>>;
}

/** The GPU a confirmation measures on: the session's own (by UUID), else one of its model; a CoreError says why there is none. */
async function confirmGpu(meta: { id: string; gpu: { name: string; uuid?: string } }, c: ConfirmChoice): Promise<GpuInfo> {
  const env = c.env ?? process.env;
  if (meta.gpu.uuid) {
    try {
      const g = await pickGpu({ uuid: meta.gpu.uuid, name: meta.gpu.name, ...(c.gpu !== undefined ? { index: c.gpu } : {}) }, { env });
      if (g) return g;
    } catch {
      // Not here (or not that index): another GPU of the model below.
    }
  }
  const g = await pickGpu({ ...(c.gpu !== undefined ? { index: c.gpu } : {}) }, { env });
  if (!g) throw new CoreError('failed', `no usable NVIDIA GPU here: session ${meta.id} was measured on ${meta.gpu.name}, and its figures can be confirmed only on a GPU of that model`);
  if (normaliseGpuName(g.name) !== normaliseGpuName(meta.gpu.name)) {
    throw new CoreError('failed', `GPU ${g.index} is ${g.name}, and session ${meta.id} was measured on ${meta.gpu.name}: a confirmation measures on the session's GPU model (times of two models are not comparable)${c.gpu === undefined ? '; choose one with --gpu' : ''}`);
  }
  if (meta.gpu.uuid && g.uuid !== meta.gpu.uuid) c.onNote?.(`the session's GPU (${meta.gpu.uuid}) is not usable here: confirming on GPU ${g.index} (${g.name}, ${g.uuid ?? 'no UUID'}), the same model`);
  return g;
}

/** Measures the session's baseline and `top` fastest variants with the precise timing; returns the session's confirmation report. */
export async function confirmStoredSession(c: ConfirmChoice): Promise<{ sessionId: string; report: ConfirmReport; gpu: GpuInfo }> {
  const env = c.env ?? process.env;
  const top = c.top ?? 3;
  if (!Number.isInteger(top) || top < 1 || top > 50) throw new CoreError('failed', `top must be a whole number from 1 to 50 (got ${c.top})`);
  let session;
  try {
    session = c.session.includes('/') ? openSession(c.session) : openSession(sessionsRoot(env), c.session);
  } catch (e) {
    throw new CoreError('not_found', errMsg(e));
  }
  try {
    const meta = session.meta;
    if (runState(session.dir) === 'running') throw new CoreError('failed', `session ${meta.id} is being run now: confirm it once its run has ended (its measurements and a confirmation's would share the GPU)`);
    const recording = recordingOf(session);
    if (recording) throw new CoreError('failed', `session ${meta.id} is a REPLAY of ${recording}: its times come from that recording, and no GPU here measured them; confirm a session measured on a GPU`);
    if (pythonDeviceOf(meta.settings)) throw new CoreError('failed', `session ${meta.id} searched Python candidates: a confirmation re-times CUDA variants with the judge's precise timing (Python candidates are timed by the Python runner)`);
    let backend;
    try {
      backend = runSettingsOf(meta).backend;
    } catch (e) {
      throw new CoreError('failed', errMsg(e));
    }
    if (!meta.gpu || (backend?.kind === 'gpu' && backend.compileOnly)) throw new CoreError('failed', `session ${meta.id} was compile-only (no GPU measured it): there is no time to confirm`);
    // Built for the architecture the search built for (--arch), else the GPU's.
    const arch = (backend?.kind === 'gpu' && backend.arch) || meta.gpu.arch || undefined;
    let task: Task;
    try {
      task = resolveTaskOrSpace(meta.task.dir);
    } catch (e) {
      throw new CoreError('failed', `session ${meta.id}'s task folder ${meta.task.dir} does not load: ${errMsg(e)}`);
    }
    if (task.hash !== meta.task.manifestHash) c.onNote?.(`task ${task.manifest.name} changed since session ${meta.id} started: its variants are checked against the task as it is now`);
    const gpu = await confirmGpu({ id: meta.id, gpu: meta.gpu }, c);
    const ev = c.evaluatorFor ? await c.evaluatorFor(task, gpu) : await makeEvaluator(task, { gpu, arch, precise: true, env });
    const unmark = markRunning(session.dir);
    try {
      const todo = confirmCandidates(session, top);
      c.onStart?.({ sessionId: meta.id, gpu, variants: todo.variants.length + (todo.baseline ? 1 : 0) });
      const report = await confirmSession(session, ev, { top, signal: c.signal, onVariant: c.onVariant, onResult: c.onResult, onTieDuel: c.onTieDuel, onTieDuelDone: c.onTieDuelDone });
      return { sessionId: meta.id, report, gpu };
    } catch (e) {
      throw e instanceof CoreError ? e : new CoreError('failed', errMsg(e));
    } finally {
      unmark();
      ev.close();
    }
  } finally {
    session.close();
  }
}
