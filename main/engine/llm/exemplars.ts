// Exemplar choice for the contrastive prompt, as CUDA-L1 did it: successful variants are grouped
// into speed buckets; buckets are drawn by a temperature softmax over (bucket mean − overall mean);
// one exemplar comes from each of two different buckets. On top, an EXP3 bandit over bucket pairs
// learns from the rewards which pairings make the model write faster code. Seeded, reproducible.
import { z } from 'zod';

export const ExemplarSettingsSchema = z.strictObject({
  /** Number of speed buckets. */
  buckets: z.number().int().min(1).max(32).default(4),
  /** Softmax temperature over (bucket mean − overall mean) speedups: low → favour fast buckets. */
  temperature: z.number().positive().default(0.5),
  /** Exemplars per prompt (one per bucket while buckets last). */
  count: z.number().int().min(0).max(8).default(2),
  /** EXP3 learning rate; 0 turns the bandit off. */
  banditRate: z.number().min(0).max(10).default(0.5),
  /** EXP3 exploration mix. */
  banditExplore: z.number().min(0).max(1).default(0.1),
});
export type ExemplarSettings = z.infer<typeof ExemplarSettingsSchema>;

export interface Candidate {
  id: string;
  /** Speedup over the baseline (> 0). */
  speedup: number;
}

export interface Bucket<C extends Candidate = Candidate> {
  index: number;
  lo: number;
  hi: number;
  members: C[];
  mean: number;
}

/** Equal-width buckets over the speedup range (empty ones dropped), slowest first. */
export function bucketize<C extends Candidate>(cands: C[], count: number): Bucket<C>[] {
  const ok = cands.filter((c) => Number.isFinite(c.speedup) && c.speedup > 0);
  if (!ok.length) return [];
  const lo = Math.min(...ok.map((c) => c.speedup));
  const hi = Math.max(...ok.map((c) => c.speedup));
  const k = Math.max(1, Math.min(count, ok.length));
  const w = (hi - lo) / k;
  const raw: C[][] = Array.from({ length: k }, () => []);
  for (const c of ok) raw[w > 0 ? Math.min(k - 1, Math.floor((c.speedup - lo) / w)) : 0].push(c);
  const out: Bucket<C>[] = [];
  raw.forEach((members, i) => {
    if (!members.length) return;
    members.sort((a, b) => a.speedup - b.speedup || (a.id < b.id ? -1 : 1));
    out.push({ index: out.length, lo: lo + i * w, hi: lo + (i + 1) * w, members, mean: members.reduce((s, c) => s + c.speedup, 0) / members.length });
  });
  return out;
}

/** softmax((mean_b − overall)/T) over buckets. */
export function bucketWeights(buckets: Bucket[], temperature: number): number[] {
  if (!buckets.length) return [];
  const n = buckets.reduce((s, b) => s + b.members.length, 0);
  const overall = buckets.reduce((s, b) => s + b.mean * b.members.length, 0) / n;
  const z = buckets.map((b) => (b.mean - overall) / temperature);
  const mx = Math.max(...z);
  const e = z.map((x) => Math.exp(x - mx));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** Probability of each unordered bucket pair {i<j} when drawing i then j without replacement from the softmax. */
export function pairPrior(weights: number[]): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < weights.length; i++) {
    for (let j = i + 1; j < weights.length; j++) {
      const pij = (weights[i] * weights[j]) / (1 - weights[i] || 1) + (weights[j] * weights[i]) / (1 - weights[j] || 1);
      m.set(`${i}-${j}`, pij);
    }
  }
  return m;
}

function pickIndex(ps: number[], rng: () => number): number {
  const total = ps.reduce((a, b) => a + b, 0);
  let r = rng() * total;
  for (let i = 0; i < ps.length; i++) {
    r -= ps[i];
    if (r < 0) return i;
  }
  return ps.length - 1;
}

export interface ExemplarDraw<C extends Candidate = Candidate> {
  exemplars: C[];
  /** Bucket indexes the exemplars came from (slowest bucket 0). */
  buckets: number[];
  /** Bandit arm ("i-j"), when a pair was drawn. */
  arm?: string;
  /** Probability with which the arm was drawn (for importance weighting). */
  armProbability?: number;
  bucketCount: number;
}

/** EXP3 over bucket pairs, with the CUDA-L1 softmax pair distribution as its prior. */
export class PairBandit {
  private readonly logW = new Map<string, number>();
  private arms = 1;
  constructor(
    readonly rate: number,
    readonly explore: number,
  ) {}

