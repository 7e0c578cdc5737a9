// CUDA toolchain discovery: nvcc, its version, the architectures it can target, libcudart and a host compiler.
// Plain Node: never imports electron.

import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { outcomeOf, runProcess, type ProcessOutcome } from '../proc/run.js';

export interface Toolchain {
  nvcc: string | null;
  version: string | null;
  cudaHome: string | null;
  libDir: string | null;
  targets: string[];
  hostCompiler: string | null;
  problems: string[];
}

export interface FindToolchainOptions {
  /** Per-spawn limit; default 20 s. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const IS_WIN = process.platform === 'win32';
const EXE = IS_WIN ? '.exe' : '';

const NO_NVCC =
  'nvcc not found on PATH, CUDA_HOME, CUDA_PATH or /usr/local/cuda: install the CUDA toolkit or set KERNELDUEL_NVCC; without it KernelDuel can only replay recorded spaces';

/** 'Cuda compilation tools, release 13.0, V13.0.48' -> '13.0.48'; falls back to the release ('13.0'). */
export function parseNvccVersion(text: string): string | null {
  if (typeof text !== 'string') return null;
  const full = /release\s+\d+\.\d+\s*,\s*V(\d+\.\d+(?:\.\d+)?)/i.exec(text);
  if (full) return full[1];
  const rel = /release\s+(\d+\.\d+)/i.exec(text);
  if (rel) return rel[1];
  const v = /\bV(\d+\.\d+\.\d+)\b/.exec(text);
  return v ? v[1] : null;
}

// ---------------------------------------------------------------------------------------------

/** A tool of the toolchain, time-limited (its whole process group is killed at the deadline). */
async function run(cmd: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv): Promise<ProcessOutcome> {
  return outcomeOf(await runProcess(cmd, args, { timeoutMs: Math.max(1, timeoutMs), env }));
}

/** An existing regular file this process may execute. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    if (!IS_WIN) accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function nonEmpty(v: string | undefined): string | null {
  return v !== undefined && v.trim() !== '' ? v.trim() : null;
}

/** The first executable `name` on env's PATH, or null. */
export function searchPath(name: string, env: NodeJS.ProcessEnv): string | null {
  const p = env.PATH ?? env.Path ?? '';
  for (const dir of p.split(path.delimiter)) {
    if (!dir) continue;
    const cand = path.join(dir, name + EXE);
    if (isExecutableFile(cand)) return cand;
  }
  return null;
}

const LIB_SUBDIRS = IS_WIN
  ? [path.join('lib', 'x64')]
  : ['lib64', path.join('targets', 'x86_64-linux', 'lib'), path.join('targets', 'sbsa-linux', 'lib'), 'lib'];
const CUDART = IS_WIN ? 'cudart.lib' : 'libcudart.so';

function libDirOf(home: string): string | null {
  for (const sub of LIB_SUBDIRS) {
    const d = path.join(home, sub);
    if (existsSync(path.join(d, CUDART))) return d;
  }
  return null;
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

export function oneLine(s: string, max = 400): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function cacheKey(env: NodeJS.ProcessEnv, timeoutMs: number): string {
  return JSON.stringify([
    env.KERNELDUEL_NVCC,
    env.PATH ?? env.Path,
    env.CUDA_HOME,
    env.CUDA_PATH,
    env.KERNELDUEL_NO_DEFAULT_CUDA,
    env.NVCC_CCBIN,
    timeoutMs,
  ]);
}

const cache = new Map<string, Promise<Toolchain>>();

/** Forgets every cached findToolchain() result. */
export function clearToolchainCache(): void {
  cache.clear();
}

/**
 * Finds nvcc (KERNELDUEL_NVCC, PATH, CUDA_HOME/bin, CUDA_PATH/bin, /usr/local/cuda/bin — the last skipped when
 * KERNELDUEL_NO_DEFAULT_CUDA=1), runs it for its version and target list, and locates libcudart.
 * Never throws; cached per relevant environment variables, except an answer in which nvcc timed out:
 * on a machine busy for a moment (CI's 2 cores, nvcc builds beside it) `nvcc --version` once took
 * over 20 s, and a cached timeout made every later build of that process (a whole workbench
 * session) fail with it. The next call asks nvcc again.
 */
export function findToolchain(env: NodeJS.ProcessEnv = process.env, opts: FindToolchainOptions = {}): Promise<Toolchain> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const key = cacheKey(env, timeoutMs);
  const cached = cache.get(key);
  if (cached) return cached;
  const found = discover(env, timeoutMs);
  const p = found.then((r) => r.toolchain);
  cache.set(key, p);
  void found.then((r) => {
    if (r.timedOut && cache.get(key) === p) cache.delete(key);
  });
  return p;
}

async function discover(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ toolchain: Toolchain; timedOut: boolean }> {
  const problems: string[] = [];
  const cudaHomeEnv = nonEmpty(env.CUDA_HOME);
  const cudaPathEnv = nonEmpty(env.CUDA_PATH);
  const useDefault = env.KERNELDUEL_NO_DEFAULT_CUDA !== '1' && !IS_WIN;
  const defaultHome = '/usr/local/cuda';

  // 1. Locate nvcc.
  let nvcc: string | null = null;
  const explicit = nonEmpty(env.KERNELDUEL_NVCC);
  if (explicit) {
    if (isExecutableFile(explicit)) nvcc = path.resolve(explicit);
    else problems.push(`KERNELDUEL_NVCC is set to ${explicit}, which is not an executable file; looking for nvcc elsewhere.`);
  }
  if (!nvcc) nvcc = searchPath('nvcc', env);
  const homes = [cudaHomeEnv, cudaPathEnv, useDefault ? defaultHome : null].filter((h): h is string => h !== null);
  for (const h of homes) {
    if (nvcc) break;
    const cand = path.join(h, 'bin', 'nvcc' + EXE);
    if (isExecutableFile(cand)) nvcc = cand;
  }

  const hostCompiler = findHostCompiler(env);

  if (!nvcc) {
    problems.push(NO_NVCC);
    return { toolchain: { nvcc: null, version: null, cudaHome: null, libDir: null, targets: [], hostCompiler, problems }, timedOut: false };
  }

  // 2. CUDA home: prefer the one that actually holds libcudart (a wrapper script on PATH is common).
  const nvccHome = path.dirname(path.dirname(nvcc));
  const homeCandidates = [nvccHome, path.dirname(path.dirname(realOr(nvcc))), ...homes];
  let cudaHome: string | null = null;
  let libDir: string | null = null;
  for (const h of homeCandidates) {
    const d = libDirOf(h);
    if (d) {
      cudaHome = h;
      libDir = d;
      break;
    }
  }
  if (!cudaHome) {
    cudaHome = nvccHome;
    problems.push(
      `libcudart was not found next to nvcc (${nvcc}) nor under CUDA_HOME, CUDA_PATH or /usr/local/cuda: set CUDA_HOME to the toolkit directory; building test harnesses that link the CUDA runtime will fail.`,
    );
  }

  // 3. Version and targets (concurrently).
  const [ver, arch] = await Promise.all([run(nvcc, ['--version'], timeoutMs, env), run(nvcc, ['--list-gpu-arch'], timeoutMs, env)]);
  let version: string | null = null;
  if (ver.kind === 'exit' && ver.code === 0) {
    version = parseNvccVersion(ver.stdout + '\n' + ver.stderr);
    if (!version) problems.push(`nvcc at ${nvcc} ran but its --version output was not understood: ${oneLine(ver.stdout)}`);
  } else {
    problems.push(nvccFailed(nvcc, ver, timeoutMs));
  }

  let targets: string[] = [];
  if (arch.kind === 'exit' && arch.code === 0) {
    const seen = new Set<string>();
    for (const m of arch.stdout.matchAll(/\b(?:compute|sm)_(\d+[a-z]?)\b/g)) {
      const t = `sm_${m[1]}`;
      if (!seen.has(t)) {
        seen.add(t);
        targets.push(t);
      }
    }
  } else if (version) {
    // Only worth a separate line when --version worked (otherwise the failure is already reported).
    problems.push(
      `nvcc ${version} did not list its GPU architectures (--list-gpu-arch ${arch.kind === 'timeout' ? 'timed out' : 'failed'}; CUDA older than 11.0?): KernelDuel will not check that the GPU's architecture is supported before compiling.`,
    );
    targets = [];
  }

  if (!hostCompiler && !IS_WIN) {
    problems.push('No host C++ compiler (g++, c++ or clang++) found on PATH: nvcc needs one to build anything; install g++ or set NVCC_CCBIN.');
  }

  return { toolchain: { nvcc, version, cudaHome, libDir, targets, hostCompiler, problems }, timedOut: ver.kind === 'timeout' || arch.kind === 'timeout' };
}

function nvccFailed(nvcc: string, o: ProcessOutcome, timeoutMs: number): string {
  const tail = 'KernelDuel cannot compile variants; it can only replay recorded spaces until nvcc works.';
  if (o.kind === 'timeout') return `nvcc at ${nvcc} did not answer --version within ${Math.round(timeoutMs / 100) / 10} s and was killed: ${tail}`;
  if (o.kind === 'spawn-error') return `nvcc at ${nvcc} could not be started (${o.code}: ${o.message}): ${tail}`;
  const how = o.signal ? `was killed by ${o.signal}` : `exited with code ${o.code}`;
  const said = oneLine(`${o.stderr}\n${o.stdout}`);
  return `nvcc at ${nvcc} failed to run (${how})${said ? `: ${said}` : ''}. ${tail}`;
}

function findHostCompiler(env: NodeJS.ProcessEnv): string | null {
  const ccbin = nonEmpty(env.NVCC_CCBIN);
  if (ccbin) {
    if (isExecutableFile(ccbin)) return ccbin;
    const onPath = searchPath(ccbin, env);
    if (onPath) return onPath;
  }
  const names = IS_WIN ? ['cl'] : ['g++', 'c++', 'clang++'];
  for (const n of names) {
    const p = searchPath(n, env);
    if (p) return p;
  }
  return null;
}
