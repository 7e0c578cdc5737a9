// Measurement truth (issue 12): what the isolation of variant code costs and whether legitimate
// variants still work and measure the same. Three parts, all on a real GPU, in one run:
//   legit       legitimate variant shapes (several kernels with cudaMemsetAsync and per-call
//               cudaMallocAsync scratch, dynamic shared memory above 48 KiB, work forked to a second
//               stream and joined, cuBLAS) and the hostile corpus's good control: each must pass
//               and be timed; with --old, the softmax ones are also measured by the old bundle.
//   suite       the good control and the best recorded configuration of each of the 8 suite tasks
//               (bench/spaces/<gpu>/), measured by the old and the new bundle side by side,
//               alternating, --rounds times each: medians and the new/old ratio.
//   throughput  evaluations per minute of `optimize --strategy contrastive` with the same seed and
//               budget on softmax, layernorm and reduce_sum (--tasks), old bundle then new (with
//               --throughput-rounds N, N pairs, the order swapped every round), with where each
//               variant's time went (see breakdown()) and every evaluation (perEvaluation()).
// Every figure comes from the GPU this runs on; nothing is simulated or replayed.
//   ./bench measure-truth --old /path/to/old/kernelduel [--parts legit,suite,throughput] [--rounds 2] [--budget 12] [--run-limit-s S] [--old-run-limit-s S]
//                         [--tasks softmax,layernorm,reduce_sum] [--task-root DIR] [--spaces bench/spaces/h200] [--out DIR]
//                         [--duel-noise 0.005 (the new bundle's optimize runs only)] [--throughput-rounds 1]
//                         [--old-time-cutoff K] [--new-time-cutoff K] [--old-env NAME=VALUE,…] [--new-env NAME=VALUE,…]
// Without --old only the new bundle (this one) is measured.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs as parseArgs } from './lib/args.js';
import { detectGpus, gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { median } from '../main/engine/measure/stats.js';
import { bestOf, breakdown, breakdownWords, isResultLine, perEvaluation } from './lib/optimize-events.js';
import { unusedBase } from './lib/results-file.js';
import { recordedSpacesDir } from './lib/spaces-dir.js';

const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    parts: { type: 'string', default: 'legit,suite,throughput' },
    rounds: { type: 'string', default: '2' },
    budget: { type: 'string', default: '12' },
    'max-ms': { type: 'string', default: '1000' },
    out: { type: 'string', default: 'bench/results' },
    spaces: { type: 'string' },
    tasks: { type: 'string', default: 'softmax,layernorm,reduce_sum' },
    // Task folders to run the throughput part on (both bundles the same ones), e.g. the old bundle's
    // resources/tasks, so a change of the suite's spaces does not confound the comparison.
    'task-root': { type: 'string' },
    // Throughput: stop each optimisation run after this many seconds (the rate is taken over the
    // evaluations done by then), so an old bundle at ~10 evaluations a minute need not run a whole
    // budget of 100 (issue 17 asks for the rate at budget 100).
    'run-limit-s': { type: 'string' },
    // The old bundle's runs only: its rate settles within a minute, so it need not take the new
    // bundle's whole limit (device time).
    'old-run-limit-s': { type: 'string' },
    // The new bundle's runs only: `optimize --duel-noise` (a duel's own noise target), to measure
    // what it buys against a run without it.
    'duel-noise': { type: 'string' },
    // Throughput: `optimize --time-cutoff` for each side's runs (e.g. --old set to this same bundle
    // with --old-time-cutoff 0 and --new-time-cutoff 3: what the cutoff buys, nothing else different).
    'old-time-cutoff': { type: 'string' },
    'new-time-cutoff': { type: 'string' },
    // Environment for each side's runs, NAME=VALUE[,NAME=VALUE…] (e.g. --old set to this same bundle
    // and --new-env KERNELDUEL_SPARES_WAIT=0: what one experiment's switch does, nothing else different).
    'old-env': { type: 'string', default: '' },
    'new-env': { type: 'string', default: '' },
    // Throughput: this many rounds of each task, the bundles' order swapped every round (old then
    // new, new then old, …), so what the first run of a pair leaves behind (caches, a warm GPU) is
    // not read as a difference between the bundles (one histogram pair, 2026-12-07, could not tell).
    'throughput-rounds': { type: 'string', default: '1' },
  },
});
const here = dirname(fileURLToPath(import.meta.url));
const benchDir = process.env.KERNELDUEL_BENCH_DATA ?? here;
const testDir = process.env.KERNELDUEL_TEST_DATA ?? join(here, '..', 'test');
const parts = new Set(values.parts!.split(','));
/** `--old-env` / `--new-env`: NAME=VALUE pairs, comma-separated. */
function sideEnv(flag: 'old-env' | 'new-env'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (values[flag] ?? '').split(',').filter(Boolean)) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(item);
    if (!m) throw new Error(`--${flag}: expected NAME=VALUE[,NAME=VALUE…], got "${item}"`);
    out[m[1]] = m[2];
  }
  return out;
}
const envOf = { old: sideEnv('old-env'), new: sideEnv('new-env') };
const rounds = Number(values.rounds);
const budget = Number(values.budget);
const maxMs = values['max-ms']!;
const started = Date.now();
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

