// The language-model policy (CUDA-L1's contrastive stage) and its alternation with parameter
// tuning. Each round: draw exemplars from the session's measured variants (speed buckets + a
// bandit over bucket pairs), build the contrastive prompt, ask the model for a group of answers
// (one GRPO group per prompt), parse the three parts, check the entry point, screen the code.
// Anything that fails becomes a failed proposal with its reason (journaled, never built); the rest
// is built, checked and timed like every other variant. The reward is the measured speedup over the
// baseline; big jumps are re-measured in a fresh process before they are believed.
import { createHash } from 'node:crypto';
import type { DuelResult, EvalResult, Failure, VariantRecord } from '../base/types.js';
import type { Task } from '../task/manifest.js';
import type { Session } from '../session/store.js';
import { isTimedSuccess, timedMedianMs } from '../measure/verdict.js';
import { mulberry32, shuffle } from '../base/random.js';
import { configKey, enumerateSpace, defaultConfig } from '../task/space.js';
import type { ObservedSpec, Proposal, Strategy } from './loop.js';
import type { Measurer } from '../measure/measurer.js';
import type { ChatMessage, Completion, CompleteOptions } from '../llm/provider.js';
import type { LlmSettings } from '../llm/settings.js';
import { buildPrompt, type BuiltPrompt, type PromptExemplar } from '../llm/prompt.js';
import { ExemplarSettingsSchema, PairBandit, banditReward, sampleExemplars, type ExemplarSettings } from '../llm/exemplars.js';
import { parseAnswer, parsePythonAnswer } from '../llm/parse.js';
import { screenSource } from '../source/screen.js';
import { stripCode } from '../source/csource.js';
import { llmInfoOf, type LlmVariantInfo } from '../llm/variant-info.js';

export type LlmProposal = Proposal & { llm: LlmVariantInfo };

/** One (prompt, answer, reward) triple, as kept by the strategy. */
export interface LlmRecord {
  answerId: string;
  promptId: string;
  variantId?: string;
  parts: { analysis: string; design: string; code: string };
  /** Speedup over the baseline; 0 for a failed answer; null while unmeasured or compile-only. */
  reward: number | null;
  failure?: Failure;
}

/** The provider surface the strategy needs (LlmProvider, or a stand-in). */
export interface CompletionSource {
  readonly settings: Pick<LlmSettings, 'model' | 'baseURL'>;
  complete(messages: ChatMessage[], o?: CompleteOptions): Promise<Completion>;
  redact?<T>(value: T): T;
}

export interface RemeasureSettings {
  /** Re-measure speedups above this (over the baseline). */
  factor: number;
  /** … or above this multiple of the session's best speedup so far. */
  bestFactor: number;
  /** Reject when the two medians differ by more than this fraction. */
  tolerance: number;
}
export const DEFAULT_REMEASURE: RemeasureSettings = { factor: 3, bestFactor: 2, tolerance: 0.1 };

export interface LlmStrategyOptions {
  task: Task;
  session: Session;
  provider: CompletionSource;
  seed?: number;
  exemplars?: Partial<ExemplarSettings>;
  /** Answers per prompt (a GRPO group); default: as many as the loop asks for at once. */
  groupSize?: number;
  /** After this many transport failures in a row the policy stops proposing (default 5). */
  maxConsecutiveFailures?: number;
  /** GPU name for the prompt. */
  gpu?: string | null;
  /** `python`: the task's candidates are KernelBench-style Python files (ModelNew), measured by
   * the Python candidate runner; the prompt carries the PyTorch reference. Default `cuda`. */
  candidates?: 'cuda' | 'python';
  /** Where the candidates are measured, in words, for the prompt (Python: a GPU, or the CPU). */
  device?: string | null;
  /** Duel each new timed variant against the fastest exemplar it was shown (default true). */
  duelExemplars?: boolean;
  /** CUDA-L1's re-measure rule; false turns it off. */
  remeasure?: Partial<RemeasureSettings> | false;
  /** Streamed answer text, in order. */
  onDelta?: (e: { promptId: string; answerId: string; delta: string; attempt: number }) => void;
  /** Told each prompt as it is sent. */
  onPrompt?: (p: BuiltPrompt & { answerIds: string[] }) => void;
  signal?: AbortSignal;
}

