// Which Python with torch the PyTorch-reference tests use: KERNELDUEL_PYTHON, else Debian's
// /usr/bin/python3 (CI installs python3-torch; the python3 first on PATH may lack torch). Tests that
// need it skip with TORCH_SKIP_REASON when neither has torch.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function probe(python: string): string | null {
  try {
    return execFileSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const candidate = process.env.KERNELDUEL_PYTHON?.trim() || '/usr/bin/python3';
const version = existsSync(candidate) ? probe(candidate) : null;

/** A Python that imports torch, or null. */
export const TORCH_PYTHON: string | null = version ? candidate : null;
export const TORCH_VERSION: string | null = version;
export const TORCH_SKIP_REASON = `no Python with torch (tried ${candidate}; set KERNELDUEL_PYTHON, or apt-get install python3-torch as .ci/run does)`;
/** torch 2.x has functions KernelBench's newer problems call (scaled_dot_product_attention). */
export const TORCH_MAJOR = version ? Number(version.split('.')[0]) : 0;
