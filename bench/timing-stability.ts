// Timing stability (issue 17, tiny kernels): does the same variant get the same time from fresh
// processes, and does a duel of a variant against itself say "same"? For each suite task's best
// recorded configuration (bench/spaces/<gpu>/): --processes fresh evaluators (each a new judge and
// new executors, so new CUDA contexts and new buffer placements) measure it once each, and
// --self-duels duels of it against itself run in one evaluator. With --sets 1,4 the whole is done
// once per number of buffer sets the timed calls rotate over, to show what the rotation buys;
// --timing 'bufferSets=4;bufferSets=4,minMs=300;flushClean=1' instead compares any timing settings
// the same way (keys: TIMING_KEYS below); the word `precise` stands for PRECISE_TIMING, the
// timing of `kernelduel eval --precise`.
// Each process's row keeps what explains its median: samples, noise, the median of each buffer set
// and of each half of the run, and the GPU's clocks, temperature and power before and after.
// Every figure comes from the GPU this runs on; nothing is simulated or replayed.
//   ./bench timing-stability [--tasks softmax,reduce_sum,...] [--processes 5] [--self-duels 20]
//                            [--sets 1,4 | --timing 'k=v,k=v;k=v'] [--order grouped|interleaved] [--configs FILE] [--spaces bench/spaces/h200] [--out bench/results]
//                            [--variants-from <gpu>-vs-pytorch.json] [--beside none,contexts]
// --variants-from: the tasks of a `bench vs-pytorch` run are measured at the best variant that run
// found (its configuration, compiler flags and source transforms), the figure the README reports;
// the other tasks at --configs' or their recorded space's best.
// --beside none,contexts: everything once quiet, then once with a loop of fresh processes beside it
// that each create a CUDA context on the same GPU and exit (bench/lib/context-loop.ts): does context
// work beside timing move the timed figure? Rows say which (beside), the file how many ran.
// --order interleaved measures process i of every task before process i + 1 of any (default: a
// task's processes one after the other); each process's row records its place in the run (seq)
// and the task measured just before it (after), to see whether the order moves a median.
// Without --sets and --timing: the product's own timing settings (DEFAULT_TIMING).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unusedBase } from './lib/results-file.js';
import { benchArgs as parseArgs } from './lib/args.js';
import { buildContextProgram, startLoop } from './lib/context-loop.js';
import { cudaDeviceSelector, detectGpus, gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { median, setSpread, timingSetSpread } from '../main/engine/measure/stats.js';
import { Evaluator } from '../main/engine/measure/evaluate.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { configKey, defaultConfig, isValidConfig } from '../main/engine/task/space.js';
import type { BuildFlags, Config, DuelResult, TimingResult, Verdict } from '../main/engine/base/types.js';
import { selfDuelCalibration, type SelfDuelCalibration } from './lib/self-duel-calibration.js';
import { baselineTransforms } from '../main/engine/search/strategies.js';
import { DEFAULT_TIMING, PRECISE_TIMING, type TimingSettings } from '../main/engine/measure/harness.js';
import { spreadSources, type SpreadSources } from './lib/spread-sources.js';
import { recordedSpacesDir } from './lib/spaces-dir.js';

const SUITE = ['softmax', 'reduce_sum', 'matmul', 'layernorm', 'axpy', 'transpose', 'stencil2d', 'histogram'];
const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: SUITE.join(',') },
    processes: { type: 'string', default: '5' },
    'self-duels': { type: 'string', default: '20' },
    sets: { type: 'string' },
    timing: { type: 'string' },
    spaces: { type: 'string' },
    configs: { type: 'string' },
    'variants-from': { type: 'string' },
    order: { type: 'string', default: 'grouped' },
    beside: { type: 'string', default: 'none' },
    out: { type: 'string', default: 'bench/results' },
    // Suffix of the files written (<gpu>-timing-stability-<tag>.json/.md), so that two runs into one
    // folder keep both (on 2026-12-07 the second command of a batch overwrote the first's file).
    tag: { type: 'string' },
  },
});
if (values.tag !== undefined && !/^[A-Za-z0-9._-]+$/.test(values.tag)) throw new Error(`--tag: "${values.tag}" may hold only letters, digits, '.', '_' and '-' (it names the results files)`);
const order = values.order!;
// --beside none,contexts: the whole measurement once quiet and once with a loop of fresh processes
// creating and destroying CUDA contexts on the same GPU beside it (bench/lib/context-loop.ts).
const besides = values.beside!.split(',');
for (const b of besides) if (b !== 'none' && b !== 'contexts') throw new Error(`--beside: "${b}" is neither none nor contexts (a loop of processes creating CUDA contexts beside the measurement)`);
if (order !== 'grouped' && order !== 'interleaved') throw new Error(`--order: "${order}" is neither grouped (a task's processes one after the other) nor interleaved (process i of every task before process i + 1 of any)`);
// --configs FILE (bench/expert-configs.json's shape, {"tasks": {"layernorm": [{...}], ...}}): a task
// listed there is measured at its first configuration instead of its recorded space's best (a space
// recorded before the task's tunables changed has a stale best).
const chosen = values.configs ? (JSON.parse(readFileSync(values.configs, 'utf8')) as { tasks?: Record<string, Config[]> }).tasks : undefined;
if (values.configs && !chosen) throw new Error(`--configs ${values.configs}: no "tasks" object (expected {"tasks": {"<task>": [{...config}]}})`);
for (const [name, cs] of Object.entries(chosen ?? {})) {
  if (cs[0] && !isValidConfig(resolveTask(name), cs[0])) throw new Error(`--configs ${values.configs}: ${name}'s first configuration ${configKey(cs[0])} is not in the task's space`);
}
/** A vs-pytorch run's best: its source as measured (runs since 2026-12-04), else rebuilt from the transforms. */
interface FoundVariant { config: Config; flags: BuildFlags; transforms: string[]; source?: string }
const found = new Map<string, FoundVariant>();
if (values['variants-from']) {
  const file = values['variants-from'];
  let doc: { tasks?: Array<{ task?: string; kernelduel?: { variant?: FoundVariant } | null }> };
  try {
    doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
  } catch (e) {
    throw new Error(`--variants-from ${file}: cannot read it as JSON (${(e as Error).message})`, { cause: e });
  }
  if (!Array.isArray(doc.tasks)) throw new Error(`--variants-from ${file}: no "tasks" array (expected a bench vs-pytorch result)`);
  for (const r of doc.tasks) {
    const v = r.kernelduel?.variant;
    if (!r.task || !v) continue; // a task whose search failed keeps its recorded best
    if (typeof v.config !== 'object' || typeof v.flags !== 'object' || !Array.isArray(v.transforms) || (v.source !== undefined && typeof v.source !== 'string')) throw new Error(`--variants-from ${file}: ${r.task}'s variant needs config, flags and transforms`);
    if (!isValidConfig(resolveTask(r.task), v.config)) throw new Error(`--variants-from ${file}: ${r.task}'s ${configKey(v.config)} is not in the task's space`);
    found.set(r.task, v);
  }
}
const here = dirname(fileURLToPath(import.meta.url));
const benchDir = process.env.KERNELDUEL_BENCH_DATA ?? here;
const started = Date.now();
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

