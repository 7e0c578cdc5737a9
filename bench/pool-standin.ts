// SIMULATED: the pool loop (main/engine/search/pool.ts) with the real evaluators, GPU queues, judge
// protocol and capture share, on stand-in GPUs whose harness sleeps as long as an H200's stages take
// (capture 250 ms, check 30, time 340, duel 440; the medians of softmax on the H200, 2026-12-04) and
// measures nothing. It answers one question apart from any host: does the engine's scheduling keep N
// GPUs as busy as one (evaluations per minute with N lanes against 1, same task, strategy, budget
// and seed)? What a real host adds (driver and process start-up work competing across GPUs) is only
// in `bench multi-gpu` on real GPUs. No GPU, no nvcc: runs anywhere.
//   npm run bench:pool-standin -- [--lanes 1,2,4] [--budget 40] [--strategy contrastive] [--seed 1] [--out bench/results]
//                                 [--capture-beside-duels off|on|off,on]
// --capture-beside-duels on: captures started ahead may run beside duels (the evaluator's
// captureBesideDuels, off by default in the product): what that option could give at most, with
// nothing on the host slowing a duel that has a capture beside it.
//   -> <out>/pool-standin.json and .md
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { benchArgs as parseArgs } from './lib/args.js';
import { CaptureShare, Evaluator } from '../main/engine/measure/evaluate.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { resetSandboxProbe } from '../main/engine/platform/sandbox/index.js';
import { evaluatorLane } from '../main/engine/measure/lane.js';
import { runPoolLoop } from '../main/engine/search/pool.js';
import { actionSpaceFor, isStrategyName, makeStrategy, type StrategyName } from '../main/engine/search/strategies.js';
import { createSession, newSessionId } from '../main/engine/session/store.js';
import { KERNELDUEL_VERSION } from '../main/engine/base/version.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import type { BuildResult, GpuInfo, VariantSpec } from '../main/engine/base/types.js';

