// What a measurement says about a variant, in one place: whether its result counts as a correct,
// timed measurement, and its median time when it does. The session's best variant, the strategies'
// rewards and the workbench's rows all ask these questions here.
import type { EvalResult } from '../base/types.js';

/** A result that counts as a successful timed measurement: built, checked correct, timed (finite median). */
export function isTimedSuccess(r: EvalResult | undefined): r is EvalResult & { timing: NonNullable<EvalResult['timing']> } {
  return !!r && !r.failure && r.build.ok && r.check?.ok === true && !!r.timing && r.timing.length > 0 && Number.isFinite(r.timing[0].medianMs);
}

/** The median of a successful timed result's first size, else null. */
export function timedMedianMs(r: EvalResult | undefined): number | null {
  return isTimedSuccess(r) ? r.timing[0].medianMs : null;
}