const det = await detectGpus();
const gpu = det.gpus.find((g) => g.arch);
if (!gpu) throw new Error(`timing-stability needs a GPU: ${det.problems.join(' ')}`);
const slug = gpuSlug(gpu.name);
const wantedBase = `${slug}-timing-stability${values.tag ? `-${values.tag}` : ''}`;
const toolchain = await findToolchain();
const workRoot = mkdtempSync(join(tmpdir(), 'kd-stability-'));
const processes = Number(values.processes);
const gpuEnv = { ...process.env, CUDA_VISIBLE_DEVICES: cudaDeviceSelector(gpu) }; // the context loop's processes use the GPU under test
const contextProgram = besides.includes('contexts') ? buildContextProgram(toolchain.nvcc!, workRoot, gpuEnv) : null;
const besideContexts: Array<{ timing: string; started: number; failed: number }> = [];
const TIMING_KEYS = ['warmupMs', 'minSamples', 'maxSamples', 'targetRelNoise', 'minMs', 'maxMs', 'bufferSets', 'flushBytes', 'flushClean', 'flushCleanBytes', 'flushSets', 'duelAllocOrder', 'duelWarmOrder', 'spreadLarge', 'sparesWait', 'timingContexts', 'duelTargetRelNoise'] as const;
/** `--timing 'bufferSets=4,minMs=300;bufferSets=8'`: timing settings to compare; else one per --sets. */
function timingVariants(): Array<Partial<TimingSettings>> {
  if (!values.timing && !values.sets) return [{}]; // the product's own timing settings
  if (!values.timing) return values.sets!.split(',').map((n) => ({ bufferSets: Number(n) }));
  return values.timing.split(';').map((v) => {
    if (v.trim() === 'precise') return PRECISE_TIMING; // `kernelduel eval --precise`'s
    const t: Partial<TimingSettings> = {};
    for (const kv of v.split(',')) {
      const [k, x] = kv.split('=');
      const key = TIMING_KEYS.find((n) => n === k?.trim());
      if (!key || x === undefined || !Number.isFinite(Number(x))) throw new Error(`--timing: bad setting "${kv}" (keys: ${TIMING_KEYS.join(', ')})`);
      t[key] = Number(x);
    }
    return t;
  });
}
const label = (t: Partial<TimingSettings>): string =>
  (t === PRECISE_TIMING ? 'precise: ' : '') + Object.entries(t).map(([k, v]) => `${k}=${v}`).join(',') || `defaults (bufferSets=${DEFAULT_TIMING.bufferSets}, targetRelNoise=${DEFAULT_TIMING.targetRelNoise}, minMs=${DEFAULT_TIMING.minMs})`;
