// KernelDuel's best against PyTorch on the suite tasks (issue 17), side by side in one run on one
// GPU: PyTorch's time for each task (bench/torch-timing.py: torch.softmax, layer_norm with γ and β,
// .t().contiguous(), sum, matmul with TF32 off; L2 flushed before every call, CUDA events, median:
// the harness's method), the device-to-device copy bandwidth (bench/tasks/copy, same harness), and
// KernelDuel's best variant of each task:
//   default          a contrastive optimisation from the naive baseline (budget 100), whose best
//                    variant is then measured once more (the figure compared: a fresh measurement,
//                    not the lowest of the search's medians);
//   --configs expert the best of the configurations in bench/expert-configs.json (or --configs FILE
//                    with {"tasks": {"softmax": [{...}], ...}}): a quick check, not an optimisation.
// Needs a GPU and python3 with torch (with CUDA). Results are written after every step (a killed run
// keeps what it measured):
//   npm run bench:vs-pytorch -- [--tasks softmax,matmul] [--budget 100] [--seed 1] [--task-limit-s 60]
//                               [--configs expert|FILE] [--python python3] [--out bench/results]
//                               [--clean-flush 1] [--duel-skip 0.05]
//   --duel-skip F    no duel for a variant at least F slower than its opponent with the intervals
//                    apart (optimize --duel-skip; off by default): fewer duels, more evaluations in
//                    a --task-limit-s
//   --clean-flush 1 (default) measures the copy, PyTorch and each KernelDuel best once more at the
//                    end with L2's dirty lines written back before every call (the harness's
//                    `flushClean`): the memset flush leaves up to an L2 of dirty lines that the timed
//                    call pays to write back, a larger share of a read-only kernel's traffic (reduce_sum)
//                    than of a copy's. Informational: the goals are judged on the default method.
//   -> <out>/<gpu>-vs-pytorch.json and .md (h200-vs-pytorch.* on an H200)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs as parseArgs } from './lib/args.js';
import { breakdownOf, duelStages, type Breakdown, type StageMark } from './lib/optimize-events.js';
import { cudaDeviceSelector, detectGpus, gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';
import { CAPTURE_PHASE_STAGES, Evaluator } from '../main/engine/measure/evaluate.js';
import { DEFAULT_TIMING } from '../main/engine/measure/harness.js';
import { loadTask, sizeLayout, type Task } from '../main/engine/task/manifest.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { configKey, defaultConfig, isValidConfig } from '../main/engine/task/space.js';
import { prepareRun } from '../main/core/run/prepare.js';
import { workRoot as productWorkRoot } from '../main/engine/base/paths.js';
import { runLoop } from '../main/engine/search/loop.js';
import { KERNELDUEL_VERSION } from '../main/engine/base/version.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import type { BuildFlags, Config, EvalResult } from '../main/engine/base/types.js';

const SUITE = ['softmax', 'layernorm', 'transpose', 'reduce_sum', 'matmul'];
/** The issue's goals: PyTorch / KernelDuel at least this, and (memory-bound tasks) this fraction of the copy bandwidth. */
const GOALS: Record<string, { vsPytorch: number; copyFraction?: number }> = {
  softmax: { vsPytorch: 2.0, copyFraction: 0.9 },
  layernorm: { vsPytorch: 1.5, copyFraction: 0.9 },
  transpose: { vsPytorch: 3.2, copyFraction: 0.9 },
  reduce_sum: { vsPytorch: 1.05, copyFraction: 0.9 },
  matmul: { vsPytorch: 0.8 },
};

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: SUITE.join(',') },
    budget: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    'task-limit-s': { type: 'string', default: '0' },
    configs: { type: 'string' },
    python: { type: 'string', default: process.env.KD_PYTHON ?? 'python3' },
    out: { type: 'string', default: 'bench/results' },
    'clean-flush': { type: 'string', default: '1' },
    'duel-skip': { type: 'string' },
  },
});
const here = dirname(fileURLToPath(import.meta.url));
const benchDir = process.env.KERNELDUEL_BENCH_DATA ?? here;
const tasks = values.tasks!.split(',').filter(Boolean);
for (const t of tasks) if (!GOALS[t]) throw new Error(`--tasks: ${t} is not a suite task with a PyTorch counterpart (${SUITE.join(', ')})`);
const budget = Number(values.budget);
const seed = Number(values.seed);
const taskLimitS = Number(values['task-limit-s']);
if (!(budget >= 1) || !Number.isInteger(budget)) throw new Error(`--budget ${values.budget}: a positive integer is needed`);
if (values['clean-flush'] !== '0' && values['clean-flush'] !== '1') throw new Error(`--clean-flush ${values['clean-flush']}: 0 or 1`);
const cleanFlushView = values['clean-flush'] === '1' && !DEFAULT_TIMING.flushClean;
const duelSkip = values['duel-skip'] === undefined ? undefined : Number(values['duel-skip']);
if (duelSkip !== undefined && !(duelSkip >= 0.01 && duelSkip <= 1)) throw new Error(`--duel-skip ${values['duel-skip']}: a fraction from 0.01 to 1`);
if (!(taskLimitS >= 0)) throw new Error(`--task-limit-s ${values['task-limit-s']}: a number of seconds >= 0 is needed (0: no limit)`);
const outDir = resolve(values.out!);
mkdirSync(outDir, { recursive: true });
const started = Date.now();
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

