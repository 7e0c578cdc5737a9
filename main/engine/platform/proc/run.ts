// Child processes with the limits every build and run gets: a wall-clock timeout that kills the
// whole process group, a cap on captured output, optional CPU-time and memory limits (through
// `prlimit` where present) and cancellation through an AbortSignal.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Bytes of stdout+stderr kept (the rest is counted, not stored). */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** RLIMIT_CPU seconds and RLIMIT_AS bytes, applied through prlimit(1) when available. RLIMIT_AS breaks CUDA (it reserves huge address ranges): use `dataBytes` for CUDA processes. */
  cpuSeconds?: number;
  memoryBytes?: number;
  /** RLIMIT_DATA bytes (heap and private writable mappings; CUDA's reservations are not counted). */
  dataBytes?: number;
  /** RLIMIT_NPROC (processes + threads of the user; the kernel does not enforce it for root). */
  nproc?: number;
  /** Kill the process group as soon as the output passes maxOutputBytes (a flood), and say so in the result. */
  killOnOutputCap?: boolean;
  /** Run inside bubblewrap with these arguments (from main/sandbox: bwrapArgs). */
  sandbox?: { bwrap: string; args: string[] };
  /**
   * A gate: the process writes the line `line` on stdout once it is ready and then waits for a line
   * on stdin. `open()` is called then; when it resolves true "go" is written (and stdin closed), when
   * false stdin is closed without it (the process is to end). `timeoutMs` counts from "go"; until the
   * ready line, `readyTimeoutMs` (default timeoutMs); between the two there is no deadline (the
   * caller waits for its turn: `signal` still stops it). `goAtMs` in the result: when "go" was written.
   */
  gate?: { line: string; open: () => Promise<boolean>; readyTimeoutMs?: number };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  outputTruncated: boolean;
  /** The process group was killed because its output passed the cap (killOnOutputCap). */
  outputFlood?: boolean;
  durationMs: number;
  /** spawn itself failed (ENOENT...): `<cmd>: <message>`. */
  spawnError?: string;
  /** Its errno code (ENOENT, EACCES, ...). */
  spawnErrorCode?: string;
  /** With a gate: when "go" was written (epoch ms); absent when the gate never opened. */
  goAtMs?: number;
}

/** A finished process in three cases: it exited (or a signal killed it), it timed out, or it never started. */
export type ProcessOutcome =
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }
  | { kind: 'timeout'; stdout: string; stderr: string }
  | { kind: 'spawn-error'; code: string; message: string };

export function outcomeOf(r: RunResult): ProcessOutcome {
  if (r.spawnError !== undefined) return { kind: 'spawn-error', code: r.spawnErrorCode ?? 'UNKNOWN', message: r.spawnError };
  if (r.timedOut) return { kind: 'timeout', stdout: r.stdout, stderr: r.stderr };
  return { kind: 'exit', code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

export function runProcess(cmd: string, args: string[], opts: RunOptions): Promise<RunResult> {
  const max = opts.maxOutputBytes ?? 1 << 20;
  let file = cmd;
  let argv = args;
  if (opts.sandbox) {
    file = opts.sandbox.bwrap;
    argv = [...opts.sandbox.args, '--', cmd, ...args];
  }
  if (PRLIMIT && (opts.cpuSeconds || opts.memoryBytes || opts.dataBytes || opts.nproc)) {
    const lim: string[] = [];
    if (opts.cpuSeconds) lim.push(`--cpu=${Math.ceil(opts.cpuSeconds)}`);
    if (opts.memoryBytes) lim.push(`--as=${Math.floor(opts.memoryBytes)}`);
    if (opts.dataBytes) lim.push(`--data=${Math.floor(opts.dataBytes)}`);
    if (opts.nproc) lim.push(`--nproc=${Math.floor(opts.nproc)}`);
    argv = [...lim, '--', file, ...argv];
    file = PRLIMIT;
  }
  const started = Date.now();
  return new Promise((resolve) => {
    let out = '';
    let err = '';
    let kept = 0;
    let truncated = false;
    let timedOut = false;
    let cancelled = false;
    let flood = false;
    let settled = false;
    let goAtMs: number | undefined;
    let child: ReturnType<typeof spawn>;
    const gate = opts.gate;
    let readySeen = false;
    try {
      child = spawn(file, argv, { cwd: opts.cwd, env: opts.env ?? process.env, detached: true, stdio: [gate ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      resolve({ code: null, signal: null, stdout: '', stderr: '', timedOut: false, cancelled: false, outputTruncated: false, durationMs: 0, spawnError: `${cmd}: ${err.message}`, spawnErrorCode: err.code ?? 'UNKNOWN' });
      return;
    }
    const killGroup = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const take = (chunk: Buffer, which: 'out' | 'err'): void => {
      if (kept >= max || chunk.length > max - kept) {
        truncated = true;
        if (opts.killOnOutputCap && !flood) {
          flood = true;
          killGroup();
        }
      }
      if (kept >= max) return;
      const s = chunk.subarray(0, Math.max(0, max - kept)).toString('utf8');
      kept += chunk.length;
      if (which === 'out') out += s;
      else err += s;
    };
    let timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, gate ? (gate.readyTimeoutMs ?? opts.timeoutMs) : opts.timeoutMs);
    const onReady = (): void => {
      readySeen = true;
      clearTimeout(timer);
      void gate!.open().catch(() => false).then((go) => {
        if (settled) return;
        if (go) {
          goAtMs = Date.now();
          timer = setTimeout(() => {
            timedOut = true;
            killGroup();
          }, opts.timeoutMs);
          child.stdin?.end('go\n');
        } else child.stdin?.end();
      });
    };
    child.stdin?.on('error', () => undefined); // the process may be gone before "go" reaches it
    child.stdout?.on('data', (c: Buffer) => {
      take(c, 'out');
      if (gate && !readySeen && out.includes(`${gate.line}\n`)) onReady();
    });
    child.stderr?.on('data', (c: Buffer) => take(c, 'err'));
    const onAbort = (): void => {
      cancelled = true;
      killGroup();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const finish = (r: Partial<RunResult> & { code: number | null; signal: NodeJS.Signals | null }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Anything the child left behind in its group goes too.
      killGroup();
      resolve({
        stdout: out, stderr: err, timedOut, cancelled, outputTruncated: truncated, ...(flood ? { outputFlood: true } : {}), ...(goAtMs !== undefined ? { goAtMs } : {}), durationMs: Date.now() - started, ...r,
      });
    };
    child.on('error', (e: NodeJS.ErrnoException) => finish({ code: null, signal: null, spawnError: `${cmd}: ${e.message}`, spawnErrorCode: e.code ?? 'UNKNOWN' }));
    child.on('close', (code, signal) => finish({ code, signal }));
  });
}

/** Last `n` characters of a log, for failure records. */
export function tail(s: string, n = 8000): string {
  return s.length <= n ? s : `…(${s.length - n} characters before)\n${s.slice(-n)}`;
}
