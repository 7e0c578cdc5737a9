// The runs the workbench started, while they run: each one's state (phase, progress, ETA, best),
// pause / resume / stop, and what it says as it goes (the contract's run.state, run.variant,
// run.result, log and llm.* events, worded here once). The run itself is the one run lifecycle of
// every front door (startRun, main/core/run/worker.ts); this adds what a UI watching it needs.
import path from 'node:path';
import type { EvalResult, VariantRecord } from '../../engine/base/types.js';
import type { LoopEvent } from '../../engine/search/loop.js';
import { isLlmStrategyName, isRunStrategyName, RUN_STRATEGY_NAMES } from '../../engine/search/strategies.js';
import type { LlmSettings } from '../../engine/llm/settings.js';
import type { Task } from '../../engine/task/manifest.js';
import { SIMULATED_GPU_LATENCY_MS, type RunState } from '../../contract/api.js';
import { CoreError, errMsg } from '../errors.js';
import type { EventHub } from '../events.js';
import { pickGpu, pickGpus } from '../gpus.js';
import { variantRow } from '../views.js';
import type { RunOptions } from './prepare.js';
import { startRun, type OptimisationHandle, type RunThread } from './worker.js';
import { doneLine, duelLine, resultLine } from './log.js';

export interface StartRequest {
  task: Task;
  strategy: string;
  budget: number;
  /** null: compile-only (or a replay, or a pool). */
  gpu: number | null;
  /** One run on a pool of GPUs of one model (gpu null). */
  gpus?: 'all' | number[];
  /** With a recording: that many SIMULATED GPUs answer from it (REPLAY). */
  simulateGpus?: number;
  seed?: number;
  /** A recorded space to replay, one of `recordings`. */
  recording?: string;
  /** The recorded spaces of this task. */
  recordings: string[];
  /** For the llm and mixed strategies. */
  llm?: { settings: LlmSettings; apiKey: string | undefined };
  /** false: do not time a PyTorch task's eager / torch.compile baselines (default: timed once, before the search). */
  pytorchBaselines?: boolean;
}

interface ActiveRun {
  state: RunState;
  handle: OptimisationHandle;
  started: number;
  done: Promise<void>;
}

export class Runs {
  private readonly runs = new Map<string, ActiveRun>();

  constructor(
    private readonly hub: EventHub,
    private readonly o: { env: NodeJS.ProcessEnv; sessionsRoot: string; thread: RunThread; onEnd?: (sessionId: string) => void },
  ) {}

  list(): RunState[] {
    return [...this.runs.values()].map((r) => ({ ...r.state }));
  }

  has(sessionId: string): boolean {
    return this.runs.has(sessionId);
  }

  /** A copy of a live run's state, or null. */
  state(sessionId: string): RunState | null {
    const r = this.runs.get(sessionId);
    return r ? { ...r.state } : null;
  }