const { values } = parseArgs({
  options: {
    lanes: { type: 'string', default: '1,2,4' },
    budget: { type: 'string', default: '40' },
    strategy: { type: 'string', default: 'contrastive' },
    seed: { type: 'string', default: '1' },
    task: { type: 'string', default: 'softmax' },
    out: { type: 'string', default: 'bench/results' },
    'capture-beside-duels': { type: 'string', default: 'off' },
  },
});
const fail = (s: string): never => {
  process.stderr.write(`bench pool-standin: ${s}\n`);
  process.exit(2);
};
const lanesList = values.lanes!.split(',').map(Number);
if (lanesList.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) fail(`--lanes ${values.lanes}: stand-in GPU counts 1..16, e.g. 1,2,4`);
const budget = Number(values.budget);
if (!Number.isInteger(budget) || budget < 4) fail(`--budget ${values.budget}: an integer of at least 4`);
const seed = Number(values.seed);
if (!isStrategyName(values.strategy!)) fail(`--strategy ${values.strategy}: a built-in strategy (random, anneal, genetic, exhaustive, contrastive)`);
const strategyName = values.strategy as StrategyName;
/** Stage lengths of the stand-in (ms): softmax's medians on an H200 (bench/results/h200-multi-gpu-trace-softmax-5670d90.md). */
const STAGES = { captureMs: 250, checkMs: 30, timeMs: 340, duelMs: 440, buildMs: 50 };

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-pool-standin-'));
const fake = path.join(root, 'standin-harness.mjs');
// The harness's command lines and answers (probe | capture <plan> <result> <lib> <desc>; judge <plan>), with sleeps instead of GPU work.
fs.writeFileSync(
  fake,
  `#!/usr/bin/env node
import fs from 'node:fs';
import readline from 'node:readline';
const [mode, plan, out, lib, desc] = process.argv.slice(2);
const nonce = /^nonce (.*)$/m.exec(fs.readFileSync(plan, 'utf8'))?.[1] ?? '';
const result = (status, body) => fs.writeFileSync(out, JSON.stringify({ kdresult: 1, nonce, status, body }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (mode === 'probe') result('ok', { name: 'Stand-in GPU', cc: '9.0', sms: 1, l2Bytes: 1, globalMemBytes: 1, emptyWallMs: 0.01, syscallFilter: 'active', driverApi: 'ok', capture: 'ok', writes: 'only to its folder' });
else if (mode === 'capture') {
  await sleep(${STAGES.captureMs});
  fs.writeFileSync(desc, 'kdwork 1\\nend\\n');
  result('ok', { syscallFilter: 'active', sizes: [{ size: 0, ops: 1, kernels: 1, scratchBytes: 0 }], modules: [lib] });
} else if (mode === 'judge') {
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  say({ id: 'hello', kdresult: 1, status: 'ok', body: { name: 'Stand-in GPU' } });
  const checks = [{ buffer: 'y', size: 0, seed: 1, elements: 4, mismatches: 0, maxAbsErr: 0, maxRelErr: 0, relL2: 0 }];
  const isolation = { refs: 'judge', measurement: 'executor' };
  let timing = null;
  readline.createInterface({ input: process.stdin }).on('line', async (line) => {
    if (timing) { const t = timing; timing = null; return t(line); }
    const f = line.split('\\t');
    const [cmd, id, libA] = f;
    if (cmd === 'quit') process.exit(0);
    // A made-up time per library (from its folder's name), so the strategy has something to compare.
    const v = 0.1 + (parseInt(libA.replace(/[^0-9a-f]/g, '').slice(-6) || '1', 16) % 1000) / 10000;
    if (cmd === 'duel') {
      await sleep(${STAGES.duelMs});
      return say({ id, kdresult: 1, status: 'ok', body: { duels: [{ size: 0, sets: 2, aEventMs: [v, v, v, v], aWallMs: [v, v, v, v], bEventMs: [0.12, 0.12, 0.12, 0.12], bWallMs: [0.12, 0.12, 0.12, 0.12] }] } });
    }
    await sleep(${STAGES.checkMs});
    if (f[4] !== '1') return say({ id, kdresult: 1, status: 'ok', stage: 'check', body: { isolation, checks } });
    say({ id, event: 'time' });
    timing = async (go) => {
      if (go !== 'go') return say({ id, kdresult: 1, status: 'runtime', stage: 'time', error: 'called off', body: { isolation, checks } });
      await sleep(${STAGES.timeMs});
      say({ id, kdresult: 1, status: 'ok', stage: 'time', body: { isolation, checks, l2FlushBytes: 64, timings: [{ size: 0, bufferSets: 4, warmupCalls: 3, converged: true, verified: 2, eventMs: Array(8).fill(v), wallMs: Array(8).fill(v) }] } });
    };
  });
}
`,
  { mode: 0o755 },
);
const libs = path.join(root, 'libs');
/** An evaluator on a stand-in GPU: the stand-in harness, and a "build" that writes a library named by its variant. */
class StandinEvaluator extends Evaluator {
  override harness(): Promise<string> {
    return Promise.resolve(fake);
  }
  override build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>): Promise<BuildResult> {
    const name = createHash('sha256').update(JSON.stringify([spec.config, spec.flags, spec.source])).digest('hex').slice(0, 16);
    const lib = path.join(libs, name, 'variant.so');
    fs.mkdirSync(path.dirname(lib), { recursive: true });
    if (!fs.existsSync(lib)) fs.writeFileSync(lib, name);
    return new Promise((r) => setTimeout(() => r({ ok: true, libPath: lib, arch: 'sm_90', command: [], resources: [], log: '', durationMs: STAGES.buildMs }), STAGES.buildMs));
  }
}
// The stand-in runs without a sandbox; captures may still run beside checks, as on a host with Landlock.
(StandinEvaluator.prototype as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
process.env.KERNELDUEL_SANDBOX = 'off';
process.env.KERNELDUEL_HOME = path.join(root, 'home');
resetSandboxProbe();

const toolchain = { nvcc: '/bin/false', version: '0', cudaHome: null, libDir: null, targets: [], hostCompiler: null, problems: [] };
const gpu = (i: number): GpuInfo => ({ index: i, name: 'Stand-in GPU', uuid: `GPU-standin-${i}`, computeCapability: '9.0', arch: 'sm_90', memoryTotalMiB: 1, smClockMHz: null, memClockMHz: null, maxSmClockMHz: null, maxMemClockMHz: null, driverVersion: '0' });
const task = resolveTask(values.task!);
const besideList = values['capture-beside-duels']!.split(',').map((x) => x.trim());
if (besideList.some((x) => x !== 'off' && x !== 'on')) fail(`--capture-beside-duels ${values['capture-beside-duels']}: off, on or off,on`);
const rows: Array<{ lanes: number; captureBesideDuels: boolean; evaluated: number; evaluationsPerMinute: number; ratioToOneLane: number | null; wallSeconds: number }> = [];
for (const beside of besideList.map((x) => x === 'on')) for (const n of lanesList) {
  const share = new CaptureShare();
  const evs = Array.from({ length: n }, (_, i) => new StandinEvaluator({ task, toolchain, gpu: gpu(i), workRoot: path.join(root, 'work'), seeds: [1, 2, 3], captureShare: share, captureBesideDuels: beside }));
  const session = createSession(path.join(root, 'sessions'), { id: newSessionId(), task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: KERNELDUEL_VERSION });
  const space = await actionSpaceFor(task, evs[0], { flags: false, transforms: false });
  const strategy = makeStrategy(strategyName, space, seed);
  let first = 0;
  let last = 0;
  let after = 0;
  const t0 = Date.now();
  const r = await runPoolLoop({
    session, lanes: evs.map(evaluatorLane), strategy, budget,
    onEvent: (e) => {
      if (e.type !== 'result') return;
      if (!first) first = Date.now();
      else {
        last = Date.now();
        after++;
      }
    },
  });
  const rate = after / ((last - first) / 60_000);
  const one = rows.find((x) => x.lanes === 1 && !x.captureBesideDuels);
  rows.push({ lanes: n, captureBesideDuels: beside, evaluated: r.evaluated, evaluationsPerMinute: rate, ratioToOneLane: one ? rate / one.evaluationsPerMinute : null, wallSeconds: (Date.now() - t0) / 1000 });
  process.stderr.write(`${n} stand-in GPU(s)${beside ? ', captures beside duels' : ''}: ${rate.toFixed(1)} evaluations/min (${r.evaluated} evaluated)\n`);
  session.close();
  for (const e of evs) e.close();
}
fs.rmSync(root, { recursive: true, force: true });

const outDir = path.resolve(values.out!);
fs.mkdirSync(outDir, { recursive: true });
const command = invokedAs(`npm run bench:pool-standin -- --lanes ${lanesList.join(',')} --budget ${budget} --strategy ${strategyName} --seed ${seed} --task ${values.task} --capture-beside-duels ${besideList.join(',')}`);
const doc = {
  benchmark: 'pool-standin', measured: 'SIMULATED: stand-in GPUs whose harness sleeps for fixed stage lengths; no GPU measured anything', date: new Date().toISOString(), command,
  kernelduelVersion: KERNELDUEL_VERSION, host: { cpus: os.cpus().length, node: process.version }, task: values.task, strategy: strategyName, budget, seed, stagesMs: STAGES, rows,
};
fs.writeFileSync(path.join(outDir, 'pool-standin.json'), JSON.stringify(doc, null, 2) + '\n');
fs.writeFileSync(path.join(outDir, 'pool-standin.md'), [
  '# The pool loop on stand-in GPUs (SIMULATED)', '',
  `**SIMULATED**: no GPU measured anything. The engine's scheduling (pool loop, evaluators, GPU queues, judge protocol, captures ahead and shared) drives stand-in GPUs whose harness sleeps: capture ${STAGES.captureMs} ms, check ${STAGES.checkMs}, time ${STAGES.timeMs}, duel ${STAGES.duelMs}, build ${STAGES.buildMs}. What a real host adds is in \`bench multi-gpu\`.`, '',
  `- date: ${doc.date}`, `- command: \`${command}\``, `- host: ${doc.host.cpus} CPUs, Node ${doc.host.node}; task ${values.task}, strategy ${strategyName}, budget ${budget}, seed ${seed}`, '',
  '| stand-in GPUs | captures beside duels | evaluated | evaluations/min | × one GPU (captures not beside duels) |', '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.lanes} | ${r.captureBesideDuels ? 'yes' : 'no'} | ${r.evaluated} | ${r.evaluationsPerMinute.toFixed(1)} | ${r.ratioToOneLane === null ? '-' : r.ratioToOneLane.toFixed(2)} |`), '',
].join('\n'));
process.stderr.write(`wrote ${path.join(outDir, 'pool-standin.json')} and .md\n`);
