// The contrastive strategy with option overrides, on chosen recorded spaces (REPLAY), with the
// metric of bench/strategies.ts (evaluations to 98%: median over seeds, unreached = budget + 1;
// best@50/@100; the model's held-out pair accuracy after the run). For trying options against
// the default before changing it; prints one line per space, writes nothing. With the bandit portfolio
// on (`bandit`), the line ends with each arm's improvements of the best / picks, summed over seeds;
// with the trust region on (`trust`), with its improvements of the best / picks, halvings and restarts.
//
//   npx tsx bench/contrastive-options.ts <spaces> <seeds> '<ContrastiveOptions as JSON>' [strategy]
//   <spaces>: kt (the four Kernel Tuner spaces in ../shared/tuning-spaces), h200 (bench/spaces/h200),
//             all, or names (convolution-A100,softmax,...)
//   npx tsx bench/contrastive-options.ts convolution-A100,convolution-A4000 10 '{"genetic":true}'
//   npx tsx bench/contrastive-options.ts h200 5 '{"model":{"score":"linear"}}'
//   KD_DUEL_SKIP=0.05 npx tsx bench/contrastive-options.ts all 20 '{}'   # runs as with optimize --duel-skip 0.05
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadSpace, ReplayMeasurer, type RecordedSpace } from '../main/engine/measure/replay.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import type { Task } from '../main/engine/task/manifest.js';
import { spaceTask } from '../main/engine/measure/space-task.js';
import { importSpaceFile } from '../main/engine/interop/files.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { contrastiveSearch, type ContrastiveOptions, type ContrastiveStrategy } from '../main/engine/search/contrastive.js';
import { makeStrategy, type StrategyName } from '../main/engine/search/strategies.js';
import { simulate } from '../main/engine/search/simulate.js';
import { bestAt, curveOf, evaluationsTo, reachOf } from '../main/engine/search/peer-metric.js';
import { quantile } from '../main/engine/measure/stats.js';

const [spacesArg = 'all', seedsArg, optsArg, stratArg] = process.argv.slice(2);
const seeds = Number(seedsArg ?? 20);
const opts = JSON.parse(optsArg ?? '{}') as ContrastiveOptions;
const strat = (stratArg ?? 'contrastive') as StrategyName;
const KT = process.env.KD_KT_SPACES ?? '../shared/tuning-spaces';
const H = 'bench/spaces/h200';
const all: Array<{ name: string; load: () => { task: Task; rec: RecordedSpace; budget: number } }> = [
  ...['convolution-A100', 'convolution-A4000', 'dedispersion-A100', 'dedispersion-A4000'].map((n) => ({ name: n, load: () => {
    const file = join(KT, `${n}.json.gz`);
    const { space: rec } = importSpaceFile(file, { format: 'kernel-tuner', command: 'exp' });
    return { rec, task: spaceTask(rec, file), budget: 200 };
  } })),
  ...readdirSync(H).filter((f) => f.endsWith('.json')).map((f) => ({ name: f.replace('.json', ''), load: () => {
    const rec = loadSpace(join(H, f));
    return { rec, task: resolveTask(rec.task), budget: 100 };
  } })),
];
const want = spacesArg === 'all' ? all : spacesArg === 'kt' ? all.slice(0, 4) : spacesArg === 'h200' ? all.slice(4) : all.filter((s) => spacesArg.split(',').includes(s.name));
for (const s of want) {
  const { task, rec, budget } = s.load();
  const t0 = Date.now();
  const r98: Array<number | null> = [];
  const b50: number[] = [];
  const b100: number[] = [];
  const acc: number[] = [];
  const duels: number[] = [];
  const tr = { picks: 0, wins: 0, halvings: 0, restarts: 0 }; // the trust region's, summed over seeds
  const arms = { model: { wins: 0, tries: 0 }, genetic: { wins: 0, tries: 0 }, anneal: { wins: 0, tries: 0 } }; // the bandit portfolio's picks, summed over seeds
  let opt: number;
  const seed0 = Number(process.env.KD_SEED0 ?? 1); // first seed (KD_SEED0=21: seeds 21..20+seeds)
  for (let seed = seed0; seed < seed0 + seeds; seed++) {
    const m = new ReplayMeasurer(task, rec, { seed });
    opt = m.optimumMs();
    const space = ActionSpace.fromRecording(task, m);
    const st = strat === 'contrastive' ? contrastiveSearch(space, seed, opts) : makeStrategy(strat, space, seed);
    const r = await simulate(st, m, budget - 1, process.env.KD_DUEL_SKIP ? { duelSkip: Number(process.env.KD_DUEL_SKIP) } : {});
    const c = curveOf(r);
    r98.push(evaluationsTo(c, opt, 0.98));
    b50.push(bestAt(c, opt, 50));
    b100.push(bestAt(c, opt, 100));
    if (r.model?.heldOutAccuracy != null) acc.push(r.model.heldOutAccuracy);
    duels.push(r.duels.length);
    const bs = strat === 'contrastive' ? (st as ContrastiveStrategy).banditStats() : null;
    if (bs) for (const k of ['model', 'genetic', 'anneal'] as const) [arms[k].wins, arms[k].tries] = [arms[k].wins + bs[k].wins, arms[k].tries + bs[k].tries];
    const ts = strat === 'contrastive' ? (st as ContrastiveStrategy).trustStats() : null;
    if (ts) for (const k of ['picks', 'wins', 'halvings', 'restarts'] as const) tr[k] += ts[k];
  }
  const armLine = arms.model.tries ? ` arms (wins/picks) model ${arms.model.wins}/${arms.model.tries} genetic ${arms.genetic.wins}/${arms.genetic.tries} anneal ${arms.anneal.wins}/${arms.anneal.tries}` : '';
  const trLine = tr.picks ? ` trust (wins/picks) ${tr.wins}/${tr.picks} halvings ${tr.halvings} restarts ${tr.restarts}` : '';
  const re = reachOf(r98, budget);
  process.stdout.write(`${s.name.padEnd(20)} to98 ${String(re.median).padStart(6)} (${re.reached}/${seeds}) b50 ${quantile(b50, 0.5).toFixed(3)} b100 ${quantile(b100, 0.5).toFixed(3)} acc ${acc.length ? quantile(acc, 0.5).toFixed(3) : '-'} duels ${quantile(duels, 0.5)} ${((Date.now() - t0) / 1000).toFixed(0)}s${armLine}${trLine}\n`);
}
