// The preference model: P(A faster than B) = sigmoid(w · (f(A) − f(B))), a Bradley–Terry model
// over variant features, fitted with the pairwise logistic loss plus L2 (Newton's method: the loss
// is convex and the feature count small, so a few iterations reach the optimum exactly). Trained on
// decided comparisons only; retrained as data grows; a held-out fraction of the pairs measures its
// pairwise accuracy before the final fit on everything.
import { mulberry32, shuffle } from '../base/random.js';
import type { ModelStats } from './loop.js';

export interface Pair {
  /** Features of the faster variant. */
  faster: Float64Array;
  slower: Float64Array;
  /** Where the comparison came from. */
  from: 'duel' | 'medians';
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

/** Fits w on difference vectors d (label: the first of the pair is faster, i.e. y = 1 for every row; symmetric by construction). */
export function fitBradleyTerry(diffs: Float64Array[], weights: number[], dim: number, l2: number, steps = 8): Float64Array {
  let w = new Float64Array(dim);
  const lam = l2 * Math.max(1, diffs.length);
  for (let it = 0; it < steps; it++) {
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
    const step = solve(H, g);
    let norm = 0;
    const nw = new Float64Array(dim);
    for (let i = 0; i < dim; i++) {
      nw[i] = w[i] - step[i];
      norm += step[i] * step[i];
    }
    w = nw;
    if (norm < 1e-12) break;
  }
  return w;
}

export class PreferenceModel {
  readonly pairs: Pair[] = [];
  private w: Float64Array;
  private version = 0;
  private trainedOn = 0;
  private heldOutAccuracy: number | null = null;
  private heldOutPairs = 0;
  private readonly o: Required<PreferenceOptions>;
  /** Accuracy after each retraining: [decided pairs, held-out accuracy]. */
  readonly history: Array<{ pairs: number; accuracy: number | null }> = [];

  constructor(
    readonly dim: number,
    o: PreferenceOptions = {},
  ) {
    this.o = { l2: o.l2 ?? 0.02, holdout: o.holdout ?? 0.2, maxPairs: o.maxPairs ?? 500, seed: o.seed ?? 1, newtonSteps: o.newtonSteps ?? 8 };
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
    return dot(this.w, f);
  }

  /** P(A faster than B). */
  prob(a: Float64Array, b: Float64Array): number {
    return sigmoid(this.score(a) - this.score(b));
  }

  private sample(rng: () => number): Pair[] {
    if (this.pairs.length <= this.o.maxPairs) return shuffle(this.pairs, rng);
    const duels = this.pairs.filter((p) => p.from === 'duel');
    const rest = shuffle(this.pairs.filter((p) => p.from !== 'duel'), rng);
    return shuffle([...duels.slice(-this.o.maxPairs), ...rest].slice(0, this.o.maxPairs), rng);
  }

  private fit(ps: Pair[]): Float64Array {
    const diffs = ps.map((p) => {
      const d = new Float64Array(this.dim);
      for (let i = 0; i < this.dim; i++) d[i] = p.faster[i] - p.slower[i];
      return d;
    });
    return fitBradleyTerry(diffs, ps.map((p) => p.weight ?? 1), this.dim, this.o.l2, this.o.newtonSteps);
  }

  /** Measures held-out accuracy (when there are enough pairs), then fits on all pairs. */
  train(): void {
    const rng = mulberry32(this.o.seed + this.version * 7919);
    const ps = this.sample(rng);
    const nTest = Math.floor(ps.length * this.o.holdout);
    if (nTest >= 10) {
      const test = ps.slice(0, nTest);
      const w = this.fit(ps.slice(nTest));
      let ok = 0;
      for (const p of test) {
        const z = dot(w, p.faster) - dot(w, p.slower);
        ok += z > 0 ? 1 : z === 0 ? 0.5 : 0;
      }
      this.heldOutAccuracy = ok / nTest;
      this.heldOutPairs = nTest;
    }
    this.w = this.fit(ps);
    this.version++;
    this.trainedOn = this.pairs.length;
    this.history.push({ pairs: this.pairs.length, accuracy: this.heldOutAccuracy });
  }

  stats(): ModelStats {
    return { version: this.version, trainedOn: this.trainedOn, heldOutAccuracy: this.heldOutAccuracy, heldOutPairs: this.heldOutPairs };
  }
}
