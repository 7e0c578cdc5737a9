// The contrastive optimiser (CUDA-L1 style, without an LLM): a stochastic policy over the action
// space proposes many candidates, a preference model learned from comparisons ranks them, the top
// few plus an ε share of random ones are measured, and each measured variant duels an opponent
// (the best so far): its reward is log(t_opponent / t_candidate). The policy — an independent
// categorical per dimension, logits as parameters — is updated by a clipped (PPO-style) policy
// gradient on group-normalised advantages, with an entropy bonus so it keeps exploring.
//
// Staged (the default, where the action space has compiler-flag or transform dimensions): the
// tunables are searched first with flags and transforms at their defaults, as an engineer tunes
// launch parameters before micro-optimising; flags and transforms join once the best has not
// improved for `stagePatience` measured variants (after at least `stageMin`, at most `stageMax`).
// Without it, those extra dimensions dilute the search: on the recorded softmax and layernorm
// spaces, with flags and transforms assumed to do nothing, 98% of the optimum took more than 100
// evaluations (median of 20 seeds) instead of 35 and 19; staged, 36.5 and 21 (bench/action-space.ts,
// a counterfactual replay).
//
// Stages in turn (the default since 2026-12-02, `stageCycle: 15`): once flags and transforms have not
// improved the best by 0.5% for 15 measured variants, the tunables are searched again with the flags
// and transforms pinned at the best's, and each stage is left after `stagePatience` variants without
// a gain. Why: a live transpose search (bench/results/h200-vs-pytorch-dac4fe3.md) left stage 1 at a
// 128x32 tile and spent its last 47 evaluations on flags and transforms that gained 0.1%, never
// trying the 64x64 tile that was 7% faster. In the counterfactual replay (bench/action-space.ts,
// flags and transforms changing nothing, the 8 H200 recordings, 100 seeds, budget 100) the seeds
// reaching 98% of the optimum rose on softmax 75 -> 97, transpose 29 -> 53, histogram 76 -> 97,
// matmul 58 -> 89, reduce_sum 97 -> 100, and stayed at 100 on axpy, layernorm and stencil2d, medians
// unchanged where both reach. Chosen on those spaces (15 and 25 tried at 20 seeds; 15 is
// stagePatience); no recorded space with flags or transforms was held out: there is none. Spaces
// of tunables alone (every REPLAY space here and the four of Kernel Tuner) are not staged, so it
// changes nothing there.
//
// Until the model has `minPairs` decided comparisons, proposals are uniformly random. Decided
// comparisons are duels with a faster/slower verdict and pairs of measured variants whose median
// confidence intervals do not overlap (unsure and same are never used).
//
// The model's score (the default since issue 18): the Bradley–Terry linear fit plus pairwise
// boosted trees fitted to what it leaves (preference.ts, trees.ts), which see interactions of
// tunables a linear score cannot. Chosen on the 8 recorded H200 spaces (5 seeds: held-out pair
// accuracy 0.91-0.97 instead of 0.77-0.91, evaluations to 98% no worse); the four community spaces
// recorded with Kernel Tuner were held out of that choice (bench/results/strategies-kernel-tuner-spaces.md).
//
// Crossover children in the candidates (the default since issue 18, `crossover: 16`): besides the
// policy's 64 candidates, 16 children of the fastest measured variants (tournament of three among
// the 16 fastest, uniform crossover, the genetic algorithm's mutation) are offered to the model,
// which still picks every measured variant. The policy alone collapses onto one basin: on
// convolution A4000 many seeds stalled at 0.81 of the optimum (block_size_y 2 + shared memory)
// while the optimum lies in another (block_size_y 1, no shared memory). Recombining fast variants
// of different basins gives the model candidates there. Chosen on the two convolution spaces
// recorded with Kernel Tuner (20 seeds: to 98% 98.5 (14/20) -> 63.5 (15/20) on A4000, 165.5
// (14/20) -> 98 (17/20) on A100; with 100 seeds 119 (72/100) and 148.5 (76/100): a smaller gain);
// the dedispersion and the 8 H200 spaces were held out
// (bench/results/README.md lists what else was tried: restarts, more elites, more entropy or ε).
//
// The annealing arm (issue 18; an option, OFF by default: `arm: 0.5, armStall: 20` turns it on):
// once the best has not improved by 0.5% for 20 measured variants, every other pick is a step of a
// simulated-annealing walk (anneal.ts's moves and acceptance, told only its own results) that
// starts at the baseline and keeps its place while the model finds improvements. On convolution
// A4000 the preference model settles in the wrong basin (it ranks the optimum's region below the
// median of the space) while annealing from the baseline reaches the optimum in 90 of 100 seeds.
// Chosen among arm variants on the two convolution spaces (seeds 1-40), it was the default for one
// commit and failed the 100-seed and held-out checks: convolution A4000 86/100 seeds to 98% instead
// of 72/100, but convolution A100 65/100 instead of 76/100, and on the held-out H200 transpose
// space 66/100 instead of 76/100 (bench/results/README.md). The walk always taking a third or a
// quarter of the picks cost evaluations on the H200 axpy and histogram spaces.
// Thompson sampling over a bootstrap ensemble of the pairwise trees (issue 18, fourth round; off:
// `acquisition: 'thompson', model: { ensemble: 8 }`, optionally `greedyPicks` and `dropDims`):
// each pick ranks the candidates by one of 8 bootstrap fits of the trees instead of the fit on all
// pairs. On the convolution spaces (tuned on, seeds 1-40) it reached 98% in 68/80 seed-runs
// instead of 59/80 (A4000 38/40 instead of 25/40, A100 30/40 instead of 34/40), but on the
// held-out H200 spaces at 100 seeds it cost evaluations on histogram (27.5 instead of 23) and
// gained nothing on transpose (78/100 instead of 76/100), so it stayed off
// (bench/results/strategies-options-thompson-trees.md).
// `thompsonStall: 20` (greedy until the best has stalled for 20 measured variants, then Thompson)
// keeps histogram at the default's 21 (20 seeds) but loses convolution A100 seeds (15/20 against
// 17/20) for A4000's (19/20 against 15/20): off too (20 seeds only; the same file).
// `initial: 'value-uniform'` (issue 18, seventh round; off): before the model is trained, each
// searched dimension in a random order takes a value uniformly among those still possible, instead of
// a variant uniform among the valid ones (bench/results/strategies-options-value-uniform.md).
// Boundary moves (the default since issue 18, eighth round: `boundary: 1, boundaryStall: 25`):
// once the best has not improved by 0.5% for 25 measured variants, the first pick of each round is
// the model's best among the best variant's boundary moves, one or two searched dimensions jumped
// to their smallest or largest value (a generic prior, no per-space setting: optima often sit on a
// parameter's bounds). On convolution A4000 the stalled basin (block_size_y 2, shared memory) is
// two bound jumps from the optimum (block_size_y 1, no shared memory). Chosen on the two
// convolution spaces (exploration seeds 101-140: A4000 38/40 seeds to 98% instead of 30/40, A100
// 30/40 instead of 32/40; stall 10 or 20, two picks, or a cap on moves per best did worse);
// dedispersion and the 8 H200 spaces were held out (bench/results/strategies-options-boundary.md).
// `far: 1` (the model's best among random variants differing from the best in half the searched
// dimensions or more, once stalled) lost on convolution A4000 and is off.
// `initial: 'lhs'` (issue 18, ninth round; off): the first 8 picks follow a Latin-hypercube design over
// the searched dimensions (each parameter's range in 8 strata, each used once). Tuned on dedispersion
// (exploration seeds 101-140: A100 4 instead of 7-7.5, A4000 9.5 instead of 12-12.5), it lost on the
// held-out spaces (seeds 101-120: matmul 26 instead of 17, reduce_sum 14.5 instead of 12, convolution
// A100 14/20 seeds instead of 17/20, A4000 121 instead of 92; bench/results/strategies-options-lhs.md).
// The bandit portfolio (issue 18, tenth round; off: `bandit: 'ucb' | 'thompson'`): once the model
// ranks, each pick goes to the model, a genetic child of the fastest measured variants or a step of
// the annealing walk, by UCB1 or Thompson sampling on how often each arm's picks improved the best by
// 0.5% (the model's prior favoured, at least half the picks its own). Tuned on the convolution spaces
// (seeds 101-140: Thompson 31/40 and 40/40 seeds to 98% against 30/40 and 38/40), it lost on 6 of
// the 8 held-out H200 spaces (histogram 24 vs 20.5, matmul 23 vs 17, stencil2d 21.5 vs 16.5): such
// improvements are too rare to tell the arms apart within a run, so the floor decides and the arms
// take a third of the picks whatever they do (bench/results/strategies-options-portfolio.md).
// `sweep` (issue 18, eleventh round; off): once stalled, picks among the best's unmeasured
// one-dimension moves; no setting beat the default on both convolution spaces (exploration seeds
// 101-140), and a model ranking after fewer comparisons (`minPairs` 10 or 6) lost there too
// (bench/results/strategies-options-minpairs.md).
// The trust region (issue 18, thirteenth round; the default since the fourteenth: `trust: 2`), after TuRBO: 2 of each round's picks are the model's best in a box around the best (ordered values, side 0.8 halving after 5 misses, restarting below 1/16); convolution A100 107 (19/20) instead of 108 (15/20), 115.5 (86/100) instead of 142.5 (71/100), transpose 47 / 51 instead of 56.5 / 63.5 (7 of 8 H200 spaces beat annealing and the GA); at seeds 1–20 convolution A4000 91.5 instead of 66.5 and histogram 29 instead of 21, but at 100 seeds A4000 97.5 instead of 107.5 and, seed by seed, histogram faster on 56 seeds and slower on 37: seeds 1–20 were the default's lucky block (A4000's medians over seeds 21–40, 41–60, 61–80, 81–100: 131, 125, 94, 108.5 without it, 112, 91, 94, 100.5 with it). On the live staged space (COUNTERFACTUAL REPLAY, bench/action-space.ts, 100 seeds) matmul 89 -> 100 and transpose 53 -> 71 seeds reach 98%, no space loses a median (bench/results/strategies-options-trust.md).
// `trustStall: 15` (off; 0 is the default) gates it on the boundary moves' stall counter: 9 of 10 held-out spaces as the region-off default and transpose 58 (20/20) instead of 67 (18/20), convolution A4000 63.5 instead of 66.5 (20 seeds), convolution A100 123.5 (87/100) instead of 142.5 (71/100), but A100 116.5 (17/20) against 108 (15/20) and A4000 115 (100/100) against 107.5 (99/100) (same file; the ungated region won more and became the default).
// Alignment features (issue 18, fifteenth round; `features: { crosses: true, align: true }`, off): convolution A4000 63 instead of 90.5 at seeds 1–20, but 102 instead of 98 at 1–100 (A100 111.5 (90/100) instead of 119.5 (88/100), dedispersion the same): off (bench/results/strategies-options-align.md).
// The other options below (Thompson sampling with the linear model's Laplace posterior, a full
// pool, neighbours, a genetic arm, a staged local walk, an initial design around the baseline) are
// off: none helped on the convolution spaces over 10 seeds.
import type { DuelResult, EvalResult, VariantRecord } from '../base/types.js';
import type { ModelStats, ObservedSpec, Strategy } from './loop.js';
import type { Action, ActionSpace, Proposal } from './actions.js';
import { FeatureEncoder, type FeatureOptions } from './features.js';
import { PreferenceModel, type PreferenceOptions } from './preference.js';
import { mulberry32, shuffle } from '../base/random.js';
import { isTimedSuccess } from '../measure/verdict.js';
import { Seen, proposal, randomUnseen } from './common.js';
import { geneticAlgorithm } from './genetic.js';

