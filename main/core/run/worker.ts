// The run lifecycle every front door uses (`startRun`): prepare the run (task, backend, session,
// strategy), run `runLoop`, journal the preference model's notes, post every loop event, obey
// pause / resume / stop, close the session. The app and the web server run it in a worker thread,
// so a UI stays responsive; the CLI runs it in its own thread. Either way the caller gets the same
// async-iterable message stream and the same commands.
//
// This one module is both sides: imported in the main thread it only exports; started as a worker
// (workerData.kind === WORKER_KIND) it runs the loop.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { runLoop, type LoopEvent } from '../../engine/search/loop.js';
import { runPoolLoop } from '../../engine/search/pool.js';
import { prepareRun, type LlmStreamEvent, type RunOptions } from './prepare.js';
import { modelNote } from '../views.js';
import { describeBaselines, measurePytorchBaselines, skippedBaselines } from '../pytorch-baselines.js';
import { workRoot } from '../../engine/base/paths.js';
import type { PytorchBaselines } from '../../engine/base/types.js';

const WORKER_KIND = 'kernelduel-optimise';

export type OptimisationMessage =
  | { type: 'started'; sessionId: string; sessionDir: string; label: string; warnings: string[]; compileOnly: boolean; arch: string | null }
  | { type: 'event'; event: LoopEvent }
  | { type: 'llm'; event: LlmStreamEvent }
  /** A PyTorch-reference task's baselines, measured (or not, with why) before the search started. */
  | { type: 'pytorch-baselines'; baselines: PytorchBaselines; line: string }
  | { type: 'paused' }
  | { type: 'resumed' }
  | { type: 'finished'; evaluated: number }
  /** `message` is the error's own (one line for the user); `name` its class; `stack` when the loop failed. */
  | { type: 'error'; message: string; name: string; stack?: string };

type Command = { type: 'pause' } | { type: 'resume' } | { type: 'stop' };

export interface OptimisationHandle {
  /** Every message, in order, ending after `finished` or `error`. */
  events: AsyncIterable<OptimisationMessage>;
  /** Resolves when the worker finished (evaluated count) or rejects with its error. */
  done: Promise<{ evaluated: number }>;
  /** Measurements stop after the current one until resume(). */
  pause(): void;
  resume(): void;
  /** Stops after the current measurement; the session keeps everything measured. */
  stop(): void;
}

export interface StartOptions {
  /** Node flags for the worker. From TypeScript sources the worker registers tsx's loader itself (unless execArgv is given). */
  execArgv?: string[];
  /** The worker's file (default: this module's own file, which must not be inlined into another bundle entry). */
  workerFile?: string;
}

/** This module's file, where a worker thread can start it: null when it was inlined into the program's own entry file (a bundle without a worker entry). */
export function workerModuleFile(): string | null {
  const file = fileURLToPath(import.meta.url);
  const entry = process.argv[1] ? process.argv[1].replace(/\\/g, '/') : '';
  if (entry && (file.replace(/\\/g, '/') === entry || file.replace(/\\/g, '/') === `${entry}.js`)) return null;
  return file;
}

/**
 * The buffer between a run (worker thread or not) and whoever reads it: messages in order as an
 * async iterable; `done` settles with the run's `finished` or `error` message (or `fail`).
 */
function runChannel() {
  const buffer: OptimisationMessage[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  let resolveDone!: (v: { evaluated: number }) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<{ evaluated: number }>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => undefined);
  const events: AsyncIterable<OptimisationMessage> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (buffer.length) {
          yield buffer.shift()!;
          continue;
        }
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
    },
  };
  return {
    events,
    done,
    get ended(): boolean {
      return ended;
    },
    push(m: OptimisationMessage): void {
      buffer.push(m);
      if (m.type === 'finished') resolveDone({ evaluated: m.evaluated });
      if (m.type === 'error') rejectDone(new Error(m.message));
      wake?.();
    },
    fail: (e: Error): void => rejectDone(e),
    end(): void {
      ended = true;
      wake?.();
    },
  };
}

