// Compile check of the suite spaces (issue 17), no GPU needed: builds a spread of configurations
// of each task's space with nvcc for one architecture (default sm_90), exactly as a search would
// (the project's buildVariant: shim, -D defines, sandbox), and reports ptxas registers, spills and
// shared memory per kernel. The spread: the task's defaults, every expert configuration of
// bench/expert-configs.json, then a seeded random sample of the space; a third of the sample is
// built with the optimiser's source transforms (every offered site, a random option each) and
// random -maxrregcount / -dlcm flags, so that nothing the optimiser may add breaks a build.
// It says nothing about correctness or speed: that needs a GPU (scripts/device-expert-check.sh).
//   npx tsx bench/compile-spaces.ts [--tasks softmax,matmul] [--per-task 30] [--seed 1] [--arch sm_90] [--jobs 2] [--out FILE]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs as parseArgs } from './lib/args.js';
import { buildVariant, setBuildConcurrency } from '../main/engine/build/compile.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { configKey, defaultConfig, enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import { findTransforms } from '../main/engine/source/transforms.js';
import { mulberry32, shuffle } from '../main/engine/base/random.js';
import type { BuildFlags, Config } from '../main/engine/base/types.js';

const SUITE = ['softmax', 'layernorm', 'transpose', 'reduce_sum', 'matmul'];
const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: SUITE.join(',') },
    'per-task': { type: 'string', default: '30' },
    seed: { type: 'string', default: '1' },
    arch: { type: 'string', default: 'sm_90' },
    jobs: { type: 'string', default: String(Math.max(1, os.availableParallelism())) },
    out: { type: 'string' },
  },
});
const here = dirname(fileURLToPath(import.meta.url));
const experts = (JSON.parse(readFileSync(join(process.env.KERNELDUEL_BENCH_DATA ?? here, 'expert-configs.json'), 'utf8')) as { tasks: Record<string, Config[]> }).tasks;
const perTask = Number(values['per-task']);
const rng = mulberry32(Number(values.seed));
setBuildConcurrency(Number(values.jobs));

const tc = await findToolchain();
if (!tc.nvcc || !tc.version) throw new Error(`compile-spaces needs nvcc: ${tc.problems.join(' ')}`);
const env = { nvcc: tc.nvcc, nvccVersion: tc.version, arch: values.arch!, libDir: tc.libDir, workRoot: mkdtempSync(join(os.tmpdir(), 'kd-compile-spaces-')) };

interface Row {
  task: string;
  kind: 'default' | 'expert' | 'sample' | 'sample+transforms+flags';
  config: Config;
  flags: BuildFlags;
  transforms: string[];
  ok: boolean;
  failure?: string;
  kernels: Array<{ name: string; registers: number; spillBytes: number; sharedBytes: number }>;
  seconds: number;
}
const rows: Row[] = [];
const started = Date.now();
const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];

for (const name of values.tasks!.split(',')) {
  const task = resolveTask(name);
  const space = enumerateSpace(task);
  const tunables = Object.keys(task.manifest.tunables ?? {});
  const catalog = await findTransforms(task.baselineSource, { tunables });
  const plan: Array<Pick<Row, 'kind' | 'config' | 'flags' | 'transforms'>> = [{ kind: 'default', config: defaultConfig(task), flags: { opt: 3 }, transforms: [] }];
  for (const c of experts[name] ?? []) {
    if (!isValidConfig(task, c)) throw new Error(`bench/expert-configs.json: ${name} ${configKey(c)} is not in the task's space (a restriction excludes it)`);
    plan.push({ kind: 'expert', config: c, flags: { opt: 3 }, transforms: [] });
  }
  const seen = new Set(plan.map((p) => configKey(p.config)));
  for (const c of shuffle([...space], rng)) {
    if (plan.length >= perTask) break;
    if (seen.has(configKey(c))) continue;
    seen.add(configKey(c));
    const withExtras = plan.length % 3 === 0;
    const transforms = withExtras ? catalog.sites.map((s) => pick(s.options)) : [];
    const flags: BuildFlags = withExtras ? { opt: 3, ...(rng() < 0.5 ? { maxrregcount: pick([32, 64, 128]) } : {}), ...(rng() < 0.5 ? { dlcm: pick(['ca', 'cg'] as const) } : {}) } : { opt: 3 };
    plan.push({ kind: withExtras ? 'sample+transforms+flags' : 'sample', config: c, flags, transforms });
  }
  process.stderr.write(`${name}: ${space.length} configurations in the space; building ${plan.length} (${catalog.sites.length} transform sites)\n`);
  const results = await Promise.all(plan.map(async (p) => {
    const source = p.transforms.length ? catalog.apply(p.transforms) : task.baselineSource;
    const t0 = Date.now();
    const b = await buildVariant(task, { source, config: p.config, flags: p.flags }, env);
    const row: Row = {
      task: name, ...p, ok: b.ok, ...(b.failure ? { failure: `${b.failure.kind}: ${b.failure.reason}` } : {}),
      kernels: b.resources.map((r) => ({ name: r.name, registers: r.registers, spillBytes: r.spillStoreBytes + r.spillLoadBytes, sharedBytes: r.sharedBytes })),
      seconds: (Date.now() - t0) / 1000,
    };
    const k = row.kernels.map((x) => `${x.name}: ${x.registers} regs, ${x.spillBytes} B spilled, ${x.sharedBytes} B smem`).join('; ');
    process.stderr.write(`  ${b.ok ? 'ok  ' : 'FAIL'} ${p.kind.padEnd(23)} ${configKey(p.config)}${p.flags.maxrregcount ? ` -maxrregcount=${p.flags.maxrregcount}` : ''}${p.flags.dlcm ? ` -dlcm=${p.flags.dlcm}` : ''}${p.transforms.length ? ` +${p.transforms.length} transforms` : ''}  ${b.ok ? k : row.failure}\n`);
    return row;
  }));
  rows.push(...results);
}
rmSync(env.workRoot, { recursive: true, force: true });

const failed = rows.filter((r) => !r.ok);
const spilled = rows.filter((r) => r.ok && r.flags.maxrregcount === undefined && r.kernels.some((k) => k.spillBytes > 0));
const summary = `${rows.length} builds, ${failed.length} failed, ${spilled.length} spill registers without -maxrregcount; ${((Date.now() - started) / 1000).toFixed(0)} s`;
process.stderr.write(`${summary}\n`);
for (const r of spilled) process.stderr.write(`  spills: ${r.task} ${configKey(r.config)} ${r.kernels.map((k) => `${k.name} ${k.spillBytes} B`).join(', ')}\n`);
if (values.out) {
  writeFileSync(resolve(values.out), JSON.stringify({
    benchmark: 'compile-spaces', measured: 'compile only (nvcc + ptxas), no GPU: says nothing about correctness or speed',
    date: new Date().toISOString(), arch: values.arch, nvcc: tc.version, seed: Number(values.seed), summary, builds: rows,
  }, null, 2) + '\n');
}
if (failed.length) process.exitCode = 1;
