// The Compare view's ratio from a GPU duel carries the duel's interval over pairs and buffer
// placements (engine/measure/stats.ts intervalWithPlacements), flipped with the pair, and computed
// from setRelSd for duels journaled before duels carried it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { setsSession } from './fixtures/sets-session.js';
import { compareVariants, reverseDuel } from '../main/core/compare.js';
import { oneSetWords, placementsWords } from '../main/contract/confirm-words.js';
import type { DuelDTO, VariantDetail } from '../main/contract/api.js';
import type { DuelResult } from '../main/engine/base/types.js';
import type { SessionEvent } from '../main/engine/session/events.js';
import { intervalWithPlacements } from '../main/engine/measure/stats.js';

function detail(id: string, medianMs: number): VariantDetail {
  // Only what compareVariants reads: the id, the result's source and the row's median.
  return {
    variant: { id },
    result: { source: { kind: 'gpu', gpu: 'FIXTURE' } },
    row: { medianMs, ciLowMs: medianMs, ciHighMs: medianMs },
  } as unknown as VariantDetail;
}

// A FIXTURE shaped like the H100 twins' duel (bench/results/h100-gpu-tests-01d9021.log): the pairs
// put A 0.5% behind, the placements' sd 0.92%.
const twins: DuelResult = { size: 0, aMs: [0.33], bMs: [0.33], ratio: 0.9948, ratioLow: 0.9936, ratioHigh: 0.9954, verdict: 'same', timer: 'events', pairs: 1200, sets: 4, setRelSd: 0.0092 };

describe('compareVariants: the interval over pairs and placements', () => {
  it('comes with a GPU duel that has buffer sets, flipped when the pair is asked the other way round', () => {
    const w = intervalWithPlacements(twins.ratio, twins.ratioLow, twins.ratioHigh, twins.setRelSd);
    const stored: DuelResult = { ...twins, placementsLow: w.low, placementsHigh: w.high };
    const events: SessionEvent[] = [{ type: 'duel', a: 'v1', b: 'v2', result: stored }];
    const ab = compareVariants('s', detail('v1', 0.33), detail('v2', 0.33), events);
    expect(ab.ratio!.method).toBe('duel');
    expect(ab.ratio!.placements).toEqual({ low: w.low, high: w.high, setRelSd: 0.0092, sets: 4 });
    const ba = compareVariants('s', detail('v2', 0.33), detail('v1', 0.33), events);
    expect(ba.ratio!.low).toBeCloseTo(1 / twins.ratioHigh, 12);
    expect(ba.ratio!.placements!.low).toBeCloseTo(1 / w.high, 12);
    expect(ba.ratio!.placements!.high).toBeCloseTo(1 / w.low, 12);
    expect(reverseDuel(stored).placementsLow).toBeCloseTo(1 / w.high, 12);
  });

  it('is computed for a duel journaled without it, and absent for a duel without sets', () => {
    const events: SessionEvent[] = [{ type: 'duel', a: 'v1', b: 'v2', result: twins }];
    const ab = compareVariants('s', detail('v1', 0.33), detail('v2', 0.33), events);
    expect(ab.ratio!.placements!.low).toBeCloseTo(intervalWithPlacements(0.9948, 0.9936, 0.9954, 0.0092).low, 12);
    const noSets: DuelResult = { ...twins, sets: undefined, setRelSd: undefined };
    const plain = compareVariants('s', detail('v1', 0.33), detail('v2', 0.33), [{ type: 'duel', a: 'v1', b: 'v2', result: noSets }]);
    expect(plain.ratio!.placements).toBeUndefined();
  });
});

