// bench/lib/self-duel-calibration.ts: how often a self duel's interval misses 1, over its pairs and
// over its pairs and placements, from hand-written FIXTURE duel figures (no GPU).
import { describe, expect, it } from 'vitest';
import { selfDuelCalibration } from '../bench/lib/self-duel-calibration.js';

describe('selfDuelCalibration', () => {
  it('counts the intervals that miss 1, the pairs\' and the wider one, and the wider one\'s verdicts', () => {
    const c = selfDuelCalibration([
      // The H100 twins: the pairs' interval misses 1, the one over placements (sd 0.92%) does not.
      { ratio: 0.9948, ratioLow: 0.9936, ratioHigh: 0.9954, setRelSd: 0.0092 },
      // A tight duel on tight placements: both hold 1, and it is `same`.
      { ratio: 1.0002, ratioLow: 0.9995, ratioHigh: 1.0009, setRelSd: 0.0003 },
      // No placements' share known: the wider interval is the pairs' own, which misses 1.
      { ratio: 1.004, ratioLow: 1.002, ratioHigh: 1.006 },
    ]);
    expect(c).toEqual({ n: 3, withSets: 2, pairsMiss1: 2, placementsMiss1: 1, verdictsWithPlacements: { unsure: 1, same: 2 } });
  });

  it('is empty without duels', () => {
    expect(selfDuelCalibration([])).toEqual({ n: 0, withSets: 0, pairsMiss1: 0, placementsMiss1: 0, verdictsWithPlacements: {} });
  });
});
