// The timing cutoff (`optimize --time-cutoff`, issue 17): a variant's timing stops once the lower
// bound of its median's 95% interval lies above a multiple of the best's median, and such a variant
// is compared with its opponent by the medians, without a duel. These tests fail if the judge's rule
// is not the engine's interval, if the loop passes no cutoff (or one not from the best measured so
// far, or one from a replay), or if a variant stopped at its cutoff still duels.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { createSession } from '../main/engine/session/store.js';
import { duelSkipFor, runLoop, timingCutoffMs } from '../main/engine/search/loop.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { contrastiveSearch } from '../main/engine/search/contrastive.js';
import { medianCI } from '../main/engine/measure/stats.js';
import type { EvaluateOptions, Measurer, MeasuredSpec } from '../main/engine/measure/measurer.js';
import type { DuelResult, EvalResult, TimingResult } from '../main/engine/base/types.js';
import { runProcess } from '../main/engine/platform/proc/run.js';
import { buildHarnessHostProgram, NO_NVCC } from './fixtures/toolchain.js';

const root = mkdtempSync(join(tmpdir(), 'kd-time-cutoff-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const task = loadTask(join(builtinTasksDir(), 'softmax'));

function timing(ms: number, o: Partial<TimingResult> = {}): TimingResult {
  return { size: 0, samplesMs: [ms], eventMs: [ms], wallMs: [ms], timer: 'events', medianMs: ms, meanMs: ms, minMs: ms, ciLowMs: ms * 0.99, ciHighMs: ms * 1.01, relNoise: 0.01, converged: true, warmupCalls: 1, l2FlushBytes: 0, ...o };
}
const build = { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 1 };
const gpuResult = (ms: number, o: Partial<TimingResult> = {}): EvalResult => ({ build, check: { ok: true, checks: [], durationMs: 1 }, timing: [timing(ms, o)], source: { kind: 'gpu', gpu: 'Fake GPU', uuid: 'GPU-fake' } });

describe.skipIf(NO_NVCC)("the judge's cutoff rule", () => {
  it("median_noise's lower bound (kd_buffers.h) is the lower bound of the engine's medianCI, for every sample count the judge checks at", async () => {
    const exe = await buildHarnessHostProgram(root, 'ci', `#include "kd_buffers.h"
#include <cstdio>
int main(int argc, char** argv) {
  std::vector<double> v;
  for (int i = 1; i < argc; i++) v.push_back(atof(argv[i]));
  double med = 0, low = 0;
  median_noise(v, &med, &low);
  printf("%.17g %.17g\\n", low, med);
  return 0;
}
`);
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const n of [10, 15, 20, 35, 100, 501]) {
      const xs = Array.from({ length: n }, () => 1 + rand() * (rand() < 0.1 ? 5 : 0.05));
      const r = await runProcess(exe, xs.map((x) => x.toPrecision(17)), { timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(0);
      const [low, med] = r.stdout.trim().split(' ').map(Number);
      const ci = medianCI(xs);
      expect(low, `n ${n}`).toBe(ci.low);
      expect(med, `n ${n}`).toBeCloseTo(ci.median, 12);
      expect(low).toBeLessThan(med);
    }
  }, 180_000);
});

describe('the cutoff in the loop', () => {
  it('is a multiple of the best measured on a GPU; none before a best, from a replay, or when off', () => {
    expect(timingCutoffMs(null, 3)).toBeUndefined();
    expect(timingCutoffMs({ medianMs: 2, result: gpuResult(2) }, 3)).toBe(6);
    expect(timingCutoffMs({ medianMs: 2, result: gpuResult(2) }, 0)).toBeUndefined();
    expect(timingCutoffMs({ medianMs: 2, result: gpuResult(2) }, undefined)).toBeUndefined();
    expect(timingCutoffMs({ medianMs: 2, result: { ...gpuResult(2), source: { kind: 'replay', recording: 'r.json' } } }, 3)).toBeUndefined();
    // A timing stopped at its cutoff is decided by the medians at 5% (the duel's band is 1%), unless --duel-skip says otherwise.
    expect(duelSkipFor(gpuResult(9, { cutoffMs: 6 }), undefined)).toBe(0.05);
    expect(duelSkipFor(gpuResult(9, { cutoffMs: 6 }), 0.2)).toBe(0.2);
    expect(duelSkipFor(gpuResult(9), undefined)).toBeUndefined();
  });

  /** A GPU-like measurer: each configuration's time from a hash of it (a fifth of them 10-40x slower); stops at a cutoff as the judge does. */
  function fakeGpu(): Measurer & { asked: Array<{ cutoffMs?: number; bestBefore: number | null; ms: number; config: string }>; duelsOf: string[] } {
    let best: number | null = null;
    const msOf = (spec: MeasuredSpec): number => {
      let h = 2166136261;
      for (const c of JSON.stringify(spec.config)) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
      const slow = h % 5 === 0 ? 10 + (h % 31) : 1;
      return (1 + (h % 1000) / 1000) * slow;
    };
    const m = {
      task, compileOnly: false, asked: [] as Array<{ cutoffMs?: number; bestBefore: number | null; ms: number; config: string }>, duelsOf: [] as string[],
      evaluate(spec: MeasuredSpec, o: EvaluateOptions = {}): Promise<EvalResult> {
        const ms = msOf(spec);
        m.asked.push({ ...(o.cutoffMs !== undefined ? { cutoffMs: o.cutoffMs } : {}), bestBefore: best, ms, config: JSON.stringify(spec.config) });
        best = best === null ? ms : Math.min(best, ms);
        const cut = o.cutoffMs !== undefined && ms * 0.99 > o.cutoffMs;
        return Promise.resolve(gpuResult(ms, cut ? { cutoffMs: o.cutoffMs, converged: false } : {}));
      },
      duel(a: MeasuredSpec, b: MeasuredSpec): Promise<{ duels?: DuelResult[] }> {
        m.duelsOf.push(JSON.stringify(a.config));
        const ta = msOf(a);
        const tb = msOf(b);
        return Promise.resolve({ duels: [{ size: 0, aMs: [ta], bMs: [tb], ratio: tb / ta, ratioLow: (tb / ta) * 0.99, ratioHigh: (tb / ta) * 1.01, verdict: tb / ta > 1.01 ? 'faster' : tb / ta < 0.99 ? 'slower' : 'same', timer: 'events', pairs: 1 }] });
      },
    };
    return m;
  }

  let no = 0;
  const run = async (timeCutoff: number | undefined) => {
    const session = createSession(join(root, 'sessions'), {
      id: `s${++no}`, task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: 'test',
    });
    const m = fakeGpu();
    const strategy = contrastiveSearch(new ActionSpace(task), 3);
    const skipped: string[] = [];
    const orig = strategy.observeDuelSkipped!.bind(strategy);
    strategy.observeDuelSkipped = (a, b) => {
      skipped.push(JSON.stringify(a.config));
      orig(a, b);
    };
    const { evaluated } = await runLoop({ session, evaluator: m, strategy, budget: 40, lookahead: 1, ...(timeCutoff !== undefined ? { timeCutoff } : {}) });
    session.close();
    return { m, evaluated, skipped, session };
  };

  it('asks every timing after the first for a cutoff at 3x the best so far; a variant stopped there does not duel, the strategy is told', async () => {
    const { m, evaluated, skipped } = await run(3);
    expect(evaluated).toBe(40);
    expect(m.asked[0].cutoffMs).toBeUndefined(); // the baseline: no best yet, no cutoff
    for (const a of m.asked.slice(1)) expect(a.cutoffMs).toBeCloseTo(3 * a.bestBefore!, 12);
    const cut = m.asked.filter((a) => a.cutoffMs !== undefined && a.ms * 0.99 > a.cutoffMs);
    expect(cut.length).toBeGreaterThan(3); // the space has slow variants to cut
    // Every variant stopped at its cutoff was left out of the duels, and the strategy was told of each.
    expect(skipped.length).toBeGreaterThanOrEqual(cut.length);
    expect(m.duelsOf.length).toBeGreaterThan(0);
    for (const c of cut) expect(m.duelsOf, c.config).not.toContain(c.config);
    expect(m.duelsOf.length + skipped.length).toBeLessThanOrEqual(40);
  });

  it('off (the loop\'s default): no cutoff reaches the measurer and every timed variant may duel', async () => {
    const { m, skipped } = await run(undefined);
    expect(m.asked.every((a) => a.cutoffMs === undefined)).toBe(true);
    expect(skipped).toHaveLength(0);
    const zero = await run(0);
    expect(zero.m.asked.every((a) => a.cutoffMs === undefined)).toBe(true);
  });
});

describe('the run resolves --time-cutoff once (prepareRun): given, recorded in the session and handed to the loop', () => {
  const home = mkdtempSync(join(tmpdir(), 'kd-cutoff-run-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  it('a given value is kept, 0 included; compile-only with none given has none (nothing is timed on a GPU)', async () => {
    const { prepareRun } = await import('../main/core/run/prepare.js');
    const { runSettingsOf } = await import('../main/engine/session/run-settings.js');
    const prepared = async (timeCutoff: number | undefined) => {
      const run = await prepareRun({ task: 'softmax', strategy: 'random', budget: 1, seed: 1, sessionsRoot: join(home, 'sessions'), backend: { kind: 'gpu', noGpu: true, ...(timeCutoff !== undefined ? { timeCutoff } : {}) } });
      const stored = runSettingsOf(run.session.meta).backend;
      run.session.close();
      return { loop: run.timeCutoff, stored: stored?.kind === 'gpu' ? stored.timeCutoff : 'not a gpu backend' };
    };
    expect(await prepared(5)).toEqual({ loop: 5, stored: 5 });
    expect(await prepared(0)).toEqual({ loop: 0, stored: 0 });
    expect(await prepared(undefined)).toEqual({ loop: undefined, stored: undefined });
  }, 120_000);
});
