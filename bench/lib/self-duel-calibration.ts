// Are a duel's intervals honest? A duel of a variant against itself has a true ratio of 1, so its
// 95% interval should miss 1 in about 5 of 100 duels. The pairs' interval takes the pairs as
// independent and leaves the buffer placements out; on an H100 the same softmax configuration
// under two ids duelled 0.9948x with the pairs' interval 0.9936-0.9954 and placements' sd 0.92%
// (bench/results/h100-gpu-tests-01d9021.log). This counts, over a task's self duels, how often each
// interval misses 1 — the pairs' own and the one over pairs and placements (intervalWithPlacements)
// — and the verdicts the wider one would give, so that a GPU run can show whether folding the
// placements into every duel keeps self duels `same`.
import type { DuelResult, Verdict } from '../../main/engine/base/types.js';
import { intervalWithPlacements, verdictOf } from '../../main/engine/measure/stats.js';

export interface SelfDuelCalibration {
  /** Self duels counted (those with a result). */
  n: number;
  /** Of them, how many had a placements' share (setRelSd) to widen by. */
  withSets: number;
  /** Self duels whose pairs' 95% interval misses 1 (ratioLow > 1 or ratioHigh < 1). */
  pairsMiss1: number;
  /** Self duels whose interval over pairs and placements misses 1. */
  placementsMiss1: number;
  /** The verdicts the interval over pairs and placements gives. */
  verdictsWithPlacements: Partial<Record<Verdict, number>>;
}

export function selfDuelCalibration(duels: readonly Pick<DuelResult, 'ratio' | 'ratioLow' | 'ratioHigh' | 'setRelSd'>[]): SelfDuelCalibration {
  const c: SelfDuelCalibration = { n: 0, withSets: 0, pairsMiss1: 0, placementsMiss1: 0, verdictsWithPlacements: {} };
  for (const d of duels) {
    c.n++;
    if (d.setRelSd !== undefined && Number.isFinite(d.setRelSd)) c.withSets++;
    if (d.ratioLow > 1 || d.ratioHigh < 1) c.pairsMiss1++;
    const w = intervalWithPlacements(d.ratio, d.ratioLow, d.ratioHigh, d.setRelSd);
    if (w.low > 1 || w.high < 1) c.placementsMiss1++;
    const v = verdictOf(w.low, w.high);
    c.verdictsWithPlacements[v] = (c.verdictsWithPlacements[v] ?? 0) + 1;
  }
  return c;
}