function loadConfigs(arg: string): Record<string, Config[]> {
  const file = arg === 'expert' ? join(benchDir, 'expert-configs.json') : resolve(arg);
  let j: unknown;
  try {
    j = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`--configs ${arg}: cannot read ${file} as JSON (${(e as Error).message})`, { cause: e });
  }
  const t = (j as { tasks?: unknown }).tasks;
  if (!t || typeof t !== 'object') throw new Error(`--configs ${file}: needs {"tasks": {"<task>": [{<tunable>: value, ...}, ...]}}`);
  return t as Record<string, Config[]>;
}
const givenConfigs = values.configs ? loadConfigs(values.configs) : null;
const mode = givenConfigs
  ? `given configurations (${values.configs === 'expert' ? 'bench/expert-configs.json' : values.configs}): the best of them, not an optimisation run`
  : `contrastive optimisation from the naive baseline, budget ${budget}, seed ${seed}${taskLimitS ? `, stopped ${taskLimitS} s after the baseline's result if the budget is not used up by then` : ''}${duelSkip ? `, no duel for a variant ${duelSkip * 100}% or more slower than its opponent with the intervals apart (--duel-skip)` : ''}; the best variant is measured again and that measurement is compared`;

const toolchain = await findToolchain();
const det = await detectGpus();
const gpu = det.gpus.find((g) => g.arch);
if (!gpu || !toolchain.nvcc) throw new Error(`bench:vs-pytorch needs a GPU and nvcc: ${[...det.problems, ...toolchain.problems].join(' ')}`);
const theGpu = gpu;
// The product's work root (where prepareRun's evaluators build): the harness is built once per
// process there, not once for the copy and again for the first task (~25 s each on the H200).
const workRoot = productWorkRoot();
const sessionsRoot = mkdtempSync(join(tmpdir(), 'kd-vs-pytorch-'));
const slug = gpuSlug(gpu.name);

