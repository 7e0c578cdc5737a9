// How a confirmation's duel of its best against a tied variant reads, the same in the CLI, the
// session report and the workbench's Export view.
import type { PlacementsInterval, TieDuelDTO } from './api.js';

/** Which variants are tied with the confirmed best, and why, in words (no closing full stop). */
export function tiedWords(ids: readonly string[], reproducibility: number, bestId: string): string {
  const one = ids.length === 1;
  return `${ids.join(', ')} ${one ? 'is' : 'are'} within ${(reproducibility * 100).toFixed(2)}% of ${bestId}: separate precise timings of these variants spread that much (their buffer placements), so ${one ? 'it is' : 'they are'} tied with it`;
}

/**
 * The duel's outcome in words, from its interval rather than its verdict: a tied pair is within
 * the duel's ±1% "same" band by construction, but the interleaved pairs of one process may still
 * put one ahead of the other by a fraction of a percent, which is what a tie duel is for. The
 * interval is over the pairs and the buffer placements (the engine widens the pairs' own interval
 * by the placements' share, `setRelSd`); the pairs' own interval is given beside it.
 */
export function tieDuelWords(d: Pick<TieDuelDTO, 'variantId' | 'ratio' | 'ratioLow' | 'ratioHigh' | 'pairsLow' | 'pairsHigh' | 'verdict' | 'setRelSd'>, bestId: string): string {
  const ci = `${bestId}'s speed over ${d.variantId}'s ${d.ratio.toFixed(4)}× (95% interval ${d.ratioLow.toFixed(4)}–${d.ratioHigh.toFixed(4)} over the pairs and the buffer placements${d.setRelSd !== undefined ? `, whose sd is ${(d.setRelSd * 100).toFixed(2)}%` : ''}; the pairs alone ${d.pairsLow.toFixed(4)}–${d.pairsHigh.toFixed(4)})`;
  const band = d.verdict === 'same' ? ', within the duel\'s ±1% "same" band' : '';
  if (d.ratioLow > 1) return `${bestId} is faster by ${((d.ratio - 1) * 100).toFixed(2)}%${band}: ${ci}`;
  if (d.ratioHigh < 1) return `${d.variantId} is faster by ${((1 / d.ratio - 1) * 100).toFixed(2)}%${band}: ${ci}`;
  return `not told apart: ${ci}`;
}

/**
 * A search duel's interval over its pairs and its buffer placements, beside the verdict the pairs'
 * interval gave (the CLI's `eval --duel` and the Compare view). Where the verdict says faster or
 * slower but this interval holds 1, the placements alone could make the difference: say so.
 */
export function placementsWords(verdict: TieDuelDTO['verdict'], p: PlacementsInterval): string {
  const head = `over the pairs and the buffer placements ${p.low.toFixed(4)}–${p.high.toFixed(4)} (95%; the placements' sd ${(p.setRelSd * 100).toFixed(2)}% over ${p.sets} buffer sets, which more pairs do not shrink)`;
  if (placementsCouldExplain(verdict, p)) return `${head}: this interval holds 1, so the buffer placements alone could make this difference`;
  return head;
}

/**
 * A GPU duel that timed each side on one buffer set (the buffers did not fit more, or the timing
 * asked for one): it met one random placement of each variant's buffers, so no interval over
 * placements exists and a placement-sensitive kernel's verdict can be the placements'. Measured on
 * an H100 (2026-12-07, bench/results/h100-80gb-hbm3-timing-stability-spreadlarge-771f97e.md): a
 * softmax configuration's self duels said faster or slower in 3 of 30 with one set, none of 30
 * with four.
 */
export function oneSetWords(verdict: TieDuelDTO['verdict']): string {
  const head = 'one buffer set a side: this duel timed each variant on one placement of its buffers, so its interval leaves the placements out';
  if (decided(verdict)) return `${head}, and for a kernel whose time depends on where its buffers lie this verdict can be the placements' (a placement-sensitive softmax configuration duelled itself faster or slower in 3 of 30 such duels on an H100); eval --precise times over 4 executors' buffer sets (32 placements)`;
  return head;
}

/** A faster or slower verdict whose interval over pairs and placements still holds 1. */
export function placementsCouldExplain(verdict: TieDuelDTO['verdict'], p: Pick<PlacementsInterval, 'low' | 'high'>): boolean {
  return decided(verdict) && p.low <= 1 && p.high >= 1;
}

/** A duel that said faster or slower (not same or unsure). */
export function decided(verdict: TieDuelDTO['verdict']): boolean {
  return verdict === 'faster' || verdict === 'slower';
}
