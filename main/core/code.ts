// A variant's PTX and SASS for the workbench: the variant is built here compile-only (the build
// cache answers when it was built before, e.g. by its run) for the session's GPU architecture,
// then disassembled (main/engine/build/disasm.ts). A replayed variant is built here too: the
// recording kept its timings, not its binaries.
import type { KernelCodeDTO } from '../contract/api.js';
import type { VariantRecord } from '../engine/base/types.js';
import { loadTask } from '../engine/task/manifest.js';
import { findToolchain } from '../engine/platform/toolchain/nvcc.js';
import { deviceCode } from '../engine/build/disasm.js';
import { makeEvaluator } from './evaluators.js';
import { CoreError, errMsg } from './errors.js';

/** What is needed of the session, read from its snapshot before the (slow) build. */
export interface CodeRequest {
  variant: VariantRecord;
  task: { name: string; dir: string };
  /** The session GPU's architecture, else the one the variant was built for, else sm_90. */
  arch: string;
}

export async function variantCode(r: CodeRequest, env: NodeJS.ProcessEnv): Promise<KernelCodeDTO> {
  const { variant: v, arch } = r;
  let task;
  try {
    task = loadTask(r.task.dir);
  } catch (e) {
    throw new CoreError('failed', `cannot load task ${r.task.name} from ${r.task.dir}: ${errMsg(e)}`);
  }
  const ev = await makeEvaluator(task, { gpu: null, arch, env });
  const b = await ev.build(v);
  if (!b.ok || !b.libPath) return { arch, ptx: null, sass: null, cached: !!b.cached, notes: [`the variant does not build here: ${b.failure?.reason ?? 'no library'}`] };
  const tc = await findToolchain(env);
  const code = await deviceCode({ libPath: b.libPath, nvcc: ev.env.nvcc, cudaHome: tc.cudaHome, flags: v.flags, config: v.config, arch });
  return { arch, ptx: code.ptx, sass: code.sass, notes: code.notes, cached: !!b.cached };
}
