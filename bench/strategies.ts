// Replays every recorded space with every strategy for many seeds and writes
// bench/results/strategies-<gpu>.json and .md: evaluations needed to reach 95/98/100% of the
// recorded optimum (median and spread), the best found at 25/50/100 evaluations, and the
// contrastive preference model's accuracy after the budget.
//
//   npm run bench:strategies                         # bench/spaces/h200/*.json -> bench/results/
//   tsx bench/strategies.ts --spaces DIR --out DIR --seeds 20 --budget 100 --gpu h200
//
// Every figure is a REPLAY of measurements recorded on a real GPU (the recording's `measured`
// field is copied into the results; anything but 'real GPU' is flagged loudly).
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { loadSpace, ReplayMeasurer, type RecordedSpace } from '../main/engine/measure/replay.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import type { ActionSpace } from '../main/engine/search/actions.js';
import { replayStrategy, STRATEGY_NAMES, type StrategyName } from '../main/engine/search/strategies.js';
import type { ContrastiveStrategy } from '../main/engine/search/contrastive.js';
import { mulberry32 } from '../main/engine/base/random.js';
import { quantile } from '../main/engine/measure/stats.js';

interface Args {
  spaces: string;
  out: string;
  seeds: number;
  budget: number;
  gpu: string;
  strategies: StrategyName[];
}

function parseArgs(argv: string[]): Args {
  const a: Args = { spaces: 'bench/spaces/h200', out: 'bench/results', seeds: 20, budget: 100, gpu: 'h200', strategies: [...STRATEGY_NAMES] };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--spaces': a.spaces = v; i++; break;
      case '--out': a.out = v; i++; break;
      case '--seeds': a.seeds = Number(v); i++; break;
      case '--budget': a.budget = Number(v); i++; break;
      case '--gpu': a.gpu = v; i++; break;
      case '--strategies': a.strategies = v.split(',') as StrategyName[]; i++; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!(a.seeds >= 1) || !(a.budget >= 1)) throw new Error('--seeds and --budget must be positive');
  return a;
}

interface Reach {
  /** Median evaluations over the seeds that reached it (null if fewer than half did). */
  median: number | null;
  p25: number | null;
  p75: number | null;
  reached: number;
  seeds: number;
}

