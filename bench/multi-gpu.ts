// One optimisation run on 1 GPU and on N GPUs of one host (issue 19): for each task, the same
// strategy, budget and seed with `--gpus 0` and with `--gpus 0,1[,..]` (the pool loop,
// main/engine/search/pool.ts), recording evaluations per minute, the best variant found and each
// GPU's busy fraction. Real GPU measurements only (it refuses to run without a GPU).
//   npm run bench:multigpu -- [--tasks matmul,softmax,layernorm] [--budgets 24,40,40] [--pools 1,2 | 1,1c,2]
//                             [--seed 1] [--strategy contrastive] [--deadline-s 280] [--out bench/results] [--trace]
//   -> <out>/<gpu>x<N>-multi-gpu.json and .md (h200x2-multi-gpu.* on two H200s)
// Results are rewritten after every run (`complete: false` until the last), so a run killed by a
// time limit keeps what it measured. Each run stops at its share of the time left before
// --deadline-s (then it is marked stoppedByTimeLimit and its rate still counts); SIGTERM stops the
// run in progress and writes what there is. Every run starts with an empty build cache, so the
// runs after the first do not profit from the builds of the first.
//
// evaluations/min: results after the baseline's, divided by the time from the baseline's result to
// the last result (the GPUs' warm-up, done before the baseline, is not counted). GPU busy: the
// share of that window during which a check, time or duel process held the GPU's queue (sampled
// every 20 ms). A pool written 1c is one GPU while a loop of processes creating CUDA contexts runs on
// the largest pool's other GPUs (bench/lib/context-loop.ts): does context work on another GPU slow
// this one's stages (as each GPU's captures and executors do in a pool run)? Also per run: the
// engine's event-loop delay (one Node thread serves every GPU's lane), and with --trace a
// KERNELDUEL_TRACE file per run (<out>/trace-<task>-<N>gpu[c].jsonl: every GPU queue place and
// capture, see main/engine/measure/trace.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { prepareRun } from '../main/core/run/prepare.js';
import { runPoolLoop } from '../main/engine/search/pool.js';
import { Evaluator, gpuQueue } from '../main/engine/measure/evaluate.js';
import { cudaDeviceSelector, detectGpus, gpuSlug, normaliseGpuName } from '../main/engine/platform/gpu/detect.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';
import { buildContextProgram, startLoop } from './lib/context-loop.js';
import { KERNELDUEL_VERSION } from '../main/engine/base/version.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { isRunStrategyName, type RunStrategyName } from '../main/engine/search/strategies.js';
import type { GpuActivity } from '../main/engine/base/types.js';
import type { Session } from '../main/engine/session/store.js';
import { median } from '../main/engine/measure/stats.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'matmul,softmax,layernorm' },
    budgets: { type: 'string', default: '24,40,40' },
    pools: { type: 'string', default: '1,2' },
    seed: { type: 'string', default: '1' },
    strategy: { type: 'string', default: 'contrastive' },
    'deadline-s': { type: 'string', default: '280' },
    out: { type: 'string', default: 'bench/results' },
    trace: { type: 'boolean', default: false },
  },
});
const started = Date.now();
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);
const fail = (s: string): never => {
  process.stderr.write(`bench multi-gpu: ${s}\n`);
  process.exit(2);
};
const tasks = values.tasks!.split(',').map((t) => t.trim()).filter(Boolean);
const budgetList = values.budgets!.split(',').map(Number);
if (budgetList.some((b) => !Number.isInteger(b) || b < 1)) fail(`--budgets ${values.budgets}: positive integers, one per task (or one for all)`);
const budgetOf = (i: number): number => budgetList[Math.min(i, budgetList.length - 1)];
// A pool size, or with "c" (e.g. 1c) the same with a loop of processes creating CUDA contexts on
// each GPU of the largest pool that the run leaves idle: does another GPU's context work slow this one?
const poolSpecs = values.pools!.split(',').map((x) => /^(\d+)(c?)$/.exec(x.trim()));
if (poolSpecs.some((m) => !m || Number(m[1]) < 1)) fail(`--pools ${values.pools}: GPU counts, e.g. 1,2 (1c: one GPU with CUDA contexts created on the others)`);
const pools = poolSpecs.map((m) => Number(m![1]));
const poolContexts = poolSpecs.map((m) => m![2] === 'c');
const seed = Number(values.seed);
if (!isRunStrategyName(values.strategy!)) fail(`--strategy ${values.strategy}: not a strategy`);
const strategy = values.strategy as RunStrategyName;
const deadlineMs = Number(values['deadline-s']) * 1000;
if (!(deadlineMs > 0)) fail(`--deadline-s ${values['deadline-s']}: seconds, e.g. 280`);
const outDir = resolve(values.out!);
mkdirSync(outDir, { recursive: true });

