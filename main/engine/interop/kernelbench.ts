// `kernelduel import kernelbench`: KernelBench problem files (class Model, get_inputs(),
// get_init_inputs()) become PyTorch-reference task folders (docs/TASK-FORMAT.md, "PyTorch-reference
// tasks"): task.yaml with the entry point's arguments discovered by running the trusted reference
// script, model.py (the problem file, unchanged) and a placeholder kernel.cu that explains the
// entry point (a CUDA baseline is written by the user).
//
// Shapes come from the problem's own sizes, found by the cheapest way that is exact: torch's meta
// device (shapes without data) first; then, when the tensors are small enough, a real forward on
// the CPU within a few seconds (which also tells whether the forward is random); when an operator
// has no meta implementation, a real forward, else a forward at batch sizes 1 and 2 extrapolated
// (said in task.yaml and in the result).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CTYPE, DEFAULT_WEIGHTS_SEED, loadTask, PLACEHOLDER_BASELINE_MARK, TaskError, type ArgSpec } from '../task/manifest.js';
import { entrySignature } from '../source/entry.js';
import { layoutToArgs, manifestLayoutIssues, type Layout, type ReferenceFailureKind } from '../pytorch/protocol.js';
import { ReferenceFailure, ReferenceServer } from '../pytorch/server.js';
import { KERNELDUEL_VERSION } from '../base/version.js';

export const KERNELBENCH_ENTRY = 'model_forward';
/** KernelBench's current fp32 tolerance (torch.allclose, atol = rtol = 1e-4). */
export const KERNELBENCH_F32_TOLERANCE = { rtol: 1e-4, atol: 1e-4 };

export interface KernelBenchImportOptions {
  python: string;
  /** Where the task folders go (one per problem). */
  outDir: string;
  /** Time limit of the CPU forward that confirms the shapes (default 5 s); past it, meta's shapes are kept. */
  runLimitMs?: number;
  /** The CPU forward is not tried above this many bytes of tensors (default 1 GiB). */
  runMaxBytes?: number;
  /** Time limit of loading the problem and of the meta and scaled layouts (default 120 s each). */
  stepLimitMs?: number;
  /** RLIMIT_DATA of the Python process (default 8 GiB). */
  dataBytes?: number;
  /** Overwrite task folders that exist (default: refuse). */
  force?: boolean;
  /** The command line that is importing (written into task.yaml). */
  command?: string;
  env?: NodeJS.ProcessEnv;
  onResult?: (r: ImportedProblem) => void;
}

export type ShapesFrom = 'cpu' | 'meta' | 'scaled';

export interface ImportedProblem {
  file: string;
  name: string;
  level: number | null;
  /** The task folder written. */
  dir?: string;
  shapesFrom?: ShapesFrom;
  /** How the shapes were found, in words (why not a CPU forward). */
  shapesNote?: string;
  /** Bytes of all the entry point's tensors at the problem's sizes. */
  bytes?: number;
  /** Seconds of the CPU forward, when one ran. */
  cpuForwardSeconds?: number;
  /** The forward gives different outputs for the same inputs (a dropout module, or two CPU forwards
   * that differed): no kernel can match it. */
  randomForward?: boolean;
  warnings: string[];
  failure?: { kind: ReferenceFailureKind | 'exists' | 'invalid'; message: string };
  seconds: number;
}

/** The problem files of a file or folder: *.py, ordered by their KernelBench number. */
export function listProblems(source: string): string[] {
  const p = resolve(source);
  if (!existsSync(p)) throw new Error(`${source}: no such file or folder (give a KernelBench problem file or a folder of them, e.g. KernelBench/level1)`);
  if (statSync(p).isFile()) return [p];
  const files = readdirSync(p).filter((f) => f.endsWith('.py') && !f.startsWith('_')).map((f) => join(p, f));
  if (!files.length) throw new Error(`${source}: no .py problem files in this folder`);
  const num = (f: string): number => Number(/^(\d+)_/.exec(basename(f))?.[1] ?? Number.MAX_SAFE_INTEGER);
  return files.sort((a, b) => num(a) - num(b) || a.localeCompare(b));
}

/** kb-l1-19-relu for level1/19_ReLU.py. */
export function taskNameOf(file: string): { name: string; level: number | null; number: number | null; title: string } {
  const level = /level(\d+)/i.exec(basename(dirname(file)));
  const m = /^(\d+)_(.*)\.py$/.exec(basename(file));
  const title = (m ? m[2] : basename(file, '.py')).replace(/_+$/, '');
  const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'problem';
  const parts = ['kb', level ? `l${level[1]}` : null, m ? m[1] : null, slug].filter((x): x is string => x !== null);
  return { name: parts.join('-'), level: level ? Number(level[1]) : null, number: m ? Number(m[1]) : null, title: title.replace(/_/g, ' ') };
}

