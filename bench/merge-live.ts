// Merges the per-task files that `bench:live` runs wrote (one run per GPU of a multi-GPU machine,
// each into its own folder) into one results file, in suite order. Checks that every part is a real
// GPU measurement of the same GPU model; a task measured twice keeps the later run first and the
// earlier ones under `earlierRuns`. Tasks with a recorded space (bench/spaces/<gpu>/) get `recordedSpace`.
//   npx tsx bench/merge-live.ts --out bench/results/h200-contrastive-live.json PART.json...
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { builtinTaskNames } from '../main/engine/task/resolve.js';
import { RecordedSpaceSchema } from '../main/engine/measure/replay.js';
import { gpuSlug } from '../main/engine/platform/gpu/detect.js';

interface LiveFile {
  benchmark: string;
  measured: string;
  date: string;
  command: string;
  gpu: { name: string; uuid: string } & Record<string, unknown>;
  tasks: Array<{ task: string; gpuUuid?: string; bestMs?: number } & Record<string, unknown>>;
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
// A task measured again keeps the earlier runs under `earlierRuns` (nothing measured is dropped).
type Row = LiveFile['tasks'][number] & { session?: string; earlierRuns?: Array<Record<string, unknown>>; date?: string };
for (const { f } of [...parts].sort((a, b) => a.f.date.localeCompare(b.f.date))) {
  for (const t of f.tasks as Row[]) {
    const row: Row = { ...t, gpuUuid: t.gpuUuid ?? f.gpu.uuid, date: t.date ?? f.date };
    const prev = byTask.get(t.task) as Row | undefined;
    if (prev && prev.session !== row.session) {
      const { earlierRuns = [], recordedSpace: _derived, ...run } = prev;
      row.earlierRuns = [...earlierRuns, run];
    } else if (prev?.earlierRuns) row.earlierRuns ??= prev.earlierRuns;
    byTask.set(t.task, row);
  }
}
const order = builtinTaskNames();
// Against the exhaustive recording of the same task's tunables (all at -O3, no transforms), where
// there is one: how close the live run came to the best configuration of that space.
const slug = gpuSlug(model);
const tasks = [...byTask.values()].sort((a, b) => order.indexOf(a.task) - order.indexOf(b.task)).map((t) => {
  const rec = join('bench', 'spaces', slug, `${t.task}.json`);
  if (!existsSync(rec) || typeof t.bestMs !== 'number') return t;
  const space = RecordedSpaceSchema.parse(JSON.parse(readFileSync(rec, 'utf8')));
  const best = space.entries.reduce((m, e) => (e.medianMs !== null && e.medianMs < m.medianMs! ? e : m), { medianMs: Infinity } as { medianMs: number | null; config?: Record<string, number> });
  if (!best.config) return t;
  return { ...t, recordedSpace: { file: rec, bestMs: best.medianMs, bestConfig: best.config, liveBestVsSpaceBest: best.medianMs! / t.bestMs, note: 'separate exhaustive recording of the tunables alone at -O3 (another process, possibly another H200 of the same model); ratio > 1: the live run beat it' } };
});
const first = parts[0].f;
writeFileSync(values.out, JSON.stringify({
  ...first,
  date: parts.map((p) => p.f.date).sort().at(-1),
  command: `${first.command.replace(/ --tasks \S+/, '').replace(/ \(one run per task, spread over .*$/, '')} (one run per task, spread over ${new Set(tasks.map((t) => t.gpuUuid)).size} GPU(s); merged with bench/merge-live.ts)`,
  gpu: { ...first.gpu, uuid: undefined, uuids: [...new Set(tasks.map((t) => t.gpuUuid))] },
  tasks,
}, null, 2) + '\n');
process.stderr.write(`merged ${tasks.length} tasks from ${parts.length} files into ${values.out}\n`);