// A home of its own: empty build cache, its own sessions; the harness is built once and kept.
const home = mkdtempSync(join(tmpdir(), 'kd-multigpu-'));
process.env.KERNELDUEL_HOME = home;

const det = await detectGpus();
const usable = det.gpus.filter((g) => g.arch);
if (!usable.length) fail(`needs a GPU (${det.problems.join('; ') || 'none found'})`);
const maxPool = Math.max(...pools);
if (poolContexts.some((c, k) => c && pools[k] >= maxPool)) fail(`--pools ${values.pools}: a pool with "c" needs idle GPUs: give it fewer GPUs than the largest pool (e.g. 1,1c,2)`);
if (usable.length < maxPool) fail(`--pools ${values.pools} needs ${maxPool} GPUs; this host has ${usable.length} (${usable.map((g) => g.name).join(', ')})`);
const poolGpus = usable.slice(0, maxPool);
if (new Set(poolGpus.map((g) => normaliseGpuName(g.name))).size > 1) fail(`the first ${maxPool} GPUs are of different models (${poolGpus.map((g) => g.name).join(', ')})`);
const slug = `${gpuSlug(poolGpus[0].name)}x${maxPool}`;
const command = invokedAs(`npm run bench:multigpu -- --tasks ${tasks.join(',')} --budgets ${budgetList.join(',')} --pools ${values.pools} --seed ${seed} --strategy ${strategy} --deadline-s ${values['deadline-s']}`);

interface RunRow {
  task: string;
  gpus: number;
  /** 'contexts': a loop of processes creating CUDA contexts ran on the pool's GPUs this run left idle (started, failed). */
  idleGpus?: { beside: 'contexts'; gpuIndices: number[]; started: number; failed: number };
  gpuIndices: number[];
  budget: number;
  seed: number;
  session: string;
  evaluated: number;
  /** Results after the baseline's per minute of the window from the baseline's result to the last. */
  evaluationsPerMinute: number | null;
  windowSeconds: number | null;
  wallSeconds: number;
  stoppedByTimeLimit: boolean;
  baselineMs: number | null;
  bestMs: number | null;
  bestRelNoise: number | null;
  bestSpeedup: number | null;
  bestVariant: { id: string; config: Record<string, number>; flags: unknown; transforms: string[]; measuredOn: string | null } | null;
  failures: number;
  duels: number;
  /** The engine thread's event-loop delay during the run (ms): median, 99th percentile, largest. */
  eventLoopDelayMs?: { p50: number; p99: number; max: number };
  /** Where a variant's time went: medians (ms) of the evaluations' stages after the baseline, and of the duels. */
  timeSpent?: { results: number; stagesMedianMs: Record<string, number>; duelMedianMs: number | null; duelsAcrossGpus: number };
  perGpu: Array<{ index: number; uuid: string; results: number; busyFraction: number | null; poolBusyFraction: number | null; state: GpuActivity['state']; removedReason?: string }>;
  error?: string;
}
const rows: RunRow[] = [];
const plan = tasks.flatMap((t, i) => pools.map((n, k) => ({ task: t, gpus: n, contexts: poolContexts[k], budget: budgetOf(i) })));
const contextProgram = poolContexts.some(Boolean) ? await contextLoopProgram() : null;
/** The context loop's program, built once with the toolkit's nvcc (bench/lib/context-loop.ts). */
async function contextLoopProgram(): Promise<string> {
  const tc = await findToolchain();
  if (!tc.nvcc) fail(`--pools ${values.pools}: the context loop needs nvcc (${tc.problems.join(' ')})`);
  const idle = poolGpus[poolGpus.length - 1];
  return buildContextProgram(tc.nvcc!, mkdtempSync(join(tmpdir(), 'kd-multigpu-ctx-')), { ...process.env, CUDA_VISIBLE_DEVICES: cudaDeviceSelector(idle) });
}

