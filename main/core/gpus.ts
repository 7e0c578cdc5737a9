// The one GPU picker behind every front door: which GPU a command, a run or a resumed session
// measures on. KERNELDUEL_NO_GPU=1 means none (compile-only) everywhere.
import type { GpuInfo } from '../engine/base/types.js';
import { detectGpus } from '../engine/platform/gpu/detect.js';
import { CoreError } from './errors.js';

export interface GpuChoice {
  /** A GPU index; undefined: the first usable GPU (none: compile-only); null: none (compile-only). */
  index?: number | null;
  /** Only this GPU (a resumed session's), by UUID: refused when it is not usable here. */
  uuid?: string;
  /** That GPU's name, for the message when it is missing. */
  name?: string;
}

export interface PickGpuOptions {
  env?: NodeJS.ProcessEnv;
  /** Told what detection had to say (nvidia-smi missing, a GPU without a known architecture, ...). */
  onNote?: (note: string) => void;
}

/** The GPU to measure on, or null for compile-only; throws a CoreError (not_found) for a GPU that is not usable here. */
export async function pickGpu(c: GpuChoice, o: PickGpuOptions = {}): Promise<GpuInfo | null> {
  const env = o.env ?? process.env;
  const none = c.index === null || env.KERNELDUEL_NO_GPU === '1';
  // A resumed session's GPU is never silently replaced by none.
  if (none && c.uuid === undefined) return null;
  const det = none ? null : await detectGpus();
  for (const p of det?.problems ?? []) o.onNote?.(p);
  const usable = (det?.gpus ?? []).filter((g) => g.arch);
  const have = usable.length ? `have ${usable.map((x) => `${x.index}: ${x.name}`).join('; ')}` : 'no usable GPU found';
  if (c.uuid !== undefined) {
    const g = usable.find((x) => x.uuid === c.uuid);
    if (!g) {
      throw new CoreError(
        'not_found',
        `the session measured on GPU ${c.name ?? ''} (${c.uuid}), which is not usable here: resume it on the machine that has that GPU (its measurements are not comparable with another GPU's), or start a new session`,
      );
    }
    if (c.index !== undefined && g.index !== c.index) throw new CoreError('not_found', `--gpu ${c.index}: the session measures on GPU ${g.index} (${g.name}, ${c.uuid}); leave --gpu out`);
    return g;
  }
  if (c.index === undefined) return usable[0] ?? null;
  const g = usable.find((x) => x.index === c.index);
  if (!g) throw new CoreError('not_found', `no usable GPU ${c.index} (${have}): choose another, or none (compile-only)`);
  return g;
}
