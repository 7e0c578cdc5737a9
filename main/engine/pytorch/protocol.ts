// The trusted PyTorch reference script (resources/python/kd_reference.py) and its answers: where it
// is, the shape of what it says (protocol kd-reference/1, validated with zod), and the layout it
// reports turned into a task's entry-point arguments (docs/TASK-FORMAT.md, "PyTorch-reference tasks").
import { z } from 'zod';
import { evalPositiveInt, ExprError } from '../base/expr.js';
import { DTYPES, type ArgSpec, type Manifest, type ManifestIssue } from '../task/manifest.js';

export const REFERENCE_PROTOCOL = 'kd-reference/1';

/** Kinds of failure the script reports, and those the client adds (timeout, crashed). */
export const FAILURE_KINDS = ['problem', 'needs-cuda', 'needs-torch', 'needs-newer-torch', 'no-meta', 'unsupported', 'oom', 'protocol', 'timeout', 'crashed'] as const;
export type ReferenceFailureKind = (typeof FAILURE_KINDS)[number];

export const ErrorSchema = z.object({
  kind: z.string(),
  message: z.string(),
  traceback: z.string().optional(),
});

export const ReadySchema = z.object({
  ready: z.literal(true),
  protocol: z.string(),
  pid: z.number().int(),
  problem: z.string(),
  device: z.string(),
  weights_seed: z.number().int(),
  torch: z.string(),
  cuda: z.boolean(),
  tf32: z.boolean().nullable(),
  constants: z.record(z.string(), z.unknown()),
  overrides: z.record(z.string(), z.number()),
});
export type Ready = z.infer<typeof ReadySchema>;

const Source = z.enum(['input', 'parameter', 'buffer', 'output']);
const JsonNumber = z.union([z.number(), z.boolean(), z.string()]);

export const LayoutArgSchema = z.object({
  /** A C identifier, unique in the layout: the entry point's parameter name. */
  name: z.string(),
  /** The name on the PyTorch side: the forward's parameter, `conv.weight`, `bn.running_mean`, `out0`. */
  torch_name: z.string(),
  source: Source,
  index: z.number().int().optional(),
  kind: z.enum(['tensor', 'scalar']),
  role: z.enum(['in', 'out']),
  torch_dtype: z.string(),
  /** KernelDuel's dtype, or null when it has none for torch_dtype (float16...). */
  dtype: z.enum(DTYPES).nullable(),
  /** [] for a 0-d tensor and for scalars. */
  shape: z.array(z.number().int().nonnegative()),
  elements: z.number().int().nonnegative().optional(),
  bytes: z.number().int().nonnegative().optional(),
  value: JsonNumber.optional(),
});
export type LayoutArg = z.infer<typeof LayoutArgSchema>;

const OutputStatsSchema = z.object({
  nonfinite: z.number().int().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  mean: z.number().optional(),
  std: z.number().optional(),
  elements: z.number().int().optional(),
});

export const LayoutSchema = z.object({
  ok: z.literal(true),
  problem: z.string(),
  /** run: shapes from a real forward on `device`; meta: on torch's meta device (no data); scaled:
   * extrapolated from real runs with a smaller constant (see `scaled`). */
  via: z.enum(['run', 'meta', 'scaled']),
  device: z.string(),
  seed: z.number().int(),
  weights_seed: z.number().int(),
  model_class: z.string(),
  overrides: z.record(z.string(), z.number()),
  constants: z.record(z.string(), z.unknown()),
  init_inputs: z.unknown(),
  training: z.boolean(),
  /** Submodules whose forward is random as run (dropout in training mode). */
  random_modules: z.array(z.string()),
  args: z.array(LayoutArgSchema),
  bytes: z.number().int().nonnegative(),
  seconds: z.record(z.string(), z.number()),
  notes: z.array(z.string()),
  output_stats: z.array(OutputStatsSchema).optional(),
  random_forward: z.boolean().optional(),
  scaled: z.object({ constant: z.string(), points: z.array(z.number()), value: z.number() }).optional(),
});
export type Layout = z.infer<typeof LayoutSchema>;