export interface ContrastiveOptions {
  /** Candidates the policy proposes per round. */
  candidates?: number;
  /** Variants measured per round. */
  picks?: number;
  /** Probability that a pick is a random candidate instead of the model's next best. */
  epsilon?: number;
  /** Decided comparisons needed before the model ranks proposals. */
  minPairs?: number;
  /** Rewards per policy-gradient group (advantages are normalised within a group). */
  group?: number;
  lr?: number;
  clip?: number;
  entropy?: number;
  epochs?: number;
  /** Share of candidates drawn around an elite (each dimension kept with `keep`, else from the policy). */
  eliteShare?: number;
  keep?: number;
  /** Reward of a failed variant (log-time units). */
  failReward?: number;
  /** Use pairs of measured variants whose median CIs separate, besides duels. */
  medianPairs?: boolean;
  features?: FeatureOptions;
  model?: PreferenceOptions;
  /** Ask the loop for a duel of each measured variant against the best so far. */
  duels?: boolean;
  /** Search the tunables first, flags and transforms after (see above). Default true. */
  staged?: boolean;
  stageMin?: number;
  stageMax?: number;
  stagePatience?: number;
  /** Stages in turn (default 15; 0: off, stage 1 is never re-entered): once the flags and transforms have not improved the best by 0.5% for this many measured variants, the tunables are searched again with the flags and transforms pinned at the best's, and so on, each stage left after `stagePatience` variants without a gain. */
  stageCycle?: number;
  /** How picks are chosen among candidates: the model's best (greedy) or the best under weights drawn from its posterior (Thompson sampling). */
  acquisition?: 'greedy' | 'thompson';
  /** Spread of the posterior draws (Thompson sampling). */
  spread?: number;
  /** With Thompson sampling: the first this many picks of each round are the model's best (greedy), the rest posterior draws. */
  greedyPicks?: number;
  /** With Thompson sampling: picks stay greedy until the best has not improved (by 0.5%) for this many measured variants (0: from the start). */
  thompsonStall?: number;
  /** Score every valid unmeasured variant when the action space has at most this many (0: the policy's candidates only). */
  pool?: number;
  /** Neighbours of the elites added to the candidates (one dimension changed). */
  neighbours?: boolean;
  /** Staged start: walk from the baseline to faster one-dimension neighbours (model-ranked once the model is trained) until `localPatience` of them in a row are not faster. */
  localStart?: boolean;
  localPatience?: number;
  /** With the staged start: share proposals between the walk and the model by Thompson sampling on how often each found a new best (else the walk goes first). */
  portfolio?: boolean;
  /** A genetic arm: once the model ranks proposals, each pick comes from the model or from the genetic algorithm's operators (genetic.ts, told every result), chosen by Thompson sampling on how often each found a new best. */
  genetic?: boolean;
  /** Children of the measured elites (uniform crossover of two, as the genetic algorithm) added to the candidates; the model ranks them with the rest (default 16; 0: none). */
  crossover?: number;
  /** How many of the fastest measured variants breed. */
  breeders?: number;
  /** Before the model is trained: uniformly random variants, or the baseline's one-dimension variations (one per dimension, a random other value, in random order), which teach the model each parameter's effect. */
  initial?: 'random' | 'around-baseline' | 'mixed' | 'value-uniform' | 'lhs';
  /** With `initial: 'lhs'`: the points of the Latin-hypercube design (after them, random variants until the model is trained). */
  lhsPoints?: number;
  /** The annealing arm (off by default, see above): the share of picks (0..1; 0: none) that are steps of a simulated-annealing walk from the baseline. */
  arm?: number;
  /** The arm takes its share only while the best has not improved (by 0.5%) for this many measured variants (0: always); the walk keeps its place in between. */
  armStall?: number;
  /** Once the model is trained, it picks the best of this many candidate steps of the walk (1: a random step, as anneal.ts). */
  armRank?: number;
  /** The walk's initial temperature (log-time units) and cooling per result of its own. */
  armT0?: number;
  armCooling?: number;
  /** Boundary moves (the default since issue 18's eighth round: 1, with `boundaryStall` 25; 0: none): once the best has not improved (by 0.5%) for `boundaryStall` measured variants, this many picks of each round are the model's best among the best variant's boundary moves, each searched dimension (1 or 2 of them, see `boundaryPairs`) jumped to its smallest or largest value. A generic prior: optima often sit on a parameter's bounds. */
  boundary?: number;
  boundaryStall?: number;
  /** Coordinate sweep (off by default: 0): once stalled as for `boundary`, this many picks of each round are the model's best among the best variant's unmeasured one-dimension moves (any value of one searched dimension), so a best one value away from a faster variant finds it within as many picks as it has such moves, whatever the model thinks of them. */
  sweep?: number;
  /** The sweep waits until the best has not improved (by 0.5%) for this many measured variants (default 50). */
  sweepStall?: number;
  /** Far picks (off by default: 0): once stalled as for `boundary`, this many picks of each round are the model's best among random valid unmeasured variants that differ from the best in at least half the searched dimensions (a restart in a second basin; crossover then breeds from it). */
  far?: number;
  /** At most this many boundary moves per best variant (0: no limit); a new best gets its own. */
  boundaryTries?: number;
  /** Boundary moves also jump two dimensions at once (default true). */
  boundaryPairs?: boolean;
  /** The bandit portfolio over pick sources (issue 18, tenth round; off by default: 'off'): once the model ranks proposals, each pick the model would make goes to one of the arms — the model's pick, a genetic child (tournament of three among the `breeders` fastest measured variants, uniform crossover, the genetic algorithm's mutation; not ranked by the model) or a step of the annealing walk from the baseline (anneal.ts's moves, told only its own results) — chosen by UCB1 ('ucb') or Thompson sampling over Beta posteriors ('thompson') of "the pick improved the best so far by 0.5% or more". (`portfolio` is the staged start's older, unrelated option.) */
  bandit?: 'off' | 'ucb' | 'thompson';
  /** The arms besides the model's (default both). */
  banditArms?: Array<'genetic' | 'anneal'>;
  /** The model arm's prior: this many extra improvements (Beta(1 + prior + wins, 1 + losses); UCB: as pseudo-counts). */
  banditPrior?: number;
  /** The model arm keeps at least this share of the bandit's picks (it is never starved). */
  banditFloor?: number;
  /** UCB1's exploration constant (mean + c·sqrt(ln N / n); sqrt(2) is UCB1's). */
  banditC?: number;
  /** What credits an arm's pick: improving the best so far by 0.5% or more ('best', the default), or landing among the fastest `banditTop` share of the variants measured before it ('top': a denser reward). */
  banditReward?: 'best' | 'top';
  banditTop?: number;
  /** The bandit acts only once the best has not improved (by 0.5%) for this many measured variants (0: as soon as the model ranks). */
  banditStall?: number;
  /** Retrain only once the measured variants grew by this fraction (at least one) since the last training (0: whenever decided pairs grew 10%). */
  retrainEvery?: number;
  /** The trust region (issue 18, thirteenth round; 2 by default since the fourteenth, 0 turns it off), after TuRBO: once the model ranks (and the best has stalled for `trustStall` measured variants), this many picks of each round are the model's best among `trustCands` random variants inside a box around the best measured variant — each searched dimension changed with probability `trustDims` / (searched dimensions), at least one, to a value within ±max(1, round(side·(values − 1)/2)) places of the best's in its ordered values. The side starts at `trustSide`, doubles (at most 1) after `trustSucc` trust-region picks in a row improved the best by 0.5%, halves after `trustFail` in a row did not, and below `trustMin` the region restarts at `trustSide` (around the best, or with `trustRestart: 'elite'` around the fastest measured variant outside every collapsed region's first box). */
  trust?: number;
  trustStall?: number;
  trustCands?: number;
  trustDims?: number;
  trustSide?: number;
  trustSucc?: number;
  trustFail?: number;
  trustMin?: number;
  trustRestart?: 'best' | 'elite';
}