function comparisons(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const t of tasks) {
    const one = rows.find((r) => r.task === t && r.gpus === 1 && !r.idleGpus);
    for (const r of rows.filter((x) => x.task === t && (x.gpus > 1 || x.idleGpus))) {
      if (!one) continue;
      const ratio = one.evaluationsPerMinute && r.evaluationsPerMinute ? r.evaluationsPerMinute / one.evaluationsPerMinute : null;
      const bestRatio = one.bestMs && r.bestMs ? r.bestMs / one.bestMs : null;
      const noise = Math.max(0.02, 2 * Math.max(one.bestRelNoise ?? 0, r.bestRelNoise ?? 0));
      out.push({
        task: t, gpus: r.idleGpus ? `${r.gpus}c` : r.gpus, evaluationsPerMinuteRatio: ratio, target: r.idleGpus ? null : r.gpus === 2 ? 1.8 : r.gpus === 4 ? 3.4 : null,
        bestMsRatio: bestRatio, bestWithinNoise: bestRatio === null ? null : Math.abs(bestRatio - 1) <= noise, noiseAllowance: noise,
        sameBestVariant: !!one.bestVariant && !!r.bestVariant && JSON.stringify([one.bestVariant.config, one.bestVariant.flags, one.bestVariant.transforms]) === JSON.stringify([r.bestVariant.config, r.bestVariant.flags, r.bestVariant.transforms]),
      });
    }
  }
  return out;
}

/** Medians of the stages of the results after the baseline's, of the duels' lengths, and how many duels had sides measured on different GPUs. */
function timeSpentOf(session: Session, duelMs: number[], pairs: Array<[string, string]>): NonNullable<RunRow['timeSpent']> {
  const results = session.variants().filter((v) => v.origin !== 'baseline').map((v) => session.resultOf(v.id)).filter((r) => r !== undefined);
  const keys = new Set(results.flatMap((r) => Object.keys(r.stages ?? {})));
  const stagesMedianMs: Record<string, number> = {};
  for (const k of keys) {
    const xs = results.map((r) => (r.stages as Record<string, number | undefined> | undefined)?.[k]).filter((x): x is number => typeof x === 'number');
    if (xs.length) stagesMedianMs[k] = Math.round(median(xs) * 10) / 10;
  }
  const uuidOf = (id: string): string | null => {
    const src = session.resultOf(id)?.source;
    return src?.kind === 'gpu' ? (src.uuid ?? src.gpu) : null;
  };
  return {
    results: results.length, stagesMedianMs, duelMedianMs: duelMs.length ? Math.round(median(duelMs)) : null,
    duelsAcrossGpus: pairs.filter(([a, b]) => uuidOf(a) !== uuidOf(b)).length,
  };
}

