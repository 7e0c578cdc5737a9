// A session's best variant: the lowest median (first size) among correct, timed variants, and its
// speedup over the baseline variant measured at the same size.
import type { EvalResult, VariantRecord } from '../base/types.js';
import { isTimedSuccess } from '../measure/verdict.js';

export interface BestVariant {
  variant: VariantRecord;
  result: EvalResult;
  medianMs: number;
  /** Baseline median / this median (>1 is faster), null when no baseline was timed. */
  speedup: number | null;
  /** The baseline the speedup is relative to. */
  baseline?: { variantId: string; medianMs: number };
}

/** Lowest median of timing[0] among correct, timed variants; speedup vs the first timed 'baseline' variant. */
export function computeBest(variants: VariantRecord[], resultOf: (id: string) => EvalResult | undefined): BestVariant | null {
  let best: BestVariant | null = null;
  for (const v of variants) {
    const r = resultOf(v.id);
    if (!isTimedSuccess(r)) continue;
    const m = r.timing[0].medianMs;
    if (!best || m < best.medianMs) best = { variant: v, result: r, medianMs: m, speedup: null };
  }
  if (!best) return null;
  const size = best.result.timing![0].size;
  for (const v of variants) {
    if (v.origin !== 'baseline') continue;
    const r = resultOf(v.id);
    if (!r || r.failure || !r.timing || r.timing.length === 0) continue;
    const t = r.timing.find((x) => x.size === size) ?? r.timing[0];
    if (!(t.medianMs > 0)) continue;
    best.speedup = t.medianMs / best.medianMs;
    best.baseline = { variantId: v.id, medianMs: t.medianMs };
    break;
  }
  return best;
}
