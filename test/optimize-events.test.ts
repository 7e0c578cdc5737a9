// bench/lib/optimize-events.ts reads what `kernelduel optimize --json` writes: checked here against
// the CLI itself, on a REPLAYED space (no GPU: the figures come from bench/spaces/h200/softmax.json),
// so a change of the CLI's line format shows up here and not as an empty column after a GPU run
// (which is how it was found: bench/results/h200-measure-truth-a5e4f15.json has best: null).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bestOf, breakdown, breakdownOf, breakdownWords, perEvaluation, type EventLine, type StageMark } from '../bench/lib/optimize-events.js';
import { CLI_ARGV } from './fixtures/cli.js';

const REPO = join(import.meta.dirname, '..');

describe('optimize --json event lines', () => {
  it('bestOf finds the best of a run and the best after each evaluation; breakdown has one interval per later result', () => {
    const home = mkdtempSync(join(tmpdir(), 'kd-events-'));
    try {
      const out = execFileSync(process.execPath, [...CLI_ARGV, 'optimize', 'softmax', '--replay', join(REPO, 'bench', 'spaces', 'h200', 'softmax.json'), '--json', '--budget', '12', '--strategy', 'contrastive', '--seed', '3'], {
        cwd: REPO, env: { ...process.env, KERNELDUEL_HOME: home, KERNELDUEL_NVIDIA_SMI: '/nonexistent' }, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000,
      });
      const lines: EventLine[] = out.split('\n').filter(Boolean).map((text, i) => ({ t: i * 10, text }));
      const results = lines.map((l) => JSON.parse(l.text) as { type: string; result?: { medianMs?: number; failure?: unknown }; bestMs?: number }).filter((e) => e.type === 'result');
      expect(results.length).toBeGreaterThanOrEqual(12);
      const timed = results.map((e) => (e.result && !e.result.failure ? e.result.medianMs : undefined)).filter((x): x is number => typeof x === 'number');
      const best = bestOf(lines);
      expect(best).not.toBeNull();
      expect(best!.medianMs).toBe(Math.min(...timed));
      expect(best!.medianMs).toBe(results[results.length - 1].bestMs); // what the CLI itself says
      expect(best!.byEvaluation).toHaveLength(results.length);
      for (let i = 1; i < best!.byEvaluation.length; i++) expect(best!.byEvaluation[i]!).toBeLessThanOrEqual(best!.byEvaluation[i - 1]!);
      expect(best!.byEvaluation[best!.evaluation - 1]).toBe(best!.medianMs);
      if (best!.evaluation > 1) expect(best!.byEvaluation[best!.evaluation - 2]).toBeGreaterThan(best!.medianMs);
      expect(breakdown(lines).perVariant.n).toBe(results.length - 1);
      const rows = perEvaluation(lines);
      expect(rows).toHaveLength(results.length);
      expect(rows.map((r) => r.medianMs)).toEqual(results.map((e) => (e.result && !e.result.failure && typeof e.result.medianMs === 'number' ? e.result.medianMs : null)));
      expect(Math.min(...rows.flatMap((r) => (r.medianMs === null ? [] : [r.medianMs])))).toBe(best!.medianMs);
      // A truncated result line counts as an evaluation that timed nothing.
      const cut = [...lines, { t: 99_999, text: '{"type":"result","variantId":"v99","result":{"med' }];
      expect(bestOf(cut)!.byEvaluation).toHaveLength(results.length + 1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 150_000);
  it('breakdownOf splits each interval between results into the duel after the first, the second\'s stages and the rest; breakdown of the same lines agrees', () => {
    const st = (queuedMs: number, captureMs: number, checkMs: number, timeMs: number) => ({ queuedMs, captureMs, checkMs, timeMs });
    const marks = [
      { t: 0, kind: 'result' as const, stages: st(0, 0, 0, 0) },
      { t: 300, kind: 'duel' as const },
      { t: 1000, kind: 'result' as const, stages: st(100, 50, 20, 200) }, // 1000 = 300 duel + 370 stages + 330 rest
      { t: 1500, kind: 'result' as const, stages: st(10, 40, 30, 300) }, // no duel: 500 = 380 + 120
    ];
    const b = breakdownOf(marks);
    expect(b.perVariant).toEqual({ median: 750, mean: 750, n: 2 });
    expect(b.duel.mean).toBe(150);
    expect(b.rest.mean).toBe((330 + 120) / 2);
    expect(b.time.mean).toBe(250);
    const lines: EventLine[] = marks.map((m) => ({ t: m.t, text: JSON.stringify(m.kind === 'duel' ? { type: 'duel' } : { type: 'result', result: { stages: m.stages } }) }));
    expect(breakdown(lines)).toEqual(b);
  });
  it('perEvaluation lists each result with its figure, samples, cutoff, failure, stages and the duel after it', () => {
    const lines: EventLine[] = [
      { t: 0, text: JSON.stringify({ type: 'result', variantId: 'v0', result: { medianMs: 69, samples: 10, cutoffMs: 0.36, stages: { timeMs: 2000 } } }) },
      { t: 2500, text: JSON.stringify({ type: 'result', variantId: 'v1', result: { medianMs: 0.12, samples: 90, stages: { timeMs: 900 } } }) },
      { t: 2800, text: JSON.stringify({ type: 'duel' }) },
      { t: 3000, text: JSON.stringify({ type: 'result', variantId: 'v2', result: { failure: { kind: 'correctness', reason: 'y[0]' }, medianMs: 0.1 } }) },
      { t: 3100, text: JSON.stringify({ type: 'result', variantId: 'v3', result: { medianMs: 0.2 } }) }, // an older bundle: no samples
      { t: 3200, text: '{"type":"result","variantId":"v4","result":{"med' },
    ];
    const rows = perEvaluation(lines);
    expect(rows.map((r) => [r.evaluation, r.variantId, r.medianMs, r.samples, r.failure, r.duelMs])).toEqual([
      [1, 'v0', 69, 10, null, null],
      [2, 'v1', 0.12, 90, null, 300],
      [3, 'v2', null, null, 'correctness', null],
      [4, 'v3', 0.2, null, null, null],
      [5, null, null, null, 'line cut short', null],
    ]);
    expect(rows[0].stages).toEqual({ timeMs: 2000 });
    expect(rows.map((r) => r.cutoffMs)).toEqual([0.36, null, null, null, null]); // a timing stopped at its cutoff (--time-cutoff)
  });
  it("the capture process's phases are kept apart from the interval (they may have run ahead): rest is unchanged by them", () => {
    const phases = (k: number) => ({ captureStartMs: 10 * k, captureContextMs: 150 * k, captureLockdownMs: 2, captureRuntimeCodeMs: 20, captureLoadMs: 3, captureBuffersMs: 1, captureCallsMs: 30, captureWriteMs: 1, captureExitMs: 40 });
    const marks = [
      { t: 0, kind: 'result' as const, stages: { queuedMs: 0, captureMs: 0, checkMs: 0, timeMs: 0 } },
      { t: 1000, kind: 'result' as const, stages: { queuedMs: 100, captureMs: 0, checkMs: 20, timeMs: 200, ...phases(1) } },
      { t: 1500, kind: 'result' as const, stages: { queuedMs: 10, captureMs: 40, checkMs: 30, timeMs: 300 } }, // an older bundle: no phases
      { t: 2500, kind: 'result' as const, stages: { queuedMs: 10, captureMs: 300, checkMs: 30, timeMs: 300, ...phases(3) } },
    ];
    const b = breakdownOf(marks);
    expect(b.rest.mean).toBe((680 + 120 + 360) / 3);
    expect(b.captureContextMs).toEqual({ median: 300, mean: 300, n: 2 });
    expect(b.captureStartMs.n).toBe(2);
  });
  it("the time stage's parts the judge reports (set-up, verifying) are counted where present and leave rest alone", () => {
    const marks: StageMark[] = [
      { t: 0, kind: 'result' as const, stages: { queuedMs: 0, captureMs: 0, checkMs: 0, timeMs: 0 } },
      { t: 1000, kind: 'result' as const, stages: { queuedMs: 0, captureMs: 0, checkMs: 20, timeMs: 900, timeSetupMs: 60, timeVerifyMs: 600 } },
      { t: 1500, kind: 'result' as const, stages: { queuedMs: 0, captureMs: 0, checkMs: 20, timeMs: 300 } }, // an older judge: no parts
      { t: 2000, kind: 'result' as const, stages: { queuedMs: 0, captureMs: 0, checkMs: 20, timeMs: 250, timeSetupMs: 50, timeVerifyMs: 20 } },
    ];
    const b = breakdownOf(marks);
    expect(b.timeVerify).toEqual({ median: 310, mean: 310, n: 2 });
    expect(b.timeSetup).toEqual({ median: 55, mean: 55, n: 2 });
    expect(b.rest.mean).toBe((80 + 180 + 230) / 3);
  });

  it("the check's executor, the time stage's wait for spares and a duel's parts, from the event lines, where the judge reports them", () => {
    const line = (t: number, o: object): { t: number; text: string } => ({ t, text: JSON.stringify(o) });
    const result = (extra: object) => ({ type: 'result', result: { medianMs: 1, stages: { queuedMs: 0, captureMs: 0, checkMs: 180, timeMs: 300, ...extra } } });
    const b = breakdown([
      line(0, result({})),
      line(400, { type: 'duel', result: { ratio: 1, setupMs: 70, timedMs: 200, verifyMs: 20, start: { a: 'idle', b: 'spare-starting', executorsMs: 150, sparesWaitMs: 5 } } }),
      line(1000, result({ checkExecMs: 160, timeSparesWaitMs: 3 })),
      line(1400, { type: 'duel', result: { ratio: 1 } }), // an older judge: no start
      line(2000, result({ checkExecMs: 2, timeSparesWaitMs: 1 })),
      line(2400, { type: 'duel', result: { ratio: 1, start: { a: 'idle', b: 'idle', executorsMs: 1, sparesWaitMs: 0 } } }),
      line(3000, result({})),
    ]);
    expect(b.checkExec).toEqual({ median: 81, mean: 81, n: 2 });
    expect(b.timeSparesWait).toEqual({ median: 2, mean: 2, n: 2 });
    expect(b.duelExecutors).toEqual({ median: 75.5, mean: 75.5, n: 2 });
    expect(b.duelSparesWait).toEqual({ median: 2.5, mean: 2.5, n: 2 });
    expect(b.duel.n).toBe(3);
    expect(b.duelSetup).toEqual({ median: 70, mean: 70, n: 1 });
    expect(b.duelTimed).toEqual({ median: 200, mean: 200, n: 1 });
    expect(b.duelVerify).toEqual({ median: 20, mean: 20, n: 1 });
    expect(breakdownWords(b)).toBe('per variant 1000, duel 400 (executors 76, spares wait 3, set-up 70, pairs 200, verifying 20), check 180 (executor 81), time 300 (spares wait 2), rest 120 ms (medians)');
    expect(breakdownWords({})).toBe('no stages reported');
  });
});