interface HistoryEntry extends PromptExemplar {
  variant: VariantRecord;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

function failureOf(kind: Failure['kind'], reason: string): Failure {
  return { kind, reason };
}

/** CUDA-L1's rule: a speedup above `factor`× or above `bestFactor`× the session's best is re-measured in a fresh process; a disagreement beyond `tolerance` rejects it. */
export async function remeasureIfSuspicious(
  v: VariantRecord,
  result: EvalResult,
  ctx: { measurer: Pick<Measurer, 'evaluate'>; baselineMs: number | null; bestMs: number | null; signal?: AbortSignal },
  settings: RemeasureSettings = DEFAULT_REMEASURE,
): Promise<EvalResult> {
  if (!isTimedSuccess(result) || !ctx.baselineMs) return result;
  const m1 = result.timing[0].medianMs;
  const s1 = ctx.baselineMs / m1;
  const bestS = ctx.bestMs ? ctx.baselineMs / ctx.bestMs : 1;
  if (!(s1 > settings.factor || s1 > settings.bestFactor * bestS)) return result;
  // The Evaluator runs every check and timing in a fresh harness process.
  const second = await ctx.measurer.evaluate(v, { signal: ctx.signal });
  const why = `${s1.toFixed(2)}× over the baseline (${s1 > settings.factor ? `above ${settings.factor}×` : `above ${settings.bestFactor}× the session's best ${bestS.toFixed(2)}×`})`;
  if (!isTimedSuccess(second)) {
    const f = second.failure ?? failureOf('runtime', 'no timing');
    return { ...second, failure: { kind: f.kind, reason: `speedup ${why} not confirmed: the re-measurement in a fresh process failed (${f.reason})`, log: f.log }, remeasured: { firstMedianMs: m1, secondMedianMs: null } };
  }
  const m2 = second.timing[0].medianMs;
  const diff = Math.abs(m2 - m1) / Math.min(m1, m2);
  const remeasured = { firstMedianMs: m1, secondMedianMs: m2, relDiff: diff };
  if (diff > settings.tolerance) {
    return { ...result, failure: failureOf('rejected', `speedup ${why} not reproduced: re-measured in a fresh process at ${(ctx.baselineMs / m2).toFixed(2)}× (${(diff * 100).toFixed(1)}% apart, tolerance ${(settings.tolerance * 100).toFixed(0)}%)`), remeasured };
  }
  // Believed; keep the slower (more conservative) of the two measurements.
  return { ...(m2 >= m1 ? second : result), remeasured };
}

export class LlmStrategy implements Strategy {
  readonly name = 'llm';
  readonly exemplarSettings: ExemplarSettings;
  readonly bandit: PairBandit;
  private readonly o: LlmStrategyOptions;
  private readonly rs: RemeasureSettings | null;
  private draws = 0;
  private answers = 0;
  private consecutiveFailures = 0;
  private stopped: string | null = null;
  private readonly recs = new Map<string, LlmRecord>();
  private readonly pendingArm = new Map<string, { arm: string; p: number; exemplarSpeedups: number[] }>();
  private noted = false;

  constructor(o: LlmStrategyOptions) {
    this.o = o;
    this.exemplarSettings = ExemplarSettingsSchema.parse(o.exemplars ?? {});
    this.bandit = new PairBandit(this.exemplarSettings.banditRate, this.exemplarSettings.banditExplore);
    this.rs = o.remeasure === false ? null : { ...DEFAULT_REMEASURE, ...(o.remeasure ?? {}) };
  }

  /** Why the policy stopped proposing (too many failed requests in a row), or null. */
  get stoppedReason(): string | null {
    return this.stopped;
  }

  /** Every (prompt, answer parts, reward) so far, in order. */
  records(): LlmRecord[] {
    return [...this.recs.values()];
  }

  propose(): Proposal[] {
    return []; // the model answers asynchronously: see proposeAsync
  }

  private baseline(): { v: VariantRecord; ms: number | null } | undefined {
    const v = this.o.session.variants().find((x) => x.origin === 'baseline');
    if (!v) return undefined;
    const r = this.o.session.resultOf(v.id);
    return { v, ms: timedMedianMs(r) };
  }

