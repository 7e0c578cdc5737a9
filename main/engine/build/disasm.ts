// A built variant's device code as kernel engineers read it: PTX and SASS from the CUDA toolkit's
// cuobjdump on the library the build kept (nvcc's default -arch=sm_XX embeds both). Without
// cuobjdump, the PTX comes from nvcc -ptx with the variant's own flags in its build folder (in the
// sandbox, like the build) and SASS is reported as unavailable, naming the missing tool.
import fs from 'node:fs';
import path from 'node:path';
import type { BuildFlags, Config } from '../base/types.js';
import { runProcess } from '../platform/proc/run.js';
import { bwrapArgs, sandboxStatus } from '../platform/sandbox/index.js';
import { nvccFlags } from './compile.js';

export interface DeviceCode {
  ptx: string | null;
  sass: string | null;
  notes: string[];
}

const MAX_CHARS = 2_000_000;

/** The toolkit's bin folder: where nvcc really lives (a wrapper script on PATH is followed by its `exec` line). */
export function toolkitBin(nvcc: string, cudaHome: string | null): string[] {
  const dirs = new Set<string>();
  if (cudaHome) dirs.add(path.join(cudaHome, 'bin'));
  try {
    dirs.add(path.dirname(fs.realpathSync(nvcc)));
    const text = fs.readFileSync(nvcc, 'utf8').slice(0, 4096);
    const m = /exec\s+"?([^\s"]+\/nvcc)"?/.exec(text);
    if (m) dirs.add(path.dirname(m[1]));
  } catch {
    /* a binary, or gone */
  }
  return [...dirs];
}

export function findTool(bins: string[], name: string): string | null {
  for (const d of bins) {
    const p = path.join(d, name);
    if (fs.existsSync(p)) return p;
  }
  return null;
}

async function run(cmd: string, args: string[], cwd: string): Promise<{ ok: boolean; out: string; err: string }> {
  let sandbox: { bwrap: string; args: string[] } | undefined;
  try {
    const st = await sandboxStatus();
    if (st.active && st.bwrap) sandbox = { bwrap: st.bwrap, args: bwrapArgs({ writable: [cwd], cwd }) };
  } catch {
    sandbox = undefined;
  }
  const r = await runProcess(cmd, args, { cwd, timeoutMs: 120_000, maxOutputBytes: 16 << 20, sandbox, env: sandbox ? { ...process.env, TMPDIR: '/tmp' } : undefined });
  return { ok: r.code === 0 && !r.timedOut && !r.spawnError, out: r.stdout, err: (r.stderr || r.spawnError || '').trim() };
}

/** PTX and SASS of the library at `libPath` (its build folder holds the variant's shim.cu and variant.cu). */
export async function deviceCode(o: { libPath: string; nvcc: string; cudaHome: string | null; flags: BuildFlags; config: Config; arch: string }): Promise<DeviceCode> {
  const dir = path.dirname(o.libPath);
  const bins = toolkitBin(o.nvcc, o.cudaHome);
  const cuobjdump = findTool(bins, 'cuobjdump');
  const notes: string[] = [];
  let ptx: string | null = null;
  let sass: string | null = null;
  if (cuobjdump) {
    const p = await run(cuobjdump, ['-ptx', o.libPath], dir);
    if (p.ok && p.out.trim()) ptx = p.out;
    else notes.push(`cuobjdump -ptx found no PTX${p.err ? `: ${p.err.slice(0, 300)}` : ''}`);
    const s = await run(cuobjdump, ['-sass', o.libPath], dir);
    if (s.ok && s.out.trim()) sass = s.out;
    else notes.push(`cuobjdump -sass failed${s.err ? `: ${s.err.slice(0, 300)}` : ''}`);
    if (ptx || sass) notes.push(`from ${cuobjdump} on the built library`);
  } else {
    notes.push(`SASS needs the CUDA toolkit's cuobjdump (or nvdisasm), which is not in ${bins.join(' or ') || 'the toolkit'}: install the toolkit's cuobjdump package (e.g. cuda-cuobjdump) to see SASS`);
  }
  if (!ptx && fs.existsSync(path.join(dir, 'shim.cu'))) {
    const flags = nvccFlags(o.flags, o.config, o.arch).filter((f, i, a) => !(f === '-v' && a[i - 1] === '-Xptxas') && !(f === '-Xptxas' && a[i + 1] === '-v'));
    const r = await run(o.nvcc, ['-ptx', ...flags, '-o', 'variant.ptx', 'shim.cu'], dir);
    const file = path.join(dir, 'variant.ptx');
    if (r.ok && fs.existsSync(file)) {
      ptx = fs.readFileSync(file, 'utf8');
      notes.push(`PTX from nvcc -ptx with the variant's flags (${o.arch})`);
    } else notes.push(`nvcc -ptx failed: ${r.err.slice(0, 300)}`);
  }
  return { ptx: ptx && ptx.slice(0, MAX_CHARS), sass: sass && sass.slice(0, MAX_CHARS), notes };
}
