// The peer's figures: Kernel Tuner 1.4.0's own strategies on the four community spaces, in its
// simulation mode (20 seeds, budget 200, default strategy settings), as published beside the data
// in ../shared/tuning-spaces/README.md (2026-12-01). Copied here as figures (not the data), so the
// strategies benchmark can print them beside KernelDuel's; the thresholds are issue 18's goals.

export interface PeerFigures {
  /** File name in ../shared/tuning-spaces. */
  file: string;
  label: string;
  /** Kernel Tuner's best strategy to 98%: evaluations (median; unreached = 201) and seeds that reached it. */
  best: Array<{ strategy: string; to98: number; reached: number }>;
  bayesOpt: { to98: number; reached: number | null; bestAt50: number; bestAt100: number };
  geneticAlgorithm: { to98: number; reached: number | null; bestAt50: number; bestAt100: number };
  /** Exact expectation of random sampling without replacement. */
  randomExpected: number;
  /** Issue 18's goal for the default strategy: median evaluations to 98% at most this, with at least `minReached` of 20 seeds. */
  goal: { to98: number; minReached: number };
}

/** Whether a to-98% result meets the goal: the median at most `to98`, and the share of seeds that reached it at least minReached / 20 (so 18/20 means 90 of 100 seeds). */
export function to98GoalMet(goal: PeerFigures['goal'], r: { median: number; reached: number; seeds: number }): boolean {
  return r.median <= goal.to98 && r.reached * 20 >= goal.minReached * r.seeds;
}

/** The goal as the results print it, with the seeds needed at this seed count where it is not 20. */
export function goalLabel(goal: PeerFigures['goal'], seeds: number): string {
  if (!goal.minReached) return `≤ ${goal.to98}`;
  return `≤ ${goal.to98} with ≥ ${goal.minReached}/20${seeds !== 20 ? ` (${Math.ceil((goal.minReached * seeds) / 20)}/${seeds})` : ''}`;
}

export const PEER_SOURCE = '../shared/tuning-spaces/README.md: Kernel Tuner 1.4.0, simulation mode, default strategy settings, 20 seeds, budget 200 (2026-12-01)';

export const PEER: PeerFigures[] = [
  {
    file: 'convolution-A100.json.gz', label: 'convolution A100',
    best: [{ strategy: 'genetic_algorithm', to98: 152, reached: 13 }],
    bayesOpt: { to98: 201, reached: 0, bestAt50: 0.794, bestAt100: 0.863 },
    geneticAlgorithm: { to98: 152, reached: 13, bestAt50: 0.642, bestAt100: 0.858 },
    randomExpected: 2181,
    goal: { to98: 152, minReached: 18 },
  },
  {
    file: 'convolution-A4000.json.gz', label: 'convolution A4000',
    best: [{ strategy: 'basinhopping', to98: 59, reached: 20 }, { strategy: 'pso', to98: 104, reached: 13 }],
    bayesOpt: { to98: 153, reached: 18, bestAt50: 0.799, bestAt100: 0.875 },
    geneticAlgorithm: { to98: 160, reached: 14, bestAt50: 0.778, bestAt100: 0.805 },
    randomExpected: 362,
    goal: { to98: 59, minReached: 20 },
  },
  {
    file: 'dedispersion-A100.json.gz', label: 'dedispersion A100',
    best: [{ strategy: 'random_sample', to98: 4, reached: 20 }],
    bayesOpt: { to98: 6, reached: null, bestAt50: 0.996, bestAt100: 0.997 },
    geneticAlgorithm: { to98: 6, reached: null, bestAt50: 0.995, bestAt100: 0.996 },
    randomExpected: 6,
    goal: { to98: 4, minReached: 0 },
  },
  {
    file: 'dedispersion-A4000.json.gz', label: 'dedispersion A4000',
    best: [{ strategy: 'random_sample / bayes_opt / genetic_algorithm', to98: 10, reached: 20 }],
    bayesOpt: { to98: 10, reached: 20, bestAt50: 0.993, bestAt100: 0.998 },
    geneticAlgorithm: { to98: 10, reached: 20, bestAt50: 0.989, bestAt100: 0.997 },
    randomExpected: 21,
    goal: { to98: 10, minReached: 0 },
  },
];