  /** Successful, timed variants with their speedups and verdicts: the exemplar pool. */
  history(): HistoryEntry[] {
    const s = this.o.session;
    const base = this.baseline();
    if (!base?.ms) return [];
    const baseR = s.resultOf(base.v.id);
    const duels = new Map<string, DuelResult>();
    for (const ev of s.events()) if (ev.type === 'duel' && ev.b === base.v.id) duels.set(ev.a, ev.result);
    const out: HistoryEntry[] = [];
    for (const v of s.variants()) {
      const r = s.resultOf(v.id);
      if (!isTimedSuccess(r)) continue;
      const t = r.timing[0];
      const speedup = base.ms / t.medianMs;
      let verdict: string;
      if (v.id === base.v.id) verdict = 'baseline';
      else if (duels.has(v.id)) verdict = duels.get(v.id)!.verdict;
      else {
        const bt = isTimedSuccess(baseR) ? baseR.timing[0] : undefined;
        if (bt && Number.isFinite(t.ciHighMs) && t.ciHighMs < bt.ciLowMs) verdict = 'faster';
        else if (bt && Number.isFinite(t.ciLowMs) && t.ciLowMs > bt.ciHighMs) verdict = 'slower';
        else verdict = Math.abs(speedup - 1) < 0.01 ? 'same' : 'unsure';
      }
      const label = r.python?.label;
      out.push({ id: v.id, source: v.source, speedup, medianMs: t.medianMs, verdict, config: v.config, ...(label ? { label } : {}), variant: v });
    }
    return out;
  }

  private rngFor(draw: number): () => number {
    return mulberry32(((this.o.seed ?? 1) * 1_000_003 + draw * 7919) >>> 0);
  }

  /** The prompt the next request will send (for the workbench's preview); drawing it consumes nothing. */
  previewPrompt(): BuiltPrompt & { exemplars: string[] } {
    const d = this.draw(this.draws);
    return { ...d.prompt, exemplars: d.exemplars.map((e) => e.id) };
  }

  private draw(drawNo: number) {
    const hist = this.history();
    const rng = this.rngFor(drawNo);
    const d = sampleExemplars(hist, this.exemplarSettings, rng, this.bandit);
    const base = this.baseline();
    const best = this.o.session.best();
    const prompt = buildPrompt({
      task: this.o.task, exemplars: d.exemplars, baselineMs: base?.ms ?? null, bestSpeedup: best?.speedup ?? null, gpu: this.o.gpu ?? null,
      ...(this.o.candidates === 'python' ? { candidates: 'python' as const, device: this.o.device ?? null } : {}),
    });
    return { ...d, prompt };
  }

