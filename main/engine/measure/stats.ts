// Statistics of timing samples: medians with order-statistic confidence intervals, the choice
// between event and wall timers, and the verdict of a duel.
import type { DuelResult, TimerKind, TimingResult, Verdict } from '../base/types.js';

export function median(xs: readonly number[]): number {
  if (!xs.length) return NaN;
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  return n % 2 ? v[(n - 1) / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/** The q-quantile (0..1) with linear interpolation between order statistics; NaN for no samples. */
export function quantile(xs: readonly number[], q: number): number {
  const v = [...xs].sort((a, b) => a - b);
  if (!v.length) return NaN;
  const p = (v.length - 1) * q;
  const lo = Math.floor(p);
  return v[lo] + (v[Math.min(v.length - 1, lo + 1)] - v[lo]) * (p - lo);
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** 95% CI of the median by order statistics (distribution-free). */
export function medianCI(xs: readonly number[]): { median: number; low: number; high: number; relNoise: number } {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  const med = median(v);
  if (n === 0) return { median: NaN, low: NaN, high: NaN, relNoise: Infinity };
  const h = 0.98 * Math.sqrt(n);
  const lo = Math.max(0, Math.floor(n / 2 - h));
  const hi = Math.min(n - 1, Math.ceil(n / 2 + h));
  const low = v[lo];
  const high = v[hi];
  return { median: med, low, high, relNoise: med > 0 ? (high - low) / (2 * med) : Infinity };
}

/**
 * The buffer sets' share of a median's uncertainty. Timed calls rotate over `sets` buffer sets (call
 * i on set i mod sets), and the sets' placements run up to ~1% apart on the H200
 * (bench/results/h200-timing-stability-*.md), so the samples are not independent: medianCI, which
 * treats them as independent, misses this part, and more samples do not shrink it (more sets do).
 * Each set's median, and the sd of their mean over the median: sd(per-set medians) / √sets / median.
 * Null with fewer than 2 sets or a set of fewer than 2 samples.
 */
export function setSpread(samples: readonly number[], sets: number): { perSetMedianMs: number[]; setRelSd: number } | null {
  if (!(Number.isInteger(sets) && sets >= 2) || samples.length < 2 * sets) return null;
  const perSetMedianMs = Array.from({ length: sets }, (_, k) => median(samples.filter((_, i) => i % sets === k)));
  const m = mean(perSetMedianMs);
  const sd = Math.sqrt(perSetMedianMs.reduce((a, x) => a + (x - m) ** 2, 0) / (sets - 1));
  const med = median(samples);
  return { perSetMedianMs, setRelSd: med > 0 ? sd / Math.sqrt(sets) / med : Infinity };
}

/** setSpread of a timing: what it carries, else from its samples and buffer sets (results recorded before timings kept it). */
export function timingSetSpread(t: Pick<TimingResult, 'samplesMs' | 'bufferSets' | 'perSetMedianMs' | 'setRelSd'>, sets = t.bufferSets ?? 1): { perSetMedianMs: number[]; setRelSd: number } | null {
  if (t.perSetMedianMs && t.setRelSd !== undefined) return { perSetMedianMs: t.perSetMedianMs, setRelSd: t.setRelSd };
  return setSpread(t.samplesMs ?? [], sets);
}

/**
 * Events recorded on the legacy default stream wait for work on blocking streams, but not for
 * work on non-blocking streams or launched from other host threads. The wall clock around the
 * call plus a whole-device synchronise catches all of it. When the wall median exceeds the event
 * median by more than launch/sync overhead can explain, work escaped the events: use wall time.
 */
/**
 * With `eventsBracketAll` (the CUDA harness's executor, which rebuilds a variant's whole captured work
 * on one stream, or as one graph, between its two events, and runs no variant host code) nothing can
 * run outside the events, so they are always used: a host clock that saw more measured host delay
 * (a busy CPU descheduling the thread that waits for the GPU: 10-30x on the H200 with 16 builds
 * beside it, 2026-12-01), not the variant. The note still says so.
 */
export function chooseTimer(eventMs: readonly number[], wallMs: readonly number[], emptyWallMs = 0.02, o: { eventsBracketAll?: boolean } = {}): { timer: TimerKind; note?: string } {
  const e = median(eventMs);
  const w = median(wallMs);
  const slack = Math.max(0.05, 5 * emptyWallMs);
  if (w > e * 1.25 + slack && o.eventsBracketAll) {
    return {
      timer: 'events',
      note: `the host clock saw ${w.toFixed(4)} ms against the events' ${e.toFixed(4)} ms: host delay (a busy CPU), not GPU work, since all of the rebuilt work runs between the events; events are used`,
    };
  }
  if (w > e * 1.25 + slack) {
    return {
      timer: 'wall',
      note: `wall time ${w.toFixed(4)} ms exceeds event time ${e.toFixed(4)} ms: work ran outside the default stream's timeline (another stream or thread), so the wall clock around a whole-device synchronise is used`,
    };
  }
  return { timer: 'events' };
}

/** The relative difference within which a duel says `same` (the judge stops a duel early once its interval lies beyond it). */
export const SAME_TOL = 0.01;

/** The two-sided 95% normal quantile. */
export const Z95 = 1.96;

/**
 * A duel's 95% interval over its pairs *and* its buffer placements: on the log scale, each side's
 * half-width and 1.96 × the placements' share (`setRelSd`, which the pairs' interval leaves out)
 * added in quadrature. The same configuration under two ids duelled 0.9948× with the pairs'
 * interval 0.9936–0.9954 and placements' sd 0.92% on an H100 (bench/results/h100-gpu-tests-01d9021.log).
 */
export function intervalWithPlacements(ratio: number, low: number, high: number, setRelSd: number | undefined): { low: number; high: number } {
  const s = setRelSd !== undefined && Number.isFinite(setRelSd) ? setRelSd : 0;
  return {
    low: ratio * Math.exp(-Math.hypot(Math.log(Math.max(1, ratio / low)), Z95 * s)),
    high: ratio * Math.exp(Math.hypot(Math.log(Math.max(1, high / ratio)), Z95 * s)),
  };
}

/** Verdict for a ratio CI of A's speedup over B: `same` within ±tolerance, faster/slower when the CI excludes 1. */
export function verdictOf(low: number, high: number, sameTol = SAME_TOL): Verdict {
  if (low >= 1 - sameTol && high <= 1 + sameTol) return 'same';
  if (low > 1) return 'faster';
  if (high < 1) return 'slower';
  return 'unsure';
}

export function duelStats(
  size: number,
  aEv: number[],
  aWall: number[],
  bEv: number[],
  bWall: number[],
  emptyWallMs?: number,
  o: { eventsBracketAll?: boolean; sets?: number } = {},
): DuelResult {
  const ta = chooseTimer(aEv, aWall, emptyWallMs, o);
  const tb = chooseTimer(bEv, bWall, emptyWallMs, o);
  const timer: TimerKind = ta.timer === 'wall' || tb.timer === 'wall' ? 'wall' : 'events';
  const a = timer === 'wall' ? aWall : aEv;
  const b = timer === 'wall' ? bWall : bEv;
  const ratios = a.map((x, i) => b[i] / Math.max(x, 1e-9));
  const ci = medianCI(ratios);
  // Pair i ran on set i mod sets of each side's buffers (the judge's duel): the sets' share of the ratio.
  const sets = o.sets !== undefined ? setSpread(ratios, o.sets) : null;
  const wide = sets ? intervalWithPlacements(ci.median, ci.low, ci.high, sets.setRelSd) : null;
  return {
    size, aMs: a, bMs: b, ratio: ci.median, ratioLow: ci.low, ratioHigh: ci.high, verdict: verdictOf(ci.low, ci.high), timer, pairs: a.length,
    ...(sets && wide ? { sets: o.sets, setRelSd: sets.setRelSd, placementsLow: wide.low, placementsHigh: wide.high } : {}),
  };
}

/**
 * A duel's interval over its pairs and its buffer placements: the one it carries, else (a duel
 * journaled before duels carried it) from its setRelSd; null for a duel without buffer sets
 * (a REPLAY duel, or one timed before the judge rotated sets).
 */
export function placementsInterval(d: Pick<DuelResult, 'ratio' | 'ratioLow' | 'ratioHigh' | 'setRelSd' | 'placementsLow' | 'placementsHigh'>): { low: number; high: number } | null {
  if (d.placementsLow !== undefined && d.placementsHigh !== undefined) return { low: d.placementsLow, high: d.placementsHigh };
  if (d.setRelSd === undefined || !Number.isFinite(d.setRelSd)) return null;
  return intervalWithPlacements(d.ratio, d.ratioLow, d.ratioHigh, d.setRelSd);
}
