// Merges the per-task files that `bench:live` runs wrote (one run per GPU of a multi-GPU machine,
// each into its own folder) into one results file, in suite order. Checks that every part is a real
// GPU measurement of the same GPU model; a task measured twice keeps the later run.
//   npx tsx bench/merge-live.ts --out bench/results/h200-contrastive-live.json PART.json...
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { builtinTaskNames } from '../main/task/resolve.js';

interface LiveFile {
  benchmark: string;
  measured: string;
  date: string;
  command: string;
  gpu: { name: string; uuid: string } & Record<string, unknown>;
  tasks: Array<{ task: string; gpuUuid?: string } & Record<string, unknown>>;
  [k: string]: unknown;
}

const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
if (!values.out || positionals.length === 0) {
  process.stderr.write('usage: merge-live --out FILE PART.json...\n');
  process.exit(2);
}
const parts = positionals.map((p) => {
  const f = JSON.parse(readFileSync(p, 'utf8')) as LiveFile;
  if (f.benchmark !== 'contrastive-live' || !/real GPU/.test(f.measured)) throw new Error(`${p}: not a contrastive-live result measured on a real GPU`);
  return { path: p, f };
});
const model = parts[0].f.gpu.name;
const odd = parts.find((p) => p.f.gpu.name !== model);
if (odd) throw new Error(`${odd.path}: measured on ${odd.f.gpu.name}, not ${model}`);
const byTask = new Map<string, LiveFile['tasks'][number]>();
for (const { f } of [...parts].sort((a, b) => a.f.date.localeCompare(b.f.date))) for (const t of f.tasks) byTask.set(t.task, { ...t, gpuUuid: t.gpuUuid ?? f.gpu.uuid, date: f.date });
const order = builtinTaskNames();
const tasks = [...byTask.values()].sort((a, b) => order.indexOf(a.task) - order.indexOf(b.task));
const first = parts[0].f;
writeFileSync(values.out, JSON.stringify({
  ...first,
  date: parts.map((p) => p.f.date).sort().at(-1),
  command: `${first.command.replace(/ --tasks \S+/, '').replace(/ \(one run per task, spread over .*$/, '')} (one run per task, spread over ${new Set(tasks.map((t) => t.gpuUuid)).size} GPU(s); merged with bench/merge-live.ts)`,
  gpu: { ...first.gpu, uuid: undefined, uuids: [...new Set(tasks.map((t) => t.gpuUuid))] },
  tasks,
}, null, 2) + '\n');
process.stderr.write(`merged ${tasks.length} tasks from ${parts.length} files into ${values.out}\n`);