function reachOf(evals: Array<number | null>, budget: number): Reach {
  // Runs that never reached the target count as budget+1 for the median (so the median is honest).
  const xs = evals.map((e) => e ?? budget + 1);
  const med = quantile(xs, 0.5);
  return { median: med > budget ? null : med, p25: quantile(xs, 0.25) > budget ? null : quantile(xs, 0.25), p75: quantile(xs, 0.75) > budget ? null : quantile(xs, 0.75), reached: evals.filter((e) => e !== null).length, seeds: evals.length };
}

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
    const sx = s.model.score(s.encoder.encode(x.a!));
    const sy = s.model.score(s.encoder.encode(y.a!));
    right += (sx > sy) === (x.ms < y.ms) ? 1 : 0;
    n++;
  }
  return n ? right / n : null;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = resolve(args.spaces);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
  if (!files.length) {
    process.stderr.write(`bench:strategies: no recorded spaces in ${dir}.\nRecord them on a GPU first (every configuration of every suite task, format kernelduel-space/1, one <task>.json per task), or point --spaces at a folder of recordings.\n`);
    process.exit(1);
  }
  const targets = [0.95, 0.98, 1.0];
  const checkpoints = [25, 50, 100].filter((c) => c <= args.budget);
  const out: Record<string, unknown>[] = [];
  const started = Date.now();
  for (const f of files) {
    const rec = loadSpace(join(dir, f));
    const task = resolveTask(rec.task);
    const probe = new ReplayMeasurer(task, rec);
    const opt = probe.optimumMs();
    const valid = rec.entries.filter((e) => e.medianMs !== null).length;
    const perStrategy: Record<string, unknown> = {};
    for (const name of args.strategies) {
      const reach: Array<Array<number | null>> = targets.map(() => []);
      const bestAt: number[][] = checkpoints.map(() => []);
      const acc: number[] = [];
      const spaceAcc: number[] = [];
      const t0 = Date.now();
      for (let seed = 1; seed <= args.seeds; seed++) {
        const { result: r, strategy: strat, space } = await replayStrategy(name, task, rec, seed, args.budget);
        targets.forEach((q, i) => reach[i].push(r.steps.find((s) => s.bestMs !== null && opt / s.bestMs >= q - 1e-12)?.index ?? null));
        checkpoints.forEach((c, i) => {
          const s = r.steps[Math.min(c, r.steps.length) - 1];
          bestAt[i].push(s?.bestMs ? opt / s.bestMs : r.baselineMs ? opt / r.baselineMs : 0);
        });
        if (name === 'contrastive') {
          if (r.model?.heldOutAccuracy != null) acc.push(r.model.heldOutAccuracy);
          const sa = spaceAccuracy(strat as ContrastiveStrategy, space, rec, seed);
          if (sa !== null) spaceAcc.push(sa);
        }
      }
      perStrategy[name] = {
        reach: Object.fromEntries(targets.map((q, i) => [`${Math.round(q * 100)}%`, reachOf(reach[i], args.budget)])),
        bestAt: Object.fromEntries(checkpoints.map((c, i) => [String(c), { median: quantile(bestAt[i], 0.5), p25: quantile(bestAt[i], 0.25), p75: quantile(bestAt[i], 0.75) }])),
        ...(name === 'contrastive' ? { preferenceAccuracy: { heldOutMedian: acc.length ? quantile(acc, 0.5) : null, wholeSpaceMedian: spaceAcc.length ? quantile(spaceAcc, 0.5) : null, runs: acc.length } } : {}),
        seconds: (Date.now() - t0) / 1000,
      };
      process.stderr.write(`${rec.task} ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    }
    out.push({ file: basename(f), task: rec.task, measured: rec.measured, gpu: rec.gpu, date: rec.date, entries: rec.entries.length, timed: valid, optimumMs: opt, strategies: perStrategy });
  }
  // Targets of issue 3, computed from the table.
  type S = { reach: Record<string, Reach>; bestAt: Record<string, { median: number }>; preferenceAccuracy?: { heldOutMedian: number | null; wholeSpaceMedian: number | null } };
  const get = (sp: Record<string, unknown>, n: string): S | undefined => (sp.strategies as Record<string, S>)[n];
  const e98 = (s: S | undefined): number => s?.reach['98%'].median ?? args.budget + 1;
  const ratios: number[] = [];
  let beats = 0;
  for (const sp of out) {
    const c = get(sp, 'contrastive');
    const r = get(sp, 'random');
    if (c && r) ratios.push(e98(c) / e98(r));
    const a = get(sp, 'anneal');
    const g = get(sp, 'genetic');
    const better = (x: S | undefined): boolean => !x || e98(c) < e98(x) || (e98(c) === e98(x) && (c?.bestAt['50']?.median ?? 0) > (x.bestAt['50']?.median ?? 0));
    if (c && better(a) && better(g)) beats++;
  }
  const summary = {
    contrastiveOverRandomEvalsTo98Median: ratios.length ? quantile(ratios, 0.5) : null,
    spacesWhereContrastiveBeatsAnnealAndGenetic: beats,
    spaces: out.length,
    preferenceHeldOutAccuracyMedian: quantile(out.map((sp) => get(sp, 'contrastive')?.preferenceAccuracy?.heldOutMedian ?? NaN).filter(Number.isFinite), 0.5),
  };
  const measured = [...new Set(out.map((o) => String(o.measured)))];
  const result = { kind: 'REPLAY of recorded spaces', measured, command: `tsx bench/strategies.ts ${process.argv.slice(2).join(' ')}`.trim(), date: new Date().toISOString(), seeds: args.seeds, budget: args.budget, seconds: (Date.now() - started) / 1000, summary, spaces: out };
  mkdirSync(resolve(args.out), { recursive: true });
  const jsonPath = join(resolve(args.out), `strategies-${args.gpu}.json`);
  writeFileSync(jsonPath, JSON.stringify(result, null, 2) + '\n');
  const fmtR = (r: Reach): string => (r.median === null ? `>${args.budget} (${r.reached}/${r.seeds})` : `${r.median} [${r.p25 ?? '?'}–${r.p75 ?? `>${args.budget}`}]`);
  const lines = [
    `# Strategies on recorded ${args.gpu.toUpperCase()} spaces (REPLAY)`,
    '',
    `${args.seeds} seeds, budget ${args.budget}. Measured: ${measured.join(', ')}. Generated ${result.date} by \`${result.command}\`.`,
    measured.some((m) => m !== 'real GPU') ? '\n**WARNING: some spaces were not measured on a real GPU; these figures say nothing about real kernels.**\n' : '',
    'Evaluations to reach 95% / 98% / 100% of the recorded optimum: median [p25–p75] (or >budget with how many seeds reached it). Best at N: optimum/best, median.',
    '',
    '| space | strategy | to 95% | to 98% | to 100% | best@25 | best@50 | best@100 | pref. acc. (held-out / whole space) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const sp of out) {
    for (const n of args.strategies) {
      const s = get(sp, n)!;
      const b = (c: string): string => (s.bestAt[c] ? s.bestAt[c].median.toFixed(3) : '-');
      const pa = s.preferenceAccuracy ? `${s.preferenceAccuracy.heldOutMedian?.toFixed(3) ?? '-'} / ${s.preferenceAccuracy.wholeSpaceMedian?.toFixed(3) ?? '-'}` : '';
      lines.push(`| ${sp.task} | ${n} | ${fmtR(s.reach['95%'])} | ${fmtR(s.reach['98%'])} | ${fmtR(s.reach['100%'])} | ${b('25')} | ${b('50')} | ${b('100')} | ${pa} |`);
    }
  }
  lines.push('', `Contrastive / random evaluations to 98% (median over spaces): ${summary.contrastiveOverRandomEvalsTo98Median?.toFixed(2) ?? '-'} (target ≤ 0.5; unreached counts as budget+1).`);
  lines.push(`Spaces where contrastive beats both annealing and the genetic algorithm (fewer evaluations to 98%, ties by best@50): ${beats} of ${out.length}.`);
  lines.push(`Preference model held-out pairwise accuracy after ${args.budget} evaluations (median over spaces): ${Number.isFinite(summary.preferenceHeldOutAccuracyMedian) ? summary.preferenceHeldOutAccuracyMedian.toFixed(3) : '-'} (target ≥ 0.85).`);
  const mdPath = join(resolve(args.out), `strategies-${args.gpu}.md`);
  writeFileSync(mdPath, lines.filter((l) => l !== undefined).join('\n') + '\n');
  process.stderr.write(`wrote ${jsonPath} and ${mdPath}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:strategies: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
