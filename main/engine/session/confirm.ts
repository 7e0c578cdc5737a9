// The final figure of a session: its fastest variants and its baseline measured again, each in a
// fresh evaluation with the precise timing (measure/harness.ts PRECISE_TIMING: at least 2.5 s over 4
// executors, so that fresh processes agree to ~0.2%), checked again as every evaluation is. The
// search's own timing is made to rank variants quickly (its medians of one process spread up to
// ~0.9% between processes on the shortest kernels), so two variants within that of each other may be
// in the wrong order, and the speedup it reports moves by that much from run to run. A confirmation
// journals one `confirm` event per variant (the search's results stay as they were); the speedups
// below are precise median over precise median, the baseline's and the variant's, same size.
// Variants whose precise medians are too close to tell apart by separate timings (tied with the
// best) are then timed against the best in a duel (interleaved pairs in one process, which resolves
// differences far below what separate processes reproduce), journaled as ordinary `duel` events.
import type { ConfirmLine, DuelResult, EvalResult, Failure, TieDuel, TimingResult, VariantRecord } from '../base/types.js';
import { intervalWithPlacements, timingSetSpread, verdictOf, Z95 } from '../measure/stats.js';
import { isTimedSuccess, timedMedianMs } from '../measure/verdict.js';
import type { MeasuredSpec } from '../measure/measurer.js';
import type { SessionEvent } from './events.js';
import type { Session } from './store.js';

export type { TieDuel } from '../base/types.js';

/** The timing a confirmation used (the only one so far). */
export type ConfirmTiming = 'precise';

/**
 * How far apart two precise medians of fresh processes may be for the same variant, at least: the
 * suite's 5-process spreads were 0.02–0.33% on an H200 (bench/results/h200-timing-stability-precise-d406e4f.md)
 * and 0.01–0.18% on an H100 (h100-80gb-hbm3-timing-stability-01d9021.md). A variant whose buffer
 * placements run far apart spreads more: one softmax configuration confirmed under two ids came out
 * 0.42%, 0.45% and 0.39% apart on three H100s (each median's placements' sd 0.35–0.40%;
 * h100-gpu-tests-{5cd5fb7,01d9021,dab5eb7}.log), so a
 * confirmation's bound is this or the 95% bound of its own placements' spread, the larger
 * (reproducibilityOf). Variants whose confirmed medians are closer than that to the best are tied with it.
 */
export const PRECISE_REPRODUCIBILITY = 0.005;

/** The placements' share of a timing's median (relative sd), null when unknown. */
function placementSd(t: TimingResult): number | null {
  const s = timingSetSpread(t)?.setRelSd;
  return s !== undefined && Number.isFinite(s) ? s : null;
}

/**
 * How far apart fresh precise medians of these two timings' variants may come out, relative: the
 * 95% bound of the difference of their placements' shares, at least PRECISE_REPRODUCIBILITY.
 */
export function reproducibilityOf(a: TimingResult, b: TimingResult): number {
  return Math.max(PRECISE_REPRODUCIBILITY, Z95 * Math.hypot(placementSd(a) ?? 0, placementSd(b) ?? 0));
}

/** One variant's line of a confirmation, with the result it was measured with. */
export interface ConfirmedVariant extends ConfirmLine {
  result: EvalResult;
}

export interface ConfirmReport {
  timing: ConfirmTiming;
  baseline: ConfirmedVariant | null;
  /** Every confirmed variant but the baseline, fastest confirmed first (failed ones last). */
  variants: ConfirmedVariant[];
  /** The fastest confirmed variant (not the baseline), null when none was confirmed with a time. */
  bestId: string | null;
  /** The search's best among the confirmed variants, when the confirmation ranks another one first. */
  searchBestId: string | null;
  /** Confirmed variants within `reproducibility` of the best's median: not told apart by separate precise timings. */
  tiedWithBest: string[];
  /**
   * How far apart separate precise medians of the confirmed variants may come out: the largest
   * reproducibilityOf the best and another confirmed variant (PRECISE_REPRODUCIBILITY without one).
   */
  reproducibility: number;
  /** The duel of the best against each tied variant measured since this confirmation began (the latest of each pair), as the best's speed over the tied variant's. */
  tieDuels: TieDuel[];
}

/**
 * A duel as the speed of `a` over `b`, whichever side each was on, its interval over the pairs and
 * the placements (intervalWithPlacements), and its verdict from that wider interval.
 */
function duelFrom(d: DuelResult, aIsA: boolean): Pick<TieDuel, 'ratio' | 'ratioLow' | 'ratioHigh' | 'pairsLow' | 'pairsHigh' | 'verdict' | 'pairs' | 'setRelSd'> {
  const ratio = aIsA ? d.ratio : 1 / d.ratio;
  const pairsLow = aIsA ? d.ratioLow : 1 / d.ratioHigh;
  const pairsHigh = aIsA ? d.ratioHigh : 1 / d.ratioLow;
  const { low: ratioLow, high: ratioHigh } = intervalWithPlacements(ratio, pairsLow, pairsHigh, d.setRelSd);
  const sd = d.setRelSd !== undefined ? { setRelSd: d.setRelSd } : {};
  return { ratio, ratioLow, ratioHigh, pairsLow, pairsHigh, verdict: verdictOf(ratioLow, ratioHigh), pairs: d.pairs, ...sd };
}

