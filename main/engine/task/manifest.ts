// The task manifest (task.yaml): schema, loading and validation with errors that name the field,
// the file and the line.
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join, resolve, basename } from 'node:path';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import YAML, { LineCounter } from 'yaml';
import { evalExpr, evalPositiveInt, exprSymbols, ExprError } from '../base/expr.js';

export const DTYPES = ['f32', 'f64', 'i32', 'u32', 'i64', 'u8'] as const;
export type Dtype = (typeof DTYPES)[number];
export const CTYPE: Record<Dtype, string> = {
  f32: 'float', f64: 'double', i32: 'int', u32: 'unsigned int', i64: 'long long', u8: 'unsigned char',
};
export const DTYPE_BYTES: Record<Dtype, number> = { f32: 4, f64: 8, i32: 4, u32: 4, i64: 8, u8: 1 };
export const isFloat = (d: Dtype): boolean => d === 'f32' || d === 'f64';

const ident = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a C identifier');
const exprOrNum = z.union([z.number(), z.string().min(1)]);

const Fill = z.union([
  z.strictObject({ uniform: z.tuple([z.number(), z.number()]) }),
  z.strictObject({ int: z.tuple([z.number().int(), z.number().int()]) }),
]);

const BufferArg = z.strictObject({
  name: ident,
  kind: z.literal('buffer'),
  dtype: z.enum(DTYPES),
  shape: z.array(exprOrNum).min(1),
  role: z.enum(['in', 'out', 'inout']),
  fill: Fill.optional(),
});
const ScalarArg = z.strictObject({
  name: ident,
  kind: z.literal('scalar'),
  dtype: z.enum(DTYPES),
  value: exprOrNum,
});
const Arg = z.discriminatedUnion('kind', [BufferArg, ScalarArg]);

const Tol = z.strictObject({ rtol: z.number().nonnegative(), atol: z.number().nonnegative() });

export const ManifestSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'use lower-case letters, digits, - and _'),
  description: z.string().optional(),
  entry: ident,
  args: z.array(Arg).min(1),
  sizes: z.array(z.record(ident, z.number().int())).min(1),
  timed: z.array(z.number().int().nonnegative()).optional(),
  tolerance: z.partialRecord(z.enum(DTYPES), Tol).optional(),
  tunables: z.record(ident, z.array(z.number()).min(1)).optional(),
  restrictions: z.array(z.string().min(1)).optional(),
  defaults: z.record(ident, z.number()).optional(),
  metrics: z.strictObject({ bytes: exprOrNum.optional(), flops: exprOrNum.optional(), threads: exprOrNum.optional() }).optional(),
  fast_math: z.boolean().optional(),
  files: z.strictObject({ reference: z.string().optional(), baseline: z.string().optional() }).optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;
export type ArgSpec = z.infer<typeof Arg>;
export type BufferArgSpec = z.infer<typeof BufferArg>;

export const DEFAULT_TOLERANCE: Record<Dtype, { rtol: number; atol: number }> = {
  f32: { rtol: 1e-4, atol: 1e-6 },
  f64: { rtol: 1e-9, atol: 1e-12 },
  i32: { rtol: 0, atol: 0 },
  u32: { rtol: 0, atol: 0 },
  i64: { rtol: 0, atol: 0 },
  u8: { rtol: 0, atol: 0 },
};

export interface Task {
  dir: string;
  manifestPath: string;
  manifest: Manifest;
  referencePath: string;
  baselinePath: string;
  referenceSource: string;
  baselineSource: string;
  /** sha256 of manifest + reference + baseline text: identifies the task's exact contents. */
  hash: string;
  timed: number[];
  tolerance: Record<Dtype, { rtol: number; atol: number }>;
}

export interface ManifestIssue {
  /** Dotted path of the field, e.g. `args[1].dtype`. */
  field: string;
  message: string;
  line?: number;
}

export class TaskError extends Error {
  constructor(
    public readonly file: string,
    public readonly issues: ManifestIssue[],
  ) {
    super(
      `${file}: ${issues.length === 1 ? 'invalid task' : `${issues.length} problems`}\n` +
        issues.map((i) => `  - ${i.field || '(manifest)'}${i.line ? ` (line ${i.line})` : ''}: ${i.message}`).join('\n'),
    );
    this.name = 'TaskError';
  }
}

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s ? `.${String(p)}` : String(p);
  return s;
}