interface Timing { medianMs: number; relNoise: number; samples: number }
/** One event of a search, ms from its first (vs-pytorch keeps them all: TaskRow's timeline). */
interface TimelineEvent { tMs: number; kind: 'stage' | 'result' | 'duel'; variantId?: string; stage?: string; stages?: Record<string, number> }
interface TaskRow {
  task: string;
  size: Record<string, number>;
  pytorch: { op: string; medianMs: number; relNoise: number; samples: number } | { error: string } | null;
  kernelduel: {
    medianMs: number; relNoise: number; samples: number;
    searchMedianMs?: number; baselineMs: number | null; speedupOverBaseline: number | null;
    /** source: the kernel as measured (its transforms' loop ids hold only for the kernel of that commit). */
    variant: { config: Config; flags: BuildFlags; transforms: string[]; source: string };
    evaluations: number; failures: number; wallSeconds: number; stoppedByTimeLimit: boolean; session?: string;
    /** Every variant of the search in order (the session lives in a temporary folder): what the search tried. */
    history?: Array<{ id: string; origin: string; config: string; flags: string; transforms: string[]; medianMs: number | null; failure: string | null }>;
    /** Where a variant's time went in the search (ms; bench/lib/optimize-events.ts breakdownOf): per variant, its duel, queued for the GPU, capture, check, timing and the rest. */
    breakdown?: Breakdown;
    /** Every event of the search as it came (ms from the first one): each variant's stages starting
     * (build, check, time), its result with the evaluator's stage times, and each duel's end. The
     * breakdown's medians hide overlaps; this keeps them (e.g. a check beside the next capture). */
    timeline?: TimelineEvent[];
  } | { error: string } | null;
  pytorchOverKernelduel: number | null;
  copyFraction: { pytorch: number | null; kernelduel: number | null };
  tflops: { pytorch: number | null; kernelduel: number | null };
  goal: { vsPytorch: number; copyFraction?: number; met: boolean | null };
}
const doc = {
  benchmark: 'vs-pytorch',
  measured: 'real GPU measurements (not simulated, not replayed)',
  date: new Date().toISOString(),
  command: invokedAs(`npm run bench:vs-pytorch --${process.argv.slice(2).map((a) => ` ${a}`).join('')}`),
  kernelduelVersion: KERNELDUEL_VERSION,
  gpu: { name: gpu.name, uuid: gpu.uuid, computeCapability: gpu.computeCapability, driver: gpu.driverVersion },
  nvcc: toolchain.version,
  mode,
  method: `PyTorch and KernelDuel timed with the same method in one run on one GPU: L2 flushed (memset of 4x the L2, at least 64 MiB${DEFAULT_TIMING.flushClean ? ', then a clean buffer of half that size read, so the memset\'s dirty lines are written back before the call' : ''}) and the device synchronised before every call, CUDA events around the call behind a gate (KernelDuel: a kernel held until the host has queued the call; PyTorch: a ~1 ms torch.cuda._sleep before the start event), so neither time holds the host's launch latency, warm-up >= 50 ms, samples until the 95% CI of the median is within ±${DEFAULT_TIMING.targetRelNoise * 100}% (at least 10 samples / 100 ms, at most 3 s), median reported; KernelDuel's timed calls rotate over ${DEFAULT_TIMING.bufferSets} sets of buffers, PyTorch's use one set of tensors. fp32; TF32 off for PyTorch's matmul (torch.backends.cuda.matmul.allow_tf32 = False).`,
  pytorch: null as null | { torch: string; cuda: string; gpu: string; gate?: string; error?: string },
  copy: null as null | (Timing & { bandwidthTBs: number }) | { error: string },
  tasks: [] as TaskRow[],
  /** The same variants measured again with L2's dirty lines written back before every call (--clean-flush). */
  cleanFlush: null as null | {
    method: string;
    copy: (Timing & { bandwidthTBs: number }) | { error: string };
    pytorchError?: string;
    tasks: Array<{ task: string; pytorchMs: number | null; kernelduelMs: number | null; pytorchOverKernelduel: number | null; copyFraction: { pytorch: number | null; kernelduel: number | null } }>;
  },
};
const fmt = (x: number | null | undefined, d = 4): string => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d));
function write(): void {
  writeFileSync(join(outDir, `${slug}-vs-pytorch.json`), JSON.stringify(doc, null, 2) + '\n');
  const copyTBs = doc.copy && 'bandwidthTBs' in doc.copy ? doc.copy.bandwidthTBs : null;
  const lines = [
    `# KernelDuel vs PyTorch on ${doc.gpu.name}`,
    '',
    `- date: ${doc.date}; KernelDuel ${doc.kernelduelVersion}; nvcc ${doc.nvcc}; ${doc.pytorch ? `torch ${doc.pytorch.torch} (CUDA ${doc.pytorch.cuda})` : 'PyTorch: not measured'}`,
    `- command: \`${doc.command}\``,
    `- KernelDuel's figure: ${doc.mode}`,
    `- method: ${doc.method}`,
    `- copy bandwidth (device-to-device, same harness): ${copyTBs ? `${copyTBs.toFixed(3)} TB/s` : 'not measured'}`,
    '',
    '| task | size | PyTorch ms | KernelDuel ms | PyTorch / KD | goal | KD % of copy | PyTorch % of copy | TFLOP/s (PyTorch / KD) | evaluations | KD variant |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of doc.tasks) {
    const pt = r.pytorch && 'medianMs' in r.pytorch ? r.pytorch : null;
    const kd = r.kernelduel && 'medianMs' in r.kernelduel ? r.kernelduel : null;
    const goal = `≥ ${r.goal.vsPytorch}×${r.goal.copyFraction ? `, ≥ ${r.goal.copyFraction * 100}% copy` : ''}: ${r.goal.met === null ? '—' : r.goal.met ? 'met' : 'NOT met'}`;
    const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(0)}%`);
    const evals = kd ? `${kd.evaluations}${kd.stoppedByTimeLimit ? ' (time limit)' : ''}` : '—';
    const variant = kd ? `${configKey(kd.variant.config)}${kd.variant.flags.maxrregcount ? ` -maxrregcount=${kd.variant.flags.maxrregcount}` : ''}${kd.variant.flags.dlcm ? ` -dlcm=${kd.variant.flags.dlcm}` : ''}${kd.variant.transforms.length ? ` + ${kd.variant.transforms.join(' ')}` : ''}` : r.kernelduel && 'error' in r.kernelduel ? `failed: ${r.kernelduel.error}` : '—';
    lines.push(`| ${r.task} | ${Object.values(r.size).join('×')} | ${pt ? fmt(pt.medianMs) : r.pytorch && 'error' in r.pytorch ? 'failed' : '—'} | ${kd ? fmt(kd.medianMs) : '—'} | ${r.pytorchOverKernelduel ? `${r.pytorchOverKernelduel.toFixed(2)}×` : '—'} | ${goal} | ${pct(r.copyFraction.kernelduel)} | ${pct(r.copyFraction.pytorch)} | ${r.tflops.pytorch ? `${fmt(r.tflops.pytorch, 1)} / ${fmt(r.tflops.kernelduel, 1)}` : '—'} | ${evals} | ${variant} |`);
  }
  if (doc.tasks.length < tasks.length) lines.push('', `(partial: ${doc.tasks.length} of ${tasks.length} tasks so far)`);
  const withStages = doc.tasks.flatMap((r) => (r.kernelduel && 'breakdown' in r.kernelduel && r.kernelduel.breakdown?.perVariant ? [{ task: r.task, b: r.kernelduel.breakdown }] : []));
  if (withStages.length) {
    const ms = (b: Record<string, { median: number }>, k: string): string => (b[k] ? b[k].median.toFixed(0) : '—');
    lines.push('', "## Where a variant's time went in the searches (median ms between consecutive results)", '',
      'queued: waiting for the GPU; capture, check, timing: the evaluator\'s stages; duel: the comparison after the result; rest: the build not yet done, the policy, the journal.', '',
      'timing: set-up (buffer sets, warm-up) and verifying (the reference run for the verified calls) are parts of it, where the judge reports them (from 2026-12-08).', '',
      '| task | per variant | duel | queued | capture | check | timing | of it: set-up | of it: verifying | rest | variants |', '|---|---|---|---|---|---|---|---|---|---|---|');
    for (const { task, b } of withStages) lines.push(`| ${task} | ${ms(b, 'perVariant')} | ${ms(b, 'duel')} | ${ms(b, 'queued')} | ${ms(b, 'capture')} | ${ms(b, 'check')} | ${ms(b, 'time')} | ${ms(b, 'timeSetup')} | ${ms(b, 'timeVerify')} | ${ms(b, 'rest')} | ${b.perVariant.n} |`);
    const withPhases = withStages.filter(({ b }) => b.captureContextMs);
    if (withPhases.length) {
      lines.push('', "### The capture processes' own time (median ms a variant, whether a capture ran inside its evaluation or ahead of it)", '',
        'start: process and sandbox start; context: the CUDA context (cudaFree(0)); lockdown: system-call filter, Landlock; runtime code: the recorder of code libraries load at run time (CUPTI); wait: a gated process (captureGate) waiting, ready, for its place on the GPU, off it; load: the variant\'s library; buffers: the first size\'s; calls: every size\'s calls, the stream capture and the graph walk; write: the work description; exit: teardown until the engine sees the end.', '',
        '| task | start | context | lockdown | runtime code | wait | load | buffers | calls | write | exit | captures |', '|---|---|---|---|---|---|---|---|---|---|---|---|');
      for (const { task, b } of withPhases) lines.push(`| ${task} | ${CAPTURE_PHASE_STAGES.map((k) => ms(b, k)).join(' | ')} | ${b.captureContextMs.n} |`);
    }
  }
  const cf = doc.cleanFlush;
  if (cf) {
    const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(0)}%`);
    lines.push('', '## The same variants, dirty lines written back before every call (informational)', '', `- method: ${cf.method}`,
      `- copy bandwidth this way: ${'bandwidthTBs' in cf.copy ? `${cf.copy.bandwidthTBs.toFixed(3)} TB/s (${cf.copy.medianMs.toFixed(4)} ms)` : `not measured: ${cf.copy.error}`}${cf.pytorchError ? `; PyTorch not measured: ${cf.pytorchError}` : ''}`,
      '', '| task | PyTorch ms | KernelDuel ms | PyTorch / KD | KD % of copy | PyTorch % of copy |', '|---|---|---|---|---|---|');
    for (const r of cf.tasks) lines.push(`| ${r.task} | ${fmt(r.pytorchMs)} | ${fmt(r.kernelduelMs)} | ${r.pytorchOverKernelduel ? `${r.pytorchOverKernelduel.toFixed(2)}×` : '—'} | ${pct(r.copyFraction.kernelduel)} | ${pct(r.copyFraction.pytorch)} |`);
  }
  writeFileSync(join(outDir, `${slug}-vs-pytorch.md`), lines.join('\n') + '\n');
}