/** The variants a confirmation measures: the baseline and the `top` fastest correct, timed variants by the search's median. */
export function confirmCandidates(session: Session, top: number): { baseline: VariantRecord | null; variants: VariantRecord[] } {
  if (!Number.isInteger(top) || top < 1) throw new Error(`top must be a whole number of variants, 1 or more (got ${top})`);
  let baseline: VariantRecord | null = null;
  const timed: Array<{ v: VariantRecord; ms: number }> = [];
  for (const v of session.variants()) {
    const r = session.resultOf(v.id);
    if (v.origin === 'baseline') {
      baseline ??= v;
      continue;
    }
    if (isTimedSuccess(r)) timed.push({ v, ms: r.timing[0].medianMs });
  }
  timed.sort((a, b) => a.ms - b.ms);
  return { baseline, variants: timed.slice(0, top).map((x) => x.v) };
}

function failureOf(r: EvalResult): string | null {
  if (isTimedSuccess(r)) return null;
  if (r.failure) return `${r.failure.kind}: ${r.failure.reason.split('\n')[0]}`;
  if (r.compileOnly) return 'compile-only: no GPU timed it';
  if (r.check && !r.check.ok) return 'its check failed';
  return 'not timed';
}

/**
 * The session's confirmation as a report, or null when it has none: the latest confirmation that
 * measured a variant besides the baseline (else the latest), never mixing two (a baseline timed on
 * another day against a variant timed today); within it, each variant's last result.
 */
export function confirmReport(session: Pick<Session, 'entries' | 'variant' | 'resultOf'>): ConfirmReport | null {
  const runs = new Map<string, Map<string, { result: EvalResult; at: string }>>();
  const runStart = new Map<Map<string, unknown>, number>(); // each confirmation's first entry
  const duels: Array<{ i: number; a: string; b: string; result: DuelResult; at: string }> = [];
  let i = 0;
  for (const { rec, t } of session.entries()) {
    i++;
    if (rec.type === 'duel') duels.push({ i, a: rec.a, b: rec.b, result: rec.result, at: t });
    if (rec.type !== 'confirm') continue;
    const key = rec.run ?? '';
    const run = runs.get(key) ?? new Map<string, { result: EvalResult; at: string }>();
    if (!runStart.has(run)) runStart.set(run, i);
    runs.delete(key); // re-inserted: the map's order is that of each confirmation's last event
    run.set(rec.variantId, { result: rec.result, at: t });
    runs.set(key, run);
  }
  const all = [...runs.values()];
  if (!all.length) return null;
  const last = [...all].reverse().find((r) => [...r.keys()].some((id) => session.variant(id)?.origin !== 'baseline')) ?? all[all.length - 1];
  const since = runStart.get(last) ?? 0;
  let baseline: ConfirmedVariant | null = null;
  const lines: ConfirmedVariant[] = [];
  for (const [id, { result, at }] of last) {
    const v = session.variant(id);
    const t = isTimedSuccess(result) ? result.timing[0] : null;
    const line: ConfirmedVariant = {
      variantId: id, origin: v?.origin ?? '?', searchMs: timedMedianMs(session.resultOf(id)),
      ms: t?.medianMs ?? null, ciLowMs: t?.ciLowMs ?? null, ciHighMs: t?.ciHighMs ?? null, placementSd: t ? placementSd(t) : null,
      speedup: null, speedupLow: null, speedupHigh: null, failure: failureOf(result), at, result,
    };
    if (v?.origin === 'baseline' && !baseline) baseline = line;
    else lines.push(line);
  }
  const b = baseline && baseline.ms !== null && isTimedSuccess(baseline.result) ? baseline.result.timing[0] : null;
  for (const l of lines) {
    if (!b || l.ms === null || !isTimedSuccess(l.result)) continue;
    // The same size as the variant's first timed one (a task times its sizes in one order).
    const t = l.result.timing[0];
    const bt = isTimedSuccess(baseline!.result) ? (baseline!.result.timing.find((x) => x.size === t.size) ?? b) : b;
    l.speedup = bt.medianMs / t.medianMs;
    // A median's interval is of its own process; fresh processes spread by up to reproducibilityOf more.
    const r = reproducibilityOf(bt, t);
    l.speedupLow = bt.ciLowMs / t.ciHighMs / (1 + r);
    l.speedupHigh = (bt.ciHighMs / t.ciLowMs) * (1 + r);
  }
  lines.sort((x, y) => (x.ms ?? Infinity) - (y.ms ?? Infinity));
  const best = lines.find((l) => l.ms !== null) ?? null;
  const bySearch = lines.filter((l) => l.searchMs !== null).sort((x, y) => x.searchMs! - y.searchMs!)[0];
  const timingOf = (l: ConfirmedVariant): TimingResult | null => (l.ms !== null && isTimedSuccess(l.result) ? l.result.timing[0] : null);
  const bestT = best ? timingOf(best) : null;
  const others = lines.filter((l) => l !== best && timingOf(l));
  const reproducibility = Math.max(PRECISE_REPRODUCIBILITY, ...(bestT ? others.map((l) => reproducibilityOf(bestT, timingOf(l)!)) : []));
  const tiedWithBest = best ? others.filter((l) => l.ms! < best.ms! * (1 + reproducibility)).map((l) => l.variantId) : [];
  const tieDuels: TieDuel[] = [];
  for (const id of tiedWithBest) {
    const d = [...duels].reverse().find((x) => x.i > since && ((x.a === best!.variantId && x.b === id) || (x.a === id && x.b === best!.variantId)));
    if (d) tieDuels.push({ variantId: id, ...duelFrom(d.result, d.a === best!.variantId), at: d.at });
  }
  return {
    timing: 'precise', baseline, variants: lines, bestId: best?.variantId ?? null,
    searchBestId: best && bySearch && bySearch.variantId !== best.variantId ? bySearch.variantId : null,
    tiedWithBest, reproducibility, tieDuels,
  };
}

