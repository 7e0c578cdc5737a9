// A client of the PyTorch reference server (resources/python/kd_reference.py serve): one long-lived
// Python process per problem, one JSON command per line on its stdin, one JSON answer per line on
// its stdout. Commands are answered in order, one at a time; a command that runs past its time
// limit kills the process (its whole group) and every later command fails as `crashed`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { z } from 'zod';
import { referenceScript } from '../platform/toolchain/python.js';
import { ErrorSchema, LayoutSchema, ReadySchema, REFERENCE_PROTOCOL, RunAnswerSchema, FAILURE_KINDS, type Layout, type Ready, type ReferenceFailureKind, type RunAnswer } from './protocol.js';

export interface ReferenceServerOptions {
  python: string;
  problem: string;
  /** cpu (default), cuda, cuda:N */
  device?: string;
  weightsSeed?: number;
  /** Module-level constants of the problem to override (a task's size). */
  overrides?: Record<string, number>;
  modelClass?: string;
  /** torch CPU threads (default: torch's own). */
  threads?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Time to load the problem file and answer `ready` (default 60 s). */
  startTimeoutMs?: number;
  /** RLIMIT_DATA of the Python process, through prlimit(1) where present (CPU only: CUDA reserves more). */
  dataBytes?: number;
}

export class ReferenceFailure extends Error {
  constructor(
    public readonly kind: ReferenceFailureKind,
    message: string,
    public readonly traceback?: string,
  ) {
    super(message);
    this.name = 'ReferenceFailure';
  }
}

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

function asKind(k: string): ReferenceFailureKind {
  return (FAILURE_KINDS as readonly string[]).includes(k) ? (k as ReferenceFailureKind) : 'problem';
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: ReferenceFailure) => void;
  timer: NodeJS.Timeout;
}