/** A bundle's CLI: its own Node runtime and lib/kernelduel.mjs; this one when run from the bundle, else tsx. */
interface Cli {
  label: 'old' | 'new';
  cmd: string;
  args: string[];
  home: string;
}
const newCli: Cli = process.env.KERNELDUEL_CLI
  ? { label: 'new', cmd: process.execPath, args: [process.env.KERNELDUEL_CLI], home: mkdtempSync(join(tmpdir(), 'kd-truth-new-')) }
  : { label: 'new', cmd: 'npx', args: ['tsx', join(here, '..', 'main', 'doors', 'cli', 'index.ts')], home: mkdtempSync(join(tmpdir(), 'kd-truth-new-')) };
const oldCli: Cli | null = values.old ? { label: 'old', cmd: join(resolve(values.old), 'kernelduel'), args: [], home: mkdtempSync(join(tmpdir(), 'kd-truth-old-')) } : null;
if (oldCli && !existsSync(oldCli.cmd)) throw new Error(`--old: no launcher at ${oldCli.cmd}`);

/** Runs one command of a bundle; at `stopMs` (if given) it is asked to stop as Ctrl+C would (SIGINT: the CLI ends its run and closes its session, its children with it), and killed at timeoutMs. */
function run(cli: Cli, args: string[], timeoutMs: number, stopMs?: number): Promise<{ code: number | null; stdout: string; stderr: string; ms: number; lines: Array<{ t: number; text: string }>; stopped: boolean }> {
  return new Promise((res) => {
    const t0 = Date.now();
    const p = spawn(cli.cmd, [...cli.args, ...args], { env: { ...process.env, ...envOf[cli.label], KERNELDUEL_HOME: cli.home, KERNELDUEL_RESOURCES: cli.label === 'old' ? '' : process.env.KERNELDUEL_RESOURCES }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const lines: Array<{ t: number; text: string }> = [];
    let partial = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      partial += d.toString();
      let i;
      while ((i = partial.indexOf('\n')) >= 0) {
        lines.push({ t: Date.now() - t0, text: partial.slice(0, i) });
        partial = partial.slice(i + 1);
      }
    });
    p.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-20000)));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    let stopped = false;
    const stop = stopMs === undefined ? undefined : setTimeout(() => {
      stopped = true;
      p.kill('SIGINT');
    }, stopMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (stop) clearTimeout(stop);
      res({ code, stdout: out, stderr: err, ms: Date.now() - t0, lines, stopped });
    });
  });
}

