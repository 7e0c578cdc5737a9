// Work beside a measurement, for `bench timing-stability --beside contexts`: a loop of fresh
// processes, each creating a CUDA context on the GPU under test and exiting (its teardown
// included), as a capture process does before it runs a variant. It answers a design question
// (docs/GPU-RUNS.md "Next"): may a capture create its context while another variant is timed?
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A loop started by startLoop: stop() ends it after the process running now and says how many ran. */
export interface BesideLoop {
  stop(): Promise<{ started: number; failed: number }>;
  /** Settles when the loop has ended: after stop(), or by itself when its first 20 processes all failed. */
  ended: Promise<{ started: number; failed: number }>;
}

/**
 * Builds the context program with nvcc in `dir` (a CUDA context, then exit) and checks that one run
 * works here; throws, naming what failed, when it cannot be built or the GPU cannot be used.
 */
export function buildContextProgram(nvcc: string, dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const src = join(dir, 'kd-context.cu');
  const exe = join(dir, 'kd-context');
  writeFileSync(src, '#include <cuda_runtime.h>\n#include <stdio.h>\nint main() {\n  cudaError_t e = cudaFree(0);\n  if (e != cudaSuccess) { fprintf(stderr, "%s\\n", cudaGetErrorString(e)); return 1; }\n  return 0;\n}\n');
  const b = spawnSync(nvcc, ['-o', exe, src], { encoding: 'utf8', timeout: 120_000 });
  if (b.status !== 0) throw new Error(`--beside contexts: nvcc could not build ${src}: ${(b.stderr || b.error?.message || '').trim().slice(0, 400)}`);
  const r = spawnSync(exe, [], { encoding: 'utf8', timeout: 60_000, env });
  if (r.status !== 0) throw new Error(`--beside contexts: a process creating a CUDA context failed here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}): this needs the GPU under test`);
  return exe;
}

/** Runs `cmd` again and again (one at a time) until stop(). */
export function startLoop(cmd: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): BesideLoop {
  let stopping = false;
  let started = 0;
  let failed = 0;
  const ended = (async () => {
    while (!stopping) {
      started++;
      const ok = await new Promise<boolean>((resolve) => {
        const p = spawn(cmd, args, { stdio: 'ignore', env });
        p.on('error', () => resolve(false));
        p.on('exit', (code) => resolve(code === 0));
      });
      if (!ok) failed++;
      // A loop whose every process fails at once would spin: stop it, and stop() says so.
      if (failed >= 20 && failed === started) break;
    }
    return { started, failed };
  })();
  return {
    ended,
    stop() {
      stopping = true;
      return ended;
    },
  };
}
