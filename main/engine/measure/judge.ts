// The engine's side of the judge (resources/harness/kd_judge.h): one long-lived harness process
// per evaluator that checks, times and duels variants and never runs variant code. This class
// starts it (lazily), sends one command at a time, reads its JSON answers, enforces a deadline of
// its own as a backstop (the judge enforces the per-stage ones on its executors), and starts a new
// judge after one died or was killed. Callers serialise GPU work through the evaluator's queue.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { tail } from '../platform/proc/run.js';

export interface JudgeAnswer<B> {
  id: string;
  status: string;
  stage?: 'check' | 'time';
  error?: string;
  body: B;
}

export interface JudgeOptions {
  harness: string;
  planPath: string;
  referenceLib: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Idle time after which the judge process is stopped (its GPU memory freed); default 5 min. */
  idleMs?: number;
}

export interface DeviceFacts {
  name: string;
  cc: string;
  sms: number;
  l2Bytes: number;
  globalMemBytes: number;
  driver: number;
  runtime: number;
}

export class JudgeError extends Error {
  constructor(
    message: string,
    readonly kind: 'runtime' | 'timeout',
  ) {
    super(message);
    this.name = 'JudgeError';
  }
}

interface Pending {
  id: string;
  resolve: (v: JudgeAnswer<unknown>) => void;
  reject: (e: Error) => void;
  onEvent?: (stage: string) => void;
}

export class Judge {
  private proc: ChildProcess | null = null;
  private ready: Promise<DeviceFacts> | null = null;
  private pending: Pending | null = null;
  private stderr = '';
  private seq = 0;
  private idle: NodeJS.Timeout | null = null;
  constructor(private readonly o: JudgeOptions) {}

  /** Starts the judge if it is not running; its device facts. */
  start(): Promise<DeviceFacts> {
    this.ready ??= new Promise<DeviceFacts>((resolve, reject) => {
      const p = spawn(this.o.harness, ['judge', this.o.planPath, this.o.referenceLib], { cwd: this.o.cwd, env: this.o.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      this.proc = p;
      this.stderr = '';
      let hello = false;
      p.stderr!.on('data', (d: Buffer) => {
        this.stderr = tail(this.stderr + d.toString('utf8'), 8000);
      });
      p.stdin!.on('error', () => undefined);
      const lines = createInterface({ input: p.stdout! });
      lines.on('line', (line) => {
        let msg: { id?: string; event?: string; kdresult?: number; status?: string; error?: string; body?: unknown; stage?: 'check' | 'time' };
        try {
          msg = JSON.parse(line) as typeof msg;
        } catch {
          return;
        }
        if (!hello && msg.id === 'hello') {
          hello = true;
          this.hold(false);
          if (msg.status === 'ok') resolve(msg.body as DeviceFacts);
          else reject(new JudgeError(`the judge could not start: ${msg.error ?? msg.status}`, 'runtime'));
          return;
        }
        const cur = this.pending;
        if (this.proc !== p || !cur || msg.id !== cur.id) return;
        if (msg.event) {
          cur.onEvent?.(msg.event);
          return;
        }
        if (msg.kdresult === 1) {
          this.pending = null;
          cur.resolve({ id: cur.id, status: msg.status ?? 'runtime', stage: msg.stage, error: msg.error, body: msg.body ?? {} });
        }
      });
      p.on('error', (e) => {
        if (!hello) reject(new JudgeError(`the judge could not start: ${e.message}`, 'runtime'));
        this.died(p, `the judge could not start: ${e.message}`);
      });
      p.on('exit', (code, signal) => {
        const why = `the judge process ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${this.stderr ? `:\n${tail(this.stderr, 2000)}` : ''}`;
        if (!hello) reject(new JudgeError(why, 'runtime'));
        this.died(p, why);
      });
    });
    this.ready.catch(() => {
      this.ready = null;
    });
    return this.ready;
  }

  /** Forgets a judge process that ended (a later one may already have replaced it). */
  private died(p: ChildProcess, why: string): void {
    if (this.proc !== p) return;
    this.proc = null;
    this.ready = null;
    const cur = this.pending;
    this.pending = null;
    cur?.reject(new JudgeError(why, 'runtime'));
  }

  /**
   * Whether the judge keeps this process alive: only while a command is in flight (an idle judge
   * must not stop a CLI from exiting; it dies with its parent: PR_SET_PDEATHSIG).
   */
  private hold(on: boolean): void {
    const p = this.proc;
    if (!p) return;
    for (const s of [p.stdin, p.stdout, p.stderr] as Array<Socket | null>) {
      if (on) s?.ref?.();
      else s?.unref?.();
    }
    if (on) p.ref();
    else p.unref();
  }

  /** One command (tab-separated fields, as kd_judge.h reads them); its answer. */
  async call<B>(fields: string[], deadlineMs: number, onEvent?: (stage: string) => void): Promise<JudgeAnswer<B>> {
    for (const f of fields) if (/[\t\n]/.test(f)) throw new JudgeError(`a path holds a tab or a newline: ${JSON.stringify(f)}`, 'runtime');
    await this.start();
    if (this.idle) clearTimeout(this.idle);
    this.hold(true);
    const id = `c${++this.seq}`;
    const p = this.proc!;
    const answer = new Promise<JudgeAnswer<B>>((resolve, reject) => {
      this.pending = { id, resolve: resolve as (v: JudgeAnswer<unknown>) => void, reject, onEvent };
    });
    p.stdin!.write([fields[0], id, ...fields.slice(1)].join('\t') + '\n');
    let timer: NodeJS.Timeout | undefined;
    const backstop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill();
        reject(new JudgeError(`no answer from the judge within ${Math.round(deadlineMs / 1000)} s (it was stopped)`, 'timeout'));
      }, deadlineMs);
    });
    try {
      return await Promise.race([answer, backstop]);
    } finally {
      clearTimeout(timer);
      this.hold(false);
      this.idle = setTimeout(() => this.close(), this.o.idleMs ?? 300_000);
      this.idle.unref();
    }
  }

  /** A line to the judge while a command is in flight (the "go" or "stop" an eval's timing waits for). */
  send(line: string): void {
    this.proc?.stdin?.write(line + '\n');
  }

  /** Stops the judge (and its executors: they are in its process group). */
  kill(): void {
    const p = this.proc;
    if (!p || p.pid === undefined) return;
    this.proc = null;
    this.ready = null;
    this.pending = null;
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }

  /** Asks the judge to quit (frees its GPU memory); a later call starts a new one. */
  close(): void {
    if (this.idle) clearTimeout(this.idle);
    const p = this.proc;
    if (!p) return;
    this.proc = null;
    this.ready = null;
    p.stdin!.end('quit\n');
    setTimeout(() => {
      if (p.exitCode === null && p.signalCode === null && p.pid !== undefined) {
        try {
          process.kill(-p.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }, 2000).unref();
  }

  get running(): boolean {
    return this.proc !== null;
  }
}