interface Measured {
  id: string;
  a: Action;
  f: Float64Array;
  ms: number;
  low: number;
  high: number;
}

interface Sample {
  a: Action;
  /** log π_old(a) at proposal time. */
  logpOld: number;
  reward: number | null;
  /** The reward came from a duel (else from medians / failure). */
  fromDuel: boolean;
  /** Proposed while only the tunables were searched (its other dimensions were fixed, not chosen). */
  tunablesOnly: boolean;
}

/** What a resumed contrastive run takes back (see saveState). */
export interface ContrastiveState {
  logits: number[][];
  tunablesOnly: boolean;
  draws: number;
  /** The annealing arm's walk: the variant it is at, its temperature and its share's carry (absent in states saved before issue 18's arm). */
  arm?: { at: string | null; t: number; turn: number };
  /** When the current stage began (measured variants) and the flag and transform values stage 1 pins (absent in states saved before `stageCycle`). */
  stage?: { start: number; pinned: number[] };
}

export interface ContrastiveStrategy extends Strategy {
  readonly model: PreferenceModel;
  readonly encoder: FeatureEncoder;
  /** Current per-dimension probabilities of the policy. */
  policy(): number[][];
  /** Whether this run searches the tunables first (the space has tunables and other dimensions, and `staged` was not turned off). */
  readonly staged: boolean;
  /** The bandit portfolio's arms (see `bandit`): picks made (tries) and how many improved the best by 0.5% or more (wins); all zero when it is off. */
  banditStats(): Record<'model' | 'genetic' | 'anneal', { wins: number; tries: number }>;
  /** The trust region (see `trust`): its picks, how many improved the best by 0.5% or more, its halvings and restarts, and its side now; all zero (side `trustSide`) when it is off. */
  trustStats(): { picks: number; wins: number; halvings: number; restarts: number; side: number };
}