export function startOptimisation(opts: RunOptions, so: StartOptions = {}): OptimisationHandle {
  const file = so.workerFile ?? fileURLToPath(import.meta.url);
  const workerData = { kind: WORKER_KIND, opts };
  let worker: Worker;
  if (file.endsWith('.ts') && !so.execArgv) {
    // Running from TypeScript sources (tests, tsx): register tsx's loader inside the worker first.
    const api = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
    const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(file).href)}); }).catch((e) => { throw e; });`;
    worker = new Worker(boot, { eval: true, workerData });
  } else worker = new Worker(file, { workerData, execArgv: so.execArgv ?? [] });
  const ch = runChannel();
  worker.on('message', (m: OptimisationMessage) => ch.push(m));
  worker.on('error', (e) => {
    ch.push({ type: 'error', message: e.message, name: e.name, stack: e.stack });
    ch.end();
  });
  worker.on('exit', (code) => {
    if (code !== 0) ch.fail(new Error(`the optimisation worker exited with code ${code}`));
    ch.end();
  });
  const send = (c: Command): void => {
    if (!ch.ended) worker.postMessage(c);
  };
  return { events: ch.events, done: ch.done, pause: () => send({ type: 'pause' }), resume: () => send({ type: 'resume' }), stop: () => send({ type: 'stop' }) };
}

function errorOf(e: unknown): { message: string; name: string } {
  return e instanceof Error ? { message: e.message, name: e.name } : { message: String(e), name: 'Error' };
}

/** The run itself, on whichever thread: prepares it, runs the loop, posts every message; obeys commands. */
async function driveRun(opts: RunOptions, post: (m: OptimisationMessage) => void, onCommand: (h: (c: Command) => void) => void): Promise<void> {
  const ac = new AbortController();
  let paused: { promise: Promise<void>; release: () => void } | null = null;
  onCommand((c) => {
    if (c.type === 'pause' && !paused) {
      let release!: () => void;
      const promise = new Promise<void>((r) => (release = r));
      paused = { promise, release };
      post({ type: 'paused' });
    } else if (c.type === 'resume' && paused) {
      paused.release();
      paused = null;
      post({ type: 'resumed' });
    } else if (c.type === 'stop') {
      ac.abort();
      paused?.release();
      paused = null;
    }
  });
  let run;
  try {
    run = await prepareRun(opts, { signal: ac.signal, onLlm: (event) => post({ type: 'llm', event }) });
  } catch (e) {
    post({ type: 'error', ...errorOf(e) });
    return;
  }
  const session = run.session;
  post({ type: 'started', sessionId: session.id, sessionDir: session.dir, label: run.label, warnings: run.warnings, compileOnly: run.measurer.compileOnly, arch: run.arch });
  try {
    // A PyTorch task's eager / torch.compile baselines, once per session, before the search starts
    // (nothing of this run is timing then; on a GPU the measurement holds the GPU's queue).
    const plan = run.pytorchBaselines;
    if (plan && !ac.signal.aborted && !session.events().some((e) => e.type === 'pytorch-baselines')) {
      const baselines = 'skip' in plan
        ? skippedBaselines(run.task, plan)
        : await measurePytorchBaselines(run.task, plan.target, { workRoot: workRoot(), timingArgs: opts.backend.kind === 'python' ? opts.backend.timingArgs : undefined, signal: ac.signal });
      session.append({ type: 'pytorch-baselines', baselines });
      post({ type: 'pytorch-baselines', baselines, line: describeBaselines(baselines) });
    }
    const common = {
      session, strategy: run.strategy, budget: opts.budget, signal: ac.signal,
      ...(opts.backend.kind === 'gpu' && opts.backend.duelSkip ? { duelSkip: opts.backend.duelSkip } : {}),
      ...(run.timeCutoff !== undefined ? { timeCutoff: run.timeCutoff } : {}),
      onEvent: (event: LoopEvent) => {
        // The preference model's accuracy is kept in the journal (as a note) for the plots.
        if (event.type === 'model') session.append({ type: 'note', level: 'info', message: modelNote(event.stats) });
        post({ type: 'event', event });
      },
      // Yield to the event loop before each measurement, so pause/stop messages are seen even when
      // measurements resolve at once (a replay).
      gate: async () => {
        await new Promise<void>((r) => setImmediate(r));
        if (paused) await paused.promise;
      },
    };
    // A pool of GPUs (--gpus, or simulated ones) runs the pool loop: one evaluation queue per GPU.
    const r = run.lanes ? await runPoolLoop({ ...common, lanes: run.lanes, ...(opts.pool ?? {}) }) : await runLoop({ ...common, evaluator: run.measurer });
    post({ type: 'finished', evaluated: r.evaluated });
  } catch (e) {
    try {
      session.append({ type: 'note', level: 'error', message: `run failed: ${(e as Error).message ?? String(e)}` });
    } catch {
      // Nothing more to keep.
    }
    post({ type: 'error', ...errorOf(e), stack: (e as Error)?.stack });
  } finally {
    session.close();
  }
}

async function workerMain(opts: RunOptions): Promise<void> {
  const port = parentPort!;
  try {
    await driveRun(opts, (m) => port.postMessage(m), (h) => port.on('message', h));
  } finally {
    port.close();
  }
}

/** The same protocol without a worker thread (where no worker file exists: an engine inlined into one bundle file). */
export function startOptimisationInProcess(opts: RunOptions): OptimisationHandle {
  const ch = runChannel();
  let handler: ((c: Command) => void) | null = null;
  void driveRun(structuredClone(opts), ch.push, (h) => (handler = h)).finally(ch.end);
  const send = (c: Command): void => void (!ch.ended && handler?.(c));
  return { events: ch.events, done: ch.done, pause: () => send({ type: 'pause' }), resume: () => send({ type: 'resume' }), stop: () => send({ type: 'stop' }) };
}

if (!isMainThread && (workerData as { kind?: string } | null)?.kind === WORKER_KIND) {
  void workerMain((workerData as { opts: RunOptions }).opts);
}

/** Where a run goes: a worker thread (default, when this module's file exists), a given worker file, or this thread. */
export type RunThread = boolean | { file: string };

/**
 * Starts a run (the one run lifecycle of every front door): in a worker thread when `thread` allows
 * it and this module's worker file exists (tsx, the GPU bundle, the Electron build's worker entry),
 * else in this thread.
 */
export function startRun(opts: RunOptions, thread: RunThread = true): OptimisationHandle {
  if (thread === false) return startOptimisationInProcess(opts);
  const file = typeof thread === 'object' ? thread.file : workerModuleFile();
  return file ? startOptimisation(opts, { workerFile: file }) : startOptimisationInProcess(opts);
}