export interface ConfirmOptions {
  /** How many of the search's fastest variants (default 3). */
  top?: number;
  signal?: AbortSignal;
  /** Told before each variant is measured (i of n, from 1). */
  onVariant?: (v: VariantRecord, i: number, n: number) => void;
  /** Told each variant's confirmation once it is journaled. */
  onResult?: (v: VariantRecord, result: EvalResult) => void;
  /** Duel the best against each variant tied with it, when the measurer can duel (default true). */
  duelTies?: boolean;
  /** Told before each such duel (i of n, from 1), and its outcome once journaled (a failure's reason, or null). */
  onTieDuel?: (best: VariantRecord, tied: VariantRecord, i: number, n: number) => void;
  onTieDuelDone?: (best: VariantRecord, tied: VariantRecord, failure: string | null) => void;
}

/** What a confirmation measures with: the evaluate of the precise timing, and its duel where it has one. */
export interface ConfirmMeasurer {
  evaluate(spec: MeasuredSpec, o?: { signal?: AbortSignal }): Promise<EvalResult>;
  duel?(a: MeasuredSpec, b: MeasuredSpec, signal?: AbortSignal): Promise<{ duels?: DuelResult[]; failure?: Failure }>;
}

/**
 * Measures the session's baseline and its `top` fastest variants again with `measurer` (an
 * Evaluator with the precise timing: the caller makes it), journaling each result as a `confirm`
 * event the moment it exists (a killed confirmation keeps what it measured). Returns the report of
 * every confirmation the session now holds. Throws when the session has nothing to confirm.
 */
export async function confirmSession(session: Session, measurer: ConfirmMeasurer, o: ConfirmOptions = {}): Promise<ConfirmReport> {
  const { baseline, variants } = confirmCandidates(session, o.top ?? 3);
  if (!variants.length) throw new Error(`session ${session.meta.id} has no variant that was checked correct and timed: nothing to confirm`);
  if (!baseline) throw new Error(`session ${session.meta.id} has no baseline: a speedup cannot be confirmed without one`);
  const todo = [baseline, ...variants];
  const run = new Date().toISOString();
  for (const [i, v] of todo.entries()) {
    if (o.signal?.aborted) break;
    o.onVariant?.(v, i + 1, todo.length);
    const result = await measurer.evaluate(v, { signal: o.signal });
    if (o.signal?.aborted) break;
    const ev: SessionEvent = { type: 'confirm', variantId: v.id, timing: 'precise', result, run };
    session.append(ev);
    o.onResult?.(v, result);
  }
  const report = confirmReport(session)!;
  if (o.signal?.aborted || o.duelTies === false || !measurer.duel || !report.bestId || !report.tiedWithBest.length) return report;
  // The best against each variant tied with it, in one process each: what separate timings cannot tell apart.
  const best = session.variant(report.bestId)!;
  for (const [k, id] of report.tiedWithBest.entries()) {
    const tied = session.variant(id);
    if (!tied || o.signal?.aborted) break;
    o.onTieDuel?.(best, tied, k + 1, report.tiedWithBest.length);
    let failure: string | null = null;
    try {
      const d = await measurer.duel(best, tied, o.signal);
      if (o.signal?.aborted) break;
      const first = d.duels?.[0];
      if (first) session.append({ type: 'duel', a: best.id, b: tied.id, result: first });
      else failure = d.failure ? `${d.failure.kind}: ${d.failure.reason.split('\n')[0]}` : 'the duel gave no result';
    } catch (e) {
      failure = e instanceof Error ? e.message : String(e);
    }
    if (failure) session.append({ type: 'note', level: 'warn', message: `the confirmation's duel of ${best.id} against ${tied.id} (tied with it) failed: ${failure}` });
    o.onTieDuelDone?.(best, tied, failure);
  }
  return confirmReport(session)!;
}
