// Builds a variant into a shared library with nvcc: generated shim, tunables as -D defines,
// the variant's compiler flags, per-kernel resources from ptxas. Builds are content-addressed
// (same source, config, flags, arch and nvcc give the same library) and run in parallel child
// processes, at most one per core.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import PQueue from 'p-queue';
import type { BuildFlags, BuildResult, Config, VariantSpec } from '../base/types.js';
import type { Task } from '../task/manifest.js';
import { generateShim } from './shim.js';
import { explainShimErrors } from './signature.js';
import { parsePtxas } from './ptxas.js';
import { runProcess, tail } from '../platform/proc/run.js';
import { bwrapArgs, defaultDataLimit, sandboxStatus, SandboxError } from '../platform/sandbox/index.js';

export interface BuildEnv {
  nvcc: string;
  nvccVersion: string;
  arch: string;
  /** Directory holding libcudart.so (baked in as rpath so the harness finds it). */
  libDir: string | null;
  /** Root of content-addressed builds. */
  workRoot: string;
  timeoutMs?: number;
}

export function nvccFlags(flags: BuildFlags, config: Config, arch: string): string[] {
  const opt = flags.opt ?? 3;
  const f = [`-arch=${arch}`, `-O${opt}`, `-Xptxas`, `-O${opt}`, '-lineinfo', '-Xptxas', '-v', '-std=c++17'];
  if (flags.fastMath) f.push('--use_fast_math');
  if (flags.maxrregcount) f.push(`-maxrregcount=${flags.maxrregcount}`);
  if (flags.dlcm) f.push('-Xptxas', `-dlcm=${flags.dlcm}`);
  for (const [k, v] of Object.entries(config).sort(([a], [b]) => a.localeCompare(b))) f.push(`-D${k}=${v}`);
  if (flags.extra) f.push(...flags.extra);
  return f;
}

// --no-undefined: a variant that calls something nobody defines fails here (a `compile` failure
// naming the symbol), not later when the harness loads it. --default-stream per-thread: the entry
// point's work on "stream 0" goes to the per-thread default stream, which the harness can capture
// as a CUDA graph (the legacy default stream cannot be captured).
const LIB_FLAGS = ['-shared', '-Xcompiler', '-fPIC', '-Xcompiler', '-fvisibility=hidden', '-cudart', 'shared', '--default-stream', 'per-thread', '-Xlinker', '--no-undefined'];

export function buildKey(task: Task, v: Pick<VariantSpec, 'source' | 'config' | 'flags'>, env: BuildEnv): string {
  return createHash('sha256')
    .update(JSON.stringify([task.manifest.entry, task.manifest.args, v.source, nvccFlags(v.flags, v.config, env.arch), env.nvccVersion, LIB_FLAGS]))
    .digest('hex')
    .slice(0, 24);
}

const queue = new PQueue({ concurrency: Math.max(1, os.availableParallelism()) });
export function setBuildConcurrency(n: number): void {
  queue.concurrency = Math.max(1, n);
}

/** Error lines of nvcc output mapped to the variant's own line numbers. */
export interface CompilerMessage {
  line: number;
  column?: number;
  severity: 'error' | 'warning';
  message: string;
}
export function parseCompilerMessages(log: string, variantFile: string): CompilerMessage[] {
  const out: CompilerMessage[] = [];
  const re = /^(.*?)\((\d+)\)(?::\s*|\s+)(error|warning)[^:]*:\s*(.*)$/gm;
  const re2 = /^(.*?):(\d+):(\d+):\s*(error|warning):\s*(.*)$/gm;
  for (const m of log.matchAll(re)) if (m[1].endsWith(variantFile)) out.push({ line: Number(m[2]), severity: m[3] as 'error' | 'warning', message: m[4] });
  for (const m of log.matchAll(re2)) if (m[1].endsWith(variantFile)) out.push({ line: Number(m[2]), column: Number(m[3]), severity: m[4] as 'error' | 'warning', message: m[5] });
  return out;
}

export async function buildVariant(task: Task, v: Pick<VariantSpec, 'source' | 'config' | 'flags'>, env: BuildEnv, signal?: AbortSignal): Promise<BuildResult> {
  const key = buildKey(task, v, env);
  const dir = join(env.workRoot, 'builds', key);
  const lib = join(dir, 'variant.so');
  const metaPath = join(dir, 'build.json');
  if (existsSync(lib) && existsSync(metaPath)) {
    try {
      const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as BuildResult;
      return { ...meta, cached: true };
    } catch {
      /* rebuild */
    }
  }
  return queue.add(
    async () => {
      mkdirSync(dir, { recursive: true });
      const src = join(dir, 'variant.cu');
      writeFileSync(src, v.source);
      writeFileSync(join(dir, 'shim.cu'), generateShim(task, src));
      const tmpLib = join(dir, `variant.${process.pid}.${Date.now()}.so`);
      const args = [...LIB_FLAGS, ...nvccFlags(v.flags, v.config, env.arch), '-o', tmpLib, 'shim.cu'];
      if (env.libDir) args.push('-Xlinker', `-rpath=${env.libDir}`);
      const command = [env.nvcc, ...args];
      // nvcc runs in the sandbox too (only the build folder writable, no network): the compiler
      // front end is the first thing to read an untrusted source.
      let sandbox: { bwrap: string; args: string[] } | undefined;
      try {
        const st = await sandboxStatus();
        if (st.active && st.bwrap) sandbox = { bwrap: st.bwrap, args: bwrapArgs({ writable: [dir], cwd: dir }) };
      } catch (e) {
        if (e instanceof SandboxError) return { ok: false, arch: env.arch, command, resources: [], log: '', durationMs: 0, failure: { kind: 'compile', reason: e.message } };
        throw e;
      }
      const timeoutMs = env.timeoutMs ?? 120_000;
      const r = await runProcess(env.nvcc, args, {
        cwd: dir, timeoutMs, signal, maxOutputBytes: 4 << 20,
        env: sandbox ? { ...process.env, TMPDIR: '/tmp' } : undefined,
        cpuSeconds: Math.ceil(timeoutMs / 1000) + 30,
        dataBytes: defaultDataLimit(),
        sandbox,
      });
      const log = (r.stdout + r.stderr).replace(new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '/', 'g'), '');
      const base: BuildResult = { ok: false, arch: env.arch, command, resources: parsePtxas(log), log: tail(log, 20000), durationMs: r.durationMs };
      if (r.cancelled) return { ...base, failure: { kind: 'compile', reason: 'build cancelled' } };
      if (r.timedOut) return { ...base, failure: { kind: 'timeout', reason: `nvcc did not finish within ${Math.round((env.timeoutMs ?? 120_000) / 1000)} s`, log: tail(log) } };
      if (r.spawnError) return { ...base, failure: { kind: 'compile', reason: `cannot run nvcc: ${r.spawnError}` } };
      if (r.code !== 0 || !existsSync(tmpLib)) {
        const first = explainShimErrors(task, v.source, log) ?? log.split('\n').find((l) => /error/i.test(l)) ?? `nvcc exited with ${r.code ?? r.signal}`;
        rmSync(tmpLib, { force: true });
        return { ...base, failure: { kind: 'compile', reason: first.trim().slice(0, 400), log: tail(log) } };
      }
      renameSync(tmpLib, lib);
      const res: BuildResult = { ...base, ok: true, libPath: lib };
      writeFileSync(metaPath, JSON.stringify(res));
      return res;
    },
    { signal },
  ) as Promise<BuildResult>;
}
