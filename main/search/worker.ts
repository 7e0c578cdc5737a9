// The optimisation loop in a worker thread, so a UI stays responsive: the worker prepares the run
// (task, backend, session, strategy), runs `runLoop` and posts every loop event to the parent. The
// parent side, `startOptimisation`, gives an async-iterable event stream and pause / resume / stop.
//
// This one module is both sides: imported in the main thread it only exports; started as a worker
// (workerData.kind === WORKER_KIND) it runs the loop.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { runLoop, type LoopEvent } from './loop.js';
import { prepareRun, type RunOptions } from './run.js';

const WORKER_KIND = 'kernelduel-optimise';

export type OptimisationMessage =
  | { type: 'started'; sessionId: string; sessionDir: string; label: string; warnings: string[] }
  | { type: 'event'; event: LoopEvent }
  | { type: 'paused' }
  | { type: 'resumed' }
  | { type: 'finished'; evaluated: number }
  | { type: 'error'; message: string };

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
}

export function startOptimisation(opts: RunOptions, so: StartOptions = {}): OptimisationHandle {
  const file = fileURLToPath(import.meta.url);
  const workerData = { kind: WORKER_KIND, opts };
  let worker: Worker;
  if (file.endsWith('.ts') && !so.execArgv) {
    // Running from TypeScript sources (tests, tsx): register tsx's loader inside the worker first.
    const api = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
    const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); }).catch((e) => { throw e; });`;
    worker = new Worker(boot, { eval: true, workerData });
  } else worker = new Worker(file, { workerData, execArgv: so.execArgv ?? [] });
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
  const push = (m: OptimisationMessage): void => {
    buffer.push(m);
    wake?.();
  };
  const end = (): void => {
    ended = true;
    wake?.();
  };
  worker.on('message', (m: OptimisationMessage) => {
    push(m);
    if (m.type === 'finished') resolveDone({ evaluated: m.evaluated });
    if (m.type === 'error') rejectDone(new Error(m.message));
  });
  worker.on('error', (e) => {
    push({ type: 'error', message: e.message });
    rejectDone(e);
    end();
  });
  worker.on('exit', (code) => {
    if (code !== 0) rejectDone(new Error(`the optimisation worker exited with code ${code}`));
    end();
  });
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
  const send = (c: Command): void => {
    if (!ended) worker.postMessage(c);
  };
  return { events, done, pause: () => send({ type: 'pause' }), resume: () => send({ type: 'resume' }), stop: () => send({ type: 'stop' }) };
}

async function workerMain(opts: RunOptions): Promise<void> {
  const port = parentPort!;
  const post = (m: OptimisationMessage): void => port.postMessage(m);
  const ac = new AbortController();
  let paused: { promise: Promise<void>; release: () => void } | null = null;
  port.on('message', (c: Command) => {
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
    run = await prepareRun(opts);
  } catch (e) {
    post({ type: 'error', message: (e as Error).message });
    port.close();
    return;
  }
  post({ type: 'started', sessionId: run.session.id, sessionDir: run.session.dir, label: run.label, warnings: run.warnings });
  try {
    const r = await runLoop({
      session: run.session, evaluator: run.measurer, strategy: run.strategy, budget: opts.budget, signal: ac.signal,
      onEvent: (event) => post({ type: 'event', event }),
      // Yield to the event loop before each measurement, so pause/stop messages are seen even when
      // measurements resolve at once (a replay).
      gate: async () => {
        await new Promise<void>((r) => setImmediate(r));
        if (paused) await paused.promise;
      },
    });
    post({ type: 'finished', evaluated: r.evaluated });
  } catch (e) {
    post({ type: 'error', message: (e as Error).stack ?? String(e) });
  } finally {
    run.session.close();
    port.close();
  }
}

if (!isMainThread && (workerData as { kind?: string } | null)?.kind === WORKER_KIND) {
  void workerMain((workerData as { opts: RunOptions }).opts);
}
