// Python discovery for PyTorch-reference tasks (main/engine/platform/toolchain/python.ts): KERNELDUEL_PYTHON, then
// python3 on PATH; fake interpreters stand for the cases this machine does not have.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearPythonCache, findPython, referenceScript } from '../main/engine/platform/toolchain/python.js';
import { TORCH_PYTHON, TORCH_SKIP_REASON, TORCH_VERSION } from './pytorch-env.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kd-python-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => clearPythonCache());

/** A fake `python3` in <dir>/<sub>/bin that answers the reference script's `info` with `info`. */
function fakePython(sub: string, info: Record<string, unknown> | null, exit = 0): string {
  const bin = path.join(dir, sub, 'bin');
  mkdirSync(bin, { recursive: true });
  const p = path.join(bin, 'python3');
  // Builtins only (read, printf): the tests run it with a PATH that has no cat.
  const answer = path.join(dir, sub, 'info.json');
  if (info) writeFileSync(answer, JSON.stringify({ ok: true, protocol: 'kd-reference/1', python: '3.11.9', executable: p, numpy: null, ...info }) + '\n');
  const body = info ? `while IFS= read -r l; do printf '%s\\n' "$l"; done < '${answer}'` : 'echo "Traceback: SyntaxError" >&2';
  writeFileSync(p, `#!/bin/bash\n# called as: python3 ${'$'}1 info\n[ "$2" = info ] || exit 9\n${body}\nexit ${exit}\n`);
  chmodSync(p, 0o755);
  return p;
}

const NO_TORCH = { torch: null, torch_error: "ModuleNotFoundError: No module named 'torch'", cuda: false, cuda_version: null, devices: [] };
const CPU_TORCH = { torch: '1.13.0a0', torch_error: null, cuda: false, cuda_version: null, devices: [] };
const CUDA_TORCH = { torch: '2.5.1', torch_error: null, cuda: true, cuda_version: '12.4', devices: ['NVIDIA H200'] };

describe('findPython', () => {
  it('no Python at all: says what is missing, how to fix it, and that CUDA tasks are unaffected', async () => {
    const py = await findPython({ PATH: path.join(dir, 'nowhere') });
    expect(py.python).toBeNull();
    expect(py.can).toEqual({ cpuReference: false, gpuReference: false });
    expect(py.problems).toHaveLength(1);
    expect(py.problems[0]).toMatch(/Python not found \(KERNELDUEL_PYTHON, then python3 on PATH\)/);
    expect(py.problems[0]).toMatch(/KERNELDUEL_PYTHON/);
    expect(py.problems[0]).toMatch(/CUDA-reference tasks are not affected/);
  });

  it('a python3 without torch: names it and how to install torch', async () => {
    const fake = fakePython('notorch', NO_TORCH);
    const py = await findPython({ PATH: path.dirname(fake) });
    expect(py.python).toBe(fake);
    expect(py.from).toBe('PATH');
    expect(py.version).toBe('3.11.9');
    expect(py.torch).toBeNull();
    expect(py.can.cpuReference).toBe(false);
    expect(py.problems[0]).toContain(`${fake} (Python 3.11.9, from PATH) has no torch (ModuleNotFoundError: No module named 'torch')`);
    expect(py.problems[0]).toMatch(/apt-get install python3-torch/);
  });

  it('KERNELDUEL_PYTHON wins over PATH; a CPU-only torch can do CPU references, not GPU checks', async () => {
    const onPath = fakePython('path', NO_TORCH);
    const cpu = fakePython('cpu', CPU_TORCH);
    const py = await findPython({ PATH: path.dirname(onPath), KERNELDUEL_PYTHON: cpu });
    expect(py.python).toBe(cpu);
    expect(py.from).toBe('KERNELDUEL_PYTHON');
    expect(py.torch).toBe('1.13.0a0');
    expect(py.can).toEqual({ cpuReference: true, gpuReference: false });
    expect(py.problems).toHaveLength(1);
    expect(py.problems[0]).toMatch(/torch 1\.13\.0a0 is a CPU-only build/);
    expect(py.problems[0]).toMatch(/imported and their references computed on the CPU/);
    expect(py.problems[0]).toMatch(/GPU checks and timing .* need a CUDA-enabled torch/);
  });

  it('a CUDA build that sees no GPU says so; one that does can do everything, with no problems', async () => {
    const noGpu = fakePython('nogpu', { ...CUDA_TORCH, cuda: false, devices: [] });
    const a = await findPython({ PATH: '', KERNELDUEL_PYTHON: noGpu });
    expect(a.problems[0]).toMatch(/torch 2\.5\.1 \(CUDA 12\.4\) sees no usable GPU/);
    expect(a.can).toEqual({ cpuReference: true, gpuReference: false });
    const gpu = fakePython('gpu', CUDA_TORCH);
    const b = await findPython({ PATH: '', KERNELDUEL_PYTHON: gpu });
    expect(b.can).toEqual({ cpuReference: true, gpuReference: true });
    expect(b.devices).toEqual(['NVIDIA H200']);
    expect(b.cudaVersion).toBe('12.4');
    expect(b.problems).toEqual([]);
  });

  it('a KERNELDUEL_PYTHON that is not executable is reported, and python3 on PATH is used instead', async () => {
    const cpu = fakePython('fallback', CPU_TORCH);
    const py = await findPython({ PATH: path.dirname(cpu), KERNELDUEL_PYTHON: path.join(dir, 'no-such-python') });
    expect(py.python).toBe(cpu);
    expect(py.from).toBe('PATH');
    expect(py.problems[0]).toMatch(/KERNELDUEL_PYTHON is set to .*no-such-python, which is not an executable file; looking for python3 on PATH instead/);
  });

  it('an interpreter that fails (too old, broken) is named with its output', async () => {
    const bad = fakePython('broken', null, 1);
    const py = await findPython({ PATH: '', KERNELDUEL_PYTHON: bad });
    expect(py.python).toBe(bad);
    expect(py.can.cpuReference).toBe(false);
    expect(py.problems[0]).toMatch(/exited with code 1 when asked for its torch: Traceback: SyntaxError/);
  });

  it('is cached per environment', async () => {
    const cpu = fakePython('cache', CPU_TORCH);
    const env = { PATH: '', KERNELDUEL_PYTHON: cpu };
    expect(findPython(env)).toBe(findPython({ ...env }));
  });

  it.skipIf(!TORCH_PYTHON)(`the real interpreter: ${TORCH_PYTHON ?? TORCH_SKIP_REASON}`, async () => {
    const py = await findPython({ PATH: '', KERNELDUEL_PYTHON: TORCH_PYTHON! });
    expect(py.python).toBe(TORCH_PYTHON);
    expect(py.torch).toBe(TORCH_VERSION);
    expect(py.can.cpuReference).toBe(true);
    expect(referenceScript()).toMatch(/resources\/python\/kd_reference\.py$/);
  });
});
