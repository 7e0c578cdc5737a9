// Replays recorded spaces with every strategy for many seeds, with the metric of Kernel Tuner's
// strategy comparisons (main/engine/search/peer-metric.ts: evaluations = unique configurations in
// first-visit order, failures counted, the baseline is evaluation 1; median over seeds with
// unreached = budget + 1; best@N), and writes:
//   - the 8 H200 spaces (bench/spaces/h200, budget 100) -> bench/results/strategies-h200.{json,md}
//   - the four community spaces recorded with Kernel Tuner (../shared/tuning-spaces, imported in
//     memory, never copied; budget 200) -> bench/results/strategies-kernel-tuner-spaces.{json,md},
//     with Kernel Tuner 1.4.0's own figures beside ours (bench/peer-kernel-tuner.ts).
//
//   npm run bench:strategies                                   # both sets, 20 seeds
//   tsx bench/strategies.ts --set kernel-tuner --seeds 100 --tag 100seeds   # the 100-seed confirmation
//   tsx bench/strategies.ts --set h200 --strategies contrastive,random --no-write
//
// Every figure is a REPLAY of measurements recorded on a real GPU (the recording's `measured` field
// is copied into the results; anything but 'real GPU' is flagged loudly). The contrastive
// strategy's duels re-compare configurations it already measured, using their recorded samples —
// information Kernel Tuner's strategies never see; the results count those duels (each would be an
// extra interleaved measurement of two configurations in a live run).
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { loadSpace, ReplayMeasurer, type RecordedSpace } from '../main/engine/measure/replay.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import type { Task } from '../main/engine/task/manifest.js';
import { spaceTask } from '../main/engine/measure/space-task.js';
import { importSpaceFile } from '../main/engine/interop/files.js';
import type { ActionSpace } from '../main/engine/search/actions.js';
import { replayStrategy, STRATEGY_NAMES, type StrategyName } from '../main/engine/search/strategies.js';
import type { ContrastiveStrategy } from '../main/engine/search/contrastive.js';
import { bestAt, curveOf, duelsBy, evaluationsTo, formatReach, reachOf, type Reach } from '../main/engine/search/peer-metric.js';
import { mulberry32 } from '../main/engine/base/random.js';
import { quantile } from '../main/engine/measure/stats.js';
import { goalLabel, PEER, PEER_SOURCE, to98GoalMet, type PeerFigures } from './peer-kernel-tuner.js';

