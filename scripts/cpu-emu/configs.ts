// Prints the configurations scripts/cpu-emu/run.py checks for one task, as JSON: the defaults,
// the expert configurations of bench/expert-configs.json, then a seeded random sample of the space.
//   npx tsx scripts/cpu-emu/configs.ts TASK COUNT SEED [K=V,K=V: sample only configurations with these values]
import { readFileSync } from 'node:fs';
import { resolveTask } from '../../main/engine/task/resolve.js';
import { configKey, defaultConfig, enumerateSpace } from '../../main/engine/task/space.js';
import { mulberry32, shuffle } from '../../main/engine/base/random.js';
import type { Config } from '../../main/engine/base/types.js';

const [name, count, seed, only] = process.argv.slice(2);
const want = (only ?? '').split(',').filter(Boolean).map((kv) => kv.split('='));
const task = resolveTask(name);
const experts = (JSON.parse(readFileSync(new URL('../../bench/expert-configs.json', import.meta.url), 'utf8')) as { tasks: Record<string, Config[]> }).tasks[name] ?? [];
const out: Array<{ kind: string; config: Config }> = [{ kind: 'default', config: defaultConfig(task) }, ...experts.map((config) => ({ kind: 'expert', config }))];
const seen = new Set(out.map((o) => configKey(o.config)));
for (const c of shuffle([...enumerateSpace(task)], mulberry32(Number(seed)))) {
  if (out.length >= Number(count)) break;
  if (seen.has(configKey(c)) || !want.every(([k, v]) => String(c[k]) === v)) continue;
  seen.add(configKey(c));
  out.push({ kind: 'sample', config: c });
}
console.log(JSON.stringify(out));