interface EvalOut {
  ok: boolean;
  medianMs: number | null;
  relNoise: number | null;
  timer: string | null;
  failure?: string;
  seconds: number;
}
async function evalWith(cli: Cli, task: string, file: string | null, config: Record<string, number> | null): Promise<EvalOut> {
  const args = ['eval', task, ...(file ? [file] : []), ...(config ? ['--config', Object.entries(config).map(([k, v]) => `${k}=${v}`).join(',')] : []), '--max-ms', maxMs, '--json'];
  const r = await run(cli, args, 240_000);
  try {
    const j = JSON.parse(r.stdout) as { result: { failure?: { kind: string; reason: string }; timing?: Array<{ medianMs: number; relNoise: number; timer: string }> } };
    const t = j.result.timing?.[0];
    return { ok: !j.result.failure && !!t, medianMs: t?.medianMs ?? null, relNoise: t?.relNoise ?? null, timer: t?.timer ?? null, failure: j.result.failure ? `${j.result.failure.kind}: ${j.result.failure.reason}` : undefined, seconds: r.ms / 1000 };
  } catch {
    return { ok: false, medianMs: null, relNoise: null, timer: null, failure: `exit ${r.code}: ${r.stderr.slice(-600)}`, seconds: r.ms / 1000 };
  }
}

const det = await detectGpus();
const gpu = det.gpus.find((g) => g.arch);
if (!gpu) throw new Error(`needs a GPU: ${det.problems.join(' ')}`);
const slug = gpuSlug(gpu.name);
const result: Record<string, unknown> = {
  benchmark: 'measure-truth',
  measured: 'real GPU measurements (not simulated, not replayed)',
  date: new Date().toISOString(),
  command: invokedAs(`npx tsx bench/measure-truth.ts --parts ${values.parts} --rounds ${rounds} --budget ${budget}${values.old ? ' --old <old bundle>' : ''}`),
  gpu: { name: gpu.name, uuid: gpu.uuid, driver: gpu.driverVersion },
  newBundle: process.env.KERNELDUEL_BUNDLE ?? 'repository checkout',
  oldBundle: oldCli ? readFileSync(oldCli.cmd, 'utf8').match(/KERNELDUEL_BUNDLE="([^"]*)"/)?.[1] ?? 'unknown' : null,
  timingCapMs: Number(maxMs),
};
const outDir = resolve(values.out!);
mkdirSync(outDir, { recursive: true });
const outFile = join(outDir, `${unusedBase(outDir, `${slug}-measure-truth`, ['.json'])}.json`);
const save = (): void => writeFileSync(outFile, JSON.stringify({ ...result, totalSeconds: (Date.now() - started) / 1000 }, null, 2) + '\n');

if (parts.has('legit')) {
  const variants = [
    { task: 'softmax', file: join(testDir, 'hostile', 'good_control.cu'), what: 'good control (one warp per row)' },
    { task: 'softmax', file: join(benchDir, 'variants', 'softmax_two_kernels.cu'), what: 'two kernels, cudaMemsetAsync, cudaMallocAsync/cudaFreeAsync scratch' },
    { task: 'softmax', file: join(benchDir, 'variants', 'softmax_dyn_smem.cu'), what: 'dynamic shared memory above 48 KiB (cudaFuncSetAttribute on the first call)' },
    { task: 'softmax', file: join(benchDir, 'variants', 'softmax_fork_join.cu'), what: 'work forked to a second stream and joined back with events' },
  ];
  const rows = [];
  for (const v of variants) {
    const n = await evalWith(newCli, v.task, v.file, null);
    const o = oldCli ? await evalWith(oldCli, v.task, v.file, null) : null;
    log(`legit ${v.what}: new ${n.ok ? `${n.medianMs?.toFixed(4)} ms (${n.timer})` : n.failure}${o ? `; old ${o.ok ? `${o.medianMs?.toFixed(4)} ms (${o.timer})` : o.failure}` : ''}`);
    rows.push({ task: v.task, variant: v.file.split('/').pop(), what: v.what, new: n, old: o, newOverOld: n.medianMs && o?.medianMs ? n.medianMs / o.medianMs : null });
  }
  // cuBLAS needs -lcublas: measured in-process through the evaluator (the CLI has no linker flags).
  const { Evaluator } = await import('../main/engine/measure/evaluate.js');
  const { findToolchain } = await import('../main/engine/platform/toolchain/nvcc.js');
  const { resolveTask } = await import('../main/engine/task/resolve.js');
  const ev = new Evaluator({ task: resolveTask('matmul'), toolchain: await findToolchain(), gpu, workRoot: mkdtempSync(join(tmpdir(), 'kd-truth-cublas-')), timing: { maxMs: Number(maxMs) } });
  const t0 = Date.now();
  const r = await ev.evaluate({ source: readFileSync(join(benchDir, 'variants', 'matmul_cublas.cu'), 'utf8'), config: {}, flags: { opt: 3, extra: ['-lcublas'] } });
  ev.close();
  const t = r.timing?.[0];
  log(`legit cuBLAS SGEMM: ${t ? `${t.medianMs.toFixed(4)} ms` : `${r.failure?.kind}: ${r.failure?.reason}\n${(r.failure?.log ?? '').split('\n').filter((l) => l.startsWith('kd-debug')).join('\n')}`}`);
  rows.push({ task: 'matmul', variant: 'matmul_cublas.cu', what: 'cuBLAS SGEMM (a library call, stream cudaStreamPerThread)', new: { ok: !r.failure && !!t, medianMs: t?.medianMs ?? null, relNoise: t?.relNoise ?? null, timer: t?.timer ?? null, failure: r.failure ? `${r.failure.kind}: ${r.failure.reason}` : undefined, seconds: (Date.now() - t0) / 1000 }, old: null, newOverOld: null });
  result.legit = rows;
  save();
}

