// Python discovery for PyTorch-reference tasks, like nvcc's (toolchain/nvcc.ts): KERNELDUEL_PYTHON,
// then python3 on PATH; probes torch, its version and whether CUDA is usable, by running the trusted
// reference script's `info` command. Never throws; says what still works when something is missing.
// Plain Node: never imports electron.
import path from 'node:path';
import { z } from 'zod';
import { runProcess } from '../proc/run.js';
import { resourcesDir } from '../../base/paths.js';
import { isExecutableFile, oneLine, searchPath } from './nvcc.js';

/** The trusted PyTorch reference script: resources/python/kd_reference.py (protocol in main/engine/pytorch). */
export function referenceScript(): string {
  return path.join(resourcesDir(), 'python', 'kd_reference.py');
}

export interface PythonEnv {
  /** The interpreter found (absolute path), or null. */
  python: string | null;
  /** Where it came from. */
  from: 'KERNELDUEL_PYTHON' | 'PATH' | null;
  /** Python's version ('3.11.2'). */
  version: string | null;
  /** torch's version ('1.13.0a0'), or null when this Python cannot import torch. */
  torch: string | null;
  /** torch.cuda.is_available() */
  cuda: boolean;
  /** torch.version.cuda (null for a CPU build). */
  cudaVersion: string | null;
  /** CUDA devices torch sees, by name. */
  devices: string[];
  /** What works with this Python: importing tasks and CPU references; GPU references and timing. */
  can: { cpuReference: boolean; gpuReference: boolean };
  /** Why something does not work, each naming what still does. */
  problems: string[];
}

export interface FindPythonOptions {
  /** Per-spawn limit; default 60 s (importing torch can take a while on a cold disk). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const INSTALL = 'install torch for it (Debian/Ubuntu: apt-get install python3-torch, CPU only; or pip install torch) or point KERNELDUEL_PYTHON at a Python that has it';
const CUDA_TASKS_OK = 'CUDA-reference tasks are not affected';

const InfoSchema = z.object({
  ok: z.literal(true),
  protocol: z.string(),
  python: z.string(),
  executable: z.string(),
  torch: z.string().nullable(),
  torch_error: z.string().nullable(),
  cuda: z.boolean(),
  cuda_version: z.string().nullable(),
  devices: z.array(z.string()),
  cuda_error: z.string().optional(),
});

const cache = new Map<string, Promise<PythonEnv>>();

/** Forgets every cached findPython() result. */
export function clearPythonCache(): void {
  cache.clear();
}

/** Finds Python with torch (KERNELDUEL_PYTHON, then python3 on PATH) and probes it. Cached per
 * KERNELDUEL_PYTHON and PATH. */
export function findPython(env: NodeJS.ProcessEnv = process.env, opts: FindPythonOptions = {}): Promise<PythonEnv> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const key = JSON.stringify([env.KERNELDUEL_PYTHON, env.PATH, timeoutMs]);
  const found = cache.get(key) ?? discover(env, timeoutMs);
  cache.set(key, found);
  return found;
}

async function discover(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<PythonEnv> {
  const problems: string[] = [];
  const none: PythonEnv = { python: null, from: null, version: null, torch: null, cuda: false, cudaVersion: null, devices: [], can: { cpuReference: false, gpuReference: false }, problems };
  let python: string | null = null;
  let from: PythonEnv['from'] = null;
  const explicit = env.KERNELDUEL_PYTHON?.trim();
  if (explicit) {
    if (isExecutableFile(explicit)) {
      python = path.resolve(explicit);
      from = 'KERNELDUEL_PYTHON';
    } else problems.push(`KERNELDUEL_PYTHON is set to ${explicit}, which is not an executable file; looking for python3 on PATH instead.`);
  }
  if (!python) {
    python = searchPath('python3', env);
    if (python) from = 'PATH';
  }
  if (!python) {
    problems.push(`Python not found (KERNELDUEL_PYTHON, then python3 on PATH): PyTorch-reference tasks (imported KernelBench problems) cannot be imported or checked; install Python 3 with torch or set KERNELDUEL_PYTHON. ${CUDA_TASKS_OK}.`);
    return none;
  }
  const r = await runProcess(python, [referenceScript(), 'info'], { timeoutMs, env, maxOutputBytes: 1 << 16 });
  const base = { ...none, python, from };
  if (r.spawnError || r.timedOut || r.code !== 0) {
    const how = r.spawnError ? `could not be started (${r.spawnError})` : r.timedOut ? `did not answer within ${Math.round(timeoutMs / 1000)} s` : `exited with code ${r.code}${r.signal ? ` (${r.signal})` : ''}`;
    problems.push(`${python} (from ${from}) ${how} when asked for its torch: ${oneLine(r.stderr || r.stdout) || 'no output'}. PyTorch-reference tasks cannot be imported or checked with it; ${INSTALL}. ${CUDA_TASKS_OK}.`);
    return base;
  }
  let info: z.infer<typeof InfoSchema>;
  try {
    info = InfoSchema.parse(JSON.parse(r.stdout.trim().split('\n').pop() ?? ''));
  } catch {
    problems.push(`${python} (from ${from}) ran the reference script but its answer was not understood: ${oneLine(r.stdout)}. Is it Python 3.8 or newer?`);
    return base;
  }
  const found = { ...base, version: info.python, torch: info.torch, cuda: info.cuda, cudaVersion: info.cuda_version, devices: info.devices };
  if (!info.torch) {
    problems.push(`${python} (Python ${info.python}, from ${from}) has no torch (${info.torch_error ?? 'cannot import it'}): PyTorch-reference tasks cannot be imported or checked; ${INSTALL}. ${CUDA_TASKS_OK}.`);
    return found;
  }
  if (!info.cuda) {
    const why = info.cuda_version ? `torch ${info.torch} (CUDA ${info.cuda_version}) sees no usable GPU${info.cuda_error ? ` (${oneLine(info.cuda_error, 200)})` : ''}` : `torch ${info.torch} is a CPU-only build`;
    problems.push(`${why} at ${python}: PyTorch-reference tasks can be imported and their references computed on the CPU (CPU reference checks), but GPU checks and timing against them (eager and torch.compile baselines, Python candidates) need a CUDA-enabled torch on a machine with an NVIDIA GPU.`);
    return { ...found, can: { cpuReference: true, gpuReference: false } };
  }
  return { ...found, can: { cpuReference: true, gpuReference: true } };
}
