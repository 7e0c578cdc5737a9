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
// Until the model has `minPairs` decided comparisons, proposals are uniformly random. Decided
// comparisons are duels with a faster/slower verdict and pairs of measured variants whose median
// confidence intervals do not overlap (unsure and same are never used).
import type { DuelResult, EvalResult, VariantRecord } from '../base/types.js';
import type { ModelStats, ObservedSpec, Strategy } from './loop.js';
import type { Action, ActionSpace, Proposal } from './actions.js';
import { FeatureEncoder, type FeatureOptions } from './features.js';
import { PreferenceModel, type PreferenceOptions } from './preference.js';
import { mulberry32 } from '../base/random.js';
import { isTimedSuccess } from '../measure/verdict.js';
import { Seen, proposal, randomUnseen } from './common.js';

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
}

export interface ContrastiveStrategy extends Strategy {
  readonly model: PreferenceModel;
  readonly encoder: FeatureEncoder;
  /** Current per-dimension probabilities of the policy. */
  policy(): number[][];
  /** Whether this run searches the tunables first (the space has tunables and other dimensions, and `staged` was not turned off). */
  readonly staged: boolean;
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
    staged: true, stageMin: 30, stageMax: 60, stagePatience: 15, ...opts,
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
  const model = new PreferenceModel(encoder.length, { seed, ...(opts.model ?? {}) });
  const logits = space.dims.map((d) => new Float64Array(d.values.length));
  const measured: Measured[] = [];
  const byId = new Map<string, Measured>();
  const samples = new Map<string, Sample>(); // by action key
  const opponentOf = new Map<string, string>(); // variant id -> opponent id planned at observe time
  // Each queued action with the variant it was derived from: the elite it mutated, else the best at proposal time.
  const queue: Array<{ a: Action; stage1: boolean; parent?: string }> = [];
  let pendingGroup: Sample[] = [];
  let lastTrainPairs = 0;
  let best: Measured | null = null;
  let bestAt = 0; // measured.length when the best last improved
  // Stage 1 searches only these dimensions; the others stay at their first value (default flags, no transform).
  const tunableDim = space.dims.map((d) => d.kind === 'tunable');
  const staged = o.staged && tunableDim.some((t) => t) && tunableDim.some((t) => !t);
  let tunablesOnly = staged;
  const active = (i: number, stage1: boolean): boolean => !stage1 || tunableDim[i];
  const maybeLeaveStage1 = (): void => {
    if (!tunablesOnly) return;
    const n = measured.length;
    if (n >= o.stageMax || (n >= o.stageMin && n - bestAt >= o.stagePatience)) tunablesOnly = false;
  };
  /** The best measured variant's id (lineage of proposals not drawn around an elite); undefined before one is journaled. */
  const bestId = (): string | undefined => (best && !best.id.startsWith('#') ? best.id : undefined);
  const pin = (a: Action): Action => (tunablesOnly ? a.map((v, i) => (tunableDim[i] ? v : 0)) : a);

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

  const retrain = (): void => {
    const n = model.decided;
    if (n < o.minPairs || n === lastTrainPairs) return;
    if (model.trained && n < lastTrainPairs * 1.1 && n - lastTrainPairs < 10) return;
    model.train();
    lastTrainPairs = n;
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

  const round = (): void => {
    retrain();
    flushGroups();
    maybeLeaveStage1();
    if (!model.trained) {
      for (let i = 0; i < o.picks; i++) {
        const a = randomAction();
        if (!a) break;
        seen.add(a);
        queue.push({ a, stage1: tunablesOnly, parent: bestId() });
      }
      return;
    }
    const elites = [...measured].sort((x, y) => x.ms - y.ms).slice(0, 3);
    const cands: Action[] = [];
    const anchorOf = new Map<string, string>(); // candidate key -> id of the elite it was drawn around
    const keys = new Set<string>();
    for (let t = 0; cands.length < o.candidates && t < o.candidates * 20; t++) {
      const elite = elites.length && rng() < o.eliteShare ? elites[Math.floor(rng() * elites.length)] : null;
      const a = fromPolicy(elite?.a ?? null);
      const k = space.key(a);
      if (keys.has(k) || seen.has(a) || !space.isValid(a)) continue;
      keys.add(k);
      if (elite) anchorOf.set(k, elite.id);
      cands.push(a);
    }
    if (!cands.length) {
      const a = randomAction();
      if (a) {
        seen.add(a);
        queue.push({ a, stage1: tunablesOnly, parent: bestId() });
      }
      return;
    }
    const ranked = cands.map((a) => ({ a, s: model.score(encoder.encode(a)) })).sort((x, y) => y.s - x.s);
    for (let i = 0; i < o.picks && ranked.length; i++) {
      const j = rng() < o.epsilon ? Math.floor(rng() * ranked.length) : 0;
      const [c] = ranked.splice(j, 1);
      seen.add(c.a);
      queue.push({ a: c.a, stage1: tunablesOnly, parent: anchorOf.get(space.key(c.a)) ?? bestId() });
    }
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
        out.push(proposal(space, a, `${model.trained ? 'policy' : 'random'}${q.stage1 ? ' (tunables)' : ''}`, q.parent ? [q.parent] : undefined));
      }
      return out;
    },
    observe(spec: ObservedSpec, result: EvalResult) {
      const a = space.encode(spec);
      if (!a) return;
      seen.add(a);
      const s = samples.get(space.key(a));
      if (!isTimedSuccess(result)) {
        if (s) s.reward = o.failReward;
        return;
      }
      const t = result.timing[0];
      const m: Measured = { id: spec.id ?? `#${measured.length}`, a, f: encoder.encode(a), ms: t.medianMs, low: t.ciLowMs, high: t.ciHighMs };
      // Reward from medians against the best so far; replaced by the duel's when one follows.
      if (s) s.reward = best ? Math.log(best.ms / m.ms) : 0;
      if (best && spec.id) opponentOf.set(spec.id, best.id);
      addMedianPairs(m);
      measured.push(m);
      byId.set(m.id, m);
      if (!best || m.ms < best.ms) {
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
    modelStats(): ModelStats | null {
      return model.trained ? model.stats() : null;
    },
    // The policy's logits, its stage and its random stream; measured variants, the preference
    // model's pairs and the best are rebuilt from the journal.
    saveState(): ContrastiveState {
      return { logits: logits.map((l) => [...l]), tunablesOnly, draws };
    },
    restoreState(x: unknown): string | null {
      const st = x as Partial<ContrastiveState> | null;
      if (!st || !Array.isArray(st.logits) || typeof st.tunablesOnly !== 'boolean' || !Number.isInteger(st.draws) || st.draws! < 0 || st.draws! > 1e8) return 'not a contrastive policy state';
      if (st.logits.length !== logits.length || st.logits.some((l, i) => !Array.isArray(l) || l.length !== logits[i].length || l.some((v) => typeof v !== 'number' || !Number.isFinite(v)))) {
        return `its dimensions (${st.logits.map((l) => (Array.isArray(l) ? l.length : '?')).join('×')}) are not this action space's (${logits.map((l) => l.length).join('×')})`;
      }
      st.logits.forEach((l, i) => logits[i].set(l as number[]));
      tunablesOnly = tunablesOnly && st.tunablesOnly; // stage 1 is never re-entered
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