  async proposeAsync(n: number): Promise<Proposal[]> {
    if (this.stopped || this.o.signal?.aborted) return [];
    const p = this.o.provider;
    if (!this.noted) {
      this.noted = true;
      this.o.session.append({ type: 'note', level: 'info', message: `llm policy: model ${p.settings.model} at ${p.settings.baseURL}` });
    }
    const d = this.draw(this.draws++);
    const k = Math.max(1, this.o.groupSize ?? n);
    const answerIds = Array.from({ length: k }, () => `${d.prompt.promptId}-${++this.answers}`);
    this.o.onPrompt?.({ ...d.prompt, answerIds });
    const parents = d.exemplars.length ? d.exemplars.map((e) => e.id) : [this.baseline()?.v.id].filter((x): x is string => !!x);
    const completions = await Promise.all(
      answerIds.map((answerId) =>
        p.complete(d.prompt.messages, { signal: this.o.signal, onDelta: (delta, attempt) => this.o.onDelta?.({ promptId: d.prompt.promptId, answerId, delta, attempt }) }),
      ),
    );
    const known = new Map<string, string>();
    for (const v of this.o.session.variants()) if (v.source) known.set(sha(v.source), v.id);
    const out: LlmProposal[] = [];
    completions.forEach((c, i) => {
      const answerId = answerIds[i];
      const redact = <T,>(x: T): T => (p.redact ? p.redact(x) : x);
      const info: LlmVariantInfo = {
        promptId: d.prompt.promptId, answerId, model: c.ok ? c.model : p.settings.model, prompt: d.prompt.messages, analysis: '', design: '', raw: redact(c.ok ? c.text : c.partial),
        exemplars: d.exemplars.map((e) => ({ id: e.id, speedup: e.speedup })), buckets: d.buckets, arm: d.arm, armProbability: d.armProbability, attempts: c.attempts, durationMs: c.durationMs,
      };
      if (d.arm && d.armProbability) this.pendingArm.set(answerId, { arm: d.arm, p: d.armProbability, exemplarSpeedups: d.exemplars.map((e) => e.speedup) });
      const fail = (reason: string, code = ''): void => {
        const failure = failureOf('rejected', reason);
        out.push({ source: code, config: {}, flags: { opt: 3 }, origin: 'llm', parents, failure, llm: info });
        this.recs.set(answerId, { answerId, promptId: info.promptId, parts: { analysis: info.analysis, design: info.design, code }, reward: 0, failure });
      };
      if (!c.ok) {
        info.error = c.error;
        if (c.error.kind !== 'truncated' && c.error.kind !== 'empty') this.consecutiveFailures++;
        if (this.consecutiveFailures >= (this.o.maxConsecutiveFailures ?? 5)) this.stopped = `${this.consecutiveFailures} model requests failed in a row (last: ${c.error.message})`;
        return fail(`llm ${c.error.kind}: ${c.error.message}`);
      }
      this.consecutiveFailures = 0;
      const python = this.o.candidates === 'python';
      const parsed = python ? parsePythonAnswer(c.text) : parseAnswer(c.text, this.o.task.manifest.entry);
      if (!parsed.ok) return fail(`llm answer: ${parsed.reason}`);
      info.analysis = parsed.parts.analysis;
      info.design = parsed.parts.design;
      if (parsed.parts.missing.length) info.missing = parsed.parts.missing;
      const code = parsed.parts.code;
      // CUDA is screened before it is built; a Python candidate runs only inside the runner's sandbox (docs/PYTHON-CANDIDATES.md).
      const screen = python ? { ok: true as const } : screenSource(code, this.o.task);
      if (!screen.ok) return fail(`screening: ${screen.reason}`, code);
      const dup = known.get(sha(code));
      if (dup) return fail(`the answer's code is identical to variant ${dup}`, code);
      known.set(sha(code), answerId);
      out.push({ source: code, config: {}, flags: { opt: 3 }, origin: 'llm', parents, llm: info });
      this.recs.set(answerId, { answerId, promptId: info.promptId, parts: { analysis: info.analysis, design: info.design, code }, reward: null });
    });
    if (this.stopped) this.o.session.append({ type: 'note', level: 'warn', message: `llm policy paused: ${this.stopped}` });
    return out;
  }

  observe(spec: ObservedSpec, result: EvalResult): void {
    const info = llmInfoOf(spec);
    if (!info) return;
    const rec = this.recs.get(info.answerId) ?? { answerId: info.answerId, promptId: info.promptId, parts: { analysis: info.analysis, design: info.design, code: spec.source }, reward: null };
    rec.variantId = spec.id ?? rec.variantId;
    const base = this.baseline();
    let reward: number | null;
    if (isTimedSuccess(result)) reward = base?.ms ? base.ms / result.timing[0].medianMs : null;
    else if (result.failure) reward = 0;
    else reward = null; // compile-only: built, not measured
    rec.reward = reward;
    if (result.failure) rec.failure = result.failure;
    this.recs.set(info.answerId, rec);
    const arm = this.pendingArm.get(info.answerId) ?? (info.arm && info.armProbability ? { arm: info.arm, p: info.armProbability, exemplarSpeedups: info.exemplars.map((e) => e.speedup) } : undefined);
    if (arm && reward !== null) {
      this.bandit.update(arm.arm, banditReward(reward, arm.exemplarSpeedups), arm.p);
      this.pendingArm.delete(info.answerId);
    }
  }

  opponentFor(v: VariantRecord, result: EvalResult): string | null {
    if (this.o.duelExemplars === false || !isTimedSuccess(result)) return null;
    const info = llmInfoOf(v);
    if (!info?.exemplars.length) return null;
    return [...info.exemplars].sort((a, b) => b.speedup - a.speedup)[0].id;
  }