const fmt = (x: number | null | undefined, d = 2): string => (x === null || x === undefined ? '-' : x.toFixed(d));
function write(complete: boolean): void {
  const doc = {
    benchmark: 'multi-gpu', measured: 'real GPU measurements (not simulated, not replayed)', complete, date: new Date().toISOString(), command, kernelduelVersion: KERNELDUEL_VERSION,
    gpus: poolGpus.map((g) => ({ index: g.index, name: g.name, uuid: g.uuid, computeCapability: g.computeCapability, driver: g.driverVersion, smClockMHz: g.smClockMHz, maxSmClockMHz: g.maxSmClockMHz })),
    strategy, seed, plan, runs: rows, comparisons: comparisons(),
    definitions: {
      evaluationsPerMinute: "results after the baseline's, per minute of the window from the baseline's result to the last result (the GPUs' warm-up before the baseline is not counted)",
      busyFraction: "share of that window during which a check, time or duel process held the GPU's queue (sampled every 20 ms)",
      poolBusyFraction: 'the pool loop\'s own account: share of the run during which the GPU\'s lane was measuring',
      bestWithinNoise: "|best(N GPUs) / best(1 GPU) - 1| <= max(2%, twice the larger relative noise of the two bests' medians)",
    },
  };
  writeFileSync(join(outDir, `${slug}-multi-gpu.json`), JSON.stringify(doc, null, 2) + '\n');
  const md: string[] = [
    `# One run on several GPUs: ${poolGpus.length} × ${poolGpus[0].name}`, '',
    `Real GPU measurements. ${complete ? 'Complete.' : '**Partial: the benchmark did not finish (results so far).**'}`, '',
    `- date: ${doc.date}`, `- command: \`${command}\``, `- KernelDuel ${KERNELDUEL_VERSION}; strategy ${strategy}, seed ${seed}`,
    ...poolGpus.map((g) => `- GPU ${g.index}: ${g.name}, ${g.uuid}, driver ${g.driverVersion}`), '',
    '| task | GPUs | budget | evaluated | evals/min | best ms | best × baseline | per-GPU busy | time limit hit |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.task} | ${r.gpuIndices.join(',')}${r.idleGpus ? ` (contexts created on ${r.idleGpus.gpuIndices.join(',')}: ${r.idleGpus.started})` : ''} | ${r.budget} | ${r.evaluated} | ${fmt(r.evaluationsPerMinute, 1)} | ${fmt(r.bestMs, 4)} | ${fmt(r.bestSpeedup)} | ${r.perGpu.map((g) => `${g.index}: ${g.busyFraction === null ? '-' : `${Math.round(g.busyFraction * 100)}%`}`).join(', ')} | ${r.stoppedByTimeLimit ? 'yes' : 'no'}${r.error ? ` (error: ${r.error})` : ''} |`),
    '', "Where a variant's time went (medians in ms; a duel from its side A's result to its verdict; 'across GPUs': duels whose sides were first measured on different GPUs):", '',
    '| task | GPUs | queued | capture | check | timing | duel | duels across GPUs | event-loop delay p50 / p99 / max |', '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.task} | ${r.gpuIndices.join(',')}${r.idleGpus ? ' (c)' : ''} | ${fmt(r.timeSpent?.stagesMedianMs.queuedMs, 0)} | ${fmt(r.timeSpent?.stagesMedianMs.captureMs, 0)} | ${fmt(r.timeSpent?.stagesMedianMs.checkMs, 0)} | ${fmt(r.timeSpent?.stagesMedianMs.timeMs, 0)} | ${fmt(r.timeSpent?.duelMedianMs, 0)} | ${r.timeSpent ? `${r.timeSpent.duelsAcrossGpus} of ${r.duels}` : '-'} | ${r.eventLoopDelayMs ? `${fmt(r.eventLoopDelayMs.p50, 1)} / ${fmt(r.eventLoopDelayMs.p99, 1)} / ${fmt(r.eventLoopDelayMs.max, 0)}` : '-'} |`),
    '', '| task | GPUs | evals/min ratio | target | best(N)/best(1) | within noise | same best variant |', '|---|---|---|---|---|---|---|',
    ...comparisons().map((c) => `| ${c.task} | ${c.gpus} | ${fmt(c.evaluationsPerMinuteRatio as number | null)} | ${c.target ?? '-'} | ${fmt(c.bestMsRatio as number | null, 3)} | ${c.bestWithinNoise === null ? '-' : c.bestWithinNoise ? 'yes' : 'no'} | ${c.sameBestVariant ? 'yes' : 'no'} |`),
    '', ...Object.entries(doc.definitions).map(([k, v]) => `- ${k}: ${v}`), '',
  ];
  writeFileSync(join(outDir, `${slug}-multi-gpu.md`), md.join('\n'));
}

/**
 * Evaluations per minute of contrastive runs on one H200, only to share the time out: softmax,
 * layernorm, reduce_sum, transpose from bench/results/h200-throughput-417a7f9.json (2026-12-01);
 * matmul was not measured since the measurement got faster: a guess below the others (its kernel
 * takes 5-30 ms per call).
 */
const EXPECTED_RATE: Record<string, number> = { matmul: 30, softmax: 57, layernorm: 55.6, reduce_sum: 59.5, transpose: 63.8 };

let current: AbortController | null = null;
let terminated = false;
process.on('SIGTERM', () => {
  terminated = true;
  log('SIGTERM: stopping the run in progress and writing what there is');
  current?.abort();
});

