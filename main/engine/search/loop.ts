// The optimisation loop shared by every strategy: a strategy proposes variants, the loop journals
// each one before it is built, builds the next ones in parallel while the GPU measures the current
// one, journals every result the moment it exists, and streams progress events. A killed session
// resumes: proposals already measured are not measured again.
// The loop runs on any `Measurer`: the real Evaluator, or the ReplayMeasurer of a recorded space.
// A strategy may ask for a duel of each measured variant against an opponent of its choice: the
// duel is journaled (`{type:'duel'}`) and streamed, and the strategy is told its result.
import { createHash } from 'node:crypto';
import type { Config, DuelResult, EvalResult, Failure, GpuActivity, VariantRecord, VariantSpec } from '../base/types.js';
import type { Measurer } from '../measure/measurer.js';
import type { PairPredictionRecord } from '../session/events.js';
import type { Session } from '../session/store.js';
import { isTimedSuccess, timedMedianMs } from '../measure/verdict.js';
import { configKey, defaultConfig } from '../task/space.js';
import { readPolicyState, writePolicyState } from '../session/policy-state.js';
import { markRunning } from '../session/running.js';

export type LoopEvent =
  | { type: 'variant'; variant: VariantRecord }
  | { type: 'stage'; variantId: string; stage: 'build' | 'check' | 'time' }
  | { type: 'result'; variantId: string; result: EvalResult; index: number; budget: number; speedup: number | null; bestSpeedup: number | null; bestMs: number | null }
  | { type: 'duel'; a: string; b: string; result: DuelResult; prediction?: PairPredictionRecord }
  | { type: 'model'; stats: ModelStats }
  /** A GPU pool's activity (pool.ts): on every change; `message` when a GPU was removed from the pool. */
  | { type: 'gpus'; gpus: GpuActivity[]; message?: string }
  | { type: 'done'; evaluated: number; bestId: string | null; bestMs: number | null; bestSpeedup: number | null; gpus?: GpuActivity[] };

/** How well a strategy's learned model predicts comparisons (streamed as `model` events). */
export interface ModelStats {
  /** Increments each time the model is retrained. */
  version: number;
  /** Decided comparisons the model was trained on. */
  trainedOn: number;
  /** Held-out pairwise accuracy (fraction of held-out decided pairs ordered correctly); null before there is enough data. */
  heldOutAccuracy: number | null;
  heldOutPairs: number;
}

/** What the loop passes to a strategy: the journaled record (with its id) when there is one. */
export type ObservedSpec = VariantSpec & { id?: string };

/** A strategy's proposal. Extra fields (e.g. `llm`) are kept on the journaled variant record. */
export type Proposal = Omit<VariantSpec, 'origin'> & {
  origin?: string;
  parents?: string[];
  /** Rejected before building (e.g. screened model output): journaled with this failure, counted, never built. */
  failure?: Failure;
};

export interface Strategy {
  readonly name: string;
  /** Next proposals (at most n); [] when the space is exhausted. */
  propose(n: number): Proposal[];
  /** Asynchronous proposals (e.g. from a language model); used instead of propose() when present. */
  proposeAsync?(n: number): Promise<Proposal[]>;
  /** Checks a result before it is journaled and believed (e.g. re-measure a suspicious speedup in a fresh process). */
  verify?(variant: VariantRecord, result: EvalResult, ctx: { measurer: Measurer; baselineMs: number | null; bestMs: number | null; signal?: AbortSignal }): Promise<EvalResult>;
  /** Told every result, in order (the baseline's too, with origin 'baseline'). */
  observe?(spec: ObservedSpec, result: EvalResult): void;
  /** Asked after each timed result: the id of a measured variant to duel it against, or null for no duel. */
  opponentFor?(variant: VariantRecord, result: EvalResult): string | null;
  /** Told each duel the loop ran for it (A = the new variant, B = the opponent; ratio > 1: A faster). */
  observeDuel?(a: VariantRecord, b: VariantRecord, duel: DuelResult): void;
  /** Told a duel it asked for was left out (`--duel-skip`): the medians already say a is slower than b. Not journaled, so a resumed run is not told again (the medians' own pairs are rebuilt). */
  observeDuelSkipped?(a: VariantRecord, b: VariantRecord): void;
  /** P(a faster than b) from the strategy's model, asked before a duel is measured (null: no trained model). */
  predict?(a: VariantRecord, b: VariantRecord): PairPredictionRecord | null;
  /** The strategy's model quality, when it has a model. */
  modelStats?(): ModelStats | null;
  /** What the journal cannot rebuild (plain JSON), kept beside the session so a resume continues it. */
  saveState?(): unknown;
  /** Takes back saveState()'s value after the journal was replayed; a reason when it cannot (then it starts afresh). */
  restoreState?(state: unknown): string | null;
}

