// Where the spread of one variant's times over fresh processes comes from (bench/timing-stability.ts):
// each process times its calls over k buffer sets, so its median averages k placements. If placement
// were all, the processes' means would differ by about (the per-set medians' sd within a process) /
// sqrt(k); a between-process sd well above that is an offset a whole process shares (its context, its
// L2-flush buffer, the moment it ran), which more sets cannot average out.

import { mean, median } from '../../main/engine/measure/stats.js';

export interface SpreadSources {
  /** Pooled sd of the per-set medians around their process's mean, % of the overall mean. */
  withinSdPct: number;
  /** sd of the processes' means of their per-set medians, % of the overall mean. */
  betweenSdPct: number;
  /** withinSdPct / sqrt(sets): what placement alone would leave between processes. */
  expectedFromSetsPct: number;
  /** Sets per process (the smallest number any process used). */
  sets: number;
}


/** From each process's per-set medians; null with fewer than two processes or a process of fewer than two sets. */
export function spreadSources(perProcessSetMedians: number[][]): SpreadSources | null {
  const ps = perProcessSetMedians.filter((xs) => xs.length > 0);
  if (ps.length < 2 || ps.some((xs) => xs.length < 2)) return null;
  const means = ps.map(mean);
  const grand = mean(means);
  let ss = 0;
  let df = 0;
  ps.forEach((xs, i) => {
    for (const x of xs) ss += (x - means[i]) ** 2;
    df += xs.length - 1;
  });
  const within = Math.sqrt(ss / df);
  const between = Math.sqrt(means.reduce((a, m) => a + (m - grand) ** 2, 0) / (means.length - 1));
  const sets = Math.min(...ps.map((xs) => xs.length));
  const pct = (x: number): number => (x / grand) * 100;
  return { withinSdPct: pct(within), betweenSdPct: pct(between), expectedFromSetsPct: pct(within) / Math.sqrt(sets), sets };
}

/** Standard normal cdf (Abramowitz & Stegun 7.1.26 for erf: absolute error below 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/**
 * Probability that n independent normal draws of sd 1 lie within w of each other (their range is at
 * most w): n * integral of phi(x) * (Phi(x + w) - Phi(x))^(n-1) dx, by the midpoint rule.
 */
export function probRangeWithin(n: number, w: number): number {
  if (n < 2) return 1;
  const h = 0.002;
  let sum = 0;
  for (let x = -9 + h / 2; x < 9; x += h) {
    const phi = Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
    sum += phi * (normalCdf(x + w) - normalCdf(x)) ** (n - 1);
  }
  return Math.min(1, n * sum * h);
}

/** Relative sd (%) of a set of medians around their median. */
export function relSdPct(medians: number[]): number {
  const mu = mean(medians);
  return (Math.sqrt(medians.reduce((a, x) => a + (x - mu) ** 2, 0) / (medians.length - 1)) / median(medians)) * 100;
}