if (parts.has('suite')) {
  const spacesDir = recordedSpacesDir(values.spaces, benchDir, slug);
  const items: Array<{ task: string; file: string | null; config: Record<string, number> | null }> = [{ task: 'softmax', file: join(testDir, 'hostile', 'good_control.cu'), config: null }];
  for (const t of ['softmax', 'reduce_sum', 'matmul', 'layernorm', 'axpy', 'transpose', 'stencil2d', 'histogram']) {
    const space = JSON.parse(readFileSync(join(spacesDir, `${t}.json`), 'utf8')) as { entries: Array<{ config: Record<string, number>; medianMs: number | null }> };
    const best = space.entries.filter((e) => e.medianMs !== null).sort((a, b) => a.medianMs! - b.medianMs!)[0];
    items.push({ task: t, file: null, config: best.config });
  }
  const rows = [];
  for (const it of items) {
    const old: EvalOut[] = [];
    const neu: EvalOut[] = [];
    for (let k = 0; k < rounds; k++) {
      // Alternate which bundle goes first.
      const order = oldCli ? (k % 2 === 0 ? [oldCli, newCli] : [newCli, oldCli]) : [newCli];
      for (const cli of order) (cli.label === 'old' ? old : neu).push(await evalWith(cli, it.task, it.file, it.config));
    }
    const m = (xs: EvalOut[]): number | null => (xs.every((x) => x.ok) && xs.length ? median(xs.map((x) => x.medianMs!)) : null);
    const row = { task: it.task, variant: it.file ? it.file.split('/').pop() : 'best recorded configuration', config: it.config, oldMs: m(old), newMs: m(neu), newOverOld: m(old) && m(neu) ? m(neu)! / m(old)! : null, old, new: neu };
    log(`suite ${it.task} ${row.variant}: old ${row.oldMs?.toFixed(4) ?? '-'} ms, new ${row.newMs?.toFixed(4) ?? neu.map((x) => x.failure).join('; ')} ms, new/old ${row.newOverOld?.toFixed(4) ?? '-'}`);
    rows.push(row);
    result.suite = rows;
    save();
  }
}