export interface LoopOptions {
  session: Session;
  /** The measurement backend: an Evaluator (GPU) or a ReplayMeasurer (recorded space). */
  evaluator: Measurer;
  strategy: Strategy;
  /** Variants to measure besides the baseline. */
  budget: number;
  /** How many builds run ahead of the GPU. */
  lookahead?: number;
  signal?: AbortSignal;
  onEvent?: (e: LoopEvent) => void;
  /** Awaited before each measurement (pause: return a promise that resolves on resume). */
  gate?: () => Promise<void>;
  /**
   * `--duel-skip`: no duel for a variant whose median is at least this fraction slower than its
   * opponent's with their confidence intervals apart (its verdict could only be "slower"); the
   * strategy keeps the pair and reward the medians give. Never skips a variant faster than its
   * opponent. Off (undefined) by default.
   */
  duelSkip?: number;
  /**
   * `--time-cutoff`: a variant's timing stops once the lower bound of its median's 95% interval lies
   * above this multiple of the best's median (EvaluateOptions.cutoffMs), and such a variant is
   * compared with its opponent by the medians (no duel) when they are 5% apart with their intervals
   * apart. Off (undefined or 0) here; `optimize` on a GPU passes DEFAULT_TIME_CUTOFF unless told.
   */
  timeCutoff?: number;
}

/**
 * The default `--time-cutoff` (issue 17): 3× the best's median. A variant that much slower needs
 * no precise time (the search learns from its rank, and a log-time reward 1.1 below the best's
 * stays that whatever its last percent), but a converged timing of it takes up to the 3 s time cap:
 * of histogram's recorded H200 space (bench/spaces/h200), 46% is over 3× slower than its best and
 * 21% over 100×.
 */
export const DEFAULT_TIME_CUTOFF = 3;

/** The cutoff (ms) for the next variant's timing: `factor` times the best's median, when the best was measured on a GPU; else undefined. */
export function timingCutoffMs(best: { medianMs: number; result: EvalResult } | null, factor: number | undefined): number | undefined {
  if (!factor || !best || best.result.source?.kind !== 'gpu' || !(best.medianMs > 0)) return undefined;
  return best.medianMs * factor;
}

/** The duel-skip fraction for a just-timed result: `--duel-skip`'s, or 5% for a timing stopped at its cutoff (its duel could only say "slower"). */
export function duelSkipFor(result: EvalResult, duelSkip: number | undefined): number | undefined {
  return duelSkip ?? (result.timing?.[0]?.cutoffMs !== undefined ? 0.05 : undefined);
}

/** Whether a duel of a (just timed) against b can only say "slower": a's median at least `skip` slower, the intervals apart. */
export function duelDecidedByMedians(a: EvalResult, b: EvalResult | undefined, skip: number | undefined): boolean {
  if (!skip || !b || !isTimedSuccess(a) || !isTimedSuccess(b)) return false;
  const ta = a.timing[0];
  const tb = b.timing[0];
  return ta.medianMs >= tb.medianMs * (1 + skip) && ta.ciLowMs > tb.ciHighMs;
}

