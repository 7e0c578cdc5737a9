// The CUDA-L1 contrastive prompt: the task, the rules, earlier variants with their measured
// speedups and verdicts, and a demand for three parts (performance analysis, algorithm design,
// code in one ```cuda block).
import { createHash } from 'node:crypto';
import { entrySignature } from '../source/entry.js';
import type { Task } from '../task/manifest.js';
import type { ChatMessage } from './provider.js';

export interface PromptExemplar {
  id: string;
  source: string;
  /** Measured speedup over the baseline. */
  speedup: number;
  medianMs?: number;
  /** Against the baseline (or from a duel): faster / slower / same / unsure. */
  verdict?: string;
  /** The #define values it was built with, if any. */
  config?: Record<string, number>;
  /** A Python candidate's label: whose kernels did the work (custom, pytorch-only ...). */
  label?: string;
}

export interface PromptInput {
  task: Task;
  exemplars: PromptExemplar[];
  /** The baseline's measured time on this GPU, if timed. */
  baselineMs?: number | null;
  /** The session's best speedup so far. */
  bestSpeedup?: number | null;
  gpu?: string | null;
  /** `python`: the candidates are KernelBench-style Python files (ModelNew) of a PyTorch-reference task. */
  candidates?: 'cuda' | 'python';
  /** Where the candidates are measured, in words (Python candidates: a GPU, or the CPU). */
  device?: string | null;
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  /** sha256 of the messages (16 hex): the GRPO group key. */
  promptId: string;
}

export const SYSTEM_PROMPT =
  'You are an expert CUDA performance engineer. You make kernels faster on the given GPU without changing what they compute. ' +
  'You reason from measurements: you study why the faster of the shown variants is faster, then design and write a faster one.';

const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(3));

export function rulesFor(task: Task): string[] {
  const m = task.manifest;
  return [
    `Keep the entry point exactly: \`${entrySignature(task)}\` — a host function that launches your kernel(s). No main(), no other exported entry points.`,
    'Keep the problem sizes: they arrive as the arguments; never hard-code, shrink or skip any part of the problem. Every element of every output must be computed on every call.',
    'No caching of results between calls, no static or global state that remembers inputs or outputs, no reading of anything but the arguments.',
    'Launch all work on the default stream (stream 0). No extra streams, events, graphs, host threads or processes.',
    'No device resets, clock or timer manipulation, files, network, environment or OS calls; inline assembly only inside __device__/__global__ functions.',
    'Include only CUDA headers (cuda_runtime.h, cooperative_groups.h, cuda/pipeline, mma.h, ...) and standard numeric C/C++ headers.',
    m.fast_math
      ? 'This task allows fast math: fast intrinsics (__expf, __fdividef, ...) are acceptable if results stay within the tolerance.'
      : 'Do not lower precision: no half/bf16/tf32/fp8 arithmetic, no fast-math intrinsics (__expf, __fdividef, ...); keep the dtypes of the signature.',
    'Allocate no per-call device memory you do not free before returning; do not print.',
    'The code must compile with nvcc as a single .cu file; tunable #defines are optional (use #ifndef NAME / #define NAME value / #endif).',
  ];
}