if (parts.has('throughput')) {
  const rows: Array<Record<string, unknown> & { task: string; bundle: 'old' | 'new'; round: number; best: ReturnType<typeof bestOf> }> = [];
  const tpRounds = Number(values['throughput-rounds']);
  if (!Number.isInteger(tpRounds) || tpRounds < 1) throw new Error(`--throughput-rounds: "${values['throughput-rounds']}" is not a whole number ≥ 1`);
  for (const task of values.tasks!.split(',')) for (let round = 1; round <= tpRounds; round++) {
    const pair = oldCli ? (round % 2 === 1 ? [oldCli, newCli] : [newCli, oldCli]) : [newCli];
    for (const cli of pair) {
      const taskArg = values['task-root'] ? join(resolve(values['task-root']), task) : task;
      const limitArg = cli.label === 'old' && values['old-run-limit-s'] ? values['old-run-limit-s'] : values['run-limit-s'];
      const limitS = limitArg ? Number(limitArg) : undefined;
      const duelNoise = cli.label === 'new' ? values['duel-noise'] : undefined;
      const timeCutoff = cli.label === 'new' ? values['new-time-cutoff'] : values['old-time-cutoff'];
      const r = await run(cli, ['optimize', taskArg, '--strategy', 'contrastive', '--budget', String(budget), '--seed', '7', '--json', ...(duelNoise ? ['--duel-noise', duelNoise] : []), ...(timeCutoff !== undefined ? ['--time-cutoff', timeCutoff] : [])], limitS ? (limitS + 60) * 1000 : 900_000, limitS ? limitS * 1000 : undefined);
      // Evaluations: lines with a variant's result; the rate between the first and the last of them.
      const evals = r.lines.filter(isResultLine);
      const span = evals.length > 1 ? (evals[evals.length - 1].t - evals[0].t) / 60_000 : NaN;
      const perMin = evals.length > 1 ? (evals.length - 1) / span : null;
      const best = bestOf(r.lines);
      const bd = breakdown(r.lines);
      rows.push({ task, round, taskDir: values['task-root'] ? taskArg : 'each bundle\'s own', bundle: cli.label, exit: r.code, evaluations: evals.length, budget, ...(duelNoise ? { duelNoise: Number(duelNoise) } : {}), ...(timeCutoff !== undefined ? { timeCutoff: Number(timeCutoff) } : {}), ...(Object.keys(envOf[cli.label]).length ? { env: envOf[cli.label] } : {}), ...(r.stopped ? { stoppedAfterS: limitS } : {}), wallSeconds: r.ms / 1000, evaluationsPerMinute: perMin, best, breakdown: bd, perEvaluation: perEvaluation(r.lines), stderrTail: r.code === 0 || r.stopped ? undefined : r.stderr.slice(-800) });
      log(`throughput ${task}${tpRounds > 1 ? ` round ${round}` : ''} ${cli.label}: ${evals.length} evaluations${r.stopped ? ` of ${budget} (stopped after ${limitS} s)` : ''}, ${perMin?.toFixed(2) ?? '-'} per minute (exit ${r.code}, ${(r.ms / 1000).toFixed(0)} s), best ${best ? `${best.medianMs.toFixed(4)} ms (evaluation ${best.evaluation})` : '-'}`);
      log(`  where a variant's time went: ${breakdownWords(bd)}`);
      result.throughput = rows;
      save();
    }
    // Both runs of the round done: the best of each after as many evaluations as both did, on the new one's row.
    const oldRow = rows.find((x) => x.task === task && x.round === round && x.bundle === 'old');
    const newRow = rows.find((x) => x.task === task && x.round === round && x.bundle === 'new');
    const n = oldRow?.best && newRow?.best ? Math.min(oldRow.best.byEvaluation.length, newRow.best.byEvaluation.length) : 0;
    if (n && oldRow?.best && newRow?.best) {
      newRow.atSameEvaluations = { evaluations: n, oldBestMs: oldRow.best.byEvaluation[n - 1], newBestMs: newRow.best.byEvaluation[n - 1] };
      log(`throughput ${task}${tpRounds > 1 ? ` round ${round}` : ''}: best after ${n} evaluations: old ${oldRow.best.byEvaluation[n - 1]?.toFixed(4) ?? '-'} ms, new ${newRow.best.byEvaluation[n - 1]?.toFixed(4) ?? '-'} ms`);
      save();
    }
  }
}
save();
log(`wrote ${outFile}`);