/** Checks that go beyond the schema: expressions parse, names resolve, sizes are sane. */
export function semanticIssues(m: Manifest): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const add = (field: string, message: string): void => void issues.push({ field, message });
  const names = new Set<string>();
  m.args.forEach((a, i) => {
    if (names.has(a.name)) add(`args[${i}].name`, `"${a.name}" is used twice`);
    names.add(a.name);
  });
  const tunables = m.tunables ?? {};
  const sizeSyms = new Set(Object.keys(m.sizes[0] ?? {}));
  m.sizes.forEach((s, i) => {
    const keys = new Set(Object.keys(s));
    for (const k of sizeSyms) if (!keys.has(k)) add(`sizes[${i}]`, `missing size symbol "${k}" (every size must give the same symbols)`);
    for (const [k, v] of Object.entries(s)) {
      if (!sizeSyms.has(k)) add(`sizes[${i}].${k}`, `"${k}" is not in sizes[0]`);
      if (v <= 0) add(`sizes[${i}].${k}`, `must be a positive integer, got ${v}`);
      if (v > 2 ** 31 - 1) add(`sizes[${i}].${k}`, `${v} is absurdly large (over 2^31-1)`);
    }
  });
  for (const [k, vals] of Object.entries(tunables)) {
    if (sizeSyms.has(k)) add(`tunables.${k}`, `"${k}" is also a size symbol`);
    if (new Set(vals).size !== vals.length) add(`tunables.${k}`, 'has repeated values');
  }
  for (const t of m.timed ?? []) if (t >= m.sizes.length) add('timed', `size index ${t} does not exist (there are ${m.sizes.length} sizes)`);
  // Shapes and scalar values must evaluate for every size.
  m.sizes.forEach((size, si) => {
    m.args.forEach((a, ai) => {
      try {
        if (a.kind === 'buffer') {
          let elems = 1;
          a.shape.forEach((d) => (elems *= evalPositiveInt(d, size)));
          const bytes = elems * DTYPE_BYTES[a.dtype];
          if (bytes > 16 * 2 ** 30) add(`args[${ai}].shape`, `size ${si} makes "${a.name}" ${(bytes / 2 ** 30).toFixed(1)} GiB: too large`);
        } else {
          evalExpr(a.value, size);
        }
      } catch (e) {
        if (e instanceof ExprError) add(`args[${ai}].${a.kind === 'buffer' ? 'shape' : 'value'}`, `${e.message} (size ${si})`);
        else throw e;
      }
    });
  });
  m.args.forEach((a, ai) => {
    if (a.kind === 'buffer' && a.fill) {
      if ('uniform' in a.fill) {
        if (!isFloat(a.dtype)) add(`args[${ai}].fill`, `uniform fill needs a float dtype; use {int: [lo, hi]} for ${a.dtype}`);
        if (a.fill.uniform[0] >= a.fill.uniform[1]) add(`args[${ai}].fill.uniform`, 'low must be below high');
      } else if (a.fill.int[0] > a.fill.int[1]) add(`args[${ai}].fill.int`, 'low must not exceed high');
    }
  });
  const scope0: Record<string, number> = { ...(m.sizes[0] ?? {}) };
  for (const [k, v] of Object.entries(tunables)) scope0[k] = v[0];
  (m.restrictions ?? []).forEach((r, i) => {
    try {
      for (const s of exprSymbols(r)) if (!Object.prototype.hasOwnProperty.call(scope0, s)) throw new ExprError(`"${r}": unknown name "${s}" (tunables: ${Object.keys(tunables).join(', ') || 'none'})`);
    } catch (e) {
      if (e instanceof ExprError) add(`restrictions[${i}]`, e.message);
      else throw e;
    }
  });
  for (const [k, v] of Object.entries(m.defaults ?? {})) {
    if (!(k in tunables)) add(`defaults.${k}`, `"${k}" is not a tunable`);
    else if (!tunables[k].includes(v)) add(`defaults.${k}`, `${v} is not one of the values of ${k} (${tunables[k].join(', ')})`);
  }
  for (const key of ['bytes', 'flops'] as const) {
    const ex = m.metrics?.[key];
    if (ex === undefined) continue;
    try {
      evalExpr(ex, m.sizes[0]);
    } catch (e) {
      if (e instanceof ExprError) add(`metrics.${key}`, e.message);
      else throw e;
    }
  }
  // Threads per block (for occupancy): an expression of the tunables, checked at their first values.
  if (m.metrics?.threads !== undefined) {
    const first = Object.fromEntries(Object.entries(tunables).map(([k, vs]) => [k, m.defaults?.[k] ?? vs[0]]));
    try {
      evalExpr(m.metrics.threads, { ...m.sizes[0], ...first });
    } catch (e) {
      if (e instanceof ExprError) add('metrics.threads', e.message);
      else throw e;
    }
  }
  return issues;
}

