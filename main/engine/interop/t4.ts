// T4 files (the open auto-tuning results format Kernel Tuner writes with `store_output_file`:
// `{schema_version, results: [{configuration, times: {runtimes, …}, invalidity, correctness,
// measurements: [{name, value, unit}], objectives}]}`) <-> KernelDuel recorded spaces. T4 keeps
// neither the GPU nor the parameters' value lists: the GPU is given by the importer (else
// "unknown"), the values are those the results hold. Its failure vocabulary (`timeout`, `compile`,
// `runtime`, `correctness`, `constraints`) is KernelDuel's own. The Kernel Tuner cache format is
// in kernel-tuner.ts.
import { z } from 'zod';
import type { Config, FailureKind } from '../base/types.js';
import { SPACE_FORMAT, type RecordedSpace, type SpaceEntry } from '../measure/replay.js';
import { failedEntry, firstIssue, pickBaseline, spaceTunables, timedEntry, tunableValue } from './common.js';
import { kernelTunerTimings, latestTimestamp, type Imported, type ImportOptions } from './kernel-tuner.js';

const INVALIDITY = ['timeout', 'compile', 'runtime', 'correctness', 'constraints', 'correct'] as const;

const T4ResultSchema = z
  .object({
    timestamp: z.string().optional(),
    configuration: z.record(z.string(), z.unknown()),
    objectives: z.array(z.string()).optional(),
    times: z.object({ runtimes: z.array(z.number()).optional() }).passthrough().optional(),
    invalidity: z.enum(INVALIDITY),
    correctness: z.number().optional(),
    measurements: z.array(z.object({ name: z.string(), value: z.unknown(), unit: z.string().optional() })).default([]),
  })
  .passthrough();

export const T4Schema = z.object({
  schema_version: z.string(),
  results: z.array(T4ResultSchema).min(1),
});
export type T4Results = z.infer<typeof T4Schema>;

/** Whether parsed JSON looks like a T4 results file rather than a Kernel Tuner cache. */
export function looksLikeT4(json: unknown): boolean {
  return !!json && typeof json === 'object' && Array.isArray((json as { results?: unknown }).results) && !('cache' in json);
}