  /** Arm probabilities given the prior over arms. */
  probabilities(prior: Map<string, number>): Map<string, number> {
    const arms = [...prior.keys()];
    if (!arms.length) return new Map();
    this.arms = arms.length;
    if (this.rate === 0) return new Map(prior);
    const lw = arms.map((a) => Math.log(Math.max(prior.get(a)!, 1e-12)) + (this.logW.get(a) ?? 0));
    const mx = Math.max(...lw);
    const e = lw.map((x) => Math.exp(x - mx));
    const sum = e.reduce((a, b) => a + b, 0);
    const g = this.explore;
    return new Map(arms.map((a, i) => [a, (1 - g) * (e[i] / sum) + g / arms.length]));
  }

  /** Reward in [0, 1] for the arm drawn with probability p. */
  update(arm: string, reward: number, p: number): void {
    if (this.rate === 0 || !(p > 0)) return;
    const r = Math.min(1, Math.max(0, reward));
    this.logW.set(arm, (this.logW.get(arm) ?? 0) + (this.rate * r) / (p * this.arms));
    // Keep the numbers tame.
    const mx = Math.max(...this.logW.values());
    if (mx > 50) for (const [k, x] of this.logW) this.logW.set(k, x - mx + 50);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.logW);
  }
}

/** Draws exemplars: a bucket pair (bandit over the softmax prior), then one member of each, uniformly. */
export function sampleExemplars<C extends Candidate>(cands: C[], settings: ExemplarSettings, rng: () => number, bandit?: PairBandit): ExemplarDraw<C> {
  const buckets = bucketize(cands, settings.buckets);
  const want = Math.min(settings.count, cands.length);
  if (!buckets.length || want === 0) return { exemplars: [], buckets: [], bucketCount: buckets.length };
  const w = bucketWeights(buckets, settings.temperature);
  const pickMember = (b: Bucket<C>, avoid: Set<string>): C | undefined => {
    const free = b.members.filter((m) => !avoid.has(m.id));
    return free.length ? free[Math.floor(rng() * free.length)] : undefined;
  };
  if (buckets.length === 1 || want === 1) {
    const bi = pickIndex(w, rng);
    const chosen: C[] = [];
    const taken = new Set<string>();
    for (let k = 0; k < want; k++) {
      const c = pickMember(buckets[bi], taken) ?? pickMember(buckets[pickIndex(w, rng)], taken);
      if (!c) break;
      chosen.push(c);
      taken.add(c.id);
    }
    return { exemplars: chosen, buckets: chosen.map(() => bi), bucketCount: buckets.length };
  }
  const prior = pairPrior(w);
  const probs = bandit ? bandit.probabilities(prior) : prior;
  const arms = [...probs.keys()];
  const ai = pickIndex(arms.map((a) => probs.get(a)!), rng);
  const arm = arms[ai];
  const [i, j] = arm.split('-').map(Number);
  const taken = new Set<string>();
  const chosen: C[] = [];
  const idx: number[] = [];
  for (const bi of [i, j]) {
    const c = pickMember(buckets[bi], taken)!;
    chosen.push(c);
    idx.push(bi);
    taken.add(c.id);
  }
  // More than two exemplars: further buckets by the softmax, without repeats.
  while (chosen.length < want) {
    const rest = buckets.filter((b) => !idx.includes(b.index));
    if (!rest.length) break;
    const b = rest[pickIndex(rest.map((x) => w[x.index]), rng)];
    const c = pickMember(b, taken);
    idx.push(b.index);
    if (!c) continue;
    chosen.push(c);
    taken.add(c.id);
  }
  // Show slower first, faster last (the contrast reads naturally).
  const order = chosen.map((c, k) => ({ c, b: idx[k] })).sort((a, b) => a.c.speedup - b.c.speedup);
  return { exemplars: order.map((o) => o.c), buckets: order.map((o) => o.b), arm, armProbability: probs.get(arm), bucketCount: buckets.length };
}

/** The bandit's reward for an answer: its speedup relative to the best exemplar it was shown, mapped to [0, 1] (0 for a failure). */
export function banditReward(speedup: number | null, exemplarSpeedups: number[]): number {
  if (speedup === null || !(speedup > 0)) return 0;
  const ref = exemplarSpeedups.length ? Math.max(...exemplarSpeedups) : 1;
  return Math.min(1, Math.max(0, (speedup / ref) / 2));
}
