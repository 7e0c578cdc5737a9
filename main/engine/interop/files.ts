// Importing and exporting recorded spaces as files: which format a file is in, where an imported
// space goes by default (where the workbench looks for recordings), and writing either way (a
// `.gz` name is gzip-compressed). The formats themselves are in kernel-tuner.ts and t4.ts.
import { mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Config } from '../base/types.js';
import { writeFileAtomic } from '../base/atomic.js';
import { kernelduelHome } from '../base/paths.js';
import { gpuSlug } from '../platform/gpu/detect.js';
import { loadSpace, RecordedSpaceSchema, type RecordedSpace } from '../measure/replay.js';
import { builtinTaskNames } from '../task/resolve.js';
import { decodeMaybeGzip, readMaybeGzip, SPACE_NAME, spaceNameOf } from './common.js';
import { kernelTunerCacheToSpace, parseKernelTunerCache, spaceToKernelTunerCache, type Imported } from './kernel-tuner.js';
import { looksLikeT4, parseT4, t4ToSpace } from './t4.js';
import { spaceToT4 } from './t4.js';

export const IMPORT_FORMATS = ['kernel-tuner', 't4'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ImportFileOptions {
  /** 'kernel-tuner' reads a cache or a T4 file (whichever it is); 't4' only a T4 file. */
  format: ImportFormat;
  name?: string;
  baseline?: Config;
  /** The GPU a T4 file's results were measured on (T4 does not say). */
  gpuName?: string;
  command: string;
  now?: Date;
}

/** Reads another tool's file (gzip or not) as a KernelDuel recorded space, validated like any recording. */
export function importSpaceFile(path: string, o: ImportFileOptions): Imported & { format: 'kernel-tuner cache' | 't4' } {
  const { text, sha256 } = readMaybeGzip(path);
  return importSpaceText(text, sha256, path, o);
}

/** The same for a file's bytes (a workbench upload): `fileName` names it in errors and in the space's origin. */
export function importSpaceBytes(bytes: Buffer, fileName: string, o: ImportFileOptions): Imported & { format: 'kernel-tuner cache' | 't4' } {
  const { text, sha256 } = decodeMaybeGzip(bytes, fileName);
  return importSpaceText(text, sha256, fileName, o);
}

function importSpaceText(text: string, sha256: string, path: string, o: ImportFileOptions): Imported & { format: 'kernel-tuner cache' | 't4' } {
  const name = o.name ?? spaceNameOf(path);
  if (!SPACE_NAME.test(name)) throw new Error(`--name ${name}: use lower-case letters, digits, - and _ (a space's name is a task name)`);
  if (builtinTaskNames().includes(name)) throw new Error(`--name ${name}: that is a built-in task's name; an imported space is a task of its own, give it another name`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // maybe an unclosed Kernel Tuner cache: its parser closes it
  }
  const common = { name, file: basename(path), sha256, command: o.command, importedAt: (o.now ?? new Date()).toISOString(), ...(o.baseline ? { baseline: o.baseline } : {}) };
  const t4 = json !== undefined && looksLikeT4(json);
  if (o.format === 't4' && !t4) throw new Error(`${path} is not a T4 results file (no "results" list); for a Kernel Tuner cache use: kernelduel import kernel-tuner ${path}`);
  const r = t4 ? { ...t4ToSpace(parseT4(text, path), { ...common, gpuName: o.gpuName }), format: 't4' as const } : { ...kernelTunerCacheToSpace(parseKernelTunerCache(text, path), common), format: 'kernel-tuner cache' as const };
  const check = RecordedSpaceSchema.safeParse(r.space);
  if (!check.success) throw new Error(`${path}: the imported space is not valid (${check.error.issues[0].path.join('.')}: ${check.error.issues[0].message})`);
  return r;
}

/** Where `kernelduel import` writes a space unless told: $KERNELDUEL_HOME/spaces/<gpu>/<name>.json, where the workbench finds recordings. */
export function defaultImportPath(space: RecordedSpace, env: NodeJS.ProcessEnv = process.env): string {
  return join(kernelduelHome(env), 'spaces', gpuSlug(space.gpu.name), `${space.task}.json`);
}

/** Writes JSON, gzip-compressed when the name ends in .gz. */
export function writeJsonFile(path: string, data: unknown): void {
  const text = JSON.stringify(data) + '\n';
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileAtomic(resolve(path), /\.gz$/i.test(path) ? gzipSync(Buffer.from(text, 'utf8')) : text);
}

export const EXPORT_FORMATS = ['kernel-tuner', 't4'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A recorded space file as a Kernel Tuner cache or T4 results. */
export function exportSpaceFile(path: string, format: ExportFormat): { data: unknown; warnings: string[] } {
  const space = loadSpace(path);
  if (format === 't4') return { data: spaceToT4(space, path), warnings: [] };
  const { cache, warnings } = spaceToKernelTunerCache(space, path);
  return { data: cache, warnings };
}