/** Identity of a proposal within a session, for de-duplication. */
export function proposalKey(p: Pick<VariantSpec, 'config' | 'flags' | 'source' | 'transforms'>): string {
  const t = p.transforms?.length ? `|${[...p.transforms].sort().join(';')}` : '';
  return `${configKey(p.config)}|${JSON.stringify(p.flags)}|${createHash('sha1').update(p.source).digest('hex').slice(0, 16)}${t}`;
}

/** Ensures the baseline is in the session and measured; returns its id. */
export async function ensureBaseline(o: LoopOptions): Promise<string> {
  const { session, evaluator } = o;
  const existing = session.variants().find((v) => v.origin === 'baseline');
  let v = existing;
  if (!v) {
    v = { id: session.newVariantId(), source: evaluator.task.baselineSource, config: defaultConfig(evaluator.task), flags: { opt: 3 }, origin: 'baseline', parents: [], createdAt: new Date().toISOString() };
    session.append({ type: 'variant', variant: v });
    o.onEvent?.({ type: 'variant', variant: v });
  }
  if (!session.resultOf(v.id)) {
    const id = v.id;
    const result = await evaluator.evaluate(v, { signal: o.signal, onStage: (stage) => o.onEvent?.({ type: 'stage', variantId: id, stage }) });
    session.append({ type: 'result', variantId: v.id, result });
    o.strategy.observe?.(v, result);
    const best = session.best();
    o.onEvent?.({ type: 'result', variantId: v.id, result, index: 0, budget: o.budget, speedup: timedMedianMs(result) ? 1 : null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
  }
  return v.id;
}

export async function runLoop(o: LoopOptions): Promise<{ evaluated: number }> {
  // Marked as running while this runs: a kill leaves the mark, and listings show `interrupted`.
  const unmark = markRunning(o.session.dir);
  try {
    return await loop(o);
  } finally {
    unmark();
  }
}

/** The baseline does not build or check: nothing can be compared with it, so the run stops at once. */
export class BaselineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BaselineError';
  }
}

/** What the loop and the pool loop (pool.ts) share once the baseline is measured and the journal replayed. */
export interface LoopStart {
  baselineId: string;
  baseMs: number | null;
  /** Keys of every proposal the session holds (de-duplication). */
  seen: Set<string>;
  /** Variants (besides the baseline) the session already measured. */
  evaluated: number;
  /** Variants journaled but never measured (killed mid-way): measured first. */
  pending: VariantRecord[];
  /** Keeps the strategy's state beside the session (evaluated: the results so far). */
  saveState(evaluated: number): void;
  /** Streams a `model` event when the strategy's model changed. */
  modelEvent(): void;
  /** Asks the strategy for a duel of v (just measured) and runs it on `measurer`. */
  duelFor(v: VariantRecord, result: EvalResult, measurer: Measurer): Promise<void>;
}

/**
 * Measures the baseline (on `o.evaluator`), stops with a BaselineError when it fails, replays the
 * session's journal into the strategy (results, duels, its saved state) for a resume.
 */