/** Imports every problem of a file or folder, one after another. */
export async function importKernelBench(source: string, o: KernelBenchImportOptions): Promise<ImportedProblem[]> {
  const out: ImportedProblem[] = [];
  for (const f of listProblems(source)) {
    const r = await importProblem(f, o);
    o.onResult?.(r);
    out.push(r);
  }
  return out;
}

const GiB = 2 ** 30;
const fmtBytes = (b: number): string => (b >= GiB ? `${(b / GiB).toFixed(1)} GiB` : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${b} bytes`);

/** Imports one problem file into `<outDir>/<task name>/`. Never throws for a problem's failure. */
export async function importProblem(file: string, o: KernelBenchImportOptions): Promise<ImportedProblem> {
  const t0 = Date.now();
  const { name, level } = taskNameOf(file);
  const dir = join(resolve(o.outDir), name);
  const res: ImportedProblem = { file, name, level, warnings: [], seconds: 0 };
  const done = (): ImportedProblem => ({ ...res, seconds: (Date.now() - t0) / 1000 });
  if (existsSync(join(dir, 'task.yaml')) && !o.force) {
    res.failure = { kind: 'exists', message: `${dir} already holds a task (give --force to overwrite it)` };
    return done();
  }
  let found: { layout: Layout; from: ShapesFrom; note: string } | undefined;
  try {
    found = await discoverLayout(file, o, res);
  } catch (e) {
    if (!(e instanceof ReferenceFailure)) throw e;
    res.failure = { kind: e.kind, message: e.message };
    return done();
  }
  const { layout, from, note } = found;
  res.shapesFrom = from;
  res.shapesNote = note;
  res.bytes = layout.bytes;
  res.warnings.push(...layout.notes.filter((n) => !n.startsWith('shapes extrapolated')));
  const conv = layoutToArgs(layout);
  if (conv.problems.length) {
    res.failure = { kind: 'unsupported', message: conv.problems.join('; ') };
    return done();
  }
  res.randomForward = layout.random_forward === true || layout.random_modules.length > 0;
  if (layout.random_modules.length) res.warnings.push(`the forward is random as KernelBench runs it (training mode): ${layout.random_modules.join(', ')}; no kernel can match its outputs element by element`);
  else if (layout.random_forward) res.warnings.push('the forward is random (the same inputs gave different outputs): no kernel can match its outputs element by element');
  layout.output_stats?.forEach((s, i) => {
    if (s.nonfinite) res.warnings.push(`output ${i} has ${s.nonfinite} non-finite values on the CPU`);
    if (s.std === 0 && (s.elements ?? 0) > 1) res.warnings.push(`output ${i} is constant (every element ${s.min}) on the CPU: a check against it proves little`);
  });
  const source = readFileSync(file, 'utf8');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.py'), source);
  writeFileSync(join(dir, 'task.yaml'), renderManifest(file, source, name, layout, conv.args, from, note, o.command));
  writeFileSync(join(dir, 'kernel.cu'), renderStub(file, name, layout, conv.args));
  // Self-check: the folder loads as a task and its args are the reference's layout.
  try {
    const task = loadTask(dir);
    const issues = manifestLayoutIssues(task.manifest, 0, layout);
    const stub = readFileSync(join(dir, 'kernel.cu'), 'utf8');
    if (!stub.includes(entrySignature(task))) issues.push({ field: 'files.baseline', message: `kernel.cu does not spell the entry point as ${entrySignature(task)}` });
    if (issues.length) res.failure = { kind: 'invalid', message: `the task written does not match the reference: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}` };
  } catch (e) {
    if (!(e instanceof TaskError)) throw e;
    res.failure = { kind: 'invalid', message: e.message };
  }
  res.dir = dir;
  return done();
}

async function startServer(file: string, o: KernelBenchImportOptions, overrides?: Record<string, number>): Promise<ReferenceServer> {
  return ReferenceServer.start({ python: o.python, problem: file, device: 'cpu', overrides, env: o.env, startTimeoutMs: o.stepLimitMs ?? 120_000, dataBytes: o.dataBytes ?? 8 * GiB });
}

async function discoverLayout(file: string, o: KernelBenchImportOptions, res: ImportedProblem): Promise<{ layout: Layout; from: ShapesFrom; note: string }> {
  const step = o.stepLimitMs ?? 120_000;
  const runLimit = o.runLimitMs ?? 5_000;
  const maxBytes = o.runMaxBytes ?? GiB;
  let server = await startServer(file, o);
  try {
    let meta: Layout | undefined;
    let metaError: ReferenceFailure | undefined;
    try {
      meta = await server.layout({ via: 'meta' }, step);
    } catch (e) {
      if (!(e instanceof ReferenceFailure)) throw e;
      if (e.kind !== 'no-meta') throw e;
      metaError = e;
    }
    if (meta && meta.bytes > maxBytes) {
      return { layout: meta, from: 'meta', note: `from torch's meta device (shapes without data): ${fmtBytes(meta.bytes)} of tensors is too much to run on the CPU here (over ${fmtBytes(maxBytes)})` };
    }
    try {
      const run = await server.layout({ via: 'run', determinism: true }, runLimit);
      res.cpuForwardSeconds = run.seconds.forward;
      if (meta) {
        const a = meta.args.map((x) => `${x.name}:${x.dtype}[${x.shape.join(',')}]`).join(' ');
        const b = run.args.map((x) => `${x.name}:${x.dtype}[${x.shape.join(',')}]`).join(' ');
        if (a !== b) res.warnings.push(`the meta device and a CPU forward disagree on the shapes (meta: ${a}; CPU: ${b}); the CPU's are used`);
      }
      return { layout: run, from: 'cpu', note: `from a forward on the CPU (${run.seconds.forward.toFixed(2)} s)` };
    } catch (e) {
      if (!(e instanceof ReferenceFailure)) throw e;
      if (e.kind !== 'timeout' && e.kind !== 'oom' && e.kind !== 'crashed') {
        if (!meta) throw e;
        res.warnings.push(`a forward on the CPU failed (${e.kind}: ${e.message.split('\n')[0]}); shapes from the meta device`);
        return { layout: meta, from: 'meta', note: `from torch's meta device (shapes without data): the CPU forward failed` };
      }
      const why = e.kind === 'timeout' ? `a CPU forward did not finish within ${(runLimit / 1000).toFixed(0)} s` : `a CPU forward ran out of memory or crashed`;
      if (meta) return { layout: meta, from: 'meta', note: `from torch's meta device (shapes without data): ${why}` };
      server.kill();
      server = await startServer(file, o);
      const scaled = await server.layout({ via: 'scaled' }, step);
      const s = scaled.scaled;
      return {
        layout: scaled,
        from: 'scaled',
        note: `extrapolated linearly from CPU forwards with ${s?.constant} = ${s?.points.join(' and ')} (the problem's ${s?.constant} is ${s?.value}): ${noMeta(metaError)}, and ${why}`,
      };
    }
  } finally {
    await server.close();
  }
}

