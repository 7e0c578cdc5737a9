// A session's final figure (`kernelduel confirm`): the baseline and the fastest variants measured
// again, journaled as confirm events, the report's speedups and ranking, the export's header and
// --best, and every session whose times cannot be measured again refused with its reason. The
// measurer here is a FIXTURE (hand-written results): the precise timing itself is the GPU-tested
// Evaluator of `kernelduel eval --precise`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession, openSession, openSessionReadOnly, type Session } from '../main/engine/session/store.js';
import { confirmCandidates, confirmReport, confirmSession } from '../main/engine/session/confirm.js';
import { exportVariant } from '../main/engine/export/cu.js';
import { confirmStoredSession } from '../main/core/confirm.js';
import { listSessions } from '../main/engine/session/list.js';
import { describeSession } from '../main/doors/cli/format.js';
import { describeConfirmReport } from '../main/doors/cli/confirm.js';
import type { MeasuredSpec } from '../main/engine/measure/measurer.js';
import type { DuelResult, EvalResult } from '../main/engine/base/types.js';
import { makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

let tmp: string;
let root: string;
let s: Session;
const SID = '20250102-030405-abcdef';

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-confirm-'));
  root = path.join(tmp, 'sessions');
  s = createSession(root, makeMeta(SID));
});
afterEach(() => {
  s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Baseline 0.5 ms; v2 0.25, v3 0.251 (within the search's noise of v2), v4 0.3, v5 0.4 by the search. */
function seed(): void {
  s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
  s.append({ type: 'result', variantId: 'v1', result: timedResult(0.5) });
  for (const [id, ms] of [['v2', 0.25], ['v3', 0.251], ['v4', 0.3], ['v5', 0.4]] as const) {
    s.append({ type: 'variant', variant: makeVariant(id, { config: { BLOCK: Number(id.slice(1)) * 100 } }) });
    s.append({ type: 'result', variantId: id, result: timedResult(ms) });
  }
}

/** A FIXTURE measurer: each variant's result by its BLOCK (the baseline has BLOCK 256 from makeVariant). */
function fixtureMeasurer(byBlock: Record<number, EvalResult>): { evaluate(spec: MeasuredSpec): Promise<EvalResult>; calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    evaluate: (spec) => {
      calls.push(spec.config.BLOCK);
      const r = byBlock[spec.config.BLOCK];
      if (!r) throw new Error(`no fixture for BLOCK ${spec.config.BLOCK}`);
      return Promise.resolve(r);
    },
  };
}

describe('confirmSession', () => {
  it('measures the baseline first, then the top variants by the search, and journals each', async () => {
    seed();
    expect(confirmCandidates(s, 2).variants.map((v) => v.id)).toEqual(['v2', 'v3']);
    const m = fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2504), 300: timedResult(0.2490), 400: timedResult(0.3) });
    const r = await confirmSession(s, m, { top: 3 });
    expect(m.calls).toEqual([256, 200, 300, 400]);
    expect(s.events().filter((e) => e.type === 'confirm').map((e) => (e.type === 'confirm' ? e.variantId : ''))).toEqual(['v1', 'v2', 'v3', 'v4']);
    // The search's own results are unchanged.
    expect(s.resultOf('v2')!.timing![0].medianMs).toBe(0.25);
    // Precise: v3 (0.2490) is faster than v2 (0.2504): the ranking changed.
    expect(r.bestId).toBe('v3');
    expect(r.searchBestId).toBe('v2');
    expect(r.variants.map((l) => l.variantId)).toEqual(['v3', 'v2', 'v4']);
    const v3 = r.variants[0];
    expect(v3.speedup).toBeCloseTo(0.5 / 0.249, 10);
    // The ratio's bounds come from the two intervals (the fixture's are ±1%), widened by what fresh processes spread.
    expect(v3.speedupLow).toBeCloseTo((0.5 * 0.99) / (0.249 * 1.01) / 1.005, 10);
    expect(v3.speedupHigh).toBeCloseTo(((0.5 * 1.01) / (0.249 * 0.99)) * 1.005, 10);
    expect(v3.searchMs).toBe(0.251);
    expect(r.baseline?.variantId).toBe('v1');
    // 0.2504 against 0.2490 is 0.56% apart: more than fresh precise timings spread, so not tied.
    expect(r.tiedWithBest).toEqual([]);
  });

  it('keeps a variant that fails its confirmation as failed, with the reason, and ranks the others', async () => {
    seed();
    const failed: EvalResult = { ...timedResult(0.2), check: { ok: false, checks: [], durationMs: 5 }, failure: { kind: 'correctness', reason: 'size 0: 12 of 1048576 elements differ\nmore' } };
    const r = await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: failed, 300: timedResult(0.26) }), { top: 2 });
    expect(r.bestId).toBe('v3');
    const v2 = r.variants.find((l) => l.variantId === 'v2')!;
    expect(v2.ms).toBeNull();
    expect(v2.speedup).toBeNull();
    expect(v2.failure).toBe('correctness: size 0: 12 of 1048576 elements differ');
    expect(r.variants.at(-1)!.variantId).toBe('v2'); // failed ones last
  });

  it('reads back from the journal on disk as it was (the schema and the samples encoding)', async () => {
    seed();
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.25) }), { top: 1 });
    s.close();
    const again = openSessionReadOnly(root, SID);
    const r = confirmReport(again)!;
    again.close();
    s = openSession(root, SID);
    expect(r.bestId).toBe('v2');
    expect(r.variants[0].speedup).toBeCloseTo(2, 12);
    expect(r.variants[0].result.timing![0].samplesMs).toEqual([0.25, 0.25, 0.25]);
  });

  it('variants within the precise timing\'s reproducibility of the best are tied with it', async () => {
    seed();
    const r = await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2495), 300: timedResult(0.2490), 400: timedResult(0.2503) }), { top: 3 });
    expect(r.bestId).toBe('v3');
    expect(r.tiedWithBest).toEqual(['v2']); // 0.20% apart; v4 at 0.52% is not
  });

  /** A FIXTURE duel: A's speed over B's as given by BLOCK pair, with a CI of ±0.05%. */
  function fixtureDuel(ratioOf: (a: number, b: number) => number | Error) {
    const duels: Array<[number, number]> = [];
    return {
      duels,
      duel: (a: MeasuredSpec, b: MeasuredSpec) => {
        duels.push([a.config.BLOCK, b.config.BLOCK]);
        const ratio = ratioOf(a.config.BLOCK, b.config.BLOCK);
        if (ratio instanceof Error) return Promise.resolve({ failure: { kind: 'runtime' as const, reason: ratio.message } });
        const verdict = ratio > 1.001 ? ('faster' as const) : ratio < 0.999 ? ('slower' as const) : ('same' as const);
        return Promise.resolve({ duels: [{ size: 0, aMs: [0.25, 0.25], bMs: [0.25, 0.25], ratio, ratioLow: ratio * 0.9995, ratioHigh: ratio * 1.0005, verdict, timer: 'events' as const, pairs: 40 }] });
      },
    };
  }

  it('duels the best against each variant tied with it, journals the duels, and reports them as the best\'s speed over the other\'s', async () => {
    seed();
    // v3 best at 0.2490; v2 (0.2495) and v4 (0.2497) tied with it; in the duel v2 is 0.3% faster than v3, v4 the same.
    const d = fixtureDuel((a, b) => (a === 300 && b === 200 ? 1 / 1.003 : 1.0002));
    const m = { ...fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2495), 300: timedResult(0.2490), 400: timedResult(0.2497) }), duel: d.duel };
    const seen: string[] = [];
    const r = await confirmSession(s, m, { top: 3, onTieDuel: (b, t, i, n) => seen.push(`${b.id}-${t.id} ${i}/${n}`) });
    expect(r.bestId).toBe('v3');
    expect(r.tiedWithBest).toEqual(['v2', 'v4']);
    expect(d.duels).toEqual([[300, 200], [300, 400]]); // the best is always A
    expect(seen).toEqual(['v3-v2 1/2', 'v3-v4 2/2']);
    expect(s.events().filter((e) => e.type === 'duel').map((e) => e.type === 'duel' && `${e.a}-${e.b}`)).toEqual(['v3-v2', 'v3-v4']);
    // Both within the duel's ±1% band; the interval still puts v2 ahead (the words below).
    expect(r.tieDuels.map((x) => [x.variantId, x.verdict])).toEqual([['v2', 'same'], ['v4', 'same']]);
    expect(r.tieDuels[0].ratio).toBeCloseTo(1 / 1.003, 12);
    // The CLI's lines: the duel's verdict under the tie, and nothing left to duel by hand.
    const lines = describeConfirmReport(r, SID);
    expect(lines.find((l) => l.startsWith("  duel v3 against v2"))).toBe(`  duel v3 against v2 (40 interleaved pairs in one process): v2 is faster by 0.30%, within the duel's ±1% "same" band: v3's speed over v2's 0.9970× (95% interval 0.9965–0.9975 over the pairs and the buffer placements; the pairs alone 0.9965–0.9975); export --best takes v3, the faster by separate precise timings: kernelduel export ${SID} --variant v2 -o <file>.cu if that fraction matters`);
    expect(lines).toContain("  duel v3 against v4 (40 interleaved pairs in one process): not told apart: v3's speed over v4's 1.0002× (95% interval 0.9997–1.0007 over the pairs and the buffer placements; the pairs alone 0.9997–1.0007)");
    expect(lines.some((l) => l.includes('not duelled'))).toBe(false);
    // Read back from the journal on disk, the same report.
    s.close();
    const again = openSessionReadOnly(root, SID);
    expect(confirmReport(again)!.tieDuels).toEqual(r.tieDuels);
    again.close();
    s = openSession(root, SID);
  });

  it('reads a tie duel journaled the other way round as the best\'s speed, ignores duels from before the confirmation, and notes a failed duel', async () => {
    seed();
    // A search duel of the same pair before the confirmation: not the confirmation's.
    s.append({ type: 'duel', a: 'v3', b: 'v4', result: { size: 0, aMs: [1], bMs: [1], ratio: 2, ratioLow: 1.9, ratioHigh: 2.1, verdict: 'faster', timer: 'events', pairs: 3 } });
    const m = { ...fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2495), 300: timedResult(0.2490), 400: timedResult(0.2497) }), ...fixtureDuel((_a, b) => (b === 400 ? new Error('B: an illegal memory access') : 1.0002)) };
    let r = await confirmSession(s, m, { top: 3 });
    expect(r.tieDuels.map((x) => x.variantId)).toEqual(['v2']); // v4's duel failed, and the search's duel of v3 and v4 is not the confirmation's
    expect(r.tieDuels[0].pairs).toBe(40);
    expect(s.events().filter((e) => e.type === 'note').map((e) => e.type === 'note' && e.message)).toEqual(["the confirmation's duel of v3 against v4 (tied with it) failed: runtime: B: an illegal memory access"]);
    // A duel journaled as (tied, best) reads inverted: v4 1.002x faster than v3 -> v3 at 1/1.002 of v4's speed.
    s.append({ type: 'duel', a: 'v4', b: 'v3', result: { size: 0, aMs: [1], bMs: [1], ratio: 1.002, ratioLow: 1.001, ratioHigh: 1.003, verdict: 'faster', timer: 'events', pairs: 50 } });
    r = confirmReport(s)!;
    const v4 = r.tieDuels.find((x) => x.variantId === 'v4')!;
    expect(v4.verdict).toBe('same'); // 0.998× with its interval inside the ±1% band
    expect(v4.ratio).toBeCloseTo(1 / 1.002, 12);
    expect(v4.ratioLow).toBeCloseTo(1 / 1.003, 12);
    expect(v4.ratioHigh).toBeCloseTo(1 / 1.001, 12);
  });

  it('widens the tie by the placements\' spread of the confirmed timings, and a tie duel\'s interval by the duel\'s', async () => {
    seed();
    // Precise timings whose 16 placements' medians run ±1.2% apart (sd of their mean 0.31%), as one
    // softmax configuration on an H100: 0.45% apart is then within what separate timings reproduce.
    const placed = (ms: number): EvalResult => {
      const r = timedResult(ms);
      r.timing![0] = { ...r.timing![0], bufferSets: 16, perSetMedianMs: Array.from({ length: 16 }, (_, k) => ms * (1 + (k % 2 ? 0.012 : -0.012))), setRelSd: 0.0031 };
      return r;
    };
    // The same configuration under two ids, duelled: 0.9948× with the pairs' interval 0.9936–0.9954 and the placements' sd 0.92% (H100, 2026-12-05).
    const m = {
      ...fixtureMeasurer({ 256: timedResult(0.5), 200: placed(0.3314), 300: placed(0.3299) }),
      duel: () => Promise.resolve({ duels: [{ size: 0, aMs: [0.33], bMs: [0.33], ratio: 0.9948, ratioLow: 0.9936, ratioHigh: 0.9954, verdict: 'same' as const, timer: 'events' as const, pairs: 1092, sets: 4, setRelSd: 0.00919 }] }),
    };
    const r = await confirmSession(s, m, { top: 2 });
    expect(r.bestId).toBe('v3');
    expect(r.reproducibility).toBeCloseTo(1.96 * Math.hypot(0.0031, 0.0031), 12); // 0.86%, above the 0.5% floor
    expect(r.tiedWithBest).toEqual(['v2']);
    const v3 = r.variants[0];
    expect(v3.speedupLow).toBeCloseTo((0.5 * 0.99) / (0.3299 * 1.01) / (1 + 1.96 * 0.0031), 10); // the baseline has no placements
    const d = r.tieDuels[0];
    expect([d.pairsLow, d.pairsHigh]).toEqual([0.9936, 0.9954]);
    expect(d.ratioLow).toBeLessThan(0.98);
    expect(d.ratioHigh).toBeGreaterThan(1.01);
    expect(d.verdict).toBe('unsure'); // not 'same': the placements alone may put either 1.8% ahead
    expect(describeConfirmReport(r, SID).find((l) => l.startsWith('v3 '))).toMatch(/329\.90 µs ±1\.00%, placements' sd 0\.31%\s+1\.516×/);
    expect(describeConfirmReport(r, SID)).toContain("  duel v3 against v2 (1092 interleaved pairs in one process): not told apart: v3's speed over v2's 0.9948× (95% interval 0.9770–1.0129 over the pairs and the buffer placements, whose sd is 0.92%; the pairs alone 0.9936–0.9954)");
  });

  it('does not duel when asked not to, or when the measurer cannot duel', async () => {
    seed();
    const d = fixtureDuel(() => 1);
    const results = { 256: timedResult(0.5), 200: timedResult(0.2495), 300: timedResult(0.2490), 400: timedResult(0.2497) };
    let r = await confirmSession(s, { ...fixtureMeasurer(results), duel: d.duel }, { top: 3, duelTies: false });
    expect(d.duels).toEqual([]);
    expect(r.tieDuels).toEqual([]);
    r = await confirmSession(s, fixtureMeasurer(results), { top: 3 });
    expect(r.tiedWithBest).toEqual(['v2', 'v4']);
    expect(r.tieDuels).toEqual([]);
  });

  it('reports the latest confirmation, never mixing two; one stopped after its baseline leaves the one before shown', async () => {
    seed();
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.25), 300: timedResult(0.26) }), { top: 2 });
    await new Promise((r) => setTimeout(r, 5)); // another confirmation: another start time
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.4), 200: timedResult(0.25) }), { top: 1 });
    let r = confirmReport(s)!;
    // The second's baseline (0.4) against its own v2; v3 (only in the first) is not compared with it.
    expect(r.variants.map((l) => l.variantId)).toEqual(['v2']);
    expect(r.variants[0].speedup).toBeCloseTo(1.6, 12);
    // A third stopped after its baseline (Ctrl-C): the second stays the report.
    await new Promise((r) => setTimeout(r, 5));
    const ac = new AbortController();
    let calls = 0;
    const stoppedAfterBaseline = { evaluate: () => { if (++calls === 2) ac.abort(); return Promise.resolve(timedResult(0.3)); } };
    await confirmSession(s, stoppedAfterBaseline, { top: 1, signal: ac.signal });
    expect(s.events().filter((e) => e.type === 'confirm')).toHaveLength(6); // 3 + 2 + the third's baseline
    r = confirmReport(s)!;
    expect(r.baseline!.ms).toBe(0.4);
    expect(r.variants[0].speedup).toBeCloseTo(1.6, 12);
  });

  it('refuses a session with nothing timed, and a bad top', async () => {
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    await expect(confirmSession(s, fixtureMeasurer({}), {})).rejects.toThrow(/no variant that was checked correct and timed: nothing to confirm/);
    expect(() => confirmCandidates(s, 0)).toThrow(/top must be a whole number/);
    expect(confirmReport(s)).toBeNull();
  });
});

