// Sweeps: check and time many variants of one task through one harness process (`sweep` mode),
// for recording whole search spaces. Every variant's outcome is appended to a results file as the
// harness finishes it, so a crash, a hang or a kill loses nothing already measured: the sweep
// restarts after the last recorded variant, and the variant that killed the process is recorded
// with the failure (a stalled process is killed by a watchdog and counts as `timeout`).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BufferCheck, BuildResult, EvalResult, Failure, TimingResult, VariantSpec } from '../common/types.js';
import { cudaDeviceSelector } from '../gpu/detect.js';
import { runProcess, tail } from '../proc/run.js';
import type { Evaluator } from './evaluate.js';
import { harnessEnv, renderPlan, type TimingSettings } from './harness.js';
import { chooseTimer, mean, medianCI } from './stats.js';

/** Shorter sampling for recordings: 1% noise target, at most 0.4 s per variant. */
export const SWEEP_TIMING: Partial<TimingSettings> = { warmupMs: 20, minSamples: 10, maxSamples: 1000, targetRelNoise: 0.01, minMs: 20, maxMs: 400 };

interface SweepLine {
  id: string;
  nonce: string;
  status: string;
  error?: string;
  checks?: BufferCheck[];
  isolation?: { refs: string; syscallFilter: string };
  l2FlushBytes?: number;
  timings?: Array<{ size: number; warmupCalls: number; converged: boolean; eventMs: number[]; wallMs: number[] }>;
}

export interface SweepOptions {
  signal?: AbortSignal;
  /** A variant that produces no result for this long is killed and recorded as a timeout. */
  perVariantTimeoutMs?: number;
  timing?: Partial<TimingSettings>;
  onResult?: (id: string, result: EvalResult, done: number, total: number) => void;
}

export async function sweep(ev: Evaluator, items: Array<{ id: string; spec: Pick<VariantSpec, 'source' | 'config' | 'flags'> }>, o: SweepOptions = {}): Promise<Map<string, EvalResult>> {
  if (!ev.gpu) throw new Error('a sweep needs a GPU');
  const gpu = ev.gpu;
  const results = new Map<string, EvalResult>();
  const source = { kind: 'gpu' as const, gpu: gpu.name, uuid: gpu.uuid };
  const total = items.length;
  const done = (id: string, r: EvalResult): void => {
    results.set(id, r);
    o.onResult?.(id, r, results.size, total);
  };
  // Builds in parallel (one per core), then every built library goes through the GPU.
  const builds = new Map<string, BuildResult>();
  await Promise.all(
    items.map(async ({ id, spec }) => {
      const b = await ev.build(spec, o.signal);
      builds.set(id, b);
      if (!b.ok || !b.libPath) done(id, { build: b, failure: b.failure, source });
    }),
  );
  await ev.reference(o.signal);
  const h = await ev.harness();
  const timing = { ...ev.timing, ...SWEEP_TIMING, ...(o.timing ?? {}) };
  const plan = { ...ev.plan(), timing };
  let remaining = items.filter(({ id }) => !results.has(id)).map(({ id }) => ({ id, lib: builds.get(id)!.libPath! }));
  const dir = join(ev.env.workRoot, 'sweeps', randomBytes(6).toString('hex'));
  mkdirSync(dir, { recursive: true });
  const perTimeout = o.perVariantTimeoutMs ?? 60_000;
  while (remaining.length && !o.signal?.aborted) {
    const nonce = randomBytes(12).toString('hex');
    const planPath = join(dir, 'plan.txt');
    const listPath = join(dir, 'list.txt');
    const outPath = join(dir, `out-${nonce}.jsonl`);
    writeFileSync(planPath, renderPlan(plan, nonce));
    writeFileSync(listPath, remaining.map((r) => `${r.id} ${r.lib}`).join('\n') + '\n');
    writeFileSync(outPath, '');
    const ac = new AbortController();
    const onAbort = (): void => ac.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let stalled = false;
    let lastSize = 0;
    let lastChange = Date.now();
    const watchdog = setInterval(() => {
      const size = existsSync(outPath) ? statSync(outPath).size : 0;
      if (size !== lastSize) {
        lastSize = size;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > perTimeout) {
        stalled = true;
        ac.abort();
      }
    }, 250);
    const env = harnessEnv(cudaDeviceSelector(gpu), ev.isolation); // ev.reference() ran the probe: its isolation is settled
    const r = await ev.queue().add(() =>
      runProcess(h, ['sweep', planPath, outPath, listPath], { cwd: dir, env, timeoutMs: perTimeout * (remaining.length + 2), signal: ac.signal, maxOutputBytes: 256 << 10 }),
    );
    clearInterval(watchdog);
    o.signal?.removeEventListener('abort', onAbort);
    const lines = readFileSync(outPath, 'utf8').split('\n').filter(Boolean);
    rmSync(outPath, { force: true });
    for (const line of lines) {
      let l: SweepLine;
      try {
        l = JSON.parse(line) as SweepLine;
      } catch {
        continue; // a torn last line: that variant is measured again
      }
      if (l.nonce !== nonce) continue;
      const build = builds.get(l.id);
      if (!build) continue;
      done(l.id, toResult(l, build, source, ev));
    }
    remaining = remaining.filter((x) => !results.has(x.id));
    if (!remaining.length || o.signal?.aborted) break;
    // The process ended (or was killed) with work left: the first unrecorded variant caused it.
    const culprit = remaining.shift()!;
    const log = tail((r?.stdout ?? '') + (r?.stderr ?? ''), 4000);
    const failure: Failure = stalled
      ? { kind: 'timeout', reason: `no result within ${(perTimeout / 1000).toFixed(0)} s (the process group was killed): a hang or an infinite loop`, log }
      : { kind: 'runtime', reason: `the sweep process ${r?.signal ? `was killed by ${r.signal}` : `exited with code ${r?.code}`} while measuring this variant${r?.code === 3 ? ' (it left the CUDA context broken)' : ''}`, log };
    done(culprit.id, { build: builds.get(culprit.id)!, failure, source });
  }
  rmSync(dir, { recursive: true, force: true });
  return results;
}

function toResult(l: SweepLine, build: BuildResult, source: EvalResult['source'], ev: Evaluator): EvalResult {
  const check = { ok: l.status === 'ok', checks: l.checks ?? [], isolation: ev.checkIsolation(l.isolation), durationMs: 0, failure: undefined as Failure | undefined };
  if (l.status !== 'ok') {
    const failure: Failure = { kind: l.status === 'correctness' ? 'correctness' : 'runtime', reason: l.error ?? l.status };
    check.failure = failure;
    return { build, check, failure, source };
  }
  const timing: TimingResult[] = (l.timings ?? []).map((x) => {
    const { timer, note } = chooseTimer(x.eventMs, x.wallMs);
    const samples = timer === 'wall' ? x.wallMs : x.eventMs;
    const ci = medianCI(samples);
    return {
      size: x.size, samplesMs: samples, eventMs: x.eventMs, wallMs: x.wallMs, timer, timerNote: note, medianMs: ci.median, meanMs: mean(samples),
      minMs: Math.min(...samples), ciLowMs: ci.low, ciHighMs: ci.high, relNoise: ci.relNoise, converged: x.converged, warmupCalls: x.warmupCalls, l2FlushBytes: l.l2FlushBytes ?? 0,
    };
  });
  void ev;
  return { build, check, timing, source };
}
