// How long enumerating each built-in task's space takes (every `tasks.list` and every run's start
// pays it): enumerateSpace, which checks each restriction as soon as its tunables are set, against
// the whole cartesian product filtered leaf by leaf with isValidConfig (how it was done before
// 2026-12-04). CPU only, no GPU: medians of --repeats runs each, on the machine it runs on.
//   npx tsx bench/space-enumeration.ts [--repeats 5] [--out bench/results/space-enumeration.json]
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { builtinTaskNames } from '../main/engine/task/resolve.js';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import { median } from '../main/engine/measure/stats.js';
import type { Config } from '../main/engine/base/types.js';

const { values } = parseArgs({ options: { repeats: { type: 'string', default: '5' }, out: { type: 'string', default: 'bench/results/space-enumeration.json' } } });
const repeats = Number(values.repeats);
if (!(Number.isInteger(repeats) && repeats > 0)) throw new Error(`--repeats: "${values.repeats}" is not a positive whole number`);

function leafByLeaf(task: Task): number {
  const t = task.manifest.tunables ?? {};
  const names = Object.keys(t);
  const cur: Config = {};
  let n = 0;
  const rec = (i: number): void => {
    if (i === names.length) {
      if (isValidConfig(task, cur)) n++;
      return;
    }
    for (const v of t[names[i]]) {
      cur[names[i]] = v;
      rec(i + 1);
    }
  };
  rec(0);
  return n;
}

const timeMs = (f: () => number): { ms: number; count: number } => {
  const ms: number[] = [];
  let count = 0;
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    count = f();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), count };
};

const rows = builtinTaskNames().map((name) => {
  const task = loadTask(join(builtinTasksDir(), name));
  const product = Object.values(task.manifest.tunables ?? {}).reduce((a, v) => a * v.length, 1);
  const pruned = timeMs(() => enumerateSpace(task).length);
  const leaf = timeMs(() => leafByLeaf(task));
  if (pruned.count !== leaf.count) throw new Error(`${name}: enumerateSpace gives ${pruned.count} configurations, the leaf-by-leaf filter ${leaf.count}`);
  process.stdout.write(`${name.padEnd(12)} ${String(product).padStart(7)} combinations, ${String(pruned.count).padStart(5)} valid: ${leaf.ms.toFixed(1)} ms leaf by leaf, ${pruned.ms.toFixed(1)} ms pruned\n`);
  return { task: name, combinations: product, configurations: pruned.count, leafByLeafMs: leaf.ms, enumerateSpaceMs: pruned.ms };
});
const doc = {
  benchmark: 'space-enumeration', measured: 'CPU time on this machine (no GPU)', date: new Date().toISOString(),
  machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`, repeats,
  command: `npx tsx bench/space-enumeration.ts --repeats ${repeats}`, rows,
  totalMs: { leafByLeaf: rows.reduce((a, r) => a + r.leafByLeafMs, 0), enumerateSpace: rows.reduce((a, r) => a + r.enumerateSpaceMs, 0) },
};
writeFileSync(values.out!, JSON.stringify(doc, null, 2) + '\n');
process.stdout.write(`all tasks: ${doc.totalMs.leafByLeaf.toFixed(0)} ms leaf by leaf, ${doc.totalMs.enumerateSpace.toFixed(0)} ms pruned; wrote ${values.out}\n`);