export const RunFileSchema = LayoutArgSchema.extend({ path: z.string().optional(), sha256: z.string().optional() });
export const RunAnswerSchema = z.object({
  ok: z.literal(true),
  seed: z.number().int(),
  device: z.string(),
  files: z.array(RunFileSchema),
  output_stats: z.array(OutputStatsSchema),
  seconds: z.record(z.string(), z.number()),
});
export type RunAnswer = z.infer<typeof RunAnswerSchema>;

/** A layout's arguments as task.yaml args (the entry point's signature), or why it cannot be one. */
export function layoutToArgs(layout: Layout): { args: ArgSpec[]; problems: string[] } {
  const problems: string[] = [];
  const args: ArgSpec[] = [];
  for (const a of layout.args) {
    const what = `${a.source} ${a.torch_name}`;
    if (a.dtype === null) {
      problems.push(`${what} is ${a.torch_dtype}, which KernelDuel's entry points cannot take (dtypes: ${DTYPES.join(' ')})`);
      continue;
    }
    if (a.kind === 'scalar') {
      const v = typeof a.value === 'boolean' ? Number(a.value) : a.value;
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        problems.push(`${what} is the number ${String(a.value)}, which task.yaml cannot hold`);
        continue;
      }
      args.push({ name: a.name, kind: 'scalar', dtype: a.dtype, value: v });
      continue;
    }
    if (a.shape.some((d) => d === 0)) {
      problems.push(`${what} has shape [${a.shape.join(', ')}]: an empty tensor cannot be a buffer`);
      continue;
    }
    args.push({ name: a.name, kind: 'buffer', dtype: a.dtype, shape: a.shape.length ? a.shape : [1], role: a.role });
  }
  return { args, problems };
}

/** Where a task's args differ from the layout its PyTorch reference reports for a size: each issue
 * names the arg. The judge checks every size this way before it trusts the manifest's shapes. */
export function manifestLayoutIssues(m: Manifest, sizeIndex: number, layout: Layout): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const size = m.sizes[sizeIndex] ?? {};
  const want = layoutToArgs(layout);
  for (const p of want.problems) issues.push({ field: 'reference.pytorch', message: p });
  const n = Math.max(m.args.length, want.args.length);
  for (let i = 0; i < n; i++) {
    const a = m.args[i];
    const w = want.args[i];
    if (!a) {
      issues.push({ field: 'args', message: `the reference has ${want.args.length} arguments, task.yaml ${m.args.length}: missing ${w.name} (${describe(w)})` });
      continue;
    }
    if (!w) {
      issues.push({ field: `args[${i}]`, message: `${a.name}: the reference has no argument ${i + 1} (it has ${want.args.length})` });
      continue;
    }
    const field = `args[${i}]`;
    if (a.name !== w.name) issues.push({ field: `${field}.name`, message: `is ${a.name}, the reference's argument ${i + 1} is ${w.name} (${describe(w)})` });
    if (a.kind !== w.kind) issues.push({ field: `${field}.kind`, message: `${a.name} is a ${a.kind}, the reference's is a ${w.kind}` });
    if (a.dtype !== w.dtype) issues.push({ field: `${field}.dtype`, message: `${a.name} is ${a.dtype}, the reference's is ${w.dtype}` });
    if (a.kind === 'buffer' && w.kind === 'buffer') {
      if (a.role !== w.role && !(a.role === 'inout' && w.role === 'in')) issues.push({ field: `${field}.role`, message: `${a.name} is ${a.role}, the reference's is ${w.role}` });
      let got: number[];
      try {
        got = a.shape.map((d) => evalPositiveInt(d, size));
      } catch (e) {
        if (e instanceof ExprError) {
          issues.push({ field: `${field}.shape`, message: `${e.message} (size ${sizeIndex})` });
          continue;
        }
        throw e;
      }
      if (got.join(',') !== w.shape.join(',')) {
        issues.push({ field: `${field}.shape`, message: `${a.name} is [${got.join(', ')}] for size ${sizeIndex}, the reference's is [${w.shape.join(', ')}]` });
      }
    }
  }
  return issues;
}

function describe(a: ArgSpec): string {
  return a.kind === 'buffer' ? `${a.role} ${a.dtype} [${a.shape.join(', ')}]` : `${a.dtype} scalar`;
}