export function parseT4(text: string, file: string): T4Results {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not JSON (${(e as Error).message})`, { cause: e });
  }
  const p = T4Schema.safeParse(json);
  if (!p.success) throw firstIssue(file, 'a T4 results file', p.error);
  return p.data;
}

const TO_MS: Record<string, number> = { ms: 1, '': 1, s: 1000, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };

export function t4ToSpace(t4: T4Results, o: ImportOptions & { gpuName?: string }): Imported {
  const f = o.file;
  const warnings: string[] = [];
  const names = Object.keys(t4.results[0].configuration);
  const values = new Map<string, Set<number>>(names.map((n) => [n, new Set()]));
  const entries: SpaceEntry[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  t4.results.forEach((r, i) => {
    const ks = Object.keys(r.configuration);
    if (ks.length !== names.length || ks.some((k) => !values.has(k))) {
      throw new Error(`${f}: results[${i}].configuration has parameters ${ks.join(', ')}, results[0] ${names.join(', ')}: every result must give every parameter`);
    }
    const config: Config = {};
    for (const n of names) {
      config[n] = tunableValue(f, `results[${i}].configuration.${n}`, r.configuration[n]);
      values.get(n)!.add(config[n]);
    }
    const key = names.map((n) => config[n]).join(',');
    if (seen.has(key)) {
      duplicates++;
      return;
    }
    seen.add(key);
    const objective = r.objectives?.[0] ?? 'time';
    const extra: Record<string, number | string> = {};
    if (r.timestamp) extra.timestamp = r.timestamp;
    const t = r.times as Record<string, unknown> | undefined;
    for (const [from, to] of [['compilation', 'compile_time'], ['benchmark', 'benchmark_time'], ['framework', 'framework_time'], ['search_algorithm', 'strategy_time'], ['validation', 'verification_time']] as const) {
      if (typeof t?.[from] === 'number') extra[to] = t[from] as number;
    }
    let objectiveMs: number | null = null;
    r.measurements.forEach((m, j) => {
      if (m.name === objective) {
        const scale = TO_MS[m.unit ?? ''];
        if (typeof m.value === 'number' && scale === undefined) throw new Error(`${f}: results[${i}].measurements[${j}].unit "${m.unit}" is not a time unit (ms, s, us, ns)`);
        if (typeof m.value === 'number') objectiveMs = m.value * scale;
      } else if (typeof m.value === 'number' || typeof m.value === 'string') extra[m.name] = m.value;
    });
    if (r.invalidity !== 'correct') {
      entries.push(failedEntry(config, r.invalidity as FailureKind, `T4: ${r.invalidity}`, extra));
      return;
    }
    if (objectiveMs === null || !(objectiveMs > 0)) throw new Error(`${f}: results[${i}] is "correct" but has no positive measurement named "${objective}" (its objective)`);
    entries.push(timedEntry(config, objectiveMs, (t?.runtimes as number[] | undefined) ?? [], extra));
  });
  if (duplicates) warnings.push(`${duplicates} results repeat an earlier configuration; the first of each is kept`);
  const tunables = Object.fromEntries(names.map((n) => [n, [...values.get(n)!].sort((a, b) => a - b)]));
  const baseline = pickBaseline(f, entries, o.baseline, (c) => names.map((n) => c[n]).join(','));
  const gpu = o.gpuName ?? 'unknown GPU (a T4 file does not name it)';
  const failed = entries.filter((e) => e.failure).length;
  const space: RecordedSpace = {
    format: SPACE_FORMAT,
    task: o.name,
    taskHash: `t4 sha256:${o.sha256}`,
    gpu: { name: gpu, uuid: '', computeCapability: '', driver: '' },
    nvcc: 'unknown (T4 results)',
    date: latestTimestamp(entries.map((e) => e.extra?.timestamp)) ?? 'unknown',
    command: o.command,
    measured: 'real GPU',
    timedSize: 0,
    notes: [
      `T4 results (schema ${t4.schema_version}) imported from ${f} (sha256 ${o.sha256}) on ${o.importedAt}; GPU ${o.gpuName ? 'as given on import' : 'unknown'}.`,
      'medianMs holds each result\'s objective measurement as recorded (Kernel Tuner writes the mean of its samples as "time").',
      `${entries.length} configurations, ${failed} failed (they stay in the space and cost an evaluation when visited); the parameters' values are those the results hold. No kernel source: REPLAY only.`,
    ],
    tunables,
    baseline,
    objective: 'kernel-tuner-time',
    origin: { tool: 't4', format: 't4', file: f, sha256: o.sha256, importedAt: o.importedAt, objective: t4.results[0].objectives?.[0] ?? 'time' },
    entries,
  };
  return { space, warnings };
}

/** A recorded space as T4 results (objective "time", ms). */
export function spaceToT4(space: RecordedSpace, file: string): Record<string, unknown> {
  const names = Object.keys(spaceTunables(space, file));
  const date = /^\d{4}-/.test(space.date) ? space.date : new Date(0).toISOString();
  const results = space.entries.map((e) => {
    const { timestamp, compile_time, benchmark_time, framework_time, strategy_time, verification_time } = kernelTunerTimings(e, date);
    const known = new Set(['timestamp', 'compile_time', 'benchmark_time', 'framework_time', 'strategy_time', 'verification_time']);
    const metrics = Object.entries(e.extra ?? {}).filter(([k]) => !known.has(k)).map(([name, value]) => ({ name, value, unit: '' }));
    return {
      timestamp,
      configuration: Object.fromEntries(names.map((n) => [n, e.config[n]])),
      objectives: ['time'],
      times: { compilation: compile_time, benchmark: benchmark_time, framework: framework_time, search_algorithm: strategy_time, validation: verification_time, runtimes: e.samplesMs },
      invalidity: e.failure ? (e.failure.kind === 'rejected' ? 'constraints' : e.failure.kind) : 'correct',
      correctness: e.failure?.kind === 'correctness' ? 0 : 1,
      measurements: [...(e.medianMs !== null ? [{ name: 'time', value: e.medianMs, unit: 'ms' }] : []), ...metrics],
    };
  });
  return { schema_version: '1.0.0', results };
}