const { values: a } = parseArgs({
  options: {
    set: { type: 'string', default: 'all' },
    seeds: { type: 'string', default: '20' },
    budget: { type: 'string' },
    strategies: { type: 'string', default: STRATEGY_NAMES.join(',') },
    spaces: { type: 'string', default: 'bench/spaces/h200' },
    'kt-spaces': { type: 'string', default: '../shared/tuning-spaces' },
    only: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    tag: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const seeds = Number(a.seeds);
const strategies = a.strategies!.split(',') as StrategyName[];
for (const s of strategies) if (!(STRATEGY_NAMES as readonly string[]).includes(s)) throw new Error(`--strategies: unknown strategy ${s} (have ${STRATEGY_NAMES.join(', ')})`);
if (!(seeds >= 1)) throw new Error('--seeds must be positive');
if (!['all', 'h200', 'kernel-tuner'].includes(a.set!)) throw new Error('--set is all, h200 or kernel-tuner');
const only = a.only ? new Set(a.only.split(',')) : null;

interface Space {
  file: string;
  task: Task;
  rec: RecordedSpace;
  peer?: PeerFigures;
}

interface StrategyResult {
  reach: Record<string, Reach>;
  bestAt: Record<string, { median: number; p25: number; p75: number }>;
  /** Duels per run (median), and those held before the run reached 98% (median over seeds that reached it). */
  duels?: { perRun: number; before98: number | null };
  preferenceAccuracy?: { heldOutMedian: number | null; wholeSpaceMedian: number | null; runs: number };
  seconds: number;
}

const TARGETS = [0.95, 0.98, 1.0];

/** Fraction of random decided pairs of the whole recording the model orders correctly. */
function spaceAccuracy(s: ContrastiveStrategy, space: ActionSpace, rec: RecordedSpace, seed: number): number | null {
  const ok = rec.entries.filter((e) => e.medianMs !== null).map((e) => ({ a: space.encode(e), ms: e.medianMs! })).filter((x) => x.a !== null);
  if (ok.length < 2) return null;
  const rng = mulberry32(seed);
  let right = 0;
  let n = 0;
  for (let t = 0; t < 4000 && n < 2000; t++) {
    const x = ok[Math.floor(rng() * ok.length)];
    const y = ok[Math.floor(rng() * ok.length)];
    if (Math.max(x.ms, y.ms) / Math.min(x.ms, y.ms) < 1.02) continue;
    right += (s.model.score(s.encoder.encode(x.a!)) > s.model.score(s.encoder.encode(y.a!))) === (x.ms < y.ms) ? 1 : 0;
    n++;
  }
  return n ? right / n : null;
}

async function runStrategy(sp: Space, name: StrategyName, budget: number): Promise<StrategyResult> {
  const t0 = Date.now();
  const opt = new ReplayMeasurer(sp.task, sp.rec).optimumMs();
  const checkpoints = [25, 50, 100, 200].filter((c) => c <= budget);
  const reach: Array<Array<number | null>> = TARGETS.map(() => []);
  const at: number[][] = checkpoints.map(() => []);
  const acc: number[] = [];
  const spaceAcc: number[] = [];
  const duels: number[] = [];
  const duels98: number[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    // The baseline is evaluation 1: budget - 1 proposals after it.
    const { result: r, strategy, space } = await replayStrategy(name, sp.task, sp.rec, seed, budget - 1);
    const c = curveOf(r);
    TARGETS.forEach((q, i) => reach[i].push(evaluationsTo(c, opt, q)));
    checkpoints.forEach((n, i) => at[i].push(bestAt(c, opt, n)));
    duels.push(r.duels.length);
    const e98 = evaluationsTo(c, opt, 0.98);
    if (e98 !== null) duels98.push(duelsBy(r, c, e98));
    if (name === 'contrastive') {
      if (r.model?.heldOutAccuracy != null) acc.push(r.model.heldOutAccuracy);
      const s = spaceAccuracy(strategy as ContrastiveStrategy, space, sp.rec, seed);
      if (s !== null) spaceAcc.push(s);
    }
  }
  return {
    reach: Object.fromEntries(TARGETS.map((q, i) => [`${Math.round(q * 100)}%`, reachOf(reach[i], budget)])),
    bestAt: Object.fromEntries(checkpoints.map((n, i) => [String(n), { median: quantile(at[i], 0.5), p25: quantile(at[i], 0.25), p75: quantile(at[i], 0.75) }])),
    ...(duels.some((d) => d > 0) ? { duels: { perRun: quantile(duels, 0.5), before98: duels98.length ? quantile(duels98, 0.5) : null } } : {}),
    ...(name === 'contrastive' ? { preferenceAccuracy: { heldOutMedian: acc.length ? quantile(acc, 0.5) : null, wholeSpaceMedian: spaceAcc.length ? quantile(spaceAcc, 0.5) : null, runs: acc.length } } : {}),
    seconds: (Date.now() - t0) / 1000,
  };
}

async function runSet(spaces: Space[], budget: number): Promise<Array<Record<string, unknown> & { task: string; strategies: Record<string, StrategyResult> }>> {
  const out = [];
  for (const sp of spaces) {
    const perStrategy: Record<string, StrategyResult> = {};
    for (const name of strategies) {
      perStrategy[name] = await runStrategy(sp, name, budget);
      const r = perStrategy[name];
      process.stderr.write(`${sp.rec.task} ${name}: to 98% ${formatReach(r.reach['98%'], budget)}, best@50 ${r.bestAt['50']?.median.toFixed(3) ?? '-'} (${r.seconds.toFixed(1)} s)\n`);
    }
    const probe = new ReplayMeasurer(sp.task, sp.rec);
    out.push({
      file: basename(sp.file), task: sp.rec.task, measured: sp.rec.measured, gpu: sp.rec.gpu, date: sp.rec.date, ...(sp.rec.origin ? { origin: sp.rec.origin } : {}),
      entries: sp.rec.entries.length, timed: sp.rec.entries.filter((e) => e.medianMs !== null).length, optimumMs: probe.optimumMs(),
      ...(sp.peer ? { peer: sp.peer } : {}), strategies: perStrategy,
    });
  }
  return out;
}

const e98 = (s: StrategyResult | undefined, budget: number): number => s?.reach['98%'].median ?? budget + 1;
const fmtR = (r: Reach, budget: number): string => (r.median > budget ? `>${budget} (${r.reached}/${r.seeds})` : `${r.median} [${r.p25}–${r.p75 > budget ? `>${budget}` : r.p75}] (${r.reached}/${r.seeds})`);
const DUEL_NOTE =
  'Contrastive duels: after each timed configuration the contrastive strategy re-compares it with the best so far, here by resampling both configurations\' *recorded* samples — information Kernel Tuner\'s strategies never see. Such a duel adds no configuration (so it is not an evaluation in this metric), but in a live run each would be an extra interleaved measurement of two configurations: the `duels` columns count them.';

function writeFiles(stem: string, result: Record<string, unknown>, lines: string[]): void {
  if (a['no-write']) return;
  const dir = resolve(a.out!);
  mkdirSync(dir, { recursive: true });
  const name = `${stem}${a.tag ? `-${a.tag}` : ''}`;
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  writeFileSync(join(dir, `${name}.md`), lines.join('\n') + '\n');
  process.stderr.write(`wrote ${join(dir, name)}.json and .md\n`);
}

function tableRows(out: Awaited<ReturnType<typeof runSet>>, budget: number): string[] {
  const lines = [
    '| space | strategy | to 95% | to 98% | to 100% | best@25 | best@50 | best@100 |' + (budget >= 200 ? ' best@200 |' : '') + ' duels per run (before 98%) | pref. acc. (held-out / whole space) |',
    '|---|---|---|---|---|---|---|---|' + (budget >= 200 ? '---|' : '') + '---|---|',
  ];
  for (const sp of out) {
    for (const n of strategies) {
      const s = sp.strategies[n];
      const b = (c: string): string => (s.bestAt[c] ? s.bestAt[c].median.toFixed(3) : '-');
      const pa = s.preferenceAccuracy ? `${s.preferenceAccuracy.heldOutMedian?.toFixed(3) ?? '-'} / ${s.preferenceAccuracy.wholeSpaceMedian?.toFixed(3) ?? '-'}` : '';
      const du = s.duels ? `${s.duels.perRun} (${s.duels.before98 ?? '-'})` : '';
      lines.push(`| ${sp.task} | ${n} | ${fmtR(s.reach['95%'], budget)} | ${fmtR(s.reach['98%'], budget)} | ${fmtR(s.reach['100%'], budget)} | ${b('25')} | ${b('50')} | ${b('100')} |${budget >= 200 ? ` ${b('200')} |` : ''} ${du} | ${pa} |`);
    }
  }
  return lines;
}

const header = (budget: number, measured: string[], date: string, command: string): string[] => [
  `${seeds} seeds, budget ${budget} evaluations. Spaces recorded on: ${measured.join(', ')}; replayed here (no GPU ran for these figures). Generated ${date} by \`${command}\`.`,
  measured.some((m) => m !== 'real GPU') ? '\n**WARNING: some spaces were not measured on a real GPU; these figures say nothing about real kernels.**\n' : '',
  'Metric (Kernel Tuner\'s): evaluations = unique configurations in first-visit order, failed ones counted, KernelDuel\'s baseline is evaluation 1. "to q": evaluations until optimum/best ≥ q, median [p25–p75] over seeds, a seed that never got there counting as budget + 1, and (seeds that reached it). best@N: optimum/best after N evaluations, median.',
  '',
  DUEL_NOTE,
  '',
];

async function h200(): Promise<void> {
  const budget = Number(a.budget ?? 100);
  const dir = resolve(a.spaces!);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
  if (!files.length) {
    process.stderr.write(`bench:strategies: no recorded spaces in ${dir}: the H200 set is skipped. Record them on a GPU (npm run bench:record), or point --spaces at a folder of recordings.\n`);
    return;
  }
  const spaces: Space[] = files.filter((f) => !only || only.has(f.replace(/\.json$/, ''))).map((f) => {
    const rec = loadSpace(join(dir, f));
    return { file: join(dir, f), rec, task: resolveTask(rec.task) };
  });
  const started = Date.now();
  const out = await runSet(spaces, budget);
  const ratios: number[] = [];
  let beats = 0;
  for (const sp of out) {
    const c = sp.strategies.contrastive;
    const r = sp.strategies.random;
    if (c && r) ratios.push(e98(c, budget) / e98(r, budget));
    const better = (x: StrategyResult | undefined): boolean => !x || e98(c, budget) < e98(x, budget) || (e98(c, budget) === e98(x, budget) && (c.bestAt['50']?.median ?? 0) > (x.bestAt['50']?.median ?? 0));
    if (c && better(sp.strategies.anneal) && better(sp.strategies.genetic)) beats++;
  }
  const accs = out.map((sp) => sp.strategies.contrastive?.preferenceAccuracy?.heldOutMedian ?? NaN).filter(Number.isFinite);
  const summary = {
    contrastiveOverRandomEvalsTo98Median: ratios.length ? quantile(ratios, 0.5) : null,
    spacesWhereContrastiveBeatsAnnealAndGenetic: beats,
    spaces: out.length,
    preferenceHeldOutAccuracyMedian: accs.length ? quantile(accs, 0.5) : null,
    goals: { ratio: 0.25, beats: 7, accuracy: 0.9, source: 'issue 18' },
  };
  const measured = [...new Set(out.map((o) => String(o.measured)))];
  const command = `tsx bench/strategies.ts ${process.argv.slice(2).join(' ')}`.trim();
  const date = new Date().toISOString();
  const result = { kind: 'REPLAY of recorded spaces', metric: 'Kernel Tuner\'s (main/engine/search/peer-metric.ts)', measured, command, date, seeds, budget, seconds: (Date.now() - started) / 1000, summary, duelNote: DUEL_NOTE, spaces: out };
  const lines = [`# Strategies on recorded H200 spaces (REPLAY)`, '', ...header(budget, measured, date, command), ...tableRows(out, budget), ''];
  if (only) lines.push(`Only ${out.map((o) => o.task).join(', ')} (--only): the lines below summarise these ${out.length} spaces, not the set the goals speak of.`, '');
  lines.push(`Contrastive / random evaluations to 98% (median over spaces): ${summary.contrastiveOverRandomEvalsTo98Median?.toFixed(2) ?? '-'} (goal ≤ 0.25; unreached counts as budget+1).`);
  lines.push(`Spaces where contrastive beats both annealing and the genetic algorithm (fewer evaluations to 98%, ties by best@50): ${beats} of ${out.length} (goal ≥ 7).`);
  lines.push(`Preference model held-out pairwise accuracy after ${budget} evaluations (median over spaces): ${summary.preferenceHeldOutAccuracyMedian?.toFixed(3) ?? '-'} (goal ≥ 0.90).`);
  writeFiles('strategies-h200', result, lines);
}

async function kernelTuner(): Promise<void> {
  const budget = Number(a.budget ?? 200);
  const dir = resolve(a['kt-spaces']!);
  const present = PEER.filter((p) => existsSync(join(dir, p.file)) && (!only || only.has(p.file.replace(/\.json\.gz$/, '').toLowerCase())));
  if (!present.length) {
    process.stderr.write(`bench:strategies: the community spaces are not in ${dir} (${PEER.map((p) => p.file).join(', ')}): the Kernel Tuner set is skipped. They are read from ../shared/tuning-spaces, never copied into the repository; point --kt-spaces at a folder that has them.\n`);
    return;
  }
  const spaces: Space[] = present.map((p) => {
    const file = join(dir, p.file);
    const { space: rec } = importSpaceFile(file, { format: 'kernel-tuner', command: `kernelduel import kernel-tuner ${p.file} (in memory, by bench/strategies.ts)` });
    return { file, rec, task: spaceTask(rec, file), peer: p };
  });
  const started = Date.now();
  const out = await runSet(spaces, budget);
  const goals = out.map((sp) => {
    const c = sp.strategies.contrastive;
    const p = sp.peer as PeerFigures;
    if (!c) return { task: sp.task, note: 'contrastive not run' };
    const r = c.reach['98%'];
    const to98Met = to98GoalMet(p.goal, r);
    return {
      task: sp.task, to98: r.median, reached: r.reached, seeds: r.seeds, goal: p.goal, to98Met,
      bestAt50: c.bestAt['50'].median, bayesOptBestAt50: p.bayesOpt.bestAt50, bestAt50Met: c.bestAt['50'].median >= p.bayesOpt.bestAt50,
      bestAt100: c.bestAt['100'].median, bayesOptBestAt100: p.bayesOpt.bestAt100, bestAt100Met: c.bestAt['100'].median >= p.bayesOpt.bestAt100,
    };
  });
  const measured = [...new Set(out.map((o) => String(o.measured)))];
  const command = `tsx bench/strategies.ts ${process.argv.slice(2).join(' ')}`.trim();
  const date = new Date().toISOString();
  const result = { kind: 'REPLAY of recorded spaces (recorded by Kernel Tuner, imported in memory)', metric: 'Kernel Tuner\'s (main/engine/search/peer-metric.ts)', peerSource: PEER_SOURCE, measured, command, date, seeds, budget, seconds: (Date.now() - started) / 1000, goals, duelNote: DUEL_NOTE, spaces: out };
  const lines = [
    '# KernelDuel\'s strategies on four community spaces recorded with Kernel Tuner (REPLAY), beside Kernel Tuner\'s own',
    '',
    `Spaces: ${spaces.map((s) => `${basename(s.file)} (${s.rec.gpu.name}, ${s.rec.entries.length} configurations, ${s.rec.entries.filter((e) => e.failure).length} failed)`).join('; ')}, read from ${a['kt-spaces']} (AutoTuningAssociation/benchmark_hub, MIT) and imported in memory.`,
    '',
    ...header(budget, measured, date, command),
    '## Against Kernel Tuner',
    '',
    `Kernel Tuner's figures: ${PEER_SOURCE}. KernelDuel's: this run (REPLAY). Evaluations to 98%: median (seeds reached).`,
    '',
    '| space | KernelDuel contrastive (default) | goal | other KernelDuel strategies | Kernel Tuner\'s best | KT bayes_opt | KT genetic_algorithm | random (exact expectation) | contrastive best@50 / @100 | KT bayes_opt best@50 / @100 |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const sp of out) {
    const p = sp.peer as PeerFigures;
    const c = sp.strategies.contrastive;
    const others = strategies.filter((n) => n !== 'contrastive' && n !== 'exhaustive').map((n) => `${n} ${formatReach(sp.strategies[n].reach['98%'], budget)}`).join(', ');
    const g = goals.find((x) => x.task === sp.task) as { to98Met?: boolean; bestAt50Met?: boolean; bestAt100Met?: boolean } | undefined;
    lines.push(
      `| ${p.label} | ${c ? formatReach(c.reach['98%'], budget) : '-'} | ${goalLabel(p.goal, seeds)}: ${g?.to98Met ? 'met' : 'NOT met'} | ${others} | ${p.best.map((b) => `${b.strategy} ${b.to98} (${b.reached}/20)`).join(', ')} | ${p.bayesOpt.to98}${p.bayesOpt.reached !== null ? ` (${p.bayesOpt.reached}/20)` : ''} | ${p.geneticAlgorithm.to98}${p.geneticAlgorithm.reached !== null ? ` (${p.geneticAlgorithm.reached}/20)` : ''} | ${p.randomExpected} | ${c ? `${c.bestAt['50'].median.toFixed(3)} / ${c.bestAt['100'].median.toFixed(3)}` : '-'} (${g?.bestAt50Met && g?.bestAt100Met ? 'both ≥ bayes_opt' : 'NOT both ≥ bayes_opt'}) | ${p.bayesOpt.bestAt50.toFixed(3)} / ${p.bayesOpt.bestAt100.toFixed(3)} |`,
    );
  }
  lines.push('', '## Every KernelDuel strategy', '', ...tableRows(out, budget));
  writeFiles('strategies-kernel-tuner-spaces', result, lines);
}

if (a.set === 'all' || a.set === 'h200') await h200();
if (a.set === 'all' || a.set === 'kernel-tuner') await kernelTuner();
