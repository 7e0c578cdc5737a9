// Kernel Tuner's cache files <-> KernelDuel recorded spaces. A Kernel Tuner cache (JSON, often
// gzip-compressed) holds `tune_params` (value lists), `tune_params_keys` (their order) and `cache`:
// one entry per measured configuration, keyed by its values joined with ",", with `time` (the
// objective, ms: the mean of `times`) or the name of a failure (`CompilationFailedConfig`,
// `RuntimeFailedConfig`, `InvalidConfig`, `ErrorConfig`). Imported, every entry becomes a space
// entry: failed configurations stay in the space and cost an evaluation when visited, as in Kernel
// Tuner's simulation mode; the space is exactly the set of recorded configurations; the space
// carries its own tunables (there is no kernel source) and is labelled with the original GPU and
// file. Exported, a KernelDuel recording becomes a cache Kernel Tuner's simulation mode can replay.
// T4 files (the open auto-tuning results format) are in t4.ts.
import { z } from 'zod';
import type { Config, FailureKind } from '../base/types.js';
import { SPACE_FORMAT, type RecordedSpace, type SpaceEntry } from '../measure/replay.js';
import { failedEntry, firstIssue, pickBaseline, pyNumber, spaceTunables, timedEntry, tunableValue } from './common.js';

const KT_FAILURES = ['CompilationFailedConfig', 'RuntimeFailedConfig', 'InvalidConfig', 'ErrorConfig'] as const;
type KtFailure = (typeof KT_FAILURES)[number];

const KT_KIND: Record<KtFailure, FailureKind> = {
  CompilationFailedConfig: 'compile',
  RuntimeFailedConfig: 'runtime',
  InvalidConfig: 'constraints',
  ErrorConfig: 'runtime',
};

const KtEntrySchema = z
  .object({
    time: z.union([z.number().positive(), z.enum(KT_FAILURES)], { error: `"time" must be a positive number of ms or one of ${KT_FAILURES.join(', ')}` }),
    times: z.array(z.number()).optional(),
  })
  .passthrough();

export const KernelTunerCacheSchema = z.object({
  schema_version: z.string().optional(),
  device_name: z.string(),
  kernel_name: z.string(),
  problem_size: z.union([z.array(z.number()), z.number(), z.string()]).optional(),
  tune_params_keys: z.array(z.string()).min(1),
  tune_params: z.record(z.string(), z.array(z.unknown()).min(1)),
  objective: z.string().optional(),
  cache: z.record(z.string(), KtEntrySchema),
});
export type KernelTunerCache = z.infer<typeof KernelTunerCacheSchema>;

/** Kernel Tuner's own timing fields of an entry (kept as `extra`, given back on export). */
export const KT_TIMING_FIELDS = ['compile_time', 'verification_time', 'benchmark_time', 'strategy_time', 'framework_time'] as const;

/**
 * Parses a cache file's text. A cache Kernel Tuner was still writing (a killed run) lacks its
 * closing braces: it is closed the way Kernel Tuner itself does before reading it.
 */
export function parseKernelTunerCache(text: string, file: string): KernelTunerCache {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    let t = text.trim();
    if (t.endsWith(',')) t = t.slice(0, -1);
    try {
      json = JSON.parse(`${t}}\n}`);
    } catch {
      throw new Error(`${file} is not JSON (${(e as Error).message})`);
    }
  }
  const p = KernelTunerCacheSchema.safeParse(json);
  if (!p.success) throw firstIssue(file, 'a Kernel Tuner cache', p.error);
  return p.data;
}

export interface ImportOptions {
  /** The space's name (a task name). */
  name: string;
  /** The file's name as recorded in the space's origin (no folders). */
  file: string;
  sha256: string;
  /** The command that imported it (recorded in the space). */
  command: string;
  importedAt: string;
  /** The configuration runs start from (default: the first recorded one that did not fail). */
  baseline?: Config;
}

export interface Imported {
  space: RecordedSpace;
  warnings: string[];
}

/** The key Kernel Tuner gives a configuration: its values in parameter order, joined with ",". */
export function kernelTunerKey(names: readonly string[], c: Config): string {
  return names.map((n) => pyNumber(c[n])).join(',');
}

