// Gradient-boosted regression trees fitted to a pairwise logistic (Bradley–Terry) loss: the score
// s(x) is a sum of small trees over a variant's features, P(A faster than B) = sigmoid(s(A) - s(B)),
// as TVM's AutoTVM cost model (XGBoost `rank:pairwise`). Trees see interactions a linear score
// cannot (a block size that is best only with one tile shape) and ignore features that do not
// matter. Each round fits a tree to the loss's Newton step (per-item gradient and Hessian summed
// over the pairs an item is in; split gain G²/(H+λ), as XGBoost). Pure and deterministic.

export interface BoostOptions {
  rounds?: number;
  depth?: number;
  /** Shrinkage of each tree. */
  lr?: number;
  /** L2 on leaf values (λ). */
  l2?: number;
  /** Smallest Hessian sum in a leaf. */
  minHess?: number;
  /** Features the trees may split on (default all). */
  allowed?: Uint8Array;
}

type Node = { leaf: number } | { f: number; t: number; lo: Node; hi: Node };

export interface Boosted {
  trees: Node[];
}

/** Items (feature vectors) and pairs of item indices [faster, slower, weight]. */
export function fitPairwiseBoost(X: readonly Float64Array[], pairs: ReadonlyArray<readonly [number, number, number]>, o: BoostOptions = {}, init?: ArrayLike<number>): Boosted {
  const rounds = o.rounds ?? 40;
  const depth = o.depth ?? 3;
  const lr = o.lr ?? 0.3;
  const lam = o.l2 ?? 1;
  const minHess = o.minHess ?? 0.5;
  const n = X.length;
  const dim = n ? X[0].length : 0;
  // Scores start from `init` (a linear fit the trees correct), else 0.
  const s = init ? Float64Array.from(init) : new Float64Array(n);
  const trees: Node[] = [];
  // Sorted item order per feature, and the features that vary (split candidates).
  const order: number[][] = [];
  const useful: number[] = [];
  for (let f = 0; f < dim; f++) {
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => X[a][f] - X[b][f]);
    order.push(idx);
    if (n && X[idx[0]][f] !== X[idx[n - 1]][f] && (!o.allowed || o.allowed[f])) useful.push(f);
  }
  const g = new Float64Array(n);
  const h = new Float64Array(n);
  for (let r = 0; r < rounds; r++) {
    g.fill(0);
    h.fill(0);
    for (const [a, b, w] of pairs) {
      const z = s[a] - s[b];
      const p = z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
      const q = (1 - p) * w;
      g[a] -= q;
      g[b] += q;
      const hh = p * (1 - p) * w;
      h[a] += hh;
      h[b] += hh;
    }
    const member = new Uint8Array(n).fill(1);
    const tree = grow(member, 0);
    trees.push(tree);
    for (let i = 0; i < n; i++) s[i] += evalNode(tree, X[i]);
  }
  return { trees };

  function grow(member: Uint8Array, d: number): Node {
    let G = 0;
    let H = 0;
    for (let i = 0; i < n; i++) if (member[i]) {
      G += g[i];
      H += h[i];
    }
    const leaf = { leaf: (-G / (H + lam)) * lr };
    if (d >= depth || H < 2 * minHess) return leaf;
    const parent = (G * G) / (H + lam);
    let best = 1e-9;
    let bf = -1;
    let bt = 0;
    for (const f of useful) {
      let GL = 0;
      let HL = 0;
      const idx = order[f];
      let prev: number | null = null;
      for (let k = 0; k < n; k++) {
        const i = idx[k];
        if (!member[i]) continue;
        const v = X[i][f];
        if (prev !== null && v !== prev && HL >= minHess && H - HL >= minHess) {
          const gain = (GL * GL) / (HL + lam) + ((G - GL) * (G - GL)) / (H - HL + lam) - parent;
          if (gain > best) [best, bf, bt] = [gain, f, (v + prev) / 2];
        }
        GL += g[i];
        HL += h[i];
        prev = v;
      }
    }
    if (bf < 0) return leaf;
    const lo = new Uint8Array(n);
    const hi = new Uint8Array(n);
    for (let i = 0; i < n; i++) if (member[i]) (X[i][bf] < bt ? lo : hi)[i] = 1;
    return { f: bf, t: bt, lo: grow(lo, d + 1), hi: grow(hi, d + 1) };
  }
}

function evalNode(t: Node, x: Float64Array): number {
  let node = t;
  while (!('leaf' in node)) node = x[node.f] < node.t ? node.lo : node.hi;
  return node.leaf;
}

/** The boosted score of a feature vector (higher is faster). */
export function boostedScore(b: Boosted, x: Float64Array): number {
  let s = 0;
  for (const t of b.trees) s += evalNode(t, x);
  return s;
}
