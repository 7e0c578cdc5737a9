// Where the spread of one variant's times over fresh processes comes from (bench/timing-stability.ts):
// each process times its calls over k buffer sets, so its median averages k placements. If placement
// were all, the processes' means would differ by about (the per-set medians' sd within a process) /
// sqrt(k); a between-process sd well above that is an offset a whole process shares (its context, its
// L2-flush buffer, the moment it ran), which more sets cannot average out.

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

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

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
