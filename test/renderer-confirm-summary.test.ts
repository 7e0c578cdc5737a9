// The Export view's confirmation table and notes (renderer/src/confirm-summary.ts) from hand-written
// FIXTURE confirmations: rows baseline first with the precise intervals and the speedups' bounds, a
// failed variant with its reason, the notes on the confirmed best and a changed ranking, and why a
// session cannot be confirmed.
import { describe, expect, it } from 'vitest';
import type { ConfirmDTO, ConfirmLineDTO } from '../main/contract/api.js';
import { confirmBlocked, confirmNotes, confirmRows } from '../renderer/src/confirm-summary.js';

const line = (id: string, over: Partial<ConfirmLineDTO> = {}): ConfirmLineDTO => ({
  variantId: id, origin: 'contrastive', searchMs: 0.25, ms: 0.25, ciLowMs: 0.2499, ciHighMs: 0.2501, placementSd: null, speedup: null, speedupLow: null, speedupHigh: null,
  failure: null, at: '2026-12-05T07:00:00.000Z', gpu: 'NVIDIA H200', samples: 9000, contexts: 4, bufferSets: 16, ...over,
});

const fixture = (): ConfirmDTO => ({
  timing: 'precise',
  baseline: line('v0', { origin: 'baseline', searchMs: 0.5, ms: 0.5, ciLowMs: 0.4995, ciHighMs: 0.5005 }),
  variants: [
    line('v7', { searchMs: 0.2510, ms: 0.2490, ciLowMs: 0.2489, ciHighMs: 0.2491, placementSd: 0.0031, speedup: 0.5 / 0.249, speedupLow: 0.4995 / 0.2491, speedupHigh: 0.5005 / 0.2489 }),
    line('v3', { searchMs: 0.2500, ms: 0.2504, ciLowMs: 0.2503, ciHighMs: 0.2505, speedup: 0.5 / 0.2504, speedupLow: 0.4995 / 0.2505, speedupHigh: 0.5005 / 0.2503 }),
    line('v9', { searchMs: 0.26, ms: null, ciLowMs: null, ciHighMs: null, failure: 'correctness: size 1: 3 elements differ' }),
  ],
  bestId: 'v7',
  searchBestId: 'v3',
  tiedWithBest: [],
  tieDuels: [],
  reproducibility: 0.005,
});

describe('confirmRows', () => {
  it('puts the baseline first, then the variants as confirmed, with intervals, bounds and failures', () => {
    const rows = confirmRows(fixture());
    expect(rows.map((r) => r.variantId)).toEqual(['v0', 'v7', 'v3', 'v9']);
    expect(rows[0]).toMatchObject({ search: '500.00 µs', precise: '500.00 µs ±0.10%', speedup: '1.000× (baseline)', failed: false });
    expect(rows[1]).toMatchObject({ search: '251.00 µs', precise: '249.00 µs ±0.04% · placements\' sd 0.31%', speedup: '2.008× (2.005–2.011)' });
    expect(rows[3]).toMatchObject({ precise: 'FAILED: correctness: size 1: 3 elements differ', speedup: '-', failed: true });
  });
});

describe('confirmNotes', () => {
  it('names the confirmed best with how it was timed, and a ranking that changed', () => {
    const n = confirmNotes(fixture());
    expect(n[0]).toBe('Confirmed best: v7, 2.008× the baseline (precise timing on NVIDIA H200, 9000 samples over 16 placements in 4 executors; 2026-12-05T07:00:00.000Z).');
    expect(n[1]).toBe('The search ranked v3 first; the precise timing ranks v7 first, so "Best variant" exports v7.');
    expect(n).toHaveLength(2);
    // 0.2490 and 0.2495 ms (0.2% apart): tied within what fresh precise timings reproduce.
    expect(confirmNotes({ ...fixture(), tiedWithBest: ['v3'] })[2]).toBe('v3 is within 0.50% of v7: separate precise timings of these variants spread that much (their buffer placements), so it is tied with it (a duel tells them apart).');
  });

  it('gives the duel of the best against a tied variant, the faster side named', () => {
    const duel = { variantId: 'v3', ratio: 0.997, ratioLow: 0.9965, ratioHigh: 0.9975, pairsLow: 0.9966, pairsHigh: 0.9974, verdict: 'slower' as const, pairs: 400, at: '2026-12-05T07:01:00.000Z' };
    const n = confirmNotes({ ...fixture(), tiedWithBest: ['v3'], tieDuels: [duel] });
    expect(n[2]).toBe('v3 is within 0.50% of v7: separate precise timings of these variants spread that much (their buffer placements), so it is tied with it.');
    expect(n[3]).toBe("Duel of v7 against v3 (400 interleaved pairs in one process): v3 is faster by 0.30%: v7's speed over v3's 0.9970× (95% interval 0.9965–0.9975 over the pairs and the buffer placements; the pairs alone 0.9966–0.9974).");
    // Within the duel's "same" band, the interval still names the faster side; the placements' sd in it.
    expect(confirmNotes({ ...fixture(), tiedWithBest: ['v3'], tieDuels: [{ ...duel, ratio: 1.002, ratioLow: 1.001, ratioHigh: 1.003, verdict: 'same', setRelSd: 0.0004 }] })[3]).toBe('Duel of v7 against v3 (400 interleaved pairs in one process): v7 is faster by 0.20%, within the duel\'s ±1% "same" band: v7\'s speed over v3\'s 1.0020× (95% interval 1.0010–1.0030 over the pairs and the buffer placements, whose sd is 0.04%; the pairs alone 0.9966–0.9974).');
    expect(confirmNotes({ ...fixture(), tiedWithBest: ['v3'], tieDuels: [{ ...duel, ratio: 1.0001, ratioLow: 0.9996, ratioHigh: 1.0006, verdict: 'same' }] })[3]).toBe("Duel of v7 against v3 (400 interleaved pairs in one process): not told apart: v7's speed over v3's 1.0001× (95% interval 0.9996–1.0006 over the pairs and the buffer placements; the pairs alone 0.9966–0.9974).");
  });

  it('says when the baseline failed and nothing was confirmed', () => {
    const c = { ...fixture(), baseline: line('v0', { origin: 'baseline', ms: null, failure: 'runtime: an illegal memory access' }), variants: [], bestId: null, searchBestId: null };
    expect(confirmNotes(c)).toEqual(["The baseline's confirmation failed (runtime: an illegal memory access): no speedup is confirmed.", 'No variant was confirmed with a time.']);
  });
});

describe('confirmBlocked', () => {
  const gpuSession = { replay: null, gpu: { name: 'NVIDIA H200', arch: 'sm_90' }, python: null, run: null, bestId: 'v3' };
  it('allows a finished GPU session, and says why the others cannot be confirmed', () => {
    expect(confirmBlocked(gpuSession)).toBeNull();
    expect(confirmBlocked({ ...gpuSession, replay: { recording: '/r/axpy.json' } })).toMatch(/REPLAY session: its times come from \/r\/axpy\.json/);
    expect(confirmBlocked({ ...gpuSession, gpu: null })).toMatch(/compile-only/);
    expect(confirmBlocked({ ...gpuSession, bestId: null })).toMatch(/no variant was checked correct and timed/);
  });
});