describe('compareVariants: a GPU duel on one buffer set a side', () => {
  it('says it met one placement of each side (and that a decided verdict can be the placements\'), not for a replayed duel or one over sets', () => {
    const one: DuelResult = { ...twins, sets: 1, setRelSd: undefined, ratio: 1.018, ratioLow: 1.016, ratioHigh: 1.02, verdict: 'faster' };
    const events: SessionEvent[] = [{ type: 'duel', a: 'v1', b: 'v2', result: one }];
    const ab = compareVariants('s', detail('v1', 0.33), detail('v2', 0.33), events);
    expect(ab.ratio!.oneSet).toBe(true);
    expect(ab.ratio!.placements).toBeUndefined();
    expect(compareVariants('s', detail('v2', 0.33), detail('v1', 0.33), events).ratio!.oneSet).toBe(true);
    expect(compareVariants('s', detail('v1', 0.33), detail('v2', 0.33), [{ type: 'duel', a: 'v1', b: 'v2', result: twins }]).ratio!.oneSet).toBeUndefined();
    const replay = (id: string): VariantDetail => ({ ...detail(id, 0.33), result: { source: { kind: 'replay', recording: 'r.json' } } }) as unknown as VariantDetail;
    expect(compareVariants('s', replay('v1'), replay('v2'), events).ratio!.oneSet).toBeUndefined();
    expect(oneSetWords('faster')).toMatch(/^one buffer set a side: .*this verdict can be the placements'/);
    expect(oneSetWords('slower')).toMatch(/this verdict can be the placements'/);
    expect(oneSetWords('same')).toBe('one buffer set a side: this duel timed each variant on one placement of its buffers, so its interval leaves the placements out');
  });
});

describe('placementsWords', () => {
  it('says when a faster or slower verdict could be the placements alone', () => {
    const p = { low: 0.99, high: 1.03, setRelSd: 0.009, sets: 4 };
    expect(placementsWords('faster', p)).toMatch(/^over the pairs and the buffer placements 0\.9900–1\.0300 \(95%; the placements' sd 0\.90% over 4 buffer sets.*: this interval holds 1, so the buffer placements alone could make this difference$/);
    expect(placementsWords('same', p)).not.toMatch(/holds 1/);
    expect(placementsWords('faster', { ...p, low: 1.005 })).not.toMatch(/holds 1/);
  });
});

/** The FIXTURE sets session served by a browser-mode service: its duels and its markdown report. */
async function servedSetsSession(o: { oneSetDuel?: boolean } = {}): Promise<{ duels: DuelDTO[]; md: string }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-placements-'));
  const service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home, KERNELDUEL_NO_GPU: '1' } });
  try {
    const { id } = setsSession({ home, root: path.resolve(import.meta.dirname, '..'), ...o });
    const duels = (await service.handlers()['sessions.get']({ id })).duels;
    const md = (await service.handlers()['export.report']({ sessionId: id, format: 'md' })).content;
    return { duels, md };
  } finally {
    await service.stopAll();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

describe('the session\'s duels and its run report', () => {
  it('carry the interval over pairs and placements, and mark a verdict the placements alone could explain (FIXTURE session)', async () => {
    const { duels: d, md } = await servedSetsSession();
    const w = intervalWithPlacements(1.012, 1.011, 1.013, 0.0075);
    expect(d).toHaveLength(1);
    expect(d[0].placements).toEqual({ low: w.low, high: w.high, setRelSd: 0.0075, sets: 4 });
    expect(md).toContain('| v2 | v1 | 1.012x | 1.011 – 1.013 | faster | 400 | 0.997 – 1.027 \\* |');
    expect(md).toContain('the interval over the pairs and the placements is given beside it');
  });
  it('say where a duel met one buffer set a side (FIXTURE session)', async () => {
    const { duels: d, md } = await servedSetsSession({ oneSetDuel: true });
    expect(d.map((x) => x.sets)).toEqual([4, 1]);
    expect(d[1].placements).toBeUndefined();
    expect(md).toContain('| v1 | v2 | 0.988x | 0.987 – 0.989 | slower | 300 | one set a side † |');
    expect(md).toContain('† a duel on one buffer set a side');
  });
});