/** Validates manifest text (YAML or JSON). Returns the manifest or the issues with line numbers. */
export function parseManifest(text: string, file = 'task.yaml'): { manifest?: Manifest; issues: ManifestIssue[] } {
  const lc = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    return {
      issues: doc.errors.map((e) => ({ field: '', message: `${file} is not valid YAML: ${e.message.split('\n')[0]}`, line: e.linePos?.[0]?.line ?? (e.pos ? lc.linePos(e.pos[0]).line : undefined) })),
    };
  }
  const raw: unknown = doc.toJS();
  const lineOf = (path: readonly PropertyKey[]): number | undefined => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return lc.linePos(node.range[0]).line;
    }
    return undefined;
  };
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      issues: parsed.error.issues.map((i) => ({ field: fieldPath(i.path), message: i.message, line: lineOf(i.path) })),
    };
  }
  const issues = semanticIssues(parsed.data).map((i) => ({ ...i, line: lineOf(i.field.split(/\.|\[|\]/).filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p))) }));
  return issues.length ? { issues } : { manifest: parsed.data, issues: [] };
}

export function findManifest(dir: string): string | null {
  for (const n of ['task.yaml', 'task.yml', 'task.json']) {
    const p = join(dir, n);
    if (existsSync(p)) return p;
  }
  return null;
}

/** Loads a task folder. Throws TaskError naming the file and fields. */
export function loadTask(dirIn: string): Task {
  const dir = resolve(dirIn);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new TaskError(dir, [{ field: '', message: 'no such task folder (a task is a folder holding task.yaml, reference.cu and kernel.cu)' }]);
  }
  const manifestPath = findManifest(dir);
  if (!manifestPath) throw new TaskError(dir, [{ field: '', message: 'no task.yaml in this folder (see docs/TASK-FORMAT.md)' }]);
  const text = readFileSync(manifestPath, 'utf8');
  const { manifest, issues } = parseManifest(text, basename(manifestPath));
  if (!manifest) throw new TaskError(manifestPath, issues);
  const referencePath = join(dir, manifest.files?.reference ?? 'reference.cu');
  const baselinePath = join(dir, manifest.files?.baseline ?? 'kernel.cu');
  const missing: ManifestIssue[] = [];
  if (!existsSync(referencePath)) missing.push({ field: 'files.reference', message: `${referencePath} does not exist` });
  if (!existsSync(baselinePath)) missing.push({ field: 'files.baseline', message: `${baselinePath} does not exist` });
  if (missing.length) throw new TaskError(manifestPath, missing);
  const referenceSource = readFileSync(referencePath, 'utf8');
  const baselineSource = readFileSync(baselinePath, 'utf8');
  const entryIssues: ManifestIssue[] = [];
  const entryRe = new RegExp(`\\b${manifest.entry}\\s*\\(`);
  if (!entryRe.test(referenceSource)) entryIssues.push({ field: 'entry', message: `${referencePath} does not define the entry point "${manifest.entry}"` });
  if (!entryRe.test(baselineSource)) entryIssues.push({ field: 'entry', message: `${baselinePath} does not define the entry point "${manifest.entry}"` });
  if (entryIssues.length) throw new TaskError(manifestPath, entryIssues);
  const hash = createHash('sha256').update(text).update('\0').update(referenceSource).update('\0').update(baselineSource).digest('hex');
  const tolerance = { ...DEFAULT_TOLERANCE, ...(manifest.tolerance ?? {}) } as Task['tolerance'];
  return {
    dir, manifestPath, manifest, referencePath, baselinePath, referenceSource, baselineSource, hash,
    timed: manifest.timed ?? [0], tolerance,
  };
}

/** Concrete buffers and scalars of one problem size. */
export interface SizeLayout {
  index: number;
  values: Record<string, number>;
  args: Array<
    | { kind: 'buffer'; name: string; dtype: Dtype; role: 'in' | 'out' | 'inout'; elements: number; fill: { kind: 'uniform' | 'int'; lo: number; hi: number } }
    | { kind: 'scalar'; name: string; dtype: Dtype; value: number }
  >;
  bytes?: number;
  flops?: number;
}

export function sizeLayout(task: Task, index: number): SizeLayout {
  const m = task.manifest;
  const values = m.sizes[index];
  if (!values) throw new Error(`task ${m.name} has no size ${index}`);
  const args: SizeLayout['args'] = m.args.map((a) => {
    if (a.kind === 'scalar') return { kind: 'scalar', name: a.name, dtype: a.dtype, value: evalExpr(a.value, values) };
    const elements = a.shape.reduce<number>((acc, d) => acc * evalPositiveInt(d, values), 1);
    const f = a.fill ?? (isFloat(a.dtype) ? { uniform: [-1, 1] as [number, number] } : { int: [1, 100] as [number, number] });
    const fill = 'uniform' in f ? { kind: 'uniform' as const, lo: f.uniform[0], hi: f.uniform[1] } : { kind: 'int' as const, lo: f.int[0], hi: f.int[1] };
    return { kind: 'buffer', name: a.name, dtype: a.dtype, role: a.role, elements, fill };
  });
  const bytes = m.metrics?.bytes !== undefined ? evalExpr(m.metrics.bytes, values) : undefined;
  const flops = m.metrics?.flops !== undefined ? evalExpr(m.metrics.flops, values) : undefined;
  return { index, values, args, bytes, flops };
}