/** "aten::max_pool3d_with_indices has no meta implementation" from torch's long message. */
function noMeta(e: ReferenceFailure | undefined): string {
  const op = e ? /Could not run '([^']+)'/.exec(e.message)?.[1] : undefined;
  return op ? `${op} has no meta implementation in this torch` : 'an operator has no meta implementation in this torch';
}

function cParam(a: ArgSpec): string {
  return a.kind === 'buffer' ? `${a.role === 'in' ? 'const ' : ''}${CTYPE[a.dtype]}* ${a.name}` : `${CTYPE[a.dtype]} ${a.name}`;
}

function origin(l: Layout, i: number): string {
  const a = l.args[i];
  const what = a.source === 'input' || a.source === 'output' ? `forward ${a.source} ${a.index ?? ''}` : `${a.source} ${a.torch_name}`;
  const notes = [
    a.kind === 'scalar' ? `a number: ${String(a.value)}, passed by value` : null,
    a.torch_dtype === 'bool' ? 'bool: one byte each, 0 or 1' : null,
    a.kind === 'tensor' && a.shape.length === 0 ? 'a 0-d tensor: one element' : null,
  ].filter((x): x is string => x !== null);
  return `${what.replace(/ $/, '')}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

function renderManifest(file: string, source: string, name: string, l: Layout, args: ArgSpec[], from: ShapesFrom, note: string, command?: string): string {
  const { level, number, title } = taskNameOf(file);
  const doc = /class\s+Model\b[^\n]*\n\s*(?:"""|''')\s*([^\n]*?)\s*(?:\n|"""|''')/.exec(source)?.[1]?.trim();
  const sha = createHash('sha256').update(source).digest('hex');
  const consts = Object.entries(l.constants).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
  const lines = [
    `# Imported from KernelBench${level !== null ? ` level ${level}` : ''}: ${basename(file)} (sha256 ${sha.slice(0, 16)}) by KernelDuel ${KERNELDUEL_VERSION}${command ? ` (\`${command}\`)` : ''}.`,
    `# The reference is model.py (PyTorch); this task is checked and timed against it. Shapes: ${note}.`,
    '# Entry point: the forward\'s inputs, then the module\'s parameters and buffers (named_parameters(),',
    '# named_buffers() order), then the outputs; every buffer contiguous and row-major (docs/TASK-FORMAT.md).',
    `name: ${name}`,
    `description: ${JSON.stringify(`KernelBench${level !== null ? ` level ${level}` : ''}${number !== null ? ` #${number}` : ''} (${title})${doc ? `: ${doc}` : ''}`)}`,
    `entry: ${KERNELBENCH_ENTRY}`,
    `reference: {pytorch: model.py, weights_seed: ${l.weights_seed ?? DEFAULT_WEIGHTS_SEED}}`,
    'args:',
  ];
  const width = Math.max(...args.map((a) => flow(a).length));
  args.forEach((a, i) => lines.push(`  - ${flow(a).padEnd(width)}  # ${origin(l, i)}`));
  lines.push('sizes:', `  - {}   # the problem's own sizes; its module-level constants: ${consts || 'none'} (docs/TASK-FORMAT.md: other sizes)`);
  if (args.some((a) => a.dtype === 'f32')) lines.push('tolerance:', `  f32: {rtol: ${KERNELBENCH_F32_TOLERANCE.rtol.toExponential(1)}, atol: ${KERNELBENCH_F32_TOLERANCE.atol.toExponential(1)}}   # KernelBench's (torch.allclose)`);
  const bytes = args.reduce((s, a, i) => s + (a.kind === 'buffer' ? (l.args[i].bytes ?? 0) : 0), 0);
  lines.push('metrics:', `  bytes: ${bytes}   # every input, parameter, buffer and output once`);
  if (from !== 'cpu') lines.push(`# (shapes not confirmed by a CPU forward: ${from})`);
  return lines.join('\n') + '\n';
}