describe('the session listing after a confirmation', () => {
  it('shows the confirmed best and its precise speedup, from summary.json and from the journal alone', async () => {
    seed();
    expect(listSessions(root)[0].confirmed).toBeUndefined();
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2504), 300: timedResult(0.2490) }), { top: 2 });
    const listed = listSessions(root)[0];
    expect(listed.confirmed).toEqual({ variantId: 'v3', speedup: 0.5 / 0.249 });
    expect(describeSession(listed)).toContain('confirmed v3 2.008× (precise)');
    fs.rmSync(path.join(root, SID, 'summary.json'));
    expect(listSessions(root)[0].confirmed).toEqual({ variantId: 'v3', speedup: 0.5 / 0.249 });
  });
});

describe('export after a confirmation', () => {
  it('--best takes the fastest confirmed variant and the header carries the confirmed figure', async () => {
    seed();
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2504), 300: timedResult(0.2490) }), { top: 2 });
    const out = path.join(tmp, 'best.cu');
    const res = exportVariant(s, 'best', out);
    expect(res.variantId).toBe('v3');
    expect(res.chosenBy).toBe('confirmed');
    expect(res.confirmedSpeedup).toBeCloseTo(0.5 / 0.249, 10);
    const header = fs.readFileSync(out, 'utf8').split('*/')[0];
    expect(header).toMatch(/Confirmed:\s+0\.2490 ms median \(precise timing: 3 samples over 1 placement in 1 executor, \+\/-1\.00%\) at \d{4}-.*; 2\.008x vs the baseline's confirmed 0\.5000 ms \(1\.958-2\.059x\)/);
  });

  it('the header names the variants tied with the confirmed best and what their duels found, on both sides', async () => {
    seed();
    // v3 best (0.2490), v2 tied (0.2495); the duel puts v2 ahead by 0.3%.
    const duel = (): Promise<{ duels: DuelResult[] }> => Promise.resolve({ duels: [{ size: 0, aMs: [0.25], bMs: [0.25], ratio: 1 / 1.003, ratioLow: 0.9965, ratioHigh: 0.9975, verdict: 'same', timer: 'events', pairs: 40 }] });
    await confirmSession(s, { ...fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.2495), 300: timedResult(0.2490), 400: timedResult(0.3) }), duel }, { top: 3 });
    exportVariant(s, 'best', path.join(tmp, 'best.cu'));
    expect(fs.readFileSync(path.join(tmp, 'best.cu'), 'utf8').split('*/')[0]).toMatch(/Tied:\s+v2 within 0\.50% by separate precise timings; duel v3 vs v2: v2 faster by 0\.30% \(speed ratio 0\.9970x, 95% 0\.9965-0\.9975 over pairs and placements, 40 interleaved pairs\)/);
    exportVariant(s, 'v2', path.join(tmp, 'v2.cu'));
    expect(fs.readFileSync(path.join(tmp, 'v2.cu'), 'utf8').split('*/')[0]).toMatch(/Tied:\s+with the confirmed best v3, within 0\.50% by separate precise timings; duel v3 vs v2: v2 faster by 0\.30%/);
    exportVariant(s, 'v4', path.join(tmp, 'v4.cu'));
    expect(fs.readFileSync(path.join(tmp, 'v4.cu'), 'utf8')).not.toContain('Tied:');
  });

  it('says a variant was not confirmed, and how to confirm an unconfirmed session', async () => {
    seed();
    exportVariant(s, 'best', path.join(tmp, 'a.cu'));
    expect(fs.readFileSync(path.join(tmp, 'a.cu'), 'utf8')).toMatch(new RegExp(`Confirmed:\\s+no \\(kernelduel confirm ${SID} measures`));
    await confirmSession(s, fixtureMeasurer({ 256: timedResult(0.5), 200: timedResult(0.25) }), { top: 1 });
    const res = exportVariant(s, 'v5', path.join(tmp, 'b.cu'));
    expect(res.confirmedSpeedup).toBeNull();
    expect(fs.readFileSync(path.join(tmp, 'b.cu'), 'utf8')).toMatch(/Confirmed:\s+no \(the session's confirmation did not include this variant\)/);
  });
});

