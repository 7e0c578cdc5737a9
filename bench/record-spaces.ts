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
import { benchArgs as parseArgs } from './lib/args.js';
import { detectGpus, gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';
import { Evaluator } from '../main/engine/measure/evaluate.js';
import { setBuildConcurrency } from '../main/engine/build/compile.js';
import { availableParallelism } from 'node:os';
import { sweep, SWEEP_TIMING } from '../main/engine/measure/sweep.js';
import { builtinTaskNames, resolveTask } from '../main/engine/task/resolve.js';
import { configKey, enumerateSpace } from '../main/engine/task/space.js';
import { RecordedSpaceSchema, SPACE_FORMAT, type SpaceEntry } from '../main/engine/measure/replay.js';
import type { EvalResult } from '../main/engine/base/types.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { recordingNotes, type EntryProvenance } from './lib/recording-notes.js';

const { values } = parseArgs({ options: { tasks: { type: 'string' }, out: { type: 'string' }, minutes: { type: 'string', default: '1000' }, chunk: { type: 'string', default: '64' } } });
const started = Date.now();
const runStartedAt = new Date(started).toISOString();
const deadline = started + Number(values.minutes) * 60_000;
const log = (s: string): void => void process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${s}\n`);

const toolchain = await findToolchain();
const det = await detectGpus();
const gpu = det.gpus.find((g) => g.arch);
if (!gpu || !toolchain.nvcc || !toolchain.version) {
  process.stderr.write(`record-spaces needs an NVIDIA GPU and nvcc: ${[...det.problems, ...toolchain.problems].join(' ')}\n`);
  process.exit(2);
}
const slug = gpuSlug(gpu.name);
const outDir = resolve(values.out ?? join('bench', 'spaces', slug));
mkdirSync(outDir, { recursive: true });
const workRoot = mkdtempSync(join(tmpdir(), 'kd-record-'));
setBuildConcurrency(Math.max(1, availableParallelism() - 2)); // two cores stay free for the measuring process

/** At most 200 samples per configuration, evenly strided in time order, to 6 significant digits (the median is of all). */
const MAX_STORED_SAMPLES = 200;
function thin(xs: number[]): number[] {
  const step = Math.max(1, xs.length / MAX_STORED_SAMPLES);
  const out: number[] = [];
  for (let i = 0; i < xs.length && out.length < MAX_STORED_SAMPLES; i = Math.floor((out.length) * step)) out.push(Number(xs[i].toPrecision(6)));
  return out;
}

function entryOf(config: Record<string, number>, r: EvalResult): SpaceEntry {
  const t = r.timing?.[0];
  const ok = !r.failure && r.check?.ok && t && Number.isFinite(t.medianMs) && t.medianMs > 0;
  return {
    config,
    flags: { opt: 3 },
    medianMs: ok ? t.medianMs : null,
    samplesMs: ok ? thin(t.samplesMs.filter((x) => x > 0)) : [],
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
  const complete = join(outDir, `${name}.json`);
  if (existsSync(complete)) {
    try {
      const done = RecordedSpaceSchema.parse(JSON.parse(readFileSync(complete, 'utf8')));
      if (done.taskHash === task.hash && done.entries.length === space.length) {
        log(`${name}: already recorded in ${complete} (${done.date}); skipped`);
        continue;
      }
      log(`${name}: ${complete} is of another version of the task: recording again`);
    } catch (e) {
      log(`${name}: ${complete} is not a readable recording (${(e as Error).message.slice(0, 200)}): recording again`);
    }
  }
  const have = new Map<string, SpaceEntry & EntryProvenance>();
  if (existsSync(partial)) {
    for (const line of readFileSync(partial, 'utf8').split('\n')) {
      try {
        const e = JSON.parse(line) as SpaceEntry & EntryProvenance & { taskHash?: string };
        if (e.taskHash === task.hash) have.set(configKey(e.config), e);
      } catch {
        /* torn line: measured again */
      }
    }
  }
  const todo = space.filter((c) => !have.has(configKey(c)));
  const taskStarted = Date.now();
  let doneHere = 0; // configurations this run measured (its rate gives the time left)
  log(`${name}: ${space.length} configurations, ${have.size} already recorded, ${todo.length} to go`);
  const ev = new Evaluator({ task, toolchain, gpu, workRoot, bigOutputBytes: 64 << 20, timing: SWEEP_TIMING, checkTimeoutMs: 30_000, timeTimeoutMs: 30_000 });
  const chunk = Number(values.chunk);
  const chunks: Array<Array<{ id: string; config: Record<string, number> }>> = [];
  for (let i = 0; i < todo.length; i += chunk) chunks.push(todo.slice(i, i + chunk).map((config, j) => ({ id: `c${i + j}`, config })));
  const specOf = (config: Record<string, number>) => ({ source: task.baselineSource, config, flags: { opt: 3 as const } });
  // Pipelined: the next chunk compiles (on all cores but two) while the GPU measures this one.
  const buildAll = (part: (typeof chunks)[number] | undefined): Promise<unknown> => (part ? Promise.all(part.map((p) => ev.build(specOf(p.config)))) : Promise.resolve());
  let building = buildAll(chunks[0]);
  for (let k = 0; k < chunks.length && Date.now() < deadline; k++) {
    const part = chunks[k];
    await building; // this chunk's libraries are built (cached by content): the sweep finds them
    building = buildAll(chunks[k + 1]);
    const res = await sweep(ev, part.map((p) => ({ id: p.id, spec: specOf(p.config) })));
    for (const p of part) {
      const r = res.get(p.id);
      if (!r) continue;
      const e = { ...entryOf(p.config, r), gpuUuid: gpu.uuid, runStartedAt };
      have.set(configKey(p.config), e);
      appendFileSync(partial, JSON.stringify({ ...e, taskHash: task.hash, recordedAt: new Date().toISOString() }) + '\n');
    }
    const timed = [...have.values()].filter((e) => e.medianMs !== null);
    const best = timed.reduce((m, e) => Math.min(m, e.medianMs!), Infinity);
    doneHere += part.length;
    const perConfig = (Date.now() - taskStarted) / 1000 / doneHere;
    const left = space.length - have.size;
    log(`${name}: ${have.size}/${space.length} recorded, ${timed.length} timed, best ${best.toFixed(4)} ms; ${perConfig.toFixed(2)} s a configuration${left ? `, about ${((left * perConfig) / 60).toFixed(1)} min to go` : ''}`);
  }
  await building;
  if (have.size === space.length) {
    // Which GPU and which run measured what, when a recording was resumed (the header names the last run only).
    const notes = recordingNotes([...have.values()], gpu, runStartedAt);
    const rec = RecordedSpaceSchema.parse({
      format: SPACE_FORMAT, task: name, taskHash: task.hash,
      gpu: { name: gpu.name, uuid: gpu.uuid, computeCapability: gpu.computeCapability, driver: gpu.driverVersion },
      nvcc: toolchain.version, date: new Date().toISOString(), command: invokedAs(`npm run bench:record -- --tasks ${name}`), measured: 'real GPU', timedSize: task.timed[0], notes,
      entries: space.map((c) => {
        const e = { ...have.get(configKey(c))! } as SpaceEntry & EntryProvenance & { taskHash?: string; recordedAt?: string };
        delete e.taskHash;
        delete e.gpuUuid;
        delete e.runStartedAt;
        delete e.recordedAt;
        return e;
      }),
    });
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify(rec) + '\n');
    log(`${name}: complete -> ${join(outDir, `${name}.json`)}`);
  }
}
log('done');