export class ReferenceServer {
  private lines: string[] = [];
  private waiting: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private stderr = '';
  private dead: ReferenceFailure | null = null;
  private nextId = 1;
  ready!: Ready;

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (l) => this.onLine(l));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-8000);
    });
    child.on('close', (code, signal) => {
      const how = signal ? `was killed by ${signal}${signal === 'SIGKILL' ? ' (out of memory, or its time limit)' : ''}` : `exited with code ${code}`;
      this.fail(new ReferenceFailure('crashed', `the PyTorch reference process ${how}${this.stderrTail() ? `: ${this.stderrTail()}` : ''}`));
    });
    child.on('error', (e) => this.fail(new ReferenceFailure('crashed', `the PyTorch reference process could not be started: ${e.message}`)));
  }

  /** Starts the server and waits for its `ready` line. Throws ReferenceFailure (the problem file
   * failed to load, torch is missing, ...). */
  static async start(o: ReferenceServerOptions): Promise<ReferenceServer> {
    const args = [referenceScript(), 'serve', o.problem, '--device', o.device ?? 'cpu'];
    if (o.weightsSeed !== undefined) args.push('--weights-seed', String(o.weightsSeed));
    for (const [k, v] of Object.entries(o.overrides ?? {})) args.push('--set', `${k}=${v}`);
    if (o.modelClass) args.push('--model-class', o.modelClass);
    if (o.threads) args.push('--threads', String(o.threads));
    let file = o.python;
    let argv = args;
    if (PRLIMIT && o.dataBytes) {
      file = PRLIMIT;
      argv = [`--data=${Math.floor(o.dataBytes)}`, '--', o.python, ...args];
    }
    const child = spawn(file, argv, { cwd: o.cwd, env: { ...(o.env ?? process.env), PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const s = new ReferenceServer(child);
    const first = await s.next(o.startTimeoutMs ?? 60_000, 'start');
    const ready = ReadySchema.safeParse(first);
    if (!ready.success) {
      s.kill();
      const err = ErrorSchema.safeParse((first as { error?: unknown } | null)?.error);
      if (err.success) throw new ReferenceFailure(asKind(err.data.kind), err.data.message, err.data.traceback);
      throw new ReferenceFailure('protocol', `the PyTorch reference did not start as expected: ${JSON.stringify(first).slice(0, 300)}`);
    }
    if (ready.data.protocol !== REFERENCE_PROTOCOL) {
      s.kill();
      throw new ReferenceFailure('protocol', `the reference script speaks ${ready.data.protocol}, this KernelDuel ${REFERENCE_PROTOCOL}`);
    }
    s.ready = ready.data;
    return s;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.dead === null;
  }

  stderrTail(n = 600): string {
    return this.stderr.trim().split('\n').slice(-6).join(' | ').slice(-n);
  }

  /** The layout (shapes and dtypes of every argument) for a seed. */
  layout(req: { via?: 'run' | 'meta' | 'scaled'; seed?: number; determinism?: boolean; constant?: string }, timeoutMs: number): Promise<Layout> {
    return this.command({ cmd: 'layout', ...req }, timeoutMs, LayoutSchema);
  }

  /** Computes the reference for a seed; writes `<out>/<source>.<name>.bin` for the groups in `write`. */
  run(req: { seed: number; out?: string; write?: Array<'inputs' | 'weights' | 'outputs'>; hash?: boolean }, timeoutMs: number): Promise<RunAnswer> {
    return this.command({ cmd: 'run', ...req }, timeoutMs, RunAnswerSchema);
  }

  /** Asks it to quit; kills its process group if it has not within graceMs. */
  async close(graceMs = 2000): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((r) => this.child.once('close', () => r()));
    try {
      this.child.stdin!.end(JSON.stringify({ cmd: 'quit' }) + '\n');
    } catch {
      /* already closed */
    }
    const t = setTimeout(() => this.kill(), graceMs);
    await exited;
    clearTimeout(t);
  }

  kill(): void {
    try {
      if (this.child.pid) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }

  private command<S extends z.ZodType>(body: Record<string, unknown>, timeoutMs: number, schema: S): Promise<z.infer<S>> {
    const run = async (): Promise<z.infer<S>> => {
      if (this.dead) throw this.dead;
      const id = this.nextId++;
      this.child.stdin!.write(JSON.stringify({ id, ...body }) + '\n');
      const ans = await this.next(timeoutMs, String(body.cmd));
      const rec = ans as { id?: unknown; ok?: unknown; error?: unknown };
      if (rec?.id !== id) throw new ReferenceFailure('protocol', `answer ${JSON.stringify(rec?.id)} came for command ${id}`);
      if (rec.ok !== true) {
        const err = ErrorSchema.safeParse(rec.error);
        if (err.success) throw new ReferenceFailure(asKind(err.data.kind), err.data.message, err.data.traceback);
        throw new ReferenceFailure('protocol', `unexpected answer: ${JSON.stringify(ans).slice(0, 300)}`);
      }
      const parsed = schema.safeParse(ans);
      if (!parsed.success) throw new ReferenceFailure('protocol', `the ${String(body.cmd)} answer does not have the expected shape: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return parsed.data;
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private next(timeoutMs: number, what: string): Promise<unknown> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(parseLine(line));
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        const e = new ReferenceFailure('timeout', `the PyTorch reference did not answer ${what} within ${(timeoutMs / 1000).toFixed(1)} s and was killed`);
        this.dead = e;
        this.kill();
        reject(e);
      }, timeoutMs);
      this.waiting = { resolve, reject, timer };
    });
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      clearTimeout(w.timer);
      w.resolve(parseLine(line));
    } else this.lines.push(line);
  }

  private fail(e: ReferenceFailure): void {
    if (!this.dead) this.dead = e;
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      clearTimeout(w.timer);
      w.reject(this.dead);
    }
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return { ok: false, error: { kind: 'protocol', message: `not a JSON line: ${line.slice(0, 200)}` } };
  }
}