describe('confirmStoredSession refuses what cannot be measured again', () => {
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, KERNELDUEL_HOME: tmp, KERNELDUEL_NO_GPU: '1' });

  it('a REPLAY session', async () => {
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(0.5, { source: { kind: 'replay', recording: '/spaces/saxpy.json' } }) });
    await expect(confirmStoredSession({ session: SID, env: env() })).rejects.toThrow(/is a REPLAY of \/spaces\/saxpy\.json: its times come from that recording/);
  });

  it('a compile-only session', async () => {
    s.close();
    s = createSession(root, makeMeta('20250102-030405-000000', { gpu: null }));
    await expect(confirmStoredSession({ session: '20250102-030405-000000', env: env() })).rejects.toThrow(/was compile-only \(no GPU measured it\): there is no time to confirm/);
  });

  it('a session whose task folder is gone', async () => {
    await expect(confirmStoredSession({ session: SID, env: env() })).rejects.toThrow(/task folder \/tasks\/saxpy does not load/);
  });

  it('no GPU of the session\'s model here, naming the model', async () => {
    // The built-in axpy task, so the task loads; no GPU (KERNELDUEL_NO_GPU).
    s.close();
    const { resolveTask } = await import('../main/engine/task/resolve.js');
    const t = resolveTask('axpy');
    s = createSession(root, makeMeta('20250102-030405-111111', { task: { name: t.manifest.name, dir: t.dir, manifestHash: t.hash } }));
    await expect(confirmStoredSession({ session: '20250102-030405-111111', env: env() })).rejects.toThrow(/no usable NVIDIA GPU here: session 20250102-030405-111111 was measured on NVIDIA GeForce RTX 4090/);
  });

  it('a bad top and an unknown session', async () => {
    await expect(confirmStoredSession({ session: SID, top: 0, env: env() })).rejects.toThrow(/top must be a whole number from 1 to 50/);
    await expect(confirmStoredSession({ session: '20990101-000000-ffffff', env: env() })).rejects.toThrow(/20990101-000000-ffffff/);
  });
});