  /** Starts a run; resolves once its session exists (or rejects with why it could not start). */
  async start(p: StartRequest): Promise<RunState> {
    const { task } = p;
    const seed = p.seed ?? 1;
    if (!isRunStrategyName(p.strategy)) throw new CoreError('not_found', `no strategy "${p.strategy}" (have: ${RUN_STRATEGY_NAMES.join(', ')})`);
    let recording: string | undefined;
    if (p.recording !== undefined) {
      const want = path.resolve(p.recording);
      if (!p.recordings.includes(want)) throw new CoreError('not_found', `no recorded space ${p.recording} for task ${task.manifest.name} (have: ${p.recordings.join(', ') || 'none'})`);
      recording = want;
    } else if (p.simulateGpus !== undefined) {
      throw new CoreError('failed', 'simulated GPUs answer from a recorded space: choose a recording to replay');
    } else if (p.gpus !== undefined) {
      if (p.gpu !== null) throw new CoreError('failed', `give a GPU (gpu ${p.gpu}) or a pool (gpus), not both`);
      await pickGpus(p.gpus, { env: this.o.env });
    } else if (p.gpu !== null) {
      await pickGpu({ index: p.gpu }, { env: this.o.env });
    }
    const llm = isLlmStrategyName(p.strategy);
    if (llm && recording) throw new CoreError('failed', `the ${p.strategy} policy writes new code, which a recorded space cannot answer: choose a GPU or "no GPU (compile-only)"`);
    // The same preparation as the CLI's, in a worker thread: task, backend, session, action space, strategy.
    const opts: RunOptions = {
      task: task.dir, strategy: p.strategy, budget: p.budget, seed, sessionsRoot: this.o.sessionsRoot,
      backend: recording ? { kind: 'replay', recording, seed, ...(p.simulateGpus ? { simulateGpus: { count: p.simulateGpus, latencyMs: [SIMULATED_GPU_LATENCY_MS] } } : {}) } : p.gpus !== undefined ? { kind: 'gpu', gpus: p.gpus } : p.gpu === null ? { kind: 'gpu', noGpu: true } : { kind: 'gpu', gpu: p.gpu },
      ...(llm && p.llm ? { llm: p.llm.settings, apiKey: p.llm.apiKey } : {}),
      ...(p.pytorchBaselines === false ? { pytorchBaselines: false } : {}),
    };
    const handle = startRun(opts, this.o.thread);
    const it = handle.events[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.type !== 'started') {
      handle.stop();
      const why = !first.done && first.value.type === 'error' ? first.value.message : 'the run ended before it started';
      throw new CoreError('failed', why);
    }
    const started = first.value;
    const sid = started.sessionId;
    for (const w of started.warnings) this.hub.log(sid, 'warn', w);
    const run: ActiveRun = {
      state: {
        sessionId: sid, task: task.manifest.name, strategy: p.strategy, budget: p.budget, evaluated: 0, phase: 'running', startedAt: new Date().toISOString(),
        etaSeconds: null, bestSpeedup: null, bestMs: null, replay: !!recording, compileOnly: !recording && /compile-only/.test(started.label),
      },
      handle, started: Date.now(), done: Promise.resolve(),
    };
    this.runs.set(sid, run);
    const onEvent = this.eventHandler(sid, run);
    this.hub.log(sid, 'info', `session ${sid}: ${task.manifest.name}, ${p.strategy}, budget ${p.budget}, ${started.label}`);
    this.publish(run);
    run.done = (async () => {
      let failed: string | null = null;
      for (;;) {
        const n = await it.next();
        if (n.done) break;
        const m = n.value;
        if (m.type === 'event') onEvent(m.event);
        else if (m.type === 'llm') {
          this.hub.emit({ ...m.event, sessionId: sid });
          if (m.event.type === 'llm.prompt') this.hub.log(sid, 'info', `asking the model (prompt ${m.event.promptId}, ${m.event.chars} characters) for ${m.event.answerIds.length} answer(s)`);
        } else if (m.type === 'pytorch-baselines') this.hub.log(sid, m.baselines.eager ? 'info' : 'warn', m.line);
        else if (m.type === 'error') failed = m.message;
        // paused / resumed: the phase was set when the command was sent.
      }
      const stopping = run.state.phase === 'stopping';
      if (failed !== null) {
        run.state.phase = 'failed';
        run.state.error = failed.split('\n')[0];
        this.hub.log(sid, 'error', `run failed: ${run.state.error}`);
      } else run.state.phase = stopping ? 'stopped' : 'finished';
    })()
      .catch((e: unknown) => {
        run.state.phase = 'failed';
        run.state.error = errMsg(e);
        this.hub.log(sid, 'error', `run failed: ${errMsg(e)}`);
      })
      .finally(() => {
        this.publish(run);
        this.runs.delete(sid);
        this.o.onEnd?.(sid);
      });
    return { ...run.state };
  }

  pause(sessionId: string): RunState {
    const r = this.active(sessionId);
    if (r.state.phase === 'running') {
      r.handle.pause();
      r.state.phase = 'paused';
      this.hub.log(r.state.sessionId, 'info', 'paused: the variant being measured finishes, then the run waits');
    }
    return this.publish(r);
  }

  resume(sessionId: string): RunState {
    const r = this.active(sessionId);
    if (r.state.phase === 'paused') {
      r.handle.resume();
      r.state.phase = 'running';
      this.hub.log(r.state.sessionId, 'info', 'resumed');
    }
    return this.publish(r);
  }

