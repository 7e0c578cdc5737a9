// The preference model: P(A faster than B) = sigmoid(w · (f(A) − f(B))), a Bradley–Terry model
// over variant features, fitted with the pairwise logistic loss plus L2 (Newton's method: the loss
// is convex and the feature count small, so a few iterations reach the optimum exactly). Trained on
// decided comparisons only; retrained as data grows; a held-out fraction of the pairs measures its
// pairwise accuracy before the final fit on everything.
import { mulberry32, shuffle } from '../base/random.js';
import type { ModelStats } from './loop.js';
import { boostedScore, fitPairwiseBoost, type BoostOptions, type Boosted } from './trees.js';

export interface Pair {
  /** Features of the faster variant. */
  faster: Float64Array;
  slower: Float64Array;
  /** Where the comparison came from ('decided': the medians of a variant and its opponent, whose duel `--duel-skip` left out). */
  from: 'duel' | 'medians' | 'decided';
  weight?: number;
}

export interface PreferenceOptions {
  /** L2 strength (per pair, so it does not fade as data grows). */
  l2?: number;
  /** Fraction of pairs held out to measure accuracy. */
  holdout?: number;
  /** Train on at most this many pairs (a seeded sample; duels first). */
  maxPairs?: number;
  seed?: number;
  newtonSteps?: number;
  /** The score: linear in the features (w · f), or boosted trees over them (trees.ts). */
  score?: 'linear' | 'trees' | 'linear+trees';
  boost?: BoostOptions;
  /** Trees: how many bootstrap fits (variants resampled with Poisson(1) weights) serve as posterior draws. */
  ensemble?: number;
  /** The dimensions each feature depends on; with `dropDims`, each bootstrap fit ignores every feature of a random subset of dimensions (as a random forest draws features), so draws disagree about dimensions the data has not settled. */
  featureDims?: number[][];
  dropDims?: number;
}

export const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

function dot(w: Float64Array, x: Float64Array): number {
  let s = 0;
  for (let i = 0; i < w.length; i++) s += w[i] * x[i];
  return s;
}

/** Solves (A) x = b in place by Gaussian elimination with partial pivoting (A symmetric positive definite here). */
function solve(A: Float64Array[], b: Float64Array): Float64Array {
  const n = b.length;
  const M = A.map((r) => Float64Array.from(r));
  const y = Float64Array.from(b);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    [y[c], y[p]] = [y[p], y[c]];
    const d = M[c][c] || 1e-12;
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / d;
      if (f === 0) continue;
      for (let k = c; k < n; k++) M[r][k] -= f * M[c][k];
      y[r] -= f * y[c];
    }
  }
  const x = new Float64Array(n);
  for (let r = n - 1; r >= 0; r--) {
    let s = y[r];
    for (let k = r + 1; k < n; k++) s -= M[r][k] * x[k];
    x[r] = s / (M[r][r] || 1e-12);
  }
  return x;
}

/** Gradient and Hessian of the L2-regularised pairwise logistic loss at w. */
function gradHess(diffs: Float64Array[], weights: number[], dim: number, lam: number, w: Float64Array): { g: Float64Array; H: Float64Array[] } {
  const g = new Float64Array(dim);
  const H: Float64Array[] = Array.from({ length: dim }, () => new Float64Array(dim));
  for (let i = 0; i < dim; i++) {
    g[i] = lam * w[i];
    H[i][i] = lam;
  }
  diffs.forEach((d, n) => {
    const p = sigmoid(dot(w, d));
    const c = weights[n];
    const r = (p - 1) * c; // d/dz of -log(sigmoid(z))
    const h = p * (1 - p) * c;
    for (let i = 0; i < dim; i++) {
      const di = d[i];
      if (di === 0) continue;
      g[i] += r * di;
      const hi = h * di;
      const Hi = H[i];
      for (let j = i; j < dim; j++) Hi[j] += hi * d[j];
    }
  });
  for (let i = 0; i < dim; i++) for (let j = 0; j < i; j++) H[i][j] = H[j][i];
  return { g, H };
}

/** Fits w on difference vectors d (label: the first of the pair is faster, i.e. y = 1 for every row; symmetric by construction). */
export function fitBradleyTerry(diffs: Float64Array[], weights: number[], dim: number, l2: number, steps = 8): Float64Array {
  return fitBradleyTerryLaplace(diffs, weights, dim, l2, steps).w;
}

