// How long the workbench's baseline curves (sessions.baselines: random, anneal and genetic replayed
// on a recorded space, 5 seeds each) hold the thread they run on — the app's main process or the
// web server — with and without simulate()'s yieldEvery. CPU only; replays of the recorded H200
// spaces (REPLAY, no GPU).
//   npx tsx bench/replay-stall.ts [--evaluations 1000] [--out bench/results/replay-stall-vm.json]
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchArgs as parseArgs } from './lib/args.js';
import os from 'node:os';
import { loadSpace } from '../main/engine/measure/replay.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { replayStrategy } from '../main/engine/search/strategies.js';

const { values } = parseArgs({ options: { evaluations: { type: 'string', default: '1000' }, out: { type: 'string', default: 'bench/results/replay-stall-vm.json' } } });
const evaluations = Number(values.evaluations);
const rows: Array<Record<string, unknown>> = [];
for (const space of ['histogram', 'axpy']) {
  const rec = loadSpace(`bench/spaces/h200/${space}.json`);
  const task = resolveTask(space);
  for (const yieldEvery of [0, 10, 1]) {
    // The longest gap between ticks of a 1 ms timer: how long the thread was held at a stretch
    // (without yielding the timer never fires, and the gap is the whole replay).
    let last = performance.now();
    let maxGap = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 1);
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    for (const name of ['random', 'anneal', 'genetic'] as const) for (let seed = 1; seed <= 5; seed++) await replayStrategy(name, task, rec, seed, evaluations, { yieldEvery });
    const wallMs = performance.now() - t0;
    maxGap = Math.max(maxGap, performance.now() - last);
    clearInterval(tick);
    h.disable();
    const row = { space, yieldEvery, evaluations, runs: 15, wallMs: Math.round(wallMs), maxHeldMs: Number(maxGap.toFixed(1)), p99LoopDelayMs: h.count ? Number((h.percentile(99) / 1e6).toFixed(1)) : null };
    process.stderr.write(`${JSON.stringify(row)}\n`);
    rows.push(row);
  }
}
writeFileSync(values.out!, JSON.stringify({
  benchmark: 'replay-stall', measured: 'CPU only (REPLAY of recorded H200 spaces; no GPU involved)', date: new Date().toISOString(),
  command: `npx tsx bench/replay-stall.ts --evaluations ${evaluations}`, host: `${os.cpus()[0]?.model ?? '?'} (${os.availableParallelism()} cores)`,
  note: 'maxHeldMs: the longest gap between ticks of a 1 ms timer (the longest the thread was held) while 3 strategies x 5 seeds were replayed, as sessions.baselines does; p99LoopDelayMs from perf_hooks.monitorEventLoopDelay (null: the loop never turned)',
  rows,
}, null, 2) + '\n');
