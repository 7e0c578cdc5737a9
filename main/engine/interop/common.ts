// What the importers and exporters of other tuners' files share: reading a file that may be
// gzip-compressed, naming zod's first issue with the file and the field, building KernelDuel space
// entries (timed or failed) from another tool's numbers, and the tunables of a recorded space in
// parameter order. Format-specific parsing lives in kernel-tuner.ts and t4.ts; nothing here
// touches a GPU or a task folder.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { Config, Failure, FailureKind } from '../base/types.js';
import { gunzipIfGzip } from '../base/gzip.js';
import { medianCI } from '../measure/stats.js';
import type { RecordedSpace, SpaceEntry } from '../measure/replay.js';

/** A file's text (gunzipped when it starts with gzip's magic bytes) and the sha256 of its bytes as stored. */
export function readMaybeGzip(path: string): { text: string; sha256: string } {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  return decodeMaybeGzip(buf, path);
}

/** The text of a file's bytes (gunzipped when they start with gzip's magic bytes) and their sha256; `what` names the file in errors. */
export function decodeMaybeGzip(buf: Buffer, what: string): { text: string; sha256: string } {
  return { text: gunzipIfGzip(buf, what).toString('utf8'), sha256: createHash('sha256').update(buf).digest('hex') };
}

/** "file: field.path: message" for the first issue of a failed zod parse. */
export function firstIssue(file: string, what: string, error: z.ZodError): Error {
  const i = error.issues[0];
  const field = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
  return new Error(`${file} is not ${what} (${field || '(root)'}: ${i.message})`);
}

/** A parameter value as a KernelDuel tunable (a number; booleans become 0/1), or an error naming it. */
export function tunableValue(file: string, where: string, v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new Error(`${file}: ${where} is ${JSON.stringify(v)}: KernelDuel's tunables are numbers (booleans become 0/1); this file cannot be imported as it is`);
}

/** A space name from a file name: `convolution-A100.json.gz` -> `convolution-a100`. */
export function spaceNameOf(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const stem = base.replace(/(\.json)?(\.gz)?$/i, '');
  const slug = stem.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+|-+$/g, '');
  return slug || 'imported';
}

export const SPACE_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** A timed entry from another tool's objective value and samples (ms). */
export function timedEntry(config: Config, objectiveMs: number, samplesMs: readonly number[], extra: Record<string, number | string>): SpaceEntry {
  const s = samplesMs.filter((x) => Number.isFinite(x) && x > 0);
  const samples = s.length ? s : [objectiveMs];
  const ci = medianCI(samples);
  return {
    config, flags: {}, medianMs: objectiveMs, samplesMs: samples, relNoise: Number.isFinite(ci.relNoise) ? ci.relNoise : 0, resources: [], failure: null,
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}

/** A failed entry: it stays in the space and costs an evaluation when visited, as in the tool that recorded it. */
export function failedEntry(config: Config, kind: FailureKind, reason: string, extra: Record<string, number | string>): SpaceEntry {
  const failure: Failure = { kind, reason };
  return { config, flags: {}, medianMs: null, samplesMs: [], relNoise: 0, resources: [], failure, ...(Object.keys(extra).length ? { extra } : {}) };
}

/** The configuration a source-free space's runs start from: the one given (it must be recorded), else the first recorded one that did not fail. */
export function pickBaseline(file: string, entries: readonly SpaceEntry[], given: Config | undefined, key: (c: Config) => string): Config {
  if (given) {
    const k = key(given);
    const e = entries.find((x) => key(x.config) === k);
    if (!e) throw new Error(`${file}: the baseline ${JSON.stringify(given)} is not a recorded configuration`);
    return e.config;
  }
  return (entries.find((e) => e.failure === null) ?? entries[0]).config;
}

/**
 * The tunables of a recorded space in parameter order: its own (an imported space), else every
 * value its entries hold, sorted, in the order the first entry names the parameters. Throws when
 * entries name different parameters, or vary compiler flags or transforms, which the other tools'
 * formats cannot hold.
 */
export function spaceTunables(space: RecordedSpace, file: string): Record<string, number[]> {
  const varied = space.entries.filter((e) => Object.entries(e.flags).some(([k, v]) => !(k === 'opt' && v === 3) && v !== undefined && v !== false) || (e.transforms?.length ?? 0) > 0);
  if (varied.length) {
    throw new Error(`${file}: ${varied.length} of ${space.entries.length} entries vary compiler flags or source transforms, which a Kernel Tuner cache or T4 file cannot hold (they know tunable parameters only)`);
  }
  if (space.tunables) return space.tunables;
  const names = Object.keys(space.entries[0].config);
  const values = new Map<string, Set<number>>(names.map((n) => [n, new Set()]));
  space.entries.forEach((e, i) => {
    const ks = Object.keys(e.config);
    if (ks.length !== names.length || ks.some((k) => !values.has(k))) {
      throw new Error(`${file}: entries.${i} has parameters ${ks.join(', ')}, the first entry ${names.join(', ')}: every configuration must give every parameter`);
    }
    for (const k of ks) values.get(k)!.add(e.config[k]);
  });
  return Object.fromEntries(names.map((n) => [n, [...values.get(n)!].sort((a, b) => a - b)]));
}

/** Python's str() of a number as Kernel Tuner writes it in cache keys (integers without a fraction;
 * exponent form below 1e-4 and from 1e16, with a two-digit exponent). */
export function pyNumber(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-4 || a >= 1e16)) return v.toExponential().replace(/e([+-])(\d)$/, (_m, sign: string, d: string) => `e${sign}0${d}`);
  return String(v);
}