function flow(a: ArgSpec): string {
  return a.kind === 'buffer'
    ? `{name: ${a.name}, kind: buffer, dtype: ${a.dtype}, shape: [${a.shape.join(', ')}], role: ${a.role}}`
    : `{name: ${a.name}, kind: scalar, dtype: ${a.dtype}, value: ${a.value}}`;
}

function renderStub(file: string, name: string, l: Layout, args: ArgSpec[]): string {
  const init = Array.isArray(l.init_inputs) ? l.init_inputs.map((v) => JSON.stringify(v)).join(', ') : JSON.stringify(l.init_inputs);
  const rows = args.map((a, i) => `//   ${cParam(a).padEnd(36)} ${a.kind === 'buffer' ? `[${a.shape.join(', ')}]` : ''}  ${origin(l, i)}`);
  return [
    `// ${name}: CUDA baseline of KernelBench's ${basename(file)} -- a PLACEHOLDER (${PLACEHOLDER_BASELINE_MARK}).`,
    '//',
    '// This file does no work yet: its outputs are never written, so it builds but fails every check.',
    '// Write the CUDA version of model.py (the PyTorch reference) here, keeping the entry point below.',
    '// Until then the task works with Python candidates (ModelNew) and with REPLAY.',
    '//',
    '// The entry point takes, in this order, the forward\'s inputs, the module\'s parameters and',
    '// buffers (named_parameters(), then named_buffers()), then the outputs. Buffers are device memory,',
    '// contiguous and row-major; launch on stream 0 (docs/TASK-FORMAT.md, "What an entry point may do").',
    `// The module is Model(*get_init_inputs()) = Model(${init}), built after`,
    `// torch.manual_seed(${l.weights_seed}), in ${l.training ? `training mode (as KernelBench runs it${l.args.some((a) => a.source === 'buffer' && /running_mean$/.test(a.torch_name)) ? ': BatchNorm normalises with the batch\'s statistics, not the running ones' : ''})` : 'eval mode'};`,
    '// settings it keeps as plain attributes (scaling factors, dims) are constants of your kernel.',
    '//',
    ...rows,
    '',
    '#include <cuda_runtime.h>',
    '',
    `void ${KERNELBENCH_ENTRY}(${args.map(cParam).join(', ')}) {`,
    '  // TODO: launch the kernel(s) computing the outputs from the inputs, parameters and buffers.',
    '}',
    '',
  ].join('\n');
}