/** The fit and the Hessian of the loss at it (the precision of the Laplace approximation of the posterior over w). */
export function fitBradleyTerryLaplace(diffs: Float64Array[], weights: number[], dim: number, l2: number, steps = 8): { w: Float64Array; H: Float64Array[] } {
  let w = new Float64Array(dim);
  const lam = l2 * Math.max(1, diffs.length);
  let gh = gradHess(diffs, weights, dim, lam, w);
  for (let it = 0; it < steps; it++) {
    const step = solve(gh.H, gh.g);
    let norm = 0;
    const nw = new Float64Array(dim);
    for (let i = 0; i < dim; i++) {
      nw[i] = w[i] - step[i];
      norm += step[i] * step[i];
    }
    w = nw;
    gh = gradHess(diffs, weights, dim, lam, w);
    if (norm < 1e-12) break;
  }
  return { w, H: gh.H };
}

/** Lower-triangular L with A = L L^T (A symmetric positive definite; a tiny jitter keeps it so). */
function cholesky(A: Float64Array[]): Float64Array[] {
  const n = A.length;
  const L: Float64Array[] = Array.from({ length: n }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i][j];
      for (let k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      if (i === j) L[i][i] = Math.sqrt(Math.max(s, 1e-12));
      else L[i][j] = s / L[j][j];
    }
  }
  return L;
}