  verify(v: VariantRecord, result: EvalResult, ctx: { measurer: Measurer; baselineMs: number | null; bestMs: number | null; signal?: AbortSignal }): Promise<EvalResult> {
    return this.rs ? remeasureIfSuspicious(v, result, ctx, this.rs) : Promise.resolve(result);
  }
}

/** Tunables whose names the source uses (outside comments and strings). */
export function tunablesUsed(task: Task, source: string): string[] {
  const s = stripCode(source);
  return Object.keys(task.manifest.tunables ?? {}).filter((k) => new RegExp(`\\b${k}\\b`).test(s));
}

/** Parameter tuning of one variant's source: random order over the tunables it uses (others at their defaults). */
export function tuneAround(task: Task, base: VariantRecord, seed: number): Strategy {
  const used = tunablesUsed(task, base.source);
  const defaults = defaultConfig(task);
  const rng = mulberry32(seed);
  let order: Array<Record<string, number>> = [];
  if (used.length) {
    const seen = new Set<string>();
    for (const c of enumerateSpace(task)) {
      const others = Object.keys(c).filter((k) => !used.includes(k));
      if (others.some((k) => c[k] !== defaults[k])) continue;
      const cfg = Object.fromEntries(used.map((k) => [k, c[k]]));
      const key = configKey(cfg);
      if (!seen.has(key) && key !== configKey(Object.fromEntries(used.map((k) => [k, base.config[k] ?? defaults[k]])))) {
        seen.add(key);
        order.push(cfg);
      }
    }
    order = shuffle(order, rng);
  }
  let i = 0;
  return {
    name: 'tune',
    propose(n) {
      const out = order.slice(i, i + n).map((config) => ({ source: base.source, config, flags: base.flags, origin: 'tune', parents: [base.id] }));
      i += out.length;
      return out;
    },
  };
}

export interface MixedOptions {
  llm: LlmStrategy;
  task: Task;
  session: Session;
  /** LLM proposals per round (default 2). */
  llmPerRound?: number;
  /** Tuning proposals per round (default 4). */
  tunePerRound?: number;
  seed?: number;
  /** The tuner for a base variant (default: tuneAround). */
  tuner?: (base: VariantRecord) => Strategy;
}

/** The LLM's best variant: the fastest timed one, else the latest that did not fail (built compile-only, or still being measured). */
export function bestLlmVariant(session: Session): VariantRecord | undefined {
  let best: { v: VariantRecord; ms: number } | undefined;
  let latestBuilt: VariantRecord | undefined;
  for (const v of session.variants()) {
    if (v.origin !== 'llm') continue;
    const r = session.resultOf(v.id);
    if (isTimedSuccess(r)) {
      const ms = r.timing[0].medianMs;
      if (!best || ms < best.ms) best = { v, ms };
    } else if (!r || (!r.failure && r.build.ok)) latestBuilt = v; // built (compile-only) or not measured yet
  }
  return best?.v ?? latestBuilt;
}

/** Alternates the LLM policy (new algorithms) with tuning of the parameters of the LLM's best variant. */
export function mixedStrategy(o: MixedOptions): Strategy {
  const llmN = o.llmPerRound ?? 2;
  const tuneN = o.tunePerRound ?? 4;
  const tuners = new Map<string, Strategy>();
  const tunerFor = (v: VariantRecord): Strategy => {
    let t = tuners.get(v.id);
    if (!t) {
      t = o.tuner ? o.tuner(v) : tuneAround(o.task, v, (o.seed ?? 1) + tuners.size + 1);
      tuners.set(v.id, t);
    }
    return t;
  };
  let phase: 'llm' | 'tune' = 'llm';
  let left = llmN;
  const switchPhase = (): void => {
    phase = phase === 'llm' ? 'tune' : 'llm';
    left = phase === 'llm' ? llmN : tuneN;
  };
  const fromTuner = (n: number): Proposal[] => {
    const base = bestLlmVariant(o.session);
    return base ? tunerFor(base).propose(n) : [];
  };
  return {
    name: 'mixed',
    propose: () => [],
    async proposeAsync(n) {
      for (let tries = 0; tries < 2; tries++) {
        if (left <= 0) switchPhase();
        const want = Math.max(1, Math.min(n, left));
        const got = phase === 'llm' ? await o.llm.proposeAsync(want) : fromTuner(want);
        if (got.length) {
          left -= got.length;
          return got;
        }
        left = 0; // this side has nothing now: try the other
      }
      return [];
    },
    observe: (spec, result) => o.llm.observe(spec, result),
    opponentFor(v, result) {
      if (v.origin === 'tune' && isTimedSuccess(result)) return v.parents[0] ?? null;
      return o.llm.opponentFor(v, result);
    },
    verify: (v, result, ctx) => o.llm.verify(v, result, ctx),
  };
}
