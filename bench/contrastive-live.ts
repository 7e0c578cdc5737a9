// Live contrastive optimisation on a real GPU (issue 3): `optimize --strategy contrastive
// --budget 100` on each suite task, recording baseline and best time, speedup, the fraction of
// the GPU's measured copy bandwidth / SGEMM rate reached (from bench/results/<gpu>-foundation.json),
// evaluations per minute, and the GPU's busy fraction: the share of wall time during which a
// measurement process (check, time or duel) held the GPU queue.
//   npm run bench:live -- [--tasks softmax,axpy] [--budget 100] [--out bench/results]
//   -> <out>/<gpu>-contrastive-live.json (h200-contrastive-live.json on an H200)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { prepareRun } from '../main/core/run/prepare.js';
import { runLoop } from '../main/engine/search/loop.js';
import { Evaluator, gpuQueue } from '../main/engine/measure/evaluate.js';
import { builtinTaskNames } from '../main/engine/task/resolve.js';
import { sizeLayout } from '../main/engine/task/manifest.js';
import { KERNELDUEL_VERSION } from '../main/engine/base/version.js';
import { gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { invokedAs } from '../main/engine/base/provenance.js';

const { values } = parseArgs({ options: { tasks: { type: 'string' }, budget: { type: 'string', default: '100' }, out: { type: 'string', default: 'bench/results' }, seed: { type: 'string', default: '1' } } });
const budget = Number(values.budget);
const outDir = resolve(values.out!);
mkdirSync(outDir, { recursive: true });
const home = mkdtempSync(join(tmpdir(), 'kd-live-'));
const started = Date.now();
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

interface Ceilings { copyTBs: number; sgemmTflops: number }
function ceilingsFor(gpuName: string): Ceilings | null {
  const slug = gpuSlug(gpuName);
  const p = [join(outDir, `${slug}-foundation.json`), resolve('bench', 'results', `${slug}-foundation.json`)].find((x) => existsSync(x));
  if (!p) return null;
  const f = JSON.parse(readFileSync(p, 'utf8')) as { ceilings: { copy: { bandwidthTBs: number }; sgemmFp32NoTf32: { tflops: number } } };
  return { copyTBs: f.ceilings.copy.bandwidthTBs, sgemmTflops: f.ceilings.sgemmFp32NoTf32.tflops };
}

const rows: Array<Record<string, unknown>> = [];
let gpuInfo: Record<string, unknown> | null = null;
for (const name of values.tasks ? values.tasks.split(',') : builtinTaskNames()) {
  const run = await prepareRun({ task: name, strategy: 'contrastive', budget, seed: Number(values.seed), backend: { kind: 'gpu' }, sessionsRoot: join(home, 'sessions') });
  if (!(run.measurer instanceof Evaluator) || !run.measurer.gpu) throw new Error(`bench:live needs a GPU (${run.label})`);
  const ev = run.measurer;
  const gpu = ev.gpu!;
  gpuInfo ??= { name: gpu.name, uuid: gpu.uuid, computeCapability: gpu.computeCapability, driver: gpu.driverVersion };
  // GPU busy fraction: sample the GPU queue every 20 ms.
  const q = gpuQueue(gpu.uuid || String(gpu.index));
  let samples = 0;
  let busy = 0;
  const sampler = setInterval(() => {
    samples++;
    if (q.running > 0) busy++;
  }, 20);
  const t0 = Date.now();
  let duels = 0;
  let failures = 0;
  let lastAcc: number | null = null;
  await runLoop({
    session: run.session, evaluator: ev, strategy: run.strategy, budget,
    onEvent: (e) => {
      if (e.type === 'duel') duels++;
      if (e.type === 'model') lastAcc = e.stats.heldOutAccuracy;
      if (e.type === 'result') {
        if (e.result.failure) failures++;
        if (e.index % 10 === 0) log(`${name} [${e.index}/${budget}] best ${e.bestSpeedup?.toFixed(2)}×`);
      }
    },
  });
  clearInterval(sampler);
  const wallS = (Date.now() - t0) / 1000;
  const best = run.session.best();
  const base = run.session.variants().find((v) => v.origin === 'baseline');
  const baseMs = base ? run.session.resultOf(base.id)?.timing?.[0]?.medianMs ?? null : null;
  const lay = sizeLayout(run.task, run.task.timed[0]);
  const c = ceilingsFor(gpu.name);
  const bestS = best ? best.medianMs / 1000 : null;
  const row = {
    task: name, session: run.session.meta.id, budget, gpuUuid: gpu.uuid,
    baselineMs: baseMs, bestMs: best?.medianMs ?? null, speedup: best?.speedup ?? null,
    bestVariant: best ? { config: best.variant.config, flags: best.variant.flags, transforms: best.variant.transforms ?? [] } : null,
    achievedTBs: bestS && lay.bytes ? lay.bytes / bestS / 1e12 : null,
    fractionOfCopy: bestS && lay.bytes && c ? lay.bytes / bestS / 1e12 / c.copyTBs : null,
    achievedTflops: bestS && lay.flops ? lay.flops / bestS / 1e12 : null,
    fractionOfSgemm: bestS && lay.flops && c && name === 'matmul' ? lay.flops / bestS / 1e12 / c.sgemmTflops : null,
    evaluationsPerMinute: (budget + 1) / (wallS / 60), wallSeconds: wallS, gpuBusyFraction: samples ? busy / samples : null,
    duels, failures, preferenceHeldOutAccuracy: lastAcc,
    policy: 'staged' in run.strategy && run.strategy.staged ? 'contrastive, staged (tunables first, then flags and transforms)' : 'contrastive, not staged',
  };
  log(`${name}: ${JSON.stringify(row)}`);
  rows.push(row);
  run.session.close();
  writeFileSync(join(outDir, `${gpuSlug(gpu.name)}-contrastive-live.json`), JSON.stringify({
    benchmark: 'contrastive-live', measured: 'real GPU measurements (not simulated, not replayed)', date: new Date().toISOString(),
    command: invokedAs(`npm run bench:live -- --budget ${budget}${values.tasks ? ` --tasks ${values.tasks}` : ''}`), kernelduelVersion: KERNELDUEL_VERSION, gpu: gpuInfo, tasks: rows,
    gpuBusyDefinition: 'share of wall time (sampled every 20 ms) during which a check, time or duel process held the GPU queue',
  }, null, 2) + '\n');
}
log('done');