/** A value of a cache key as Kernel Tuner wrote it (Python's str(): "16", "0.5", "True"). */
function keyValue(p: string): number | string {
  if (p === 'True' || p === 'False') return p === 'True' ? 1 : 0;
  const n = Number(p);
  return p.trim() !== '' && Number.isFinite(n) ? n : p;
}

/** The ISO time of the latest of the entries' timestamps (Kernel Tuner writes "2023-12-22 09:54:05.502007+00:00"). */
export function latestTimestamp(stamps: Iterable<unknown>): string | null {
  let best = -Infinity;
  for (const s of stamps) {
    if (typeof s !== 'string') continue;
    const t = Date.parse(s.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1'));
    if (Number.isFinite(t) && t > best) best = t;
  }
  return Number.isFinite(best) ? new Date(best).toISOString() : null;
}

export function kernelTunerCacheToSpace(c: KernelTunerCache, o: ImportOptions): Imported {
  const warnings: string[] = [];
  const f = o.file;
  const names = c.tune_params_keys;
  const missing = names.filter((n) => !(n in c.tune_params));
  if (missing.length) throw new Error(`${f}: tune_params has no values for ${missing.join(', ')} (named in tune_params_keys)`);
  const tunables: Record<string, number[]> = {};
  for (const n of names) tunables[n] = c.tune_params[n].map((v, i) => tunableValue(f, `tune_params.${n}[${i}]`, v));
  const objective = c.objective ?? 'time';
  if (objective !== 'time') warnings.push(`${f} was tuned for the objective "${objective}"; KernelDuel minimises time and imports each entry's "time"`);
  const entries: SpaceEntry[] = [];
  let dropped = 0;
  for (const [key, e] of Object.entries(c.cache)) {
    const parts = key.split(',');
    if (parts.length !== names.length) throw new Error(`${f}: cache."${key}" has ${parts.length} values in its key, tune_params_keys names ${names.length} parameters`);
    const config: Config = {};
    names.forEach((n, i) => {
      const fromKey = keyValue(parts[i]);
      const v = tunableValue(f, `cache."${key}".${n}`, n in e ? e[n] : fromKey);
      if (v !== fromKey) throw new Error(`${f}: cache."${key}".${n} is ${v} but the key says ${parts[i]}: its key and its values disagree`);
      if (!tunables[n].includes(v)) throw new Error(`${f}: cache."${key}".${n} is ${v}, not one of tune_params.${n} (${tunables[n].join(', ')})`);
      config[n] = v;
    });
    const extra: Record<string, number | string> = {};
    for (const [k, v] of Object.entries(e)) {
      if (k === 'time' || k === 'times' || names.includes(k)) continue;
      if (typeof v === 'number' || typeof v === 'string') extra[k] = v;
      else dropped++;
    }
    entries.push(typeof e.time === 'number' ? timedEntry(config, e.time, e.times ?? [], extra) : failedEntry(config, KT_KIND[e.time], `Kernel Tuner: ${e.time}`, extra));
  }
  if (!entries.length) throw new Error(`${f}: the cache holds no configurations`);
  if (dropped) warnings.push(`${dropped} entry fields that are neither numbers nor strings (e.g. observers' lists) were not kept`);
  const failed = entries.filter((e) => e.failure).length;
  if (failed === entries.length) warnings.push('every configuration failed: there is nothing to replay but failures');
  const key = (x: Config): string => kernelTunerKey(names, x);
  const baseline = pickBaseline(f, entries, o.baseline, key);
  const date = latestTimestamp(entries.map((e) => e.extra?.timestamp));
  const space: RecordedSpace = {
    format: SPACE_FORMAT,
    task: o.name,
    taskHash: `kernel-tuner cache sha256:${o.sha256}`,
    gpu: { name: c.device_name, uuid: '', computeCapability: '', driver: '' },
    nvcc: 'unknown (compiled by Kernel Tuner)',
    date: date ?? 'unknown',
    command: o.command,
    measured: 'real GPU',
    timedSize: 0,
    notes: [
      `Recorded by Kernel Tuner on ${c.device_name} (kernel ${c.kernel_name}${c.problem_size !== undefined ? `, problem size ${JSON.stringify(c.problem_size)}` : ''}); imported from ${f} (sha256 ${o.sha256}) on ${o.importedAt}.`,
      'medianMs holds Kernel Tuner\'s objective "time" (the mean of its samples), as recorded, so figures on this space match Kernel Tuner\'s.',
      `${entries.length} configurations, ${failed} failed (they stay in the space and cost an evaluation when visited). No kernel source: runs vary the tunables only, REPLAY only.`,
    ],
    tunables,
    baseline,
    objective: 'kernel-tuner-time',
    origin: {
      tool: 'kernel-tuner', format: 'cache', file: f, sha256: o.sha256, importedAt: o.importedAt, kernel: c.kernel_name,
      ...(c.problem_size !== undefined ? { problemSize: c.problem_size } : {}), objective,
    },
    entries,
  };
  return { space, warnings };
}

/** The Kernel Tuner name of a recorded failure: the one it was imported from, else the nearest. */
export function kernelTunerFailure(e: SpaceEntry): KtFailure {
  const m = /^Kernel Tuner: (\w+)$/.exec(e.failure?.reason ?? '');
  if (m && (KT_FAILURES as readonly string[]).includes(m[1])) return m[1] as KtFailure;
  switch (e.failure?.kind) {
    case 'compile':
      return 'CompilationFailedConfig';
    case 'constraints':
    case 'rejected':
      return 'InvalidConfig';
    default:
      return 'RuntimeFailedConfig';
  }
}

/** Kernel Tuner's per-entry timing fields: as imported, else what a KernelDuel recording knows (ms). */
export function kernelTunerTimings(e: SpaceEntry, date: string): Record<(typeof KT_TIMING_FIELDS)[number], number> & { timestamp: string } {
  const x = e.extra ?? {};
  const num = (k: string, d: number): number => (typeof x[k] === 'number' ? (x[k] as number) : d);
  return {
    compile_time: num('compile_time', 0),
    verification_time: num('verification_time', 0),
    benchmark_time: num('benchmark_time', e.samplesMs.reduce((a, b) => a + b, 0)),
    strategy_time: num('strategy_time', 0),
    framework_time: num('framework_time', 0),
    timestamp: typeof x.timestamp === 'string' ? x.timestamp : date,
  };
}

/** A recorded space as a Kernel Tuner cache (objective "time", ms). */
export function spaceToKernelTunerCache(space: RecordedSpace, file: string): { cache: Record<string, unknown>; warnings: string[] } {
  const warnings: string[] = [];
  const tunables = spaceTunables(space, file);
  const names = Object.keys(tunables);
  if (space.objective !== 'kernel-tuner-time') warnings.push('Kernel Tuner\'s "time" is the mean of its samples; this recording\'s objective is their median, exported as "time" (so both tools rank configurations as KernelDuel measured them)');
  const cache: Record<string, unknown> = {};
  const date = /^\d{4}-/.test(space.date) ? space.date : new Date(0).toISOString();
  for (const e of space.entries) {
    const k = kernelTunerKey(names, e.config);
    if (k in cache) {
      warnings.push(`the configuration ${k} is recorded twice; the first is kept`);
      continue;
    }
    const params = Object.fromEntries(names.map((n) => [n, e.config[n]]));
    const { timestamp, ...timings } = kernelTunerTimings(e, date);
    const rest = Object.fromEntries(Object.entries(e.extra ?? {}).filter(([n]) => !(n in timings) && n !== 'timestamp'));
    cache[k] = e.failure
      ? { ...params, time: kernelTunerFailure(e), ...timings, ...rest, timestamp }
      : { ...params, time: e.medianMs, times: e.samplesMs, ...timings, ...rest, timestamp };
  }
  return {
    cache: {
      schema_version: '1.0.0',
      device_name: space.gpu.name,
      kernel_name: space.origin?.kernel ?? space.task,
      problem_size: space.origin?.problemSize ?? `KernelDuel task ${space.task}, size ${space.timedSize}`,
      tune_params_keys: names,
      tune_params: tunables,
      objective: 'time',
      cache,
    },
    warnings,
  };
}