interface TorchOut { torch: string; cuda: string; gpu: string; gate?: string; results: Array<{ task: string; op?: string; medianMs?: number; relNoise?: number; samples?: number; error?: string }> }
/** bench/torch-timing.py on the same GPU as KernelDuel's measurements, every timed task in one process. */
function torchTimes(flushClean: number): TorchOut | { error: string } {
  const spec = JSON.stringify({ tasks: timedTasks.map((t) => ({ task: t.manifest.name, size: sizeOf(t) })), flushClean });
  const env = { ...process.env, CUDA_VISIBLE_DEVICES: cudaDeviceSelector(theGpu) };
  const r = spawnSync(values.python!, [join(benchDir, 'torch-timing.py'), spec], { encoding: 'utf8', timeout: 300_000, maxBuffer: 16 << 20, env });
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  try {
    const j = JSON.parse(last) as TorchOut;
    if (!Array.isArray(j.results)) throw new Error('no results');
    return j;
  } catch {
    return { error: r.error ? r.error.message : `exit ${r.status ?? r.signal}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
  }
}

// 1. PyTorch.
const timedTasks: Task[] = tasks.map((t) => resolveTask(t));
const sizeOf = (t: Task): Record<string, number> => t.manifest.sizes[t.timed[0]];
{
  log(`PyTorch: ${values.python} bench/torch-timing.py`);
  // The PyTorch side flushes L2 as the harness does by default (with or without the clean read).
  const r = torchTimes(DEFAULT_TIMING.flushClean ?? 0);
  try {
    if ('error' in r) throw new Error(r.error);
    const j = r;
    doc.pytorch = { torch: j.torch, cuda: j.cuda, gpu: j.gpu, gate: j.gate };
    for (const t of timedTasks) {
      const x = j.results.find((y) => y.task === t.manifest.name);
      const lay = sizeLayout(t, t.timed[0]);
      const pytorch: TaskRow['pytorch'] = !x ? { error: 'no result' } : x.error || x.medianMs === undefined ? { error: x.error ?? 'no time' } : { op: x.op ?? '', medianMs: x.medianMs, relNoise: x.relNoise ?? NaN, samples: x.samples ?? 0 };
      doc.tasks.push({
        task: t.manifest.name, size: sizeOf(t), pytorch, kernelduel: null, pytorchOverKernelduel: null,
        copyFraction: { pytorch: null, kernelduel: null },
        tflops: { pytorch: 'medianMs' in pytorch && !GOALS[t.manifest.name].copyFraction && lay.flops ? lay.flops / (pytorch.medianMs / 1000) / 1e12 : null, kernelduel: null },
        goal: { ...GOALS[t.manifest.name], met: null },
      });
      log(`PyTorch ${t.manifest.name}: ${'medianMs' in pytorch ? `${pytorch.medianMs.toFixed(4)} ms (${pytorch.op})` : pytorch.error}`);
    }
  } catch (e) {
    const why = (e as Error).message;
    doc.pytorch = { torch: '?', cuda: '?', gpu: '?', error: why };
    for (const t of timedTasks) doc.tasks.push({ task: t.manifest.name, size: sizeOf(t), pytorch: { error: why }, kernelduel: null, pytorchOverKernelduel: null, copyFraction: { pytorch: null, kernelduel: null }, tflops: { pytorch: null, kernelduel: null }, goal: { ...GOALS[t.manifest.name], met: null } });
    log(`PyTorch not measured: ${why}`);
  }
  write();
}

// 2. The copy bandwidth.
const copyTask = loadTask(join(benchDir, 'tasks', 'copy'));
async function copyBandwidth(flushClean: number): Promise<(Timing & { bandwidthTBs: number }) | { error: string }> {
  const ev = new Evaluator({ task: copyTask, toolchain, gpu: theGpu, workRoot, timing: { flushClean } });
  try {
    const r = await ev.evaluate({ source: copyTask.baselineSource, config: {}, flags: { opt: 3 } });
    const t = r.timing?.[0];
    if (!t || r.failure) return { error: `${r.failure?.kind}: ${r.failure?.reason}` };
    return { medianMs: t.medianMs, relNoise: t.relNoise, samples: t.samplesMs.length, bandwidthTBs: sizeLayout(copyTask, 0).bytes! / (t.medianMs / 1000) / 1e12 };
  } finally {
    ev.close(); // frees the judge's GPU memory before the next task
  }
}
{
  doc.copy = await copyBandwidth(DEFAULT_TIMING.flushClean ?? 0);
  log('bandwidthTBs' in doc.copy ? `copy: ${doc.copy.medianMs.toFixed(4)} ms = ${doc.copy.bandwidthTBs.toFixed(3)} TB/s` : `copy not measured: ${doc.copy.error}`);
  write();
}
const copyTBs = doc.copy && 'bandwidthTBs' in doc.copy ? doc.copy.bandwidthTBs : null;

// 3. KernelDuel's best, task by task.
function finish(row: TaskRow, task: Task): void {
  const lay = sizeLayout(task, task.timed[0]);
  const pt = row.pytorch && 'medianMs' in row.pytorch ? row.pytorch.medianMs : null;
  const kd = row.kernelduel && 'medianMs' in row.kernelduel ? row.kernelduel.medianMs : null;
  const memBound = row.goal.copyFraction !== undefined;
  row.pytorchOverKernelduel = pt && kd ? pt / kd : null;
  if (memBound && lay.bytes && copyTBs) {
    row.copyFraction = { pytorch: pt ? lay.bytes / (pt / 1000) / 1e12 / copyTBs : null, kernelduel: kd ? lay.bytes / (kd / 1000) / 1e12 / copyTBs : null };
  }
  if (!memBound && lay.flops) row.tflops.kernelduel = kd ? lay.flops / (kd / 1000) / 1e12 : null;
  row.goal.met = row.pytorchOverKernelduel === null ? null : row.pytorchOverKernelduel >= row.goal.vsPytorch && (!memBound || (row.copyFraction.kernelduel ?? 0) >= row.goal.copyFraction!);
}
/** Each task's best variant, for the --clean-flush measurement at the end. */
const bests = new Map<string, { source: string; config: Config; flags: BuildFlags }>();
const timingOf = (r: EvalResult): Timing | null => (r.failure || !r.timing?.[0] ? null : { medianMs: r.timing[0].medianMs, relNoise: r.timing[0].relNoise, samples: r.timing[0].samplesMs.length });

for (const task of timedTasks) {
  const name = task.manifest.name;
  const row = doc.tasks.find((r) => r.task === name)!;
  const t0 = Date.now();
  try {
    if (givenConfigs) {
      const ev = new Evaluator({ task, toolchain, gpu: theGpu, workRoot });
      const base = timingOf(await ev.evaluate({ source: task.baselineSource, config: defaultConfig(task), flags: { opt: 3 } }));
      let best: { t: Timing; config: Config } | null = null;
      const list = givenConfigs[name] ?? [];
      if (!list.length) throw new Error(`--configs has no configuration for ${name}`);
      let failures = 0;
      for (const c of list) {
        if (!isValidConfig(task, c)) throw new Error(`--configs: ${name} ${configKey(c)} is not in the task's space (a restriction of task.yaml excludes it)`);
        const r = await ev.evaluate({ source: task.baselineSource, config: c, flags: { opt: 3 } });
        const t = timingOf(r);
        log(`${name} ${configKey(c)}: ${t ? `${t.medianMs.toFixed(4)} ms` : `FAILED ${r.failure?.kind}: ${r.failure?.reason}`}`);
        if (!t) failures++;
        else if (!best || t.medianMs < best.t.medianMs) best = { t, config: c };
      }
      ev.close();
      if (!best) throw new Error(`every given configuration of ${name} failed`);
      bests.set(name, { source: task.baselineSource, config: best.config, flags: { opt: 3 } });
      row.kernelduel = {
        ...best.t, baselineMs: base?.medianMs ?? null, speedupOverBaseline: base ? base.medianMs / best.t.medianMs : null,
        variant: { config: best.config, flags: { opt: 3 }, transforms: [], source: task.baselineSource }, evaluations: list.length, failures, wallSeconds: (Date.now() - t0) / 1000, stoppedByTimeLimit: false,
      };
    } else {
      const run = await prepareRun({ task: name, strategy: 'contrastive', budget, seed, backend: { kind: 'gpu', gpu: theGpu.index, ...(duelSkip ? { duelSkip } : {}) }, sessionsRoot });
      if (!(run.measurer instanceof Evaluator) || !run.measurer.gpu) throw new Error(`needs a GPU (${run.label})`);
      const ev = run.measurer;
      let evaluations = 0;
      let failures = 0;
      const ac = new AbortController();
      // --task-limit-s counts from the baseline's result: the search's own time, not the one-time
      // costs before it (the first task's harness build, the baseline's references).
      let timer: ReturnType<typeof setTimeout> | null = null;
      const timeline: TimelineEvent[] = [];
      let tl0 = 0;
      const at = (): number => {
        const now = Date.now();
        if (!tl0) tl0 = now;
        return now - tl0;
      };
      try {
        await runLoop({
          session: run.session, evaluator: ev, strategy: run.strategy, budget, signal: ac.signal, ...(duelSkip ? { duelSkip } : {}),
          onEvent: (e) => {
            if (e.type === 'stage') timeline.push({ tMs: at(), kind: 'stage', variantId: e.variantId, stage: e.stage });
            if (e.type === 'duel') {
              const st = duelStages(e.result);
              timeline.push({ tMs: at(), kind: 'duel', variantId: e.a, ...(st ? { stages: st } : {}) });
            }
            if (e.type !== 'result') return;
            timeline.push({ tMs: at(), kind: 'result', variantId: e.variantId, ...(e.result.stages ? { stages: e.result.stages } : {}) });
            if (taskLimitS && !timer) timer = setTimeout(() => ac.abort(), taskLimitS * 1000);
            evaluations++;
            if (e.result.failure) failures++;
            if (e.index % 10 === 0) log(`${name} [${e.index}/${budget}] best ${e.bestSpeedup?.toFixed(2)}×`);
          },
        });
      } finally {
        if (timer) clearTimeout(timer);
      }
      const best = run.session.best();
      if (!best) throw new Error('no variant was correct and timed');
      const base = run.session.variants().find((v) => v.origin === 'baseline');
      const baseMs = base ? run.session.resultOf(base.id)?.timing?.[0]?.medianMs ?? null : null;
      bests.set(name, { source: best.variant.source, config: best.variant.config, flags: best.variant.flags });
      // Measured again: the lowest of many noisy medians is biased low.
      const again = timingOf(await ev.evaluate({ source: best.variant.source, config: best.variant.config, flags: best.variant.flags }));
      const t = again ?? { medianMs: best.medianMs, relNoise: best.result.timing![0].relNoise, samples: best.result.timing![0].samplesMs.length };
      row.kernelduel = {
        ...t, searchMedianMs: best.medianMs, baselineMs: baseMs, speedupOverBaseline: baseMs ? baseMs / t.medianMs : null,
        variant: { config: best.variant.config, flags: best.variant.flags, transforms: best.variant.transforms ?? [], source: best.variant.source },
        evaluations, failures, wallSeconds: (Date.now() - t0) / 1000, stoppedByTimeLimit: ac.signal.aborted, session: run.session.meta.id,
        breakdown: breakdownOf(timeline.flatMap((e): StageMark[] => (e.kind === 'stage' ? [] : [{ t: e.tMs, kind: e.kind, stages: e.stages }]))),
        timeline,
        history: run.session.variants().map((v) => {
          const r = run.session.resultOf(v.id);
          return {
            id: v.id, origin: v.origin,
            config: Object.entries(v.config).map(([k, x]) => `${k}=${x}`).join(','),
            flags: Object.entries(v.flags).map(([k, x]) => `${k}=${String(x)}`).join(','),
            transforms: v.transforms ?? [],
            medianMs: r?.timing?.[0]?.medianMs ?? null,
            failure: r?.failure ? `${r.failure.kind}: ${r.failure.reason}`.slice(0, 200) : null,
          };
        }),
      };
      run.session.close();
      ev.close();
    }
  } catch (e) {
    row.kernelduel = { error: (e as Error).message.split('\n')[0].slice(0, 400) };
  }
  finish(row, task);
  const kd = row.kernelduel && 'medianMs' in row.kernelduel ? row.kernelduel : null;
  log(`${name}: KernelDuel ${kd ? `${kd.medianMs.toFixed(4)} ms (${kd.evaluations} evaluations${kd.stoppedByTimeLimit ? ', time limit' : ''})` : `failed: ${(row.kernelduel as { error: string }).error}`}; PyTorch/KD ${row.pytorchOverKernelduel?.toFixed(2) ?? '—'}×`);
  write();
}
// 4. The same variants with L2's dirty lines written back before every call (informational).
if (cleanFlushView) {
  const method = 'the same variants measured again after the rest, with L2 flushed by the memset and then a clean buffer of half its size read before every call (the harness\'s flushClean 1; bench/torch-timing.py\'s "flushClean": 1), so the memset\'s dirty lines are written back before the timed call instead of during it: informational, the goals are judged on the default method above';
  log('clean flush: PyTorch, the copy and each best again, with dirty lines written back before every call');
  const pt = torchTimes(1);
  const copy = await copyBandwidth(1);
  const cf: NonNullable<typeof doc.cleanFlush> = { method, copy, ...('error' in pt ? { pytorchError: pt.error } : {}), tasks: [] };
  doc.cleanFlush = cf;
  const cTBs = 'bandwidthTBs' in copy ? copy.bandwidthTBs : null;
  for (const task of timedTasks) {
    const name = task.manifest.name;
    const x = 'error' in pt ? undefined : pt.results.find((y) => y.task === name);
    const pytorchMs = x?.medianMs ?? null;
    let kernelduelMs: number | null = null;
    const b = bests.get(name);
    if (b) {
      const ev = new Evaluator({ task, toolchain, gpu: theGpu, workRoot, timing: { flushClean: 1 } });
      try {
        kernelduelMs = timingOf(await ev.evaluate(b))?.medianMs ?? null;
      } finally {
        ev.close();
      }
    }
    const bytes = sizeLayout(task, task.timed[0]).bytes;
    const frac = (ms: number | null): number | null => (ms && bytes && cTBs && GOALS[name].copyFraction ? bytes / (ms / 1000) / 1e12 / cTBs : null);
    cf.tasks.push({ task: name, pytorchMs, kernelduelMs, pytorchOverKernelduel: pytorchMs && kernelduelMs ? pytorchMs / kernelduelMs : null, copyFraction: { pytorch: frac(pytorchMs), kernelduel: frac(kernelduelMs) } });
    log(`clean flush ${name}: PyTorch ${pytorchMs?.toFixed(4) ?? '—'} ms, KernelDuel ${kernelduelMs?.toFixed(4) ?? '—'} ms`);
    write();
  }
}
log(`done: ${join(outDir, `${slug}-vs-pytorch.json`)} and .md`);
process.exit(0);
