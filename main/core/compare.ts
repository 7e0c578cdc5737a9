// Two variants of a session side by side: their speed ratio from a recorded duel between them
// (paired and interleaved: the best evidence), else from their separate measurements (the ratio of
// medians, its interval from the two medians' intervals), and what the preference model predicted
// for the pair before the duel. Pure: the session is read by the caller.
import type { CompareResult, PlacementsInterval, VariantDetail } from '../contract/api.js';
import type { DuelResult } from '../engine/base/types.js';
import type { SessionEvent } from '../engine/session/events.js';
import { placementsInterval, verdictOf } from '../engine/measure/stats.js';

/** A duel's interval over its pairs and its buffer placements as the contract carries it; undefined for a duel without sets. */
export function placementsOf(d: Pick<DuelResult, 'ratio' | 'ratioLow' | 'ratioHigh' | 'sets' | 'setRelSd' | 'placementsLow' | 'placementsHigh'>): PlacementsInterval | undefined {
  const wide = placementsInterval(d);
  return wide && d.setRelSd !== undefined ? { low: wide.low, high: wide.high, setRelSd: d.setRelSd, sets: d.sets ?? 0 } : undefined;
}

/** A duel of B against A, told as A against B. */
export function reverseDuel(d: DuelResult): DuelResult {
  const placements = d.placementsLow !== undefined && d.placementsHigh !== undefined ? { placementsLow: 1 / d.placementsHigh, placementsHigh: 1 / d.placementsLow } : {};
  return { ...d, aMs: d.bMs, bMs: d.aMs, ratio: 1 / d.ratio, ratioLow: 1 / d.ratioHigh, ratioHigh: 1 / d.ratioLow, verdict: d.verdict === 'faster' ? 'slower' : d.verdict === 'slower' ? 'faster' : d.verdict, ...placements };
}

export function compareVariants(sessionId: string, da: VariantDetail, db: VariantDetail, events: SessionEvent[]): CompareResult {
  const a = da.variant.id;
  const b = db.variant.id;
  const notes: string[] = [];
  let duel: CompareResult['duel'] = null;
  let ratio: CompareResult['ratio'] = null;
  let prediction: CompareResult['prediction'] = null;
  for (const e of events) {
    if (e.type !== 'duel') continue;
    const p = e.prediction;
    if (e.a === a && e.b === b) {
      duel = e.result;
      if (p) prediction = { pAFaster: p.pAFaster, model: `${p.model}, before the duel` };
    } else if (e.a === b && e.b === a) {
      duel = reverseDuel(e.result);
      if (p) prediction = { pAFaster: 1 - p.pAFaster, model: `${p.model}, before the duel` };
    }
  }
  const replayed = da.result?.source.kind === 'replay' || db.result?.source.kind === 'replay';
  if (duel) {
    // A replay's duel draws pairs from the two variants' recorded samples: not an interleaved measurement.
    const placements = placementsOf(duel);
    const oneSet = !replayed && duel.sets === 1;
    ratio = { value: duel.ratio, low: duel.ratioLow, high: duel.ratioHigh, verdict: duel.verdict, method: replayed ? 'replay-duel' : 'duel', ...(placements ? { placements } : {}), ...(oneSet ? { oneSet } : {}) };
  } else if (da.row.medianMs !== null && db.row.medianMs !== null) {
    const low = (db.row.ciLowMs ?? db.row.medianMs) / (da.row.ciHighMs ?? da.row.medianMs);
    const high = (db.row.ciHighMs ?? db.row.medianMs) / (da.row.ciLowMs ?? da.row.medianMs);
    ratio = { value: db.row.medianMs / da.row.medianMs, low, high, verdict: verdictOf(low, high), method: 'independent' };
    notes.push('No duel between these two was recorded: the ratio comes from their separate measurements (wider interval than an interleaved duel).');
  } else {
    notes.push('At least one of the two was not timed (compile-only, failed or pending): no speed ratio.');
  }
  if (replayed) notes.push('REPLAY: these timings come from a recorded space, not a live measurement.');
  if (!prediction && duel) notes.push('The preference model made no prediction for this duel (it was not trained yet, or the strategy has none).');
  return { sessionId, a: da, b: db, ratio, duel, prediction, notes };
}
