// How much the live action space (tunables + compiler flags + unroll transforms) slows the search
// for the best tunables, compared with the tunables alone — a COUNTERFACTUAL on the recorded H200
// spaces: flags and transforms are assumed to change nothing (every variant is answered with its
// configuration's recorded samples at -O3). It isolates the cost of the extra dimensions to the
// policy; it says nothing about what flags and transforms gain on a real GPU.
//
// Why: live runs (bench/results/h200-contrastive-live.json) reached 99-100% of the recorded
// optimum on matmul, axpy and reduce_sum but only 79-80% on softmax and layernorm before the
// policy was staged (staged, the live reruns reached 104% and 101%). Compares the contrastive
// policy staged (tunables first, the default) and not staged, and random search.
//
//   npx tsx bench/action-space.ts [--seeds 20] [--budget 100] [--tasks softmax,layernorm] [--options '{"trust":2}']
//   -> bench/results/action-space-counterfactual.json
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { loadSpace, TunablesOnlyReplay, type RecordedSpace } from '../main/engine/measure/replay.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { liveActionSpace, makeStrategy } from '../main/engine/search/strategies.js';
import { simulate } from '../main/engine/search/simulate.js';
import type { ContrastiveOptions } from '../main/engine/search/contrastive.js';
import type { Task } from '../main/engine/task/manifest.js';
import { quantile } from '../main/engine/measure/stats.js';

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '20' }, budget: { type: 'string', default: '100' }, tasks: { type: 'string' }, spaces: { type: 'string', default: 'bench/spaces/h200' }, out: { type: 'string', default: 'bench/results/action-space-counterfactual.json' }, 'stage-cycle': { type: 'string' }, 'only-staged': { type: 'boolean', default: false }, options: { type: 'string' } } });
// Each run also keeps its seeds' evaluations to 98% (perSeed, seeds 1..N in order, budget + 1 when
// not reached), for paired comparisons of two runs at the same seeds.
// --options '<json>': contrastive options for every contrastive run (e.g. '{"trust":2}'); staged and stageCycle stay this bench's own.
const options = values.options ? (JSON.parse(values.options) as ContrastiveOptions) : {};
// --only-staged: only the live staged policy (and --stage-cycle's), for many seeds.
// --stage-cycle 15,25: also the staged policy with the stages in turn (contrastive.ts's stageCycle) at each value.
const cycles = values['stage-cycle'] ? values['stage-cycle'].split(',').map(Number) : [];
if (cycles.some((c) => !Number.isInteger(c) || c < 1)) throw new Error(`--stage-cycle: positive integers, comma-separated (got "${values['stage-cycle']}")`);
const seeds = Number(values.seeds);
const budget = Number(values.budget);

async function run(task: Task, rec: RecordedSpace, live: ActionSpace, kind: 'tunables' | 'live', strategy: 'contrastive' | 'random', staged = true, stageCycle = 0) {
  const reach: number[] = [];
  let bestAt100 = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const m = new TunablesOnlyReplay(task, rec, { seed });
    const space = kind === 'tunables' ? ActionSpace.fromRecording(task, m) : live;
    const r = await simulate(makeStrategy(strategy, space, seed, { contrastive: { ...options, staged, stageCycle } }), m, budget);
    const opt = m.optimumMs();
    const hit = r.steps.find((s) => s.bestMs !== null && opt / s.bestMs >= 0.98);
    reach.push(hit ? hit.index : budget + 1);
    bestAt100 += opt / (r.steps.at(-1)?.bestMs ?? Infinity) / seeds;
  }
  const med = quantile(reach, 0.5);
  return { dims: kind, strategy: strategy === 'contrastive' && !staged ? 'contrastive (not staged)' : strategy === 'contrastive' && stageCycle ? `contrastive (stages in turn, ${stageCycle})` : strategy, evaluationsTo98: { median: med > budget ? null : med, p25: quantile(reach, 0.25), p75: quantile(reach, 0.75), reached: reach.filter((x) => x <= budget).length }, meanOptimumOverBestAtBudget: bestAt100, perSeed: reach };
}

if (!existsSync(values.spaces!)) throw new Error(`no recordings in ${values.spaces}`);
const files = readdirSync(values.spaces!).filter((f) => f.endsWith('.json')).sort();
const rows: Array<Record<string, unknown>> = [];
for (const f of files) {
  const name = f.replace(/\.json$/, '');
  if (values.tasks && !values.tasks.split(',').includes(name)) continue;
  const task = resolveTask(name);
  const rec = loadSpace(join(values.spaces!, f));
  // The live action space (tunables, compiler flags, the baseline's transform sites) less the
  // tunables the recording predates, which stay at their defaults as in the recording: otherwise
  // every variant that sets one would be missing from the recording (until 2026-12-02 it was, for
  // softmax, layernorm, transpose, reduce_sum and matmul, whose tasks gained tunables since).
  const live = await liveActionSpace(task, { fixed: new TunablesOnlyReplay(task, rec, { seed: 1 }).predatedDefaults });
  const row: Record<string, unknown> = { task: name, liveDims: live.dims.length, liveFlagAndTransformDims: live.dims.filter((d) => d.kind !== 'tunable').map((d) => `${d.name}:${d.values.length}`), runs: [] as unknown[] };
  const runs = row.runs as unknown[];
  if (!values['only-staged']) runs.push(await run(task, rec, live, 'tunables', 'contrastive'), await run(task, rec, live, 'tunables', 'random'));
  runs.push(await run(task, rec, live, 'live', 'contrastive'));
  if (!values['only-staged']) runs.push(await run(task, rec, live, 'live', 'contrastive', false), await run(task, rec, live, 'live', 'random'));
  for (const c of cycles) runs.push(await run(task, rec, live, 'live', 'contrastive', true, c));
  rows.push(row);
  const fmt = (r: Awaited<ReturnType<typeof run>>) => `${r.strategy}/${r.dims} ${r.evaluationsTo98.median ?? `>${budget}`} (${r.evaluationsTo98.reached}/${seeds})`;
  process.stderr.write(`${name}: ${(row.runs as Array<Awaited<ReturnType<typeof run>>>).map(fmt).join('  ')}\n`);
}
writeFileSync(values.out!, JSON.stringify({
  benchmark: 'action-space-counterfactual',
  measured: 'COUNTERFACTUAL REPLAY of real H200 recordings: flags and transforms assumed to change nothing (each variant answered with its configuration\'s -O3 recording)',
  date: new Date().toISOString(), command: `npx tsx bench/action-space.ts --seeds ${seeds} --budget ${budget}${values.tasks ? ` --tasks ${values.tasks}` : ''}${cycles.length ? ` --stage-cycle ${cycles.join(',')}` : ''}${values['only-staged'] ? ' --only-staged' : ''}${values.options ? ` --options '${values.options}'` : ''}`, seeds, budget, ...(values.options ? { contrastiveOptions: options } : {}), tasks: rows,
}, null, 2) + '\n');
process.stderr.write(`wrote ${values.out}\n`);