  stop(sessionId: string): RunState {
    const r = this.active(sessionId);
    r.state.phase = 'stopping';
    r.handle.stop();
    this.hub.log(r.state.sessionId, 'info', 'stopping: everything measured so far is kept in the session');
    return this.publish(r);
  }

  /** Stops every run (shutdown); resolves when their journals are closed. */
  async stopAll(): Promise<void> {
    const all = [...this.runs.values()];
    for (const r of all) {
      r.state.phase = 'stopping';
      r.handle.stop();
    }
    await Promise.all(all.map((r) => r.done));
  }

  private active(sessionId: string): ActiveRun {
    const r = this.runs.get(sessionId);
    if (!r) throw new CoreError('not_found', `session ${sessionId} has no run in progress`);
    return r;
  }

  private publish(run: ActiveRun): RunState {
    const s = run.state;
    const elapsed = (Date.now() - run.started) / 1000;
    s.etaSeconds = s.evaluated > 0 && s.phase === 'running' ? Math.max(0, (elapsed / s.evaluated) * (s.budget - s.evaluated)) : s.phase === 'finished' ? 0 : s.etaSeconds;
    const copy = { ...s };
    this.hub.emit({ type: 'run.state', state: copy });
    return copy;
  }

  /** Turns the loop's events into rows and log lines (the worker owns the journal; rows are built from its events). */
  private eventHandler(sid: string, run: ActiveRun): (e: LoopEvent) => void {
    const variants = new Map<string, VariantRecord>();
    const results = new Map<string, EvalResult>();
    let baselineMs: number | null = null;
    let gpusPublished = 0;
    const rowOf = (v: VariantRecord): ReturnType<typeof variantRow> => variantRow(v, results.get(v.id), baselineMs, null);
    return (e) => {
      if (e.type === 'variant') {
        variants.set(e.variant.id, e.variant);
        this.hub.emit({ type: 'run.variant', sessionId: sid, row: rowOf(e.variant) });
      } else if (e.type === 'stage') {
        this.hub.log(sid, 'info', `${e.variantId}: ${e.stage === 'build' ? 'building' : e.stage === 'check' ? 'checking against the reference' : 'timing'}`);
      } else if (e.type === 'result') {
        const v = variants.get(e.variantId);
        if (!v) return;
        results.set(v.id, e.result);
        if (v.origin === 'baseline' && baselineMs === null) baselineMs = variantRow(v, e.result, null, null).medianMs;
        const row = rowOf(v);
        run.state.evaluated = e.index;
        run.state.bestSpeedup = e.bestSpeedup;
        run.state.bestMs = e.bestMs;
        this.hub.log(sid, e.result.failure ? 'warn' : 'info', resultLine(e.index, e.budget, e.variantId, e.result, row.medianMs, row.speedup));
        this.hub.emit({ type: 'run.result', sessionId: sid, row, index: e.index, budget: e.budget, bestSpeedup: e.bestSpeedup, bestMs: e.bestMs });
        this.publish(run);
      } else if (e.type === 'duel') {
        this.hub.log(sid, 'info', duelLine(e.a, e.b, e.result));
      } else if (e.type === 'model') {
        if (e.stats.heldOutAccuracy !== null) this.hub.log(sid, 'info', `preference model v${e.stats.version}: held-out accuracy ${(e.stats.heldOutAccuracy * 100).toFixed(0)}% on ${e.stats.heldOutPairs} pairs`);
      } else if (e.type === 'gpus') {
        // Per-GPU activity of a pool run: published with the run's state, at most twice a second (and at once when a GPU left the pool).
        run.state.gpus = e.gpus;
        if (e.message) this.hub.log(sid, 'warn', e.message);
        if (e.message || Date.now() - gpusPublished > 500) {
          gpusPublished = Date.now();
          this.publish(run);
        }
      } else if (e.type === 'done') {
        if (e.gpus) run.state.gpus = e.gpus;
        this.hub.log(sid, 'info', doneLine(e.evaluated, e.bestId, e.bestSpeedup));
      }
    };
  }
}