const half = (xs: number[]): [number, number] => [median(xs.slice(0, Math.floor(xs.length / 2))), median(xs.slice(Math.floor(xs.length / 2)))];
/** What explains one process's median: its samples, their noise, each buffer set's and each half's median, the clocks. */
function processDetail(t: TimingResult, sets: number): Record<string, unknown> {
  const n = t.bufferSets ?? sets; // the judge may use fewer sets than asked when memory is short
  const perSet = timingSetSpread(t, n)?.perSetMedianMs;
  // With timingContexts N, call i ran in executor i mod N: each executor's (CUDA context's) median.
  const ctx = t.contexts ?? 1;
  const perContext = ctx > 1 ? setSpread(t.samplesMs, ctx)?.perSetMedianMs : undefined;
  return {
    medianMs: t.medianMs, bufferSets: n, samples: t.samplesMs.length, relNoise: t.relNoise, converged: t.converged, timer: t.timer,
    perSetMedianMs: perSet, ...(perContext ? { contexts: ctx, perContextMedianMs: perContext } : {}), halvesMedianMs: half(t.samplesMs), clocksStart: t.clocksStart, clocksEnd: t.clocksEnd,
  };
}
const selfDuels = Number(values['self-duels']);

const result: Record<string, unknown> = {
  benchmark: 'timing-stability',
  measured: 'real GPU measurements (not simulated, not replayed)',
  date: new Date().toISOString(),
  command: invokedAs(`npx tsx bench/timing-stability.ts --tasks ${values.tasks} --processes ${processes} --self-duels ${selfDuels}${values.tag ? ` --tag ${values.tag}` : ''}${order !== 'grouped' ? ` --order ${order}` : ''}${values.configs ? ` --configs ${values.configs}` : ''}${values['variants-from'] ? ` --variants-from ${values['variants-from']}` : ''}${values.sets ? ` --sets ${values.sets}` : ''}${values.timing ? ` --timing '${values.timing}'` : ''}${values.beside !== 'none' ? ` --beside ${values.beside}` : ''}`),
  gpu: { name: gpu.name, uuid: gpu.uuid, driver: gpu.driverVersion },
  bundle: process.env.KERNELDUEL_BUNDLE ?? 'repository checkout',
  goals: 'same variant in fresh processes: spread of medians (max-min)/median <= 0.5%; self duels say "same" in >= 99 of 100',
};
const rows: Array<Record<string, unknown>> = [];
const outDir = resolve(values.out!);
mkdirSync(outDir, { recursive: true });
const base = unusedBase(outDir, wantedBase);
if (base !== wantedBase) log(`${wantedBase}.json is there already (another run's): this run writes ${base}.json`);
const save = (): void => {
  writeFileSync(join(outDir, `${base}.json`), JSON.stringify({ ...result, rows, totalSeconds: (Date.now() - started) / 1000 }, null, 2) + '\n');
  const md = [
    `# Timing stability on ${gpu.name} (${String(result.date).slice(0, 10)})`,
    '',
    `Command: \`${String(result.command)}\`. Real GPU measurements. Goals: ${String(result.goals)}.`,
    '',
    '| task | variant (from) | timing | median ms | spread of ' + processes + ' processes | sd between processes (what the sets explain: per-set sd / √sets) | self duels same / n | other verdicts | self duels whose 95% interval misses 1: pairs / pairs and placements (verdicts of the latter) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const v = r.verdicts as Record<string, number>;
      const other = Object.entries(v).filter(([k]) => k !== 'same').map(([k, n]) => `${k} ${n}`).join(', ');
      const src = r.spreadSources as SpreadSources | null;
      const sources = src ? `${src.betweenSdPct.toFixed(2)}% (${src.expectedFromSetsPct.toFixed(2)}%)` : '-';
      const tr = (r.transforms as string[]).length ? ` + ${(r.transforms as string[]).join(' ')}` : '';
      const fl = Object.entries(r.flags as BuildFlags).filter(([k, x]) => k !== 'opt' || x !== 3).map(([k, x]) => ` ${k}=${String(x)}`).join('');
      const cal = r.calibration as SelfDuelCalibration | null | undefined;
      const calCell = cal ? `${cal.pairsMiss1} / ${cal.placementsMiss1} of ${cal.n}${cal.withSets < cal.n ? ` (${cal.withSets} with a placements' share)` : ''} (${Object.entries(cal.verdictsWithPlacements).map(([k, n]) => `${k} ${n}`).join(', ')})` : '-';
      return `| ${r.task} | ${configKey(r.config as Config)}${fl}${tr} (${String(r.variantFrom)}) | ${String(r.timingLabel)} | ${(r.medianMs as number | null)?.toFixed(4) ?? '-'} | ${r.spreadPct === null ? '-' : `${(r.spreadPct as number).toFixed(2)}%`} | ${sources} | ${v.same ?? 0} / ${r.duels} | ${other || '-'} | ${calCell} |`;
    }),
    '',
  ].join('\n');
  writeFileSync(join(outDir, `${base}.md`), md);
};