function taskSection(task: Task, baselineMs?: number | null, gpu?: string | null): string {
  const m = task.manifest;
  const sizes = m.sizes.map((s, i) => `  - size ${i}${task.timed.includes(i) ? ' (timed)' : ''}: ${Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  const args = m.args.map((a) => (a.kind === 'buffer' ? `  - ${a.name}: ${a.role} buffer of ${a.dtype}, shape [${a.shape.join(', ')}]` : `  - ${a.name}: ${a.dtype} scalar = ${a.value}`));
  const tol = Object.entries(task.tolerance)
    .filter(([d]) => m.args.some((a) => a.dtype === d))
    .map(([d, t]) => `${d}: |got-exp| <= ${t.atol} + ${t.rtol}*|exp|`);
  return [
    `# Task: ${m.name}`,
    m.description ? `What it computes: ${m.description}` : '',
    `Entry point: \`${entrySignature(task)}\``,
    'Arguments:',
    ...args,
    'Problem sizes (all are checked element by element against the reference; the timed one decides the speed):',
    ...sizes,
    `Tolerance: ${tol.join('; ') || 'exact'}.`,
    gpu ? `GPU: ${gpu}.` : '',
    baselineMs ? `Baseline time on the timed size: ${fmt(baselineMs)} ms.` : '',
    '',
    'Reference implementation (trusted, obviously correct, slow):',
    '```cuda',
    task.referenceSource.trimEnd(),
    '```',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

/** Earlier variants in `lang` code blocks (the baseline alone when none was measured yet). */
function exemplarSection(ex: PromptExemplar[], task: Task, bestSpeedup: number | null | undefined, o: { lang: 'cuda' | 'python'; baseline: string; header: string }): string {
  if (!ex.length) {
    return ['# Earlier variants', `None has been measured yet besides the baseline (speedup 1.000×)${o.baseline}:`, `\`\`\`${o.lang}`, task.baselineSource.trimEnd(), '```'].join('\n');
  }
  const parts = [`# Earlier variants, with their measured speedups over the baseline ${o.header}`];
  ex.forEach((e, i) => {
    const cfg = e.config && Object.keys(e.config).length ? ` built with ${Object.entries(e.config).map(([k, v]) => `-D${k}=${v}`).join(' ')}` : '';
    parts.push(
      `## Variant ${String.fromCharCode(65 + i)} (${e.id}): speedup ${fmt(e.speedup)}×${e.medianMs ? ` (${fmt(e.medianMs)} ms)` : ''}${e.verdict ? `, verdict vs baseline: ${e.verdict}` : ''}${e.label ? `, label: ${e.label}` : ''}${cfg}`,
      `\`\`\`${o.lang}`,
      e.source.trimEnd(),
      '```',
    );
  });
  if (bestSpeedup && bestSpeedup > 0) parts.push(`The best speedup found so far in this session is ${fmt(bestSpeedup)}×.`);
  return parts.join('\n');
}

export const ANSWER_FORMAT = [
  '# Your answer: exactly three parts, in this order',
  '## Performance analysis',
  'Compare the variants above: why is the faster one faster (memory traffic, coalescing, occupancy, parallelism, instruction count, synchronisation)? What limits it now?',
  '## Algorithm design',
  'The design of a faster kernel: the work decomposition, memory access plan and launch configuration, and why it should beat the best variant.',
  '## Code',
  'One complete ```cuda code block with the whole .cu file (kernels and the entry point). Nothing after the code block.',
].join('\n');

export function buildPrompt(input: PromptInput): BuiltPrompt {
  const { task } = input;
  const py = input.candidates === 'python';
  const user = [
    py ? pythonTaskSection(task, input.baselineMs, input.device ?? input.gpu) : taskSection(task, input.baselineMs, input.gpu),
    '',
    py ? '# Rules (a candidate that breaks one fails or is labelled so)' : '# Rules (a variant that breaks one is rejected before it is built)',
    ...(py ? pythonRulesFor(task) : rulesFor(task)).map((r) => `- ${r}`),
    '',
    py
      ? exemplarSection(input.exemplars, task, input.bestSpeedup, { lang: 'python', baseline: ', which is the reference module itself run eagerly', header: '(the reference run eagerly)' })
      : exemplarSection(input.exemplars, task, input.bestSpeedup, { lang: 'cuda', baseline: '', header: 'on this GPU' }),
    '',
    py ? PYTHON_ANSWER_FORMAT : ANSWER_FORMAT,
  ].join('\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: py ? PYTHON_SYSTEM_PROMPT : SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
  return { messages, promptId: promptIdOf(messages) };
}

export function promptIdOf(messages: ChatMessage[]): string {
  return createHash('sha256').update(JSON.stringify(messages)).digest('hex').slice(0, 16);
}

// ------------------------------------------------------------------ Python candidates (ModelNew)

export const PYTHON_SYSTEM_PROMPT =
  'You are an expert CUDA performance engineer. You make PyTorch modules faster by replacing their operators with your own CUDA kernels ' +
  '(compiled with torch.utils.cpp_extension.load_inline), without changing what they compute. ' +
  'You reason from measurements: you study why the faster of the shown variants is faster, then design and write a faster one.';

/** The rules a Python candidate is judged by (resources/python/kd_candidate.py; docs/PYTHON-CANDIDATES.md). */
export function pythonRulesFor(task: Task): string[] {
  const m = task.manifest;
  return [
    'Write one self-contained Python file that defines `class ModelNew(nn.Module)`: the same constructor arguments as `Model` (it is built as `ModelNew(*get_init_inputs())`), the same forward arguments and the same outputs (shapes and dtypes). Inputs and init arguments come from the reference file, not from yours.',
    'Create the same parameters and buffers as `Model`, in the same order (the same nn.Linear / nn.Conv2d / nn.Parameter ...): both modules are built under the same seed, so the weights then agree.',
    'Every element of every output is checked against the reference on fresh random inputs, several times, and again on timed calls chosen at random.',
    'Do the work in your own kernels (`__global__` functions in CUDA source given to load_inline). The kernels each forward launches are recorded: a candidate whose own kernels do none of the device work is labelled pytorch-only; one whose extension fails to build and falls back to PyTorch code is labelled fallback and counts as FAILED. Do not wrap the build in try/except with a PyTorch fallback.',
    'Keep the problem sizes: take every size from the input tensors; never hard-code, shrink or skip any part of the problem.',
    'No caching of results between calls, no state that remembers inputs or outputs.',
    'Launch all work on the current CUDA stream: no extra streams, host threads or processes.',
    m.fast_math
      ? 'This task allows fast math: fast intrinsics are acceptable if results stay within the tolerance.'
      : 'Do not lower precision: no half/bf16/tf32/fp8 arithmetic, no fast-math; do not change torch\'s precision flags (TF32, cudnn.benchmark, float32 matmul precision: changes are recorded and shown).',
    'No timer or profiler manipulation, files, network, environment variables or subprocesses; do not print.',
  ];
}

function pythonTaskSection(task: Task, baselineMs?: number | null, device?: string | null): string {
  const m = task.manifest;
  const sizes = m.sizes.map((s, i) => {
    const set = Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', ');
    return `  - size ${i}${task.timed.includes(i) ? ' (timed)' : ''}: ${set || "the reference file's own constants"}`;
  });
  const args = m.args.map((a) => (a.kind === 'buffer' ? `  - ${a.name}: ${a.role === 'out' ? 'output' : 'input or parameter'}, ${a.dtype}, shape [${a.shape.join(', ')}]` : `  - ${a.name}: ${a.dtype} scalar = ${a.value}`));
  return [
    `# Task: ${m.name}`,
    m.description ? `What it computes: ${m.description}` : '',
    'Reference implementation (trusted PyTorch module; `ModelNew` must compute exactly what `Model` computes):',
    '```python',
    task.referenceSource.trimEnd(),
    '```',
    'Tensors of the forward (inputs in get_inputs() order, then parameters and buffers, then outputs):',
    ...args,
    'Problem sizes (module-level constants of the reference; every size is checked, the timed one decides the speed):',
    ...sizes,
    // The runner's own check (kd_candidate.py), whatever task.yaml says for CUDA entry points.
    "Tolerance (KernelBench's): |got-exp| <= 1e-4 + 1e-4*|exp| for float32 outputs, 1e-2 for float16/bfloat16.",
    device ? `Measured on: ${device}.` : '',
    baselineMs ? `Baseline (the reference module run eagerly by PyTorch) on the timed size: ${fmt(baselineMs)} ms.` : '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

export const PYTHON_ANSWER_FORMAT = [
  '# Your answer: exactly three parts, in this order',
  '## Performance analysis',
  'Compare the variants above: why is the faster one faster (kernel launches, fusion, memory traffic, coalescing, occupancy, library calls)? What limits it now?',
  '## Algorithm design',
  'The design of a faster ModelNew: which operators your kernels replace or fuse, the work decomposition, memory access plan and launch configuration, and why it should beat the best variant.',
  '## Code',
  'One complete ```python code block with the whole file (imports, the CUDA and C++ sources for load_inline, ModelNew). Nothing after the code block.',
].join('\n');