function softmax(l: Float64Array): Float64Array {
  const m = Math.max(...l);
  const e = l.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

export function contrastiveSearch(space: ActionSpace, seed: number, opts: ContrastiveOptions = {}): ContrastiveStrategy {
  const o = {
    candidates: 64, picks: 4, epsilon: 0.1, minPairs: 20, group: 8, lr: 0.5, clip: 0.2, entropy: 0.01, epochs: 4,
    eliteShare: 0.5, keep: 0.75, failReward: -1, medianPairs: true, duels: true,
    staged: true, stageMin: 30, stageMax: 60, stagePatience: 15, stageCycle: 15,
    acquisition: 'greedy' as 'greedy' | 'thompson', spread: 1, greedyPicks: 0, thompsonStall: 0, pool: 0, neighbours: false, localStart: false, localPatience: 8, portfolio: false, genetic: false, crossover: 16, breeders: 16, arm: 0, armStall: 20, armRank: 1, armT0: 0.1, armCooling: 0.97, retrainEvery: 0, boundary: 1, boundaryStall: 25, boundaryPairs: true, boundaryTries: 0, sweep: 0, sweepStall: 50, far: 0, lhsPoints: 8, bandit: 'off' as 'off' | 'ucb' | 'thompson', banditArms: ['genetic', 'anneal'] as Array<'genetic' | 'anneal'>, banditPrior: 1, banditFloor: 0.5, banditC: Math.SQRT2, banditStall: 0, banditReward: 'best' as 'best' | 'top', banditTop: 0.1, initial: 'random' as 'random' | 'around-baseline' | 'mixed' | 'value-uniform' | 'lhs',
    trust: 2, trustStall: 0, trustCands: 128, trustDims: 2, trustSide: 0.8, trustSucc: 3, trustFail: 5, trustMin: 1 / 16, trustRestart: 'best' as 'best' | 'elite', ...opts,
  };
  // Draws are counted so that a resumed run continues the same random stream (restoreState).
  const rawRng = mulberry32(seed);
  let draws = 0;
  const rng = (): number => {
    draws++;
    return rawRng();
  };
  const seen = new Seen(space);
  const encoder = new FeatureEncoder(space, opts.features ?? { crosses: true });
  const model = new PreferenceModel(encoder.length, { seed, featureDims: encoder.dimsOf, score: 'linear+trees', ...(opts.model ?? {}) });
  const logits = space.dims.map((d) => new Float64Array(d.values.length));
  const measured: Measured[] = [];
  const byId = new Map<string, Measured>();
  const samples = new Map<string, Sample>(); // by action key
  const opponentOf = new Map<string, string>(); // variant id -> opponent id planned at observe time
  // Each queued action with the variant it was derived from: the elite it mutated, else the best at proposal time.
  const queue: Array<{ a: Action; stage1: boolean; parents?: string[]; origin?: string }> = [];
  let pendingGroup: Sample[] = [];
  let lastTrainPairs = 0;
  let best: Measured | null = null;
  let bestAt = 0; // measured.length when the best last improved
  // Stage 1 searches only these dimensions; the others stay pinned: at their first value (default
  // flags, no transform), or, when the stages take turns (`stageCycle`), at the best's values.
  const tunableDim = space.dims.map((d) => d.kind === 'tunable');
  const staged = o.staged && tunableDim.some((t) => t) && tunableDim.some((t) => !t);
  let tunablesOnly = staged;
  let pinned: number[] = space.dims.map(() => 0);
  let stageStart = 0; // measured.length when the current stage began (0: the first stage)
  const active = (i: number, stage1: boolean): boolean => !stage1 || tunableDim[i];
  const maybeLeaveStage1 = (): void => {
    if (!staged) return;
    const n = measured.length;
    const quiet = n - Math.max(bestAt, stageStart);
    if (tunablesOnly) {
      const first = stageStart === 0;
      if (first ? n >= o.stageMax || (n >= o.stageMin && quiet >= o.stagePatience) : quiet >= o.stagePatience) [tunablesOnly, stageStart] = [false, n];
    } else if (o.stageCycle && best && quiet >= o.stageCycle) {
      // Flags and transforms gained nothing for a while: the tunables again, around the best's flags and transforms.
      [tunablesOnly, stageStart, pinned] = [true, n, best.a.map((v, i) => (tunableDim[i] ? 0 : v))];
      vuList = undefined;
    }
  };
  /** The best measured variant's id (lineage of proposals not drawn around an elite); undefined before one is journaled. */
  const bestId = (): string | undefined => (best && !best.id.startsWith('#') ? best.id : undefined);
  /** The journaled ids among these, once each (a proposal's parents in the history tree). */
  const lineage = (...ids: Array<string | undefined>): string[] | undefined => {
    const out = [...new Set(ids.filter((x): x is string => !!x && !x.startsWith('#')))];
    return out.length ? out : undefined;
  };
  const pin = (a: Action): Action => (tunablesOnly ? a.map((v, i) => (tunableDim[i] ? v : pinned[i])) : a);

  const logProb = (a: Action, stage1 = false): number => {
    let s = 0;
    space.dims.forEach((_, i) => {
      if (active(i, stage1)) s += Math.log(softmax(logits[i])[a[i]]);
    });
    return s;
  };
  const sampleDim = (i: number): number => {
    const p = softmax(logits[i]);
    let r = rng();
    for (let j = 0; j < p.length; j++) if ((r -= p[j]) <= 0) return j;
    return p.length - 1;
  };
  const fromPolicy = (anchor: Action | null): Action => pin(space.dims.map((_, i) => (anchor && rng() < o.keep ? anchor[i] : sampleDim(i))));
  /** A random unseen action (in stage 1: random tunables, the rest at defaults); null when none is left. */
  const randomAction = (): Action | null => {
    if (!tunablesOnly) return randomUnseen(space, seen, rng);
    for (let t = 0; t < 4000; t++) {
      const a = pin(space.dims.map((d) => Math.floor(rng() * d.values.length)));
      if (space.isValid(a) && !seen.has(a)) return a;
    }
    tunablesOnly = false; // the tunables are (nearly) exhausted: on to flags and transforms
    return randomUnseen(space, seen, rng);
  };

  let lastTrainMeasured = 0;
  const retrain = (): void => {
    const n = model.decided;
    if (n < o.minPairs || n === lastTrainPairs) return;
    if (model.trained && n < lastTrainPairs * 1.1 && n - lastTrainPairs < 10) return;
    // Pairs of medians grow with the square of the variants measured: retrain as variants grow by 5% (at least one).
    if (model.trained && o.retrainEvery && measured.length < lastTrainMeasured + Math.max(1, Math.floor(measured.length * o.retrainEvery))) return;
    model.train();
    lastTrainPairs = n;
    lastTrainMeasured = measured.length;
  };

  /** One PPO-style update on a group of rewarded samples. */
  const update = (group: Sample[]): void => {
    const rs = group.map((s) => s.reward ?? o.failReward);
    const mean = rs.reduce((a, b) => a + b, 0) / rs.length;
    const sd = Math.sqrt(rs.reduce((a, b) => a + (b - mean) ** 2, 0) / rs.length);
    if (sd < 1e-9) return;
    const adv = rs.map((r) => (r - mean) / sd);
    for (let ep = 0; ep < o.epochs; ep++) {
      const grads = logits.map((l) => new Float64Array(l.length));
      group.forEach((s, k) => {
        const ratio = Math.exp(logProb(s.a, s.tunablesOnly) - s.logpOld);
        const A = adv[k];
        // Clipped surrogate: no gradient once the ratio left [1-clip, 1+clip] in the advantage's direction.
        if ((A > 0 && ratio > 1 + o.clip) || (A < 0 && ratio < 1 - o.clip)) return;
        space.dims.forEach((_, i) => {
          if (!active(i, s.tunablesOnly)) return; // a fixed dimension was not the policy's choice
          const p = softmax(logits[i]);
          for (let j = 0; j < p.length; j++) grads[i][j] += (A * ratio * ((j === s.a[i] ? 1 : 0) - p[j])) / group.length;
        });
      });
      space.dims.forEach((_, i) => {
        const p = softmax(logits[i]);
        const H = -p.reduce((a, q) => a + (q > 0 ? q * Math.log(q) : 0), 0);
        for (let j = 0; j < p.length; j++) {
          const dH = p[j] > 0 ? -p[j] * (Math.log(p[j]) + H) : 0;
          logits[i][j] += o.lr * (grads[i][j] + o.entropy * dH);
        }
      });
    }
  };

  const flushGroups = (): void => {
    const done = pendingGroup.filter((s) => s.reward !== null);
    if (done.length < o.group) return;
    update(done);
    pendingGroup = pendingGroup.filter((s) => s.reward === null);
  };

  // The initial design around the baseline: dimensions still to vary, in random order.
  let initialDims: number[] | null = null;
  let initialCount = 0;
  const initialAction = (): Action | null => {
    if (o.initial === 'value-uniform') return valueUniform();
    if (o.initial === 'lhs') return lhsNext();
    if (o.initial === 'random' || !baselineAction) return null;
    // Mixed: every other initial variant is a uniformly random one.
    if (o.initial === 'mixed' && initialCount++ % 2 === 1) return null;
    initialDims ??= space.dims.map((_, i) => i).filter((i) => space.dims[i].values.length > 1).sort(() => rng() - 0.5);
    const base = baselineAction;
    while (initialDims.length) {
      const i = initialDims.shift()!;
      if (!active(i, tunablesOnly)) continue;
      for (const j of shuffle(space.dims[i].values.map((_, k) => k).filter((k) => k !== base[i]), rng)) {
        const b = [...base];
        b[i] = j;
        if (!seen.has(b) && space.isValid(b)) return b;
      }
    }
    return null;
  };
  let baselineAction: Action | null = null;
  // The value-uniform design: each searched dimension, in a random order, takes a value drawn
  // uniformly among the values some unmeasured valid variant still has given the values chosen so
  // far. Uniform over valid variants (the default) favours the values that most variants have (small
  // blocks and tiles, where restrictions cut fewer combinations); this gives every value of every
  // parameter its share. Lists the valid variants of the searched dimensions once (null: more than
  // 200,000 in the product, then the random design).
  let vuList: Action[] | null | undefined;
  let vuStage1 = true;
  /** The valid variants of the searched dimensions (the others at their first value), listed once per stage; null when their product exceeds 200,000. */
  const listSearched = (): Action[] | null => {
    if (vuList === undefined || vuStage1 !== tunablesOnly) {
      vuStage1 = tunablesOnly;
      const dimsOn = space.dims.map((d, i) => (active(i, tunablesOnly) ? d.values.length : 1));
      if (dimsOn.reduce((a, b) => a * b, 1) > 200_000) vuList = null;
      else {
        vuList = [];
        const a: Action = new Array(space.dims.length).fill(0);
        for (;;) {
          const b = pin([...a]); // a copy: pin returns its argument outside stage 1
          if (space.isValid(b)) vuList.push(b);
          let i = a.length - 1;
          while (i >= 0 && ++a[i] >= dimsOn[i]) a[i--] = 0;
          if (i < 0) break;
        }
      }
    }
    return vuList;
  };
  const valueUniform = (): Action | null => {
    const list = listSearched();
    if (!list) return null;
    let pool = list.filter((a) => !seen.has(a));
    if (!pool.length) return null;
    const order = shuffle(space.dims.map((_, i) => i).filter((i) => active(i, tunablesOnly) && space.dims[i].values.length > 1), rng);
    for (const i of order) {
      const vals = [...new Set(pool.map((a) => a[i]))];
      const v = vals[Math.floor(rng() * vals.length)];
      pool = pool.filter((a) => a[i] === v);
    }
    return pool[Math.floor(rng() * pool.length)];
  };
  // The Latin-hypercube design: `lhsPoints` target points in [0, 1) per searched dimension, the
  // interval cut into that many strata and every stratum used once per dimension, in a random
  // pairing; a dimension of L values gives value x the share [x/L, (x+1)/L). Each pick takes the
  // searched dimensions in a random order, and each the value whose share is nearest its target among
  // those some unmeasured valid variant still has given the values already chosen (the nearest valid
  // variant in the joint distance, tried first, fell far from extreme targets under restrictions). Random sampling puts most first
  // picks where most valid variants are; this spreads them over every parameter's range, so the
  // model's first pairs see each parameter's extremes and middle. Null once the design is used up
  // (or the searched dimensions have more than 200,000 variants): then random variants.
  let lhsPlan: number[][] | null = null;
  let lhsAt = 0;
  const lhsNext = (): Action | null => {
    const list = listSearched();
    if (!list || lhsAt >= o.lhsPoints) return null;
    let pool = list.filter((a) => !seen.has(a));
    if (!pool.length) return null;
    const n = o.lhsPoints;
    lhsPlan ??= space.dims.map(() => shuffle(Array.from({ length: n }, (_, k) => k), rng));
    const target = space.dims.map((_, i) => (lhsPlan![i][lhsAt] + rng()) / n);
    lhsAt++;
    const order = shuffle(space.dims.map((_, i) => i).filter((i) => active(i, tunablesOnly) && space.dims[i].values.length > 1), rng);
    for (const i of order) {
      const L = space.dims[i].values.length;
      let v = -1;
      let bestD = Infinity;
      let ties = 0;
      for (const x of new Set(pool.map((a) => a[i]))) {
        const d = Math.abs((x + 0.5) / L - target[i]); // value x holds [x/L, (x+1)/L) of the range
        if (d < bestD - 1e-12) [bestD, v, ties] = [d, x, 1];
        else if (Math.abs(d - bestD) <= 1e-12 && rng() * ++ties < 1) v = x; // a uniform choice among equally near values
      }
      pool = pool.filter((a) => a[i] === v);
    }
    return pool[Math.floor(rng() * pool.length)];
  };

  // The staged start's walk: its current point, whether it goes on, and its proposals.
  let walk: Measured | null = null;
  let walking = o.localStart;
  let walkMisses = 0;
  const walkKeys = new Set<string>();
  /** Valid unmeasured actions that differ from `a` in one searched dimension (any other value). */
  const oneAway = (a: Action): Action[] => {
    const out: Action[] = [];
    space.dims.forEach((d, i) => {
      if (!active(i, tunablesOnly)) return;
      for (let j = 0; j < d.values.length; j++) {
        if (j === a[i]) continue;
        const b = [...a];
        b[i] = j;
        if (!seen.has(b) && space.isValid(b)) out.push(b);
      }
    });
    return out;
  };
  // The portfolio: proposals of each source (walk, model) and how many of them found a new best.
  const credit = { walk: { wins: 0, tries: 0 }, model: { wins: 0, tries: 0 }, genetic: { wins: 0, tries: 0 } };
  const sourceOf = new Map<string, 'walk' | 'model' | 'genetic'>();
  const ga = o.genetic ? geneticAlgorithm(space, (seed ^ 0x5bd1e995) >>> 0) : null;
  /** The genetic arm's next child (not measured or queued yet), or null. */
  const gaChild = (): { a: Action; parent?: string } | null => {
    if (!ga) return null;
    for (let t = 0; t < 4; t++) {
      const [p] = ga.propose(1);
      if (!p) return null;
      const a = space.encode({ config: p.config, flags: p.flags, transforms: p.transforms });
      if (a && !seen.has(a)) return { a, parent: p.parents?.[0] };
    }
    return null;
  };
  /** A Beta(1 + wins, 1 + losses) draw: the (wins+1)-th smallest of tries+1 uniforms. */
  const drawBeta = (c: { wins: number; tries: number }): number => {
    const u = Array.from({ length: c.tries + 1 }, () => rng()).sort((x, y) => x - y);
    return u[c.wins];
  };
  const walkStep = (): boolean => {
    if (!walking || !walk) return false;
    if (o.portfolio && drawBeta(credit.walk) < drawBeta(credit.model)) return false;
    const nb = oneAway(walk.a);
    if (!nb.length) {
      walking = false; // a local optimum: every neighbour measured
      return false;
    }
    let a = nb[Math.floor(rng() * nb.length)];
    if (model.trained && rng() >= o.epsilon) {
      let best = -Infinity;
      for (const b of nb) {
        const sc = model.score(encoder.encode(b));
        if (sc > best) [best, a] = [sc, b];
      }
    }
    seen.add(a);
    walkKeys.add(space.key(a));
    sourceOf.set(space.key(a), 'walk');
    queue.push({ a, stage1: tunablesOnly, parents: [walk.id] });
    return true;
  };

  // The annealing arm (see `arm`): its current point, temperature, and the keys it proposed.
  let armCur: Measured | null = null;
  let armT = o.armT0;
  const armKeys = new Set<string>();
  let armTurn = 0;
  const armStep1 = (a: Action): Action | null => {
    const free = space.dims.map((d, i) => (d.values.length > 1 && active(i, tunablesOnly) ? i : -1)).filter((i) => i >= 0);
    if (!free.length) return null;
    for (let t = 0; t < 60; t++) {
      const b = [...a];
      const i = free[Math.floor(rng() * free.length)];
      const nv = space.dims[i].values.length;
      if (rng() < 0.2) b[i] = Math.floor(rng() * nv);
      else b[i] = Math.min(nv - 1, Math.max(0, b[i] + (rng() < 0.5 ? -1 : 1)));
      if (space.isValid(b) && !seen.has(b)) return b;
    }
    // As anneal.ts: any unmeasured neighbour, else (every neighbour measured) a jump to a random unmeasured variant.
    const nb = oneAway(a);
    return nb.length ? nb[Math.floor(rng() * nb.length)] : randomAction();
  };
  /** Queues one step of the annealing arm when it is its turn; false when it is not (or it has no step). */
  const armPick = (): boolean => {
    if (!o.arm || !armCur) return false;
    if (o.armStall && measured.length - bestAt < o.armStall) return false;
    // A deterministic share: the arm's turn comes every 1/arm picks.
    armTurn += o.arm;
    if (armTurn < 1) return false;
    armTurn -= 1;
    let a: Action | null = null;
    const n = model.trained ? Math.max(1, o.armRank) : 1;
    let bestSc = -Infinity;
    for (let k = 0; k < n; k++) {
      const b = armStep1(armCur.a);
      if (!b) continue;
      if (n === 1) {
        a = b;
        break;
      }
      const sc = model.score(encoder.encode(b));
      if (sc > bestSc) [bestSc, a] = [sc, b];
    }
    if (!a) return false;
    seen.add(a);
    armKeys.add(space.key(a));
    queue.push({ a, stage1: tunablesOnly, parents: lineage(armCur.id), origin: 'anneal arm' });
    return true;
  };

  /** Queues the model's best of `cands` as a child of `parent` (default: the best measured variant); the action queued, null when there are none. */
  const queueBestOf = (cands: Action[], origin: string, parent: Measured | null = best): Action | null => {
    if (!parent || !cands.length) return null;
    let a = cands[0];
    let sc = -Infinity;
    for (const b of cands) {
      const x = model.score(encoder.encode(b));
      if (x > sc) [sc, a] = [x, b];
    }
    seen.add(a);
    queue.push({ a, stage1: tunablesOnly, parents: lineage(parent.id), origin });
    return a;
  };

  /** Queues the model's best boundary move of the best measured variant (see `boundary`); false when none is left. */
  let boundaryOf: Measured | null = null;
  let boundaryUsed = 0;
  const boundaryPick = (): boolean => {
    if (!best) return false;
    if (boundaryOf !== best) [boundaryOf, boundaryUsed] = [best, 0];
    if (o.boundaryTries && boundaryUsed >= o.boundaryTries) return false;
    boundaryUsed++;
    const base = best.a;
    const dimsOn = space.dims.map((d, i) => (d.values.length > 1 && active(i, tunablesOnly) ? i : -1)).filter((i) => i >= 0);
    const ends = (i: number): number[] => [0, space.dims[i].values.length - 1].filter((v) => v !== base[i]);
    const out: Action[] = [];
    const ok = (b: Action): void => {
      if (space.isValid(b) && !seen.has(b)) out.push(b);
    };
    for (const i of dimsOn) {
      for (const v of ends(i)) {
        const b = [...base];
        b[i] = v;
        ok(b);
        if (!o.boundaryPairs) continue;
        for (const j of dimsOn) {
          if (j <= i) continue;
          for (const w of ends(j)) {
            const c = [...b];
            c[j] = w;
            ok(c);
          }
        }
      }
    }
    return queueBestOf(out, 'boundary') !== null;
  };

  /** Queues the model's best unmeasured one-dimension move of the best measured variant (see `sweep`); false when none is left. */
  const sweepPick = (): boolean => {
    if (!best) return false;
    const base = best.a;
    const moves: Action[] = [];
    space.dims.forEach((d, i) => {
      if (d.values.length < 2 || !active(i, tunablesOnly)) return;
      for (let v = 0; v < d.values.length; v++) {
        if (v === base[i]) continue;
        const b = [...base];
        b[i] = v;
        if (space.isValid(b) && !seen.has(b)) moves.push(b);
      }
    });
    return queueBestOf(moves, 'sweep') !== null;
  };

  /** Queues the model's best among random unmeasured variants far from the best measured one (see `far`); false when none was found. */
  const farPick = (): boolean => {
    if (!best) return false;
    const base = best.a;
    const on = space.dims.map((d, i) => d.values.length > 1 && active(i, tunablesOnly));
    const need = Math.max(1, Math.ceil(on.filter((x) => x).length / 2));
    const far: Action[] = [];
    for (let t = 0; far.length < o.candidates && t < o.candidates * 30; t++) {
      const b = randomAction();
      if (!b) break;
      if (b.filter((v, i) => on[i] && v !== base[i]).length >= need) far.push(b);
    }
    return queueBestOf(far, 'far') !== null;
  };

  // The trust region (see `trust`): its side, its run of improving / not improving picks, its
  // centre after a restart ('elite'), the centres of collapsed regions, and the keys it proposed.
  let trustSide = o.trustSide;
  let trustRun = 0; // > 0: improving picks in a row; < 0: picks in a row that did not improve
  let trustCentre: Measured | null = null;
  let trustBest: Measured | null = null; // the best when the region restarted around an elite
  const trustDead: Action[] = [];
  const trustKeys = new Set<string>();
  const trustCount = { picks: 0, wins: 0, halvings: 0, restarts: 0 };
  /** Half the box's width in dimension i at side L: at least one place, at most the whole range. */
  const trustHalf = (i: number, L: number): number => Math.max(1, Math.round((L * (space.dims[i].values.length - 1)) / 2));
  /** Whether `a` lies inside the first (side `trustSide`) box of a collapsed region. */
  const inDead = (a: Action): boolean => trustDead.some((c) => a.every((v, i) => Math.abs(v - c[i]) <= trustHalf(i, o.trustSide)));
  /** Queues the model's best variant of the trust region; false when none was found. */
  const trustPick = (): boolean => {
    if (!best) return false;
    if (trustCentre && best !== trustBest) trustCentre = null; // a new best anywhere since the restart: the region follows it
    const from = trustCentre ?? best;
    const centre = from.a;
    const on = space.dims.map((d, i) => (d.values.length > 1 && active(i, tunablesOnly) ? i : -1)).filter((i) => i >= 0);
    if (!on.length) return false;
    const p = Math.min(1, o.trustDims / on.length);
    const out: Action[] = [];
    const keys = new Set<string>();
    for (let t = 0; out.length < o.trustCands && t < o.trustCands * 10; t++) {
      const b = [...centre];
      const move = (i: number): void => {
        const h = trustHalf(i, trustSide);
        const lo = Math.max(0, centre[i] - h);
        const hi = Math.min(space.dims[i].values.length - 1, centre[i] + h);
        const v = lo + Math.floor(rng() * (hi - lo)); // one of the other hi - lo values
        b[i] = v >= centre[i] ? v + 1 : v;
      };
      let changed = 0;
      for (const i of on) {
        if (rng() >= p) continue;
        move(i);
        changed++;
      }
      if (!changed) move(on[Math.floor(rng() * on.length)]);
      const c = pin(b);
      const k = space.key(c);
      if (keys.has(k) || seen.has(c) || !space.isValid(c)) continue;
      keys.add(k);
      out.push(c);
    }
    const a = queueBestOf(out, 'trust region', from);
    if (!a) return false;
    trustKeys.add(space.key(a));
    trustCount.picks++;
    return true;
  };
  /** A trust-region pick's result: the side doubles after `trustSucc` improvements in a row, halves after `trustFail` misses in a row, and restarts once below `trustMin`. */
  const trustResult = (improved: boolean): void => {
    if (improved) {
      trustCount.wins++;
      trustRun = Math.max(0, trustRun) + 1;
      if (trustRun >= o.trustSucc) [trustSide, trustRun] = [Math.min(1, trustSide * 2), 0];
      return;
    }
    trustRun = Math.min(0, trustRun) - 1;
    if (-trustRun < o.trustFail) return;
    [trustSide, trustRun] = [trustSide / 2, 0];
    trustCount.halvings++;
    if (trustSide >= o.trustMin) return;
    trustCount.restarts++;
    trustSide = o.trustSide;
    if (o.trustRestart !== 'elite' || !best) return;
    trustDead.push((trustCentre ?? best).a);
    trustCentre = [...measured].sort((x, y) => x.ms - y.ms).find((m) => !inDead(m.a)) ?? null;
    trustBest = best;
  };

  /** The fastest measured variants, the population that breeds (crossover children, the bandit's genetic arm). */
  const breeding = (): Measured[] => [...measured].sort((x, y) => x.ms - y.ms).slice(0, o.breeders);
  /** One child of `pop` as the genetic algorithm makes it: two parents by tournament of three, uniform crossover, mutation (not checked for validity). */
  const breed = (pop: Measured[]): { c: Action; m1: Measured; m2: Measured } => {
    const pick = (): Measured => {
      let b = pop[Math.floor(rng() * pop.length)];
      for (let k = 1; k < 3; k++) {
        const c = pop[Math.floor(rng() * pop.length)];
        if (c.ms < b.ms) b = c;
      }
      return b;
    };
    const pm = Math.max(0.1, 1 / Math.max(1, space.dims.length));
    const m1 = pick();
    const m2 = pick();
    const c = pin(m1.a.map((v, i) => (rng() < 0.5 ? v : m2.a[i])));
    space.dims.forEach((d, i) => {
      if (!active(i, tunablesOnly) || rng() >= pm || d.values.length < 2) return;
      c[i] = rng() < 0.7 ? Math.min(d.values.length - 1, Math.max(0, c[i] + (rng() < 0.5 ? -1 : 1))) : Math.floor(rng() * d.values.length);
    });
    return { c, m1, m2 };
  };

  // The bandit portfolio (see `bandit`): per arm, the picks it made and how many of them improved the
  // best so far by 0.5% or more; which arm made each pick (by action key).
  type BanditArm = 'model' | 'genetic' | 'anneal';
  const bandit = { model: { wins: 0, tries: 0 }, genetic: { wins: 0, tries: 0 }, anneal: { wins: 0, tries: 0 } };
  const banditOf = new Map<string, BanditArm>();
  /** The arm for the next pick: the model while it holds less than `banditFloor` of the bandit's picks, else UCB1's or Thompson sampling's choice. */
  const chooseArm = (): BanditArm => {
    const arms: BanditArm[] = ['model', ...o.banditArms.filter((x) => x === 'genetic' || x === 'anneal')];
    const total = arms.reduce((n, x) => n + bandit[x].tries, 0);
    if (arms.length === 1 || bandit.model.tries < o.banditFloor * (total + 1)) return 'model';
    const prior = (x: BanditArm): number => (x === 'model' ? o.banditPrior : 0);
    let best: BanditArm = 'model';
    let top = -Infinity;
    for (const x of arms) {
      const c = bandit[x];
      let v: number;
      if (o.bandit === 'thompson') v = drawBeta({ wins: c.wins + prior(x), tries: c.tries + prior(x) });
      else {
        // UCB1 on the Beta(1 + prior, 1) posterior mean; the bonus shrinks with the arm's picks.
        const n = c.tries + prior(x) + 2;
        v = (c.wins + prior(x) + 1) / n + o.banditC * Math.sqrt(Math.log(total + 2) / n);
      }
      if (v > top) [top, best] = [v, x];
    }
    return best;
  };
  /** Whether the bandit gives out this round's picks: on, the model trained, and (with `banditStall`) the best stalled. */
  const banditOn = (): boolean => o.bandit !== 'off' && model.trained && !(o.banditStall && measured.length - bestAt < o.banditStall);
  /** Queues the bandit's pick when its arm is not the model's (true), else (or when that arm has no pick) records the coming model pick's arm and returns false. */
  const banditPick = (): boolean => {
    if (!banditOn()) return false;
    const arm = chooseArm();
    let a: Action | null = null;
    let parents: string[] | undefined;
    if (arm === 'genetic') {
      const pop = breeding();
      for (let t = 0; t < 50 && pop.length >= 2; t++) {
        const { c, m1, m2 } = breed(pop);
        if (space.isValid(c) && !seen.has(c)) {
          [a, parents] = [c, lineage(m1.id, m2.id)];
          break;
        }
      }
    } else if (arm === 'anneal' && armCur) {
      a = armStep1(armCur.a);
      parents = lineage(armCur.id);
      if (a) armKeys.add(space.key(a));
    }
    if (!a) {
      bandit.model.tries++; // the model's pick follows
      return false;
    }
    seen.add(a);
    bandit[arm].tries++;
    banditOf.set(space.key(a), arm);
    queue.push({ a, stage1: tunablesOnly, parents: parents ?? lineage(bestId()), origin: arm === 'anneal' ? 'anneal arm' : 'genetic child' });
    return true;
  };

  const round = (): void => {
    retrain();
    flushGroups();
    maybeLeaveStage1();
    if (walkStep()) return;
    if (!model.trained) {
      for (let i = 0; i < o.picks; i++) {
        if (armPick()) continue;
        const a = initialAction() ?? randomAction();
        if (!a) break;
        seen.add(a);
        queue.push({ a, stage1: tunablesOnly, parents: lineage(bestId()) });
      }
      return;
    }
    const elites = [...measured].sort((x, y) => x.ms - y.ms).slice(0, 3);
    const cands: Action[] = [];
    const anchorOf = new Map<string, string[]>(); // candidate key -> the elite it was drawn around, or a crossover child's two parents
    const keys = new Set<string>();
    const add = (a0: Action, parents?: string[]): void => {
      const a = pin(a0);
      const k = space.key(a);
      if (keys.has(k) || seen.has(a) || !space.isValid(a)) return;
      keys.add(k);
      if (parents?.length) anchorOf.set(k, parents);
      cands.push(a);
    };
    for (let t = 0; cands.length < o.candidates && t < o.candidates * 20; t++) {
      const elite = elites.length && rng() < o.eliteShare ? elites[Math.floor(rng() * elites.length)] : null;
      add(fromPolicy(elite?.a ?? null), lineage(elite?.id));
    }
    if (o.neighbours) {
      for (const e of elites) {
        space.dims.forEach((d, i) => {
          if (!active(i, tunablesOnly)) return;
          for (let j = 0; j < d.values.length; j++) if (j !== e.a[i]) add(e.a.map((v, k) => (k === i ? j : v)));
        });
      }
    }
    if (o.crossover) {
      const pop = breeding();
      for (let t = 0, made = 0; made < o.crossover && t < o.crossover * 10 && pop.length >= 2; t++) {
        const { c, m1, m2 } = breed(pop);
        const before = cands.length;
        add(c, lineage(m1.id, m2.id));
        if (cands.length > before) made++;
      }
    }
    for (const a of fullPool()) add(a);
    if (!cands.length) {
      const a = randomAction();
      if (a) {
        seen.add(a);
        queue.push({ a, stage1: tunablesOnly, parents: lineage(bestId()) });
      }
      return;
    }
    const feats = cands.map((a) => encoder.encode(a));
    const taken = new Set<number>();
    const stalled = measured.length - bestAt >= o.boundaryStall;
    let boundaryLeft = o.boundary && stalled ? o.boundary : 0;
    let farLeft = o.far && stalled ? o.far : 0;
    let sweepLeft = o.sweep && measured.length - bestAt >= o.sweepStall ? o.sweep : 0;
    let trustLeft = o.trust && measured.length - bestAt >= o.trustStall ? o.trust : 0;
    for (let i = 0; i < o.picks && taken.size < cands.length; i++) {
      if (armPick()) continue;
      if (boundaryLeft > 0) {
        boundaryLeft--;
        if (boundaryPick()) continue;
      }
      if (sweepLeft > 0) {
        sweepLeft--;
        if (sweepPick()) continue;
      }
      if (farLeft > 0) {
        farLeft--;
        if (farPick()) continue;
      }
      if (trustLeft > 0) {
        trustLeft--;
        if (trustPick()) continue;
      }
      if (ga && drawBeta(credit.genetic) > drawBeta(credit.model)) {
        const child = gaChild();
        if (child) {
          const { a } = child;
          seen.add(a);
          sourceOf.set(space.key(a), 'genetic');
          queue.push({ a, stage1: tunablesOnly, parents: lineage(child.parent ?? bestId()) });
          continue;
        }
      }
      const armed = banditOn();
      if (banditPick()) continue;
      // A pick of another source this round (boundary, sweep, far, trust region, an arm) may be a
      // candidate too: not the model's to take again (it was proposed twice, ~1% of a run's steps).
      cands.forEach((a, k) => {
        if (!taken.has(k) && seen.has(a)) taken.add(k);
      });
      if (taken.size >= cands.length) break;
      let j = -1;
      if (rng() < o.epsilon) {
        do j = Math.floor(rng() * cands.length);
        while (taken.has(j));
      } else {
        // Pairs of medians share their variants (n variants give up to n²/2 pairs): widen the draws by sqrt(pairs per variant).
        const score = o.acquisition === 'thompson' && i >= o.greedyPicks && measured.length - bestAt >= o.thompsonStall ? model.posteriorScorer(rng, o.spread * Math.sqrt(Math.max(1, model.stats().trainedOn / Math.max(1, measured.length)))) : (f: Float64Array) => model.score(f);
        let best = -Infinity;
        feats.forEach((f, k) => {
          if (taken.has(k)) return;
          const sc = score(f);
          if (sc > best) [best, j] = [sc, k];
        });
      }
      taken.add(j);
      seen.add(cands[j]);
      if (armed) banditOf.set(space.key(cands[j]), 'model');
      queue.push({ a: cands[j], stage1: tunablesOnly, parents: anchorOf.get(space.key(cands[j])) ?? lineage(bestId()) });
    }
  };

  /** Every valid unmeasured action when the space is small enough to list (stage 1: with flags and transforms at their defaults). */
  let listed: Action[] | null = null;
  const fullPool = (): Action[] => {
    if (!o.pool || space.size > o.pool * 8) return [];
    listed ??= [...space.enumerate()];
    if (listed.length > o.pool) return [];
    return listed.filter((a) => !seen.has(a) && (!tunablesOnly || a.every((v, i) => tunableDim[i] || v === pinned[i])));
  };

  const addMedianPairs = (m: Measured): void => {
    if (!o.medianPairs) return;
    for (const x of measured) {
      if (x === m) continue;
      if (m.high < x.low && x.ms / m.ms > 1.01) model.add({ faster: m.f, slower: x.f, from: 'medians' });
      else if (x.high < m.low && m.ms / x.ms > 1.01) model.add({ faster: x.f, slower: m.f, from: 'medians' });
    }
  };

  return {
    name: 'contrastive',
    model,
    encoder,
    staged,
    policy: () => logits.map((l) => [...softmax(l)]),
    banditStats: () => ({ model: { ...bandit.model }, genetic: { ...bandit.genetic }, anneal: { ...bandit.anneal } }),
    trustStats: () => ({ ...trustCount, side: trustSide }),
    propose(n) {
      const out: Proposal[] = [];
      while (out.length < n) {
        if (!queue.length) round();
        const q = queue.shift();
        if (!q) break;
        const a = q.a;
        const s: Sample = { a, logpOld: logProb(a, q.stage1), reward: null, fromDuel: false, tunablesOnly: q.stage1 };
        samples.set(space.key(a), s);
        pendingGroup.push(s);
        // The origin says which stage proposed it (shown in the history tree).
        out.push(proposal(space, a, `${q.origin ?? (model.trained ? 'policy' : 'random')}${q.stage1 ? ' (tunables)' : ''}`, q.parents?.length ? q.parents : undefined));
      }
      return out;
    },
    observe(spec: ObservedSpec, result: EvalResult) {
      const a = space.encode(spec);
      if (!a) return;
      if (spec.origin === 'baseline') baselineAction = a;
      seen.add(a);
      ga?.observe?.(spec, result);
      const s = samples.get(space.key(a));
      const fromWalk = walkKeys.has(space.key(a));
      const src = spec.origin === 'baseline' ? undefined : (sourceOf.get(space.key(a)) ?? 'model');
      if (src) credit[src].tries++;
      // The trust region's own picks; a resumed run knows them by their origin in the journal and so
      // rebuilds the region's side and restarts as they were (as the annealing arm rebuilds its walk).
      const ownTrust = trustKeys.delete(space.key(a));
      if (ownTrust || (spec.origin ?? '').startsWith('trust region')) {
        if (!ownTrust) trustCount.picks++;
        trustResult(isTimedSuccess(result) && !!best && best.ms / result.timing[0].medianMs > 1.005);
      }
      if (!isTimedSuccess(result)) {
        if (s) s.reward = o.failReward;
        if (fromWalk && ++walkMisses >= o.localPatience) walking = false;
        return;
      }
      const t = result.timing[0];
      const m: Measured = { id: spec.id ?? `#${measured.length}`, a, f: encoder.encode(a), ms: t.medianMs, low: t.ciLowMs, high: t.ciHighMs };
      if (spec.origin === 'baseline') armCur = m;
      else if ((o.arm || o.bandit !== 'off') && armCur && (armKeys.has(space.key(a)) || (spec.origin ?? '').startsWith('anneal arm'))) {
        armKeys.add(space.key(a)); // a resumed run rebuilds its walk from the journal
        // The walk's own results only: it moves to a faster step, or to a slower one with probability exp(-Δ/T).
        if (m.ms <= armCur.ms || rng() < Math.exp(-Math.log(m.ms / armCur.ms) / armT)) armCur = m;
        armT = Math.max(0.002, armT * o.armCooling);
      }
      if (spec.origin === 'baseline') walk = m;
      else if (fromWalk) {
        if (walk && m.ms < walk.ms) [walk, walkMisses] = [m, 0];
        else if (++walkMisses >= o.localPatience) walking = false;
      }
      // Reward from medians against the best so far; replaced by the duel's when one follows.
      if (s) s.reward = best ? Math.log(best.ms / m.ms) : 0;
      if (best && spec.id) opponentOf.set(spec.id, best.id);
      addMedianPairs(m);
      measured.push(m);
      byId.set(m.id, m);
      const armOf = banditOf.get(space.key(a));
      if (armOf && best && (o.banditReward === 'top' ? measured.filter((x) => x.ms < m.ms).length < Math.max(1, Math.ceil(o.banditTop * measured.length)) : best.ms / m.ms > 1.005)) bandit[armOf].wins++;
      if (!best || m.ms < best.ms) {
        if (src && best) credit[src].wins++;
        if (best && best.ms / m.ms > 1.005) bestAt = measured.length; // a real improvement, not noise
        best = m;
      }
    },
    opponentFor(v: VariantRecord) {
      return o.duels ? (opponentOf.get(v.id) ?? null) : null;
    },
    observeDuel(a: VariantRecord, b: VariantRecord, d: DuelResult) {
      const ma = byId.get(a.id);
      const mb = byId.get(b.id);
      const act = ma?.a ?? space.encode(a);
      const s = act ? samples.get(space.key(act)) : undefined;
      if (s && Number.isFinite(d.ratio) && d.ratio > 0) {
        s.reward = Math.log(d.ratio);
        s.fromDuel = true;
      }
      if (!ma || !mb) return;
      if (d.verdict === 'faster') model.add({ faster: ma.f, slower: mb.f, from: 'duel' });
      else if (d.verdict === 'slower') model.add({ faster: mb.f, slower: ma.f, from: 'duel' });
    },
    observeDuelSkipped(a: VariantRecord, b: VariantRecord) {
      const ma = byId.get(a.id);
      const mb = byId.get(b.id);
      if (ma && mb) model.add({ faster: mb.f, slower: ma.f, from: 'decided' });
    },
    modelStats(): ModelStats | null {
      return model.trained ? model.stats() : null;
    },
    // The policy's logits, its stage and its random stream; measured variants, the preference
    // model's pairs and the best are rebuilt from the journal.
    saveState(): ContrastiveState {
      return { logits: logits.map((l) => [...l]), tunablesOnly, draws, arm: { at: armCur?.id ?? null, t: armT, turn: armTurn }, stage: { start: stageStart, pinned: [...pinned] } };
    },
    restoreState(x: unknown): string | null {
      const st = x as Partial<ContrastiveState> | null;
      if (!st || !Array.isArray(st.logits) || typeof st.tunablesOnly !== 'boolean' || !Number.isInteger(st.draws) || st.draws! < 0 || st.draws! > 1e8) return 'not a contrastive policy state';
      if (st.logits.length !== logits.length || st.logits.some((l, i) => !Array.isArray(l) || l.length !== logits[i].length || l.some((v) => typeof v !== 'number' || !Number.isFinite(v)))) {
        return `its dimensions (${st.logits.map((l) => (Array.isArray(l) ? l.length : '?')).join('×')}) are not this action space's (${logits.map((l) => l.length).join('×')})`;
      }
      st.logits.forEach((l, i) => logits[i].set(l as number[]));
      if (st.arm && Number.isFinite(st.arm.t) && Number.isFinite(st.arm.turn)) {
        armT = st.arm.t;
        armTurn = st.arm.turn;
        const at = st.arm.at ? byId.get(st.arm.at) : undefined;
        if (at) armCur = at;
      }
      const sg = st.stage;
      if (staged && sg && Number.isInteger(sg.start) && sg.start >= 0 && Array.isArray(sg.pinned) && sg.pinned.length === pinned.length && sg.pinned.every((v, i) => Number.isInteger(v) && v >= 0 && v < space.dims[i].values.length)) {
        // A state that knows its stage (since stageCycle): the stage it was in, re-entered or not.
        [tunablesOnly, stageStart, pinned] = [st.tunablesOnly, sg.start, [...sg.pinned]];
      } else tunablesOnly = tunablesOnly && st.tunablesOnly; // an older state: stage 1 is never re-entered
      while (draws < st.draws!) rng();
      return null;
    },
    predict(a: VariantRecord, b: VariantRecord) {
      if (!model.trained) return null;
      const feat = (v: VariantRecord): Float64Array | null => {
        const m = byId.get(v.id);
        if (m) return m.f;
        const act = space.encode(v);
        return act ? encoder.encode(act) : null;
      };
      const fa = feat(a);
      const fb = feat(b);
      if (!fa || !fb) return null;
      const st = model.stats();
      return { pAFaster: model.prob(fa, fb), model: `preference model v${st.version} (trained on ${st.trainedOn} pairs)` };
    },
  };
}