write(false);
for (let k = 0; k < plan.length && !terminated; k++) {
  const p = plan[k];
  // This run's share of the time left, by its expected length: warm-up plus budget / (GPUs × the
  // task's single-GPU rate measured before, see EXPECTED_RATE).
  const left = deadlineMs - (Date.now() - started);
  const weight = (x: { task: string; gpus: number; budget: number }): number => 12 + (60 * x.budget) / (x.gpus * (EXPECTED_RATE[x.task] ?? 10));
  const share = (left * weight(p)) / plan.slice(k).reduce((a, x) => a + weight(x), 0);
  if (share < 15_000) {
    log(`${p.task} on ${p.gpus} GPU(s): skipped, ${Math.round(left / 1000)} s left before the deadline`);
    continue;
  }
  rmSync(join(home, 'work', 'builds'), { recursive: true, force: true });
  const indices = poolGpus.slice(0, p.gpus).map((g) => g.index);
  log(`${p.task} on GPUs ${indices.join(',')}${p.contexts ? ` (CUDA contexts created on ${poolGpus.slice(p.gpus).map((g) => g.index).join(',')})` : ''}: budget ${p.budget}, seed ${seed}, at most ${Math.round(share / 1000)} s`);
  // 1c: the pool's other GPUs get a loop of processes creating CUDA contexts while this run measures.
  const idle = p.contexts ? poolGpus.slice(p.gpus) : [];
  const loops = idle.map((g) => startLoop(contextProgram!, [], { ...process.env, CUDA_VISIBLE_DEVICES: cudaDeviceSelector(g) }));
  let thisRow: RunRow | null = null;
  const ac = new AbortController();
  current = ac;
  const timer = setTimeout(() => ac.abort(), share);
  const t0 = Date.now();
  let baseAt: number | null = null;
  let lastAt: number | null = null;
  let after = 0;
  let failures = 0;
  let duels = 0;
  let gpusAtEnd: GpuActivity[] = [];
  const samples = new Map<string, { n: number; busy: number }>();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  if (values.trace) process.env.KERNELDUEL_TRACE = join(outDir, `trace-${p.task}-${p.gpus}gpu${p.contexts ? 'c' : ''}.jsonl`);
  // When each result arrived: a duel follows its result on the same lane, so its length is the time
  // from its side A's result to the duel's event.
  const resultAt = new Map<string, number>();
  const duelMs: number[] = [];
  const duelPairs: Array<[string, string]> = [];
  let sampler: NodeJS.Timeout | null = null;
  try {
    const run = await prepareRun({ task: p.task, strategy, budget: p.budget, seed, backend: { kind: 'gpu', gpus: indices }, sessionsRoot: join(home, 'sessions') });
    if (!run.lanes || !(run.measurer instanceof Evaluator) || !run.measurer.gpu) throw new Error(`not a GPU pool: ${run.label}`);
    const queues = run.lanes.map((l) => ({ uuid: l.gpu.uuid, q: gpuQueue(l.gpu.uuid || String(l.gpu.index)) }));
    for (const x of queues) samples.set(x.uuid, { n: 0, busy: 0 });
    const row: RunRow = {
      task: p.task, gpus: p.gpus, gpuIndices: indices, budget: p.budget, seed, session: run.session.meta.id, evaluated: 0, evaluationsPerMinute: null, windowSeconds: null,
      wallSeconds: 0, stoppedByTimeLimit: false, baselineMs: null, bestMs: null, bestRelNoise: null, bestSpeedup: null, bestVariant: null, failures: 0, duels: 0, perGpu: [],
    };
    if (p.contexts) row.idleGpus = { beside: 'contexts', gpuIndices: idle.map((g) => g.index), started: 0, failed: 0 };
    thisRow = row;
    rows.push(row);
    const r = await runPoolLoop({
      session: run.session, lanes: run.lanes, strategy: run.strategy, budget: p.budget, signal: ac.signal,
      onEvent: (e) => {
        if (e.type === 'duel') {
          duels++;
          const at = resultAt.get(e.a);
          if (at !== undefined) duelMs.push(Date.now() - at);
          duelPairs.push([e.a, e.b]);
        }
        if (e.type === 'result') resultAt.set(e.variantId, Date.now());
        if (e.type === 'gpus') gpusAtEnd = e.gpus;
        if (e.type === 'done' && e.gpus) gpusAtEnd = e.gpus;
        if (e.type !== 'result') return;
        if (e.index === 0 && baseAt === null) {
          baseAt = Date.now();
          // The busy window starts with the baseline's result.
          sampler = setInterval(() => {
            for (const x of queues) {
              const s = samples.get(x.uuid)!;
              s.n++;
              if (x.q.running > 0) s.busy++;
            }
          }, 20);
          return;
        }
        after++;
        lastAt = Date.now();
        if (e.result.failure) failures++;
        log(`${p.task} ×${p.gpus} [${e.index}/${p.budget}] best ${e.bestSpeedup?.toFixed(2) ?? '-'}×`);
      },
    });
    const best = run.session.best();
    const base = run.session.variants().find((v) => v.origin === 'baseline');
    const window = baseAt !== null && lastAt !== null ? (lastAt - baseAt) / 1000 : null;
    const src = best?.result.source;
    Object.assign(row, {
      evaluated: r.evaluated, evaluationsPerMinute: window && after ? after / (window / 60) : null, windowSeconds: window, wallSeconds: (Date.now() - t0) / 1000,
      stoppedByTimeLimit: ac.signal.aborted, baselineMs: base ? (run.session.resultOf(base.id)?.timing?.[0]?.medianMs ?? null) : null,
      bestMs: best?.medianMs ?? null, bestRelNoise: best?.result.timing?.[0]?.relNoise ?? null, bestSpeedup: best?.speedup ?? null,
      bestVariant: best ? { id: best.variant.id, config: best.variant.config, flags: best.variant.flags, transforms: best.variant.transforms ?? [], measuredOn: src?.kind === 'gpu' ? (src.uuid ?? src.gpu) : null } : null,
      failures, duels,
      eventLoopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      timeSpent: timeSpentOf(run.session, duelMs, duelPairs),
      perGpu: run.lanes.map((l) => {
        const s = samples.get(l.gpu.uuid);
        const g = gpusAtEnd.find((x) => x.uuid === l.gpu.uuid);
        return { index: l.gpu.index, uuid: l.gpu.uuid, results: g?.evaluated ?? 0, busyFraction: s && s.n ? s.busy / s.n : null, poolBusyFraction: g?.busyFraction ?? null, state: g?.state ?? 'idle', ...(g?.removedReason ? { removedReason: g.removedReason } : {}) };
      }),
    } satisfies Partial<RunRow>);
    log(`${p.task} ×${p.gpus}: ${fmt(row.evaluationsPerMinute, 1)} evals/min, best ${fmt(row.bestMs, 4)} ms (${fmt(row.bestSpeedup)}×)${row.stoppedByTimeLimit ? ', stopped by the time limit' : ''}`);
    run.session.close();
    for (const l of run.lanes) l.abandon?.();
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    log(`${p.task} ×${p.gpus}: failed: ${msg}`);
    const row = thisRow;
    if (row) row.error = msg;
    else rows.push({ task: p.task, gpus: p.gpus, gpuIndices: indices, budget: p.budget, seed, session: '', evaluated: 0, evaluationsPerMinute: null, windowSeconds: null, wallSeconds: (Date.now() - t0) / 1000, stoppedByTimeLimit: false, baselineMs: null, bestMs: null, bestRelNoise: null, bestSpeedup: null, bestVariant: null, failures, duels, perGpu: [], error: msg });
  } finally {
    clearTimeout(timer);
    loopDelay.disable();
    if (loops.length) {
      const counts = await Promise.all(loops.map((l) => l.stop()));
      if (thisRow?.idleGpus) Object.assign(thisRow.idleGpus, { started: counts.reduce((a, c) => a + c.started, 0), failed: counts.reduce((a, c) => a + c.failed, 0) });
    }
    delete process.env.KERNELDUEL_TRACE;
    if (sampler) clearInterval(sampler);
    current = null;
  }
  write(false);
}
write(!terminated && rows.length === plan.length && rows.every((r) => !r.error));
log(`done: ${join(outDir, `${slug}-multi-gpu.json`)}`);
process.exit(0);