/** One process's measurement of one task: a fresh evaluator (new judge, new CUDA context, new buffer placements). */
interface TaskRun {
  name: string;
  task: ReturnType<typeof resolveTask>;
  config: Config;
  /** Where the variant came from: a vs-pytorch run, --configs or the recorded space. */
  from: string;
  spec: { source: string; config: Config; flags: BuildFlags; transforms?: string[]; origin: string };
  medians: number[];
  details: Array<Record<string, unknown>>;
  failures: string[];
}
// Each task's configuration, once for every timing compared: --configs' first, else the recorded space's best.
const targets = await Promise.all(values.tasks!.split(',').map(async (name) => {
  const task = resolveTask(name);
  const v = found.get(name);
  if (v) {
    let source = v.source ?? task.baselineSource;
    if (v.source === undefined && v.transforms.length) {
      // An older result names its transforms only; their loop ids follow the kernel's loops, so they
      // apply only while the task's kernel has the loops it had then.
      try {
        source = (await baselineTransforms(task)).apply(v.transforms);
      } catch (e) {
        throw new Error(`--variants-from ${values['variants-from']}: ${name}'s transforms do not apply to the task's kernel as it is now (${(e as Error).message}); that file predates results that keep the measured source: measure its tunables with --configs instead`, { cause: e });
      }
    }
    const config = { ...defaultConfig(task), ...v.config };
    return { name, task, config, from: 'vs-pytorch', spec: { source, config, flags: v.flags, ...(v.transforms.length ? { transforms: v.transforms } : {}), origin: 'user' } };
  }
  const given = chosen?.[name]?.[0];
  let config: Config;
  if (given) config = { ...defaultConfig(task), ...given };
  else {
    const space = JSON.parse(readFileSync(join(recordedSpacesDir(values.spaces, benchDir, slug), `${name}.json`), 'utf8')) as { entries: Array<{ config: Config; medianMs: number | null }> };
    const best = space.entries.filter((e) => e.medianMs !== null).sort((a, b) => a.medianMs! - b.medianMs!)[0];
    // A space recorded before a tunable was added lacks it: the kernel's default is what was built then.
    config = { ...defaultConfig(task), ...best.config };
  }
  return { name, task, config, from: given ? 'configs' : 'recorded space', spec: { source: task.baselineSource, config, flags: { opt: 3 } as BuildFlags, origin: 'user' } };
}));
let seq = 0; // the position of a process in the whole run, to look for order effects
let previous = ''; // the task the process before measured
for (const beside of besides) for (const timing of timingVariants()) {
  const sets = timing.bufferSets ?? DEFAULT_TIMING.bufferSets;
  const loop = beside === 'contexts' ? startLoop(contextProgram!, [], gpuEnv) : null;
  const tag = beside === 'none' ? label(timing) : `${label(timing)} beside contexts`;
  const runs: TaskRun[] = targets.map((t) => ({ ...t, medians: [], details: [], failures: [] }));
  const measure = async (run: TaskRun, p: number): Promise<void> => {
    const ev = new Evaluator({ task: run.task, toolchain, gpu, workRoot, timing });
    const r = await ev.evaluate(run.spec);
    ev.close();
    const t = r.timing?.[0];
    seq++;
    if (t && !r.failure) {
      run.medians.push(t.medianMs);
      const d: Record<string, unknown> = { ...processDetail(t, sets), seq, after: previous || null };
      run.details.push(d);
      const c = (x?: { smMHz: number | null; memMHz: number | null; tempC: number | null; powerW: number | null }): string => (x ? `${x.smMHz}/${x.memMHz} MHz ${x.tempC} C ${x.powerW} W` : '-');
      const ms = (xs: number[] | undefined): string => (xs ? xs.map((x) => x.toFixed(4)).join(' ') : '-');
      log(`  ${run.name} ${tag} process ${p + 1}: ${t.medianMs.toFixed(4)} ms, ${t.samplesMs.length} samples, noise ${(t.relNoise * 100).toFixed(2)}%, sets ${ms(d.perSetMedianMs as number[] | undefined)}, halves ${ms(d.halvesMedianMs as number[])}${d.perContextMedianMs ? `, contexts ${ms(d.perContextMedianMs as number[])}` : ''}, clocks ${c(t.clocksStart)} -> ${c(t.clocksEnd)}`);
    } else run.failures.push(`${r.failure?.kind}: ${r.failure?.reason}`);
    previous = run.name;
  };
  // --order interleaved: process i of every task before process i + 1 of any, so that a task's
  // first process is not always the one that follows another task's run.
  if (order === 'interleaved') {
    for (let p = 0; p < processes; p++) for (const run of runs) await measure(run, p);
  }
  for (const run of runs) {
    const { name, config, spec, medians, details, failures } = run;
    if (order === 'grouped') for (let p = 0; p < processes; p++) await measure(run, p);
    const m = medians.length ? median(medians) : null;
    const spreadPct = medians.length === processes && m ? ((Math.max(...medians) - Math.min(...medians)) / m) * 100 : null;
    const verdicts: Partial<Record<Verdict | 'failed', number>> = {};
    const ratios: number[] = [];
    const duelFigures: DuelResult[] = [];
    const ev = new Evaluator({ task: run.task, toolchain, gpu, workRoot, timing });
    for (let d = 0; d < selfDuels; d++) {
      const r = await ev.duel(spec, spec);
      const x = r.duels?.[0];
      const key = x ? x.verdict : 'failed';
      verdicts[key] = (verdicts[key] ?? 0) + 1;
      if (x) {
        ratios.push(x.ratio);
        duelFigures.push(x);
      } else failures.push(`duel: ${r.failure?.kind}: ${r.failure?.reason}`);
    }
    ev.close();
    if (selfDuels > 0) previous = name;
    // Between-process sd well above what the sets explain: an offset each process shares (more sets will not help).
    const sources = spreadSources(details.map((d) => (d.perSetMedianMs as number[] | undefined) ?? []));
    // Self duels' intervals against their true ratio, 1: the pairs' own and the one over pairs and placements.
    const calibration = selfDuels > 0 ? selfDuelCalibration(duelFigures) : null;
    // Each self duel in order, each side's median per buffer set (pair i on set i mod sets): which
    // side, which set and which duel of the run a bias follows (how the side bias of 2026-12-07 was
    // traced to the buffers' places: docs/GPU-RUNS.md "000000").
    const duelSides = duelFigures.map((x) => {
      const n = Math.max(1, x.sets ?? 1);
      const perSet = (xs: number[]): number[] => Array.from({ length: n }, (_, k) => Number(median(xs.filter((_, i) => i % n === k)).toFixed(5)));
      return { verdict: x.verdict, ratio: Number(x.ratio.toFixed(5)), pairs: x.pairs, aSetMs: perSet(x.aMs), bSetMs: perSet(x.bMs) };
    });
    rows.push({ task: name, config, variantFrom: run.from, flags: spec.flags, transforms: spec.transforms ?? [], timing, timingLabel: tag, beside, sets, order, processDetails: details, medianMs: m, medians, spreadPct, spreadSources: sources, duels: selfDuels, verdicts, ratios, duelSides, calibration, failures });
    log(`${name} ${tag}: medians ${medians.map((x) => x.toFixed(4)).join(' ')} spread ${spreadPct?.toFixed(2) ?? '-'}%; self duels ${JSON.stringify(verdicts)}${duelSides.length ? ` in order ${duelSides.map((d) => ({ faster: 'F', slower: 'S', same: '=' } as Record<string, string>)[d.verdict] ?? '?').join('')}` : ''}${calibration ? ` (intervals missing 1: pairs ${calibration.pairsMiss1}, with placements ${calibration.placementsMiss1} of ${calibration.n})` : ''}${failures.length ? `; failures: ${failures.slice(0, 2).join(' | ')}` : ''}`);
    save();
  }
  if (loop) {
    const n = await loop.stop();
    besideContexts.push({ timing: label(timing), ...n });
    result.besideContexts = besideContexts;
    log(`beside contexts (${label(timing)}): ${n.started} processes, ${n.failed} failed`);
    if (n.failed) log('  some context processes failed: see besideContexts in the results file');
    save();
  }
}
save();
log(`wrote ${join(outDir, `${base}.json`)}`);