export async function beginLoop(o: LoopOptions): Promise<LoopStart> {
  const { session, evaluator, strategy } = o;
  const baselineExisted = session.variants().some((v) => v.origin === 'baseline' && session.resultOf(v.id));
  const baselineId = await ensureBaseline(o);
  const failed = session.resultOf(baselineId)?.failure;
  if (failed && !o.signal?.aborted) {
    const used = session.variants().filter((v) => v.origin !== 'baseline' && session.resultOf(v.id)).length;
    session.append({ type: 'status', status: 'stopped', budgetUsed: used });
    const t = evaluator.task;
    throw new BaselineError(
      `the baseline of task ${t.manifest.name} (${t.baselinePath}) fails [${failed.kind}]: ${failed.reason.split('\n')[0]}\n` +
        `nothing can be compared with it, so session ${session.meta.id} stops here; fix the task (\`kernelduel eval ${t.dir}\` shows the whole message), then start a new session`,
    );
  }
  const baseMs = timedMedianMs(session.resultOf(baselineId));
  // Resume: count what this session already measured, and tell the strategy about it.
  const seen = new Set<string>();
  let evaluated = 0;
  for (const v of session.variants()) {
    seen.add(proposalKey(v));
    const r = session.resultOf(v.id);
    if (v.origin === 'baseline' && r && baselineExisted) strategy.observe?.(v, r);
    if (v.origin !== 'baseline' && r) {
      evaluated++;
      strategy.observe?.(v, r);
    }
  }
  for (const ev of session.events()) {
    if (ev.type !== 'duel') continue;
    const a = session.variant(ev.a);
    const b = session.variant(ev.b);
    if (a && b) strategy.observeDuel?.(a, b, ev.result);
  }
  // What the journal cannot rebuild: the strategy's own state when this session was last measured.
  const saved = strategy.restoreState ? readPolicyState(session.dir) : null;
  if (saved && saved.strategy === strategy.name) {
    const why = strategy.restoreState!(saved.state);
    if (why) session.append({ type: 'note', level: 'warn', message: `the ${strategy.name} policy starts afresh: its saved state does not fit (${why})` });
  }
  const saveState = (results: number): void => {
    if (strategy.saveState) writePolicyState(session.dir, { strategy: strategy.name, results, state: strategy.saveState() });
  };
  let modelVersion = -1;
  const modelEvent = (): void => {
    const stats = strategy.modelStats?.();
    if (stats && stats.version !== modelVersion) {
      modelVersion = stats.version;
      o.onEvent?.({ type: 'model', stats });
    }
  };
  modelEvent();
  const duelFor = async (v: VariantRecord, result: EvalResult, measurer: Measurer): Promise<void> => {
    if (!strategy.opponentFor || !isTimedSuccess(result)) return;
    const oppId = strategy.opponentFor(v, result);
    const opp = oppId ? session.variant(oppId) : undefined;
    if (!opp || opp.id === v.id || !isTimedSuccess(session.resultOf(opp.id))) return;
    if (duelDecidedByMedians(result, session.resultOf(opp.id), duelSkipFor(result, o.duelSkip))) {
      strategy.observeDuelSkipped?.(v, opp);
      return;
    }
    const prediction = strategy.predict?.(v, opp) ?? null; // before the measurement
    // Both sides on the one measurer given: one GPU, one judge process.
    const d = await measurer.duel(v, opp, o.signal);
    if (o.signal?.aborted || !d.duels?.length) return;
    const duel = d.duels[0];
    const extra = prediction ? { prediction } : {};
    session.append({ type: 'duel', a: v.id, b: opp.id, result: duel, ...extra });
    o.onEvent?.({ type: 'duel', a: v.id, b: opp.id, result: duel, ...extra });
    strategy.observeDuel?.(v, opp, duel);
  };
  const pending: VariantRecord[] = session.variants().filter((v) => v.origin !== 'baseline' && !session.resultOf(v.id));
  return { baselineId, baseMs, seen, evaluated, pending, saveState, modelEvent, duelFor };
}