/** A standard normal draw (Box–Muller). */
export function gaussian(rng: () => number): number {
  const u = Math.max(1e-12, rng());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

export class PreferenceModel {
  readonly pairs: Pair[] = [];
  private w: Float64Array;
  private version = 0;
  private trainedOn = 0;
  private heldOutAccuracy: number | null = null;
  private heldOutPairs = 0;
  private readonly o: Required<PreferenceOptions>;
  /** Cholesky factor of the Hessian at the last fit (for posterior samples). */
  private chol: Float64Array[] | null = null;
  /** Accuracy after each retraining: [decided pairs, held-out accuracy]. */
  readonly history: Array<{ pairs: number; accuracy: number | null }> = [];

  constructor(
    readonly dim: number,
    o: PreferenceOptions = {},
  ) {
    this.o = { l2: o.l2 ?? 0.02, holdout: o.holdout ?? 0.2, maxPairs: o.maxPairs ?? 500, seed: o.seed ?? 1, newtonSteps: o.newtonSteps ?? 8, score: o.score ?? 'linear', boost: o.boost ?? {}, ensemble: o.ensemble ?? 0, featureDims: o.featureDims ?? [], dropDims: o.dropDims ?? 0 };
    this.w = new Float64Array(dim);
  }

  add(p: Pair): void {
    this.pairs.push(p);
  }

  get decided(): number {
    return this.pairs.length;
  }

  get trained(): boolean {
    return this.version > 0;
  }

  get weights(): Float64Array {
    return this.w;
  }

  /** Higher is faster. */
  score(f: Float64Array): number {
    return (this.boosted ? boostedScore(this.boosted, f) : 0) + (this.o.score === 'trees' ? 0 : dot(this.w, f));
  }

  /** The boosted trees of the last fit (score 'trees'). */
  private boosted: Boosted | null = null;

  /** Bootstrap fits of the trees (posterior draws for Thompson sampling). */
  private draws: Boosted[] = [];

  /**
   * A scorer drawn from the model's posterior (Thompson sampling): a bootstrap fit of the trees,
   * or linear weights drawn from the Laplace approximation (`spread` widens them); the model's own
   * score when there is nothing to draw from.
   */
  posteriorScorer(rng: () => number, spread = 1): (f: Float64Array) => number {
    if (this.draws.length) {
      const b = this.draws[Math.floor(rng() * this.draws.length)];
      const w = this.o.score === 'linear+trees' ? this.w : null;
      return (f) => boostedScore(b, f) + (w ? dot(w, f) : 0);
    }
    if (this.o.score === 'linear' && this.chol) {
      const w = this.posteriorSample(rng, spread);
      return (f) => dot(w, f);
    }
    return (f) => this.score(f);
  }

  /** Fits the trees on pairs: items are the distinct feature vectors (the encoder shares one array per variant). */
  private fitTrees(ps: Pair[], itemWeight?: (i: number) => number, w?: Float64Array, allowed?: Uint8Array): Boosted {
    const items: Float64Array[] = [];
    const index = new Map<Float64Array, number>();
    const id = (f: Float64Array): number => {
      let i = index.get(f);
      if (i === undefined) {
        i = items.length;
        index.set(f, i);
        items.push(f);
      }
      return i;
    };
    let pairs = ps.map((p) => [id(p.faster), id(p.slower), p.weight ?? 1] as const);
    if (itemWeight) pairs = pairs.map(([a, b, w]) => [a, b, w * itemWeight(a) * itemWeight(b)] as const).filter((x) => x[2] > 0);
    return fitPairwiseBoost(items, pairs, allowed ? { ...this.o.boost, allowed } : this.o.boost, w ? items.map((x) => dot(w, x)) : undefined);
  }

  /** P(A faster than B). */
  prob(a: Float64Array, b: Float64Array): number {
    return sigmoid(this.score(a) - this.score(b));
  }

  private samplePairs(rng: () => number): Pair[] {
    if (this.pairs.length <= this.o.maxPairs) return shuffle(this.pairs, rng);
    // Comparisons with the opponent the strategy chose (duels, and the medians that stood in for a skipped one) first.
    const chosen = (p: Pair): boolean => p.from === 'duel' || p.from === 'decided';
    const duels = this.pairs.filter(chosen);
    const rest = shuffle(this.pairs.filter((p) => !chosen(p)), rng);
    return shuffle([...duels.slice(-this.o.maxPairs), ...rest].slice(0, this.o.maxPairs), rng);
  }

  private fit(ps: Pair[]): { w: Float64Array; H: Float64Array[] } {
    const diffs = ps.map((p) => {
      const d = new Float64Array(this.dim);
      for (let i = 0; i < this.dim; i++) d[i] = p.faster[i] - p.slower[i];
      return d;
    });
    return fitBradleyTerryLaplace(diffs, ps.map((p) => p.weight ?? 1), this.dim, this.o.l2, this.o.newtonSteps);
  }

  /**
   * Weights drawn from the Laplace approximation of the posterior, N(w, s² H⁻¹), for Thompson
   * sampling; `s` scales the spread (pairs of medians are not independent observations, so the
   * raw posterior is too sure of itself). The fit's own weights before the first training.
   */
  posteriorSample(rng: () => number, s = 1): Float64Array {
    if (!this.chol) return this.w;
    const L = this.chol;
    const n = this.dim;
    // Solve L^T x = z: x ~ N(0, (L L^T)^-1).
    const x = new Float64Array(n);
    for (let i = n - 1; i >= 0; i--) {
      let v = gaussian(rng);
      for (let k = i + 1; k < n; k++) v -= L[k][i] * x[k];
      x[i] = v / L[i][i];
    }
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = this.w[i] + s * x[i];
    return out;
  }

  /** Measures held-out accuracy (when there are enough pairs), then fits on all pairs. */
  train(): void {
    const rng = mulberry32(this.o.seed + this.version * 7919);
    const ps = this.samplePairs(rng);
    const nTest = Math.floor(ps.length * this.o.holdout);
    const trees = this.o.score !== 'linear';
    const linear = this.o.score !== 'trees';
    if (nTest >= 10) {
      const test = ps.slice(0, nTest);
      const w = linear ? this.fit(ps.slice(nTest)).w : null;
      const b = trees ? this.fitTrees(ps.slice(nTest), undefined, w ?? undefined) : null;
      const sc = (f: Float64Array): number => (b ? boostedScore(b, f) : 0) + (w ? dot(w, f) : 0);
      let ok = 0;
      for (const p of test) {
        const z = sc(p.faster) - sc(p.slower);
        ok += z > 0 ? 1 : z === 0 ? 0.5 : 0;
      }
      this.heldOutAccuracy = ok / nTest;
      this.heldOutPairs = nTest;
    }
    if (linear) {
      const f = this.fit(ps);
      this.w = f.w;
      this.chol = cholesky(f.H);
    }
    if (trees) {
      const w0 = linear ? this.w : undefined;
      this.boosted = this.fitTrees(ps, undefined, w0);
      this.draws = [];
      for (let k = 0; k < this.o.ensemble; k++) {
        const weights: number[] = [];
        // Poisson(1) weight per variant, drawn as it is first met (Knuth's method).
        const wOf = (i: number): number => {
          while (weights.length <= i) {
            let n = 0;
            for (let prod = rng(); prod > Math.exp(-1); prod *= rng()) n++;
            weights.push(n);
          }
          return weights[i];
        };
        let allowed: Uint8Array | undefined;
        if (this.o.dropDims > 0 && this.o.featureDims.length === this.dim) {
          const nd = 1 + Math.max(...this.o.featureDims.flat(), -1);
          const dropped = Array.from({ length: nd }, () => rng() < this.o.dropDims);
          allowed = Uint8Array.from(this.o.featureDims, (ds) => (ds.some((d) => dropped[d]) ? 0 : 1));
        }
        this.draws.push(this.fitTrees(ps, wOf, w0, allowed));
      }
    }
    this.version++;
    this.trainedOn = this.pairs.length;
    this.history.push({ pairs: this.pairs.length, accuracy: this.heldOutAccuracy });
  }

  stats(): ModelStats {
    return { version: this.version, trainedOn: this.trainedOn, heldOutAccuracy: this.heldOutAccuracy, heldOutPairs: this.heldOutPairs };
  }
}
