// Records whole search spaces on a real GPU (issue 3): every valid configuration of each task's
// tunables is built, checked against the reference and timed, through the harness's sweep mode.
// Output: bench/spaces/<gpu>/<task>.json in the `kernelduel-space/1` format that the replay
// backend reads. Resumable: each finished configuration is appended to <task>.partial.jsonl in
// the output folder, and a later run skips what is there (device sessions are capped at minutes).
//   npm run bench:record -- [--tasks softmax,axpy] [--out bench/spaces/h200] [--minutes 8]
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { detectGpus } from '../main/gpu/detect.js';
import { findToolchain } from '../main/toolchain/nvcc.js';
import { Evaluator } from '../main/eval/evaluate.js';
import { sweep } from '../main/eval/sweep.js';
import { builtinTaskNames, resolveTask } from '../main/task/resolve.js';
import { configKey, enumerateSpace } from '../main/task/space.js';
import { RecordedSpaceSchema, SPACE_FORMAT, type SpaceEntry } from '../main/eval/replay.js';
import type { EvalResult } from '../main/common/types.js';

const { values } = parseArgs({ options: { tasks: { type: 'string' }, out: { type: 'string' }, minutes: { type: 'string', default: '1000' }, chunk: { type: 'string', default: '64' } } });
const started = Date.now();
const deadline = started + Number(values.minutes) * 60_000;
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

const toolchain = await findToolchain();
const det = await detectGpus();
const gpu = det.gpus.find((g) => g.arch);
if (!gpu || !toolchain.nvcc || !toolchain.version) {
  process.stderr.write(`record-spaces needs an NVIDIA GPU and nvcc: ${[...det.problems, ...toolchain.problems].join(' ')}\n`);
  process.exit(2);
}
const slug = gpu.name.toLowerCase().includes('h200') ? 'h200' : gpu.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
const outDir = resolve(values.out ?? join('bench', 'spaces', slug));
mkdirSync(outDir, { recursive: true });
const workRoot = mkdtempSync(join(tmpdir(), 'kd-record-'));

function entryOf(config: Record<string, number>, r: EvalResult): SpaceEntry {
  const t = r.timing?.[0];
  const ok = !r.failure && r.check?.ok && t && Number.isFinite(t.medianMs) && t.medianMs > 0;
  return {
    config,
    flags: { opt: 3 },
    medianMs: ok ? t.medianMs : null,
    samplesMs: ok ? t.samplesMs.filter((x) => x > 0) : [],
    relNoise: ok && Number.isFinite(t.relNoise) ? t.relNoise : 0,
    resources: r.build.resources,
    failure: ok ? null : (r.failure ? { kind: r.failure.kind, reason: r.failure.reason.slice(0, 500) } : { kind: 'runtime', reason: 'no timing' }),
  };
}

const names = values.tasks ? values.tasks.split(',') : builtinTaskNames();
for (const name of names) {
  if (Date.now() > deadline) break;
  const task = resolveTask(name);
  const space = enumerateSpace(task);
  const partial = join(outDir, `${name}.partial.jsonl`);
  const have = new Map<string, SpaceEntry>();
  if (existsSync(partial)) {
    for (const line of readFileSync(partial, 'utf8').split('\n')) {
      try {
        const e = JSON.parse(line) as SpaceEntry & { taskHash?: string };
        if (e.taskHash === task.hash) have.set(configKey(e.config), e);
      } catch {
        /* torn line: measured again */
      }
    }
  }
  const todo = space.filter((c) => !have.has(configKey(c)));
  log(`${name}: ${space.length} configurations, ${have.size} already recorded, ${todo.length} to go`);
  const ev = new Evaluator({ task, toolchain, gpu, workRoot, bigOutputBytes: 64 << 20 });
  const chunk = Number(values.chunk);
  for (let i = 0; i < todo.length && Date.now() < deadline; i += chunk) {
    const part = todo.slice(i, i + chunk).map((config, j) => ({ id: `c${i + j}`, config }));
    const res = await sweep(ev, part.map((p) => ({ id: p.id, spec: { source: task.baselineSource, config: p.config, flags: { opt: 3 } } })), { perVariantTimeoutMs: 30_000 });
    for (const p of part) {
      const r = res.get(p.id);
      if (!r) continue;
      const e = entryOf(p.config, r);
      have.set(configKey(p.config), e);
      appendFileSync(partial, JSON.stringify({ ...e, taskHash: task.hash }) + '\n');
    }
    const timed = [...have.values()].filter((e) => e.medianMs !== null);
    const best = timed.reduce((m, e) => Math.min(m, e.medianMs!), Infinity);
    log(`${name}: ${have.size}/${space.length} recorded, ${timed.length} timed, best ${best.toFixed(4)} ms`);
  }
  if (have.size === space.length) {
    const rec = RecordedSpaceSchema.parse({
      format: SPACE_FORMAT, task: name, taskHash: task.hash,
      gpu: { name: gpu.name, uuid: gpu.uuid, computeCapability: gpu.computeCapability, driver: gpu.driverVersion },
      nvcc: toolchain.version, date: new Date().toISOString(), command: `npm run bench:record -- --tasks ${name}`, measured: 'real GPU', timedSize: task.timed[0],
      entries: space.map((c) => {
        const e = { ...have.get(configKey(c))! } as SpaceEntry & { taskHash?: string };
        delete e.taskHash;
        return e;
      }),
    });
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify(rec) + '\n');
    log(`${name}: complete -> ${join(outDir, `${name}.json`)}`);
  }
}
log('done');