async function loop(o: LoopOptions): Promise<{ evaluated: number }> {
  const { session, evaluator, strategy } = o;
  const start = await beginLoop(o);
  const { baselineId, baseMs, seen, pending, modelEvent } = start;
  let evaluated = start.evaluated;
  const saveState = (): void => start.saveState(evaluated);
  const duelFor = (v: VariantRecord, result: EvalResult): Promise<void> => start.duelFor(v, result, evaluator);
  // Builds run ahead of the GPU; a backend with nothing to build (replay) proposes one at a time.
  const lookahead = o.lookahead ?? (evaluator.build ? 4 : 1);
  const inflight: Array<{ v: VariantRecord; build: Promise<unknown> }> = [];
  // The variant being evaluated has left `inflight` but is not yet counted in `evaluated`.
  let current = 0;
  const queued: Proposal[] = [];
  const fill = async (): Promise<void> => {
    while (inflight.length < lookahead && evaluated + current + inflight.length < o.budget) {
      let v = pending.shift();
      if (!v) {
        if (!queued.length) {
          const room = Math.min(lookahead - inflight.length, o.budget - evaluated - current - inflight.length);
          queued.push(...(strategy.proposeAsync ? await strategy.proposeAsync(Math.max(1, room)) : strategy.propose(1)));
          if (o.signal?.aborted) break;
        }
        const p = queued.shift();
        if (!p) break;
        const { failure, origin, parents, ...spec } = p;
        if (!failure) {
          const key = proposalKey(p);
          if (seen.has(key)) continue;
          seen.add(key);
        }
        v = { ...spec, id: session.newVariantId(), config: p.config as Config, origin: origin ?? strategy.name, parents: parents ?? [baselineId], createdAt: new Date().toISOString() };
        session.append({ type: 'variant', variant: v });
        o.onEvent?.({ type: 'variant', variant: v });
        if (failure) {
          // Rejected before building: journaled and counted like any failed variant.
          const result: EvalResult = { build: { ok: false, arch: '', command: [], resources: [], log: '', durationMs: 0, failure }, failure, source: { kind: 'none' } };
          session.append({ type: 'result', variantId: v.id, result });
          evaluated++;
          strategy.observe?.(v, result);
          const best = session.best();
          o.onEvent?.({ type: 'result', variantId: v.id, result, index: evaluated, budget: o.budget, speedup: null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
          continue;
        }
      }
      // Start the build now: it runs (in parallel, up to the core count) while the GPU is busy.
      const build = evaluator.build ? evaluator.build(v, o.signal).catch(() => undefined) : Promise.resolve();
      // Then its capture, beside the check of the variant before it (the evaluator says where it may).
      const rec = v;
      if (evaluator.prepare) void build.then(() => evaluator.prepare!(rec, o.signal));
      inflight.push({ v, build });
    }
  };
  await fill();
  while (inflight.length && !o.signal?.aborted) {
    const { v, build } = inflight.shift()!;
    current = 1;
    await build;
    await fill();
    if (o.gate) await o.gate();
    if (o.signal?.aborted) break;
    const cutoffMs = timingCutoffMs(session.best(), o.timeCutoff);
    const first = await evaluator.evaluate(v, { signal: o.signal, onStage: (stage) => o.onEvent?.({ type: 'stage', variantId: v.id, stage }), ...(cutoffMs ? { cutoffMs } : {}) });
    if (o.signal?.aborted) break;
    const result = strategy.verify ? await strategy.verify(v, first, { measurer: evaluator, baselineMs: baseMs, bestMs: session.best()?.medianMs ?? null, signal: o.signal }) : first;
    if (o.signal?.aborted) break;
    session.append({ type: 'result', variantId: v.id, result });
    evaluated++;
    current = 0;
    strategy.observe?.(v, result);
    const ms = timedMedianMs(result);
    const best = session.best();
    o.onEvent?.({ type: 'result', variantId: v.id, result, index: evaluated, budget: o.budget, speedup: ms && baseMs ? baseMs / ms : null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
    await duelFor(v, result);
    modelEvent();
    await fill();
    saveState(); // after the next proposals were drawn: the state they left
  }
  const best = session.best();
  session.append({ type: 'status', status: o.signal?.aborted ? 'stopped' : 'finished', budgetUsed: evaluated });
  o.onEvent?.({ type: 'done', evaluated, bestId: best?.variant.id ?? null, bestMs: best?.medianMs ?? null, bestSpeedup: best?.speedup ?? null });
  return { evaluated };
}
