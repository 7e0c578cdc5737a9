// The one GPU picker behind every front door: which GPU a command, a run or a resumed session
// measures on. KERNELDUEL_NO_GPU=1 means none (compile-only) everywhere.
import type { GpuInfo } from '../engine/base/types.js';
import { detectGpus, normaliseGpuName } from '../engine/platform/gpu/detect.js';
import { CoreError } from './errors.js';

/** `--simulate-gpu-fault` (REPLAY pools), for the front doors. */
export { parseSimulatedFault } from '../engine/measure/simulated-gpus.js';

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

/** `--gpus`: every usable GPU, or these indices. */
export type GpuPoolChoice = 'all' | number[];

/** `all`, `0,1,3` -> a pool choice; throws a message naming the option for anything else. */
export function parseGpuPool(text: string): GpuPoolChoice {
  const t = text.trim();
  if (t === 'all') return 'all';
  const parts = t.split(',').map((x) => x.trim());
  if (!parts.length || parts.some((x) => !/^\d+$/.test(x))) throw new Error(`--gpus ${text}: give "all" or GPU indices separated by commas, e.g. 0,1,3`);
  const idx = parts.map(Number);
  if (new Set(idx).size !== idx.length) throw new Error(`--gpus ${text}: a GPU is named twice`);
  return idx;
}

/**
 * The GPUs of a pool run: every usable GPU (`all`) or those named, all of one model (times of
 * different models are never compared: refused, naming them). `model`: a resumed session's GPU
 * name, which every GPU must match. Throws a CoreError naming what is missing.
 */
export async function pickGpus(c: GpuPoolChoice, o: PickGpuOptions & { model?: string } = {}): Promise<GpuInfo[]> {
  const env = o.env ?? process.env;
  if (env.KERNELDUEL_NO_GPU === '1') throw new CoreError('not_found', '--gpus: KERNELDUEL_NO_GPU=1 hides every GPU; unset it, or leave --gpus out for a compile-only run');
  const det = await detectGpus();
  for (const p of det.problems) o.onNote?.(p);
  const usable = det.gpus.filter((x) => x.arch);
  const have = usable.length ? `have ${usable.map((x) => `${x.index}: ${x.name}`).join('; ')}` : 'no usable GPU found';
  let gpus: GpuInfo[];
  if (c === 'all') gpus = usable;
  else {
    const missing = c.filter((i) => !usable.some((g) => g.index === i));
    if (missing.length) throw new CoreError('not_found', `--gpus: no usable GPU ${missing.join(', ')} (${have})`);
    gpus = c.map((i) => usable.find((g) => g.index === i)!);
  }
  if (!gpus.length) throw new CoreError('not_found', `--gpus: ${have}; a pool run needs at least one GPU`);
  const models = [...new Set(gpus.map((g) => normaliseGpuName(g.name)))];
  if (models.length > 1) {
    throw new CoreError('failed', `--gpus: these GPUs are of different models (${gpus.map((g) => `${g.index}: ${g.name}`).join('; ')}), and times of different models are never compared in one run: name GPUs of one model (e.g. --gpus ${gpus.filter((g) => normaliseGpuName(g.name) === models[0]).map((g) => g.index).join(',')}), or run one session per model (optimize --mixed-models)`);
  }
  if (o.model !== undefined && normaliseGpuName(o.model) !== models[0]) {
    throw new CoreError('not_found', `--gpus: the session measured on ${o.model}, and these GPUs are ${gpus[0].name}: resume it on GPUs of its model (times of different models are not comparable)`);
  }
  return gpus;
}

/**
 * `--mixed-models`: the GPUs chosen (every usable one, or those named) grouped by model, in order
 * of their first index; each group runs as a session of its own (never compared with another).
 */
export async function gpuGroupsByModel(c: GpuPoolChoice, o: PickGpuOptions = {}): Promise<Array<{ name: string; indices: number[] }>> {
  const env = o.env ?? process.env;
  if (env.KERNELDUEL_NO_GPU === '1') throw new CoreError('not_found', '--gpus: KERNELDUEL_NO_GPU=1 hides every GPU');
  const det = await detectGpus();
  for (const p of det.problems) o.onNote?.(p);
  const usable = det.gpus.filter((x) => x.arch);
  const chosen: GpuInfo[] = [];
  const missing: number[] = [];
  if (c === 'all') chosen.push(...usable);
  else {
    for (const i of c) {
      const g = usable.find((x) => x.index === i);
      if (g) chosen.push(g);
      else missing.push(i);
    }
  }
  if (missing.length || !chosen.length) throw new CoreError('not_found', `--gpus: no usable GPU ${missing.join(', ')} (have ${usable.map((x) => `${x.index}: ${x.name}`).join('; ') || 'none'})`);
  const groups = new Map<string, { name: string; indices: number[] }>();
  for (const g of chosen) {
    const k = normaliseGpuName(g.name);
    if (!groups.has(k)) groups.set(k, { name: g.name, indices: [] });
    groups.get(k)!.indices.push(g.index);
  }
  return [...groups.values()];
}
