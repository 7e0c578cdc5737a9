// What `kernelduel eval` builds, before it builds it: the variant's source, its configuration (the
// task's defaults, the file's own #defines, --config on top; main/engine/task/config.ts), its flags (the
// defaults, an exported file's own from its KernelDuel header, --fast-math) and the transforms an
// exported file says are already in its code, with the lines that echo all of it. Pure.
import type { BuildFlags, Config, VariantSpec } from '../engine/base/types.js';
import type { Task } from '../engine/task/manifest.js';
import { brokenRestrictions, checkConfig, variantConfig, type VariantConfig } from '../engine/task/config.js';
import { readExportedBuild } from '../engine/export/read.js';
import { nvccCommandLine } from '../engine/export/cu.js';

export interface EvalPlan {
  spec: VariantSpec;
  /** The file (null: the task's baseline). */
  file: string | null;
  config: VariantConfig;
  flagsFrom: string;
  transforms: string[];
  /** Things to say: values off their lists, restrictions broken, --config values a #define overrides. */
  notes: string[];
}

export interface EvalChoices {
  config: Config;
  allowOffList?: boolean;
  fastMath?: boolean;
}

/** The plan for one variant (`file` null: the baseline); throws ConfigError for a --config the task refuses. */
export function planEval(task: Task, file: { path: string; source: string } | null, c: EvalChoices): EvalPlan {
  const offList = checkConfig(task, c.config, { allowOffList: c.allowOffList });
  const source = file ? file.source : task.baselineSource;
  const config = variantConfig(task, source, c.config, { fromFile: !!file });
  const exported = file ? readExportedBuild(source) : null;
  const flags: BuildFlags = { opt: 3, ...(exported?.flags ?? {}) };
  if (c.fastMath) flags.fastMath = true;
  const flagsFrom = exported ? `the file's KernelDuel header${c.fastMath && !exported.flags.fastMath ? ', and --fast-math' : ''}` : c.fastMath ? '--fast-math' : 'the defaults';
  const numeric: Config = {};
  for (const e of config.effective) if (Number.isFinite(Number(e.value))) numeric[e.name] = Number(e.value);
  const notes = [
    ...offList.map((x) => `--allow-off-list: ${x}; built anyway`),
    ...brokenRestrictions(task, numeric).map((r) => `the configuration breaks the task's restriction "${r}" (${task.manifestPath}); built anyway`),
    ...config.overridden.map((x) => `--config ${x}`),
  ];
  return { spec: { source, config: config.defines, flags, origin: file ? 'user' : 'baseline' }, file: file?.path ?? null, config, flagsFrom, transforms: exported?.transforms ?? [], notes };
}

/** The lines `eval` prints about what it built: configuration (with origins), flags, transforms, notes. */
export function describePlan(p: EvalPlan): string[] {
  const groups = new Map<string, string[]>();
  for (const e of p.config.effective) groups.set(e.from, [...(groups.get(e.from) ?? []), `${e.name}=${e.value}`]);
  const config = [...groups].map(([from, kv]) => `${kv.join(' ')} (${from === 'the file' ? "the file's #defines" : from})`).join(', ');
  const flags = nvccCommandLine(p.spec.flags, undefined, 'x').slice(1, -2); // without nvcc and -c x
  return [
    `configuration: ${config || '(no tunables)'}`,
    `flags: ${flags.join(' ')} (${p.flagsFrom})`,
    `transforms: ${p.transforms.length ? `${p.transforms.join(', ')} (already in the file's code)` : 'none'}`,
    ...p.notes.map((n) => `note: ${n}`),
  ];
}
