// The optimisation loop shared by every strategy: a strategy proposes variants, the loop journals
// each one before it is built, builds the next ones in parallel while the GPU measures the current
// one, journals every result the moment it exists, and streams progress events. A killed session
// resumes: proposals already measured are not measured again.
import type { Config, EvalResult, VariantRecord, VariantSpec } from '../common/types.js';
import type { Evaluator } from '../eval/evaluate.js';
import type { Session } from '../session/store.js';
import { isTimedSuccess } from '../session/store.js';
import { configKey, defaultConfig } from '../task/space.js';

export type LoopEvent =
  | { type: 'variant'; variant: VariantRecord }
  | { type: 'stage'; variantId: string; stage: 'build' | 'check' | 'time' }
  | { type: 'result'; variantId: string; result: EvalResult; index: number; budget: number; speedup: number | null; bestSpeedup: number | null; bestMs: number | null }
  | { type: 'done'; evaluated: number; bestId: string | null; bestMs: number | null; bestSpeedup: number | null };

export interface Strategy {
  readonly name: string;
  /** Next proposals (at most n); [] when the space is exhausted. */
  propose(n: number): Array<Omit<VariantSpec, 'origin'> & { origin?: string; parents?: string[] }>;
  /** Told every result, in order. */
  observe?(spec: VariantSpec, result: EvalResult): void;
}

export interface LoopOptions {
  session: Session;
  evaluator: Evaluator;
  strategy: Strategy;
  /** Variants to measure besides the baseline. */
  budget: number;
  /** How many builds run ahead of the GPU. */
  lookahead?: number;
  signal?: AbortSignal;
  onEvent?: (e: LoopEvent) => void;
}

function medianOf(r: EvalResult | undefined): number | null {
  return isTimedSuccess(r) ? r.timing[0].medianMs : null;
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
    const best = session.best();
    o.onEvent?.({ type: 'result', variantId: v.id, result, index: 0, budget: o.budget, speedup: medianOf(result) ? 1 : null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
  }
  return v.id;
}

export async function runLoop(o: LoopOptions): Promise<{ evaluated: number }> {
  const { session, evaluator, strategy } = o;
  const baselineId = await ensureBaseline(o);
  const baseMs = medianOf(session.resultOf(baselineId));
  // Resume: count what this session already measured, and tell the strategy about it.
  const seen = new Set<string>();
  let evaluated = 0;
  for (const v of session.variants()) {
    seen.add(`${configKey(v.config)}|${JSON.stringify(v.flags)}|${v.source.length}`);
    const r = session.resultOf(v.id);
    if (v.origin !== 'baseline' && r) {
      evaluated++;
      strategy.observe?.(v, r);
    }
  }
  // Variants journaled but never measured (killed mid-way) are measured first.
  const pending: VariantRecord[] = session.variants().filter((v) => v.origin !== 'baseline' && !session.resultOf(v.id));
  const lookahead = o.lookahead ?? 4;
  const inflight: Array<{ v: VariantRecord; build: Promise<unknown> }> = [];
  const fill = (): void => {
    while (inflight.length < lookahead && evaluated + inflight.length < o.budget) {
      let v = pending.shift();
      if (!v) {
        const [p] = strategy.propose(1);
        if (!p) break;
        const key = `${configKey(p.config)}|${JSON.stringify(p.flags)}|${p.source.length}`;
        if (seen.has(key)) continue;
        seen.add(key);
        v = { id: session.newVariantId(), source: p.source, config: p.config as Config, flags: p.flags, transforms: p.transforms, origin: p.origin ?? strategy.name, parents: p.parents ?? [baselineId], createdAt: new Date().toISOString() };
        session.append({ type: 'variant', variant: v });
        o.onEvent?.({ type: 'variant', variant: v });
      }
      // Start the build now: it runs (in parallel, up to the core count) while the GPU is busy.
      const build = evaluator.build(v, o.signal).catch(() => undefined);
      inflight.push({ v, build });
    }
  };
  fill();
  while (inflight.length && !o.signal?.aborted) {
    const { v, build } = inflight.shift()!;
    await build;
    fill();
    const result = await evaluator.evaluate(v, { signal: o.signal, onStage: (stage) => o.onEvent?.({ type: 'stage', variantId: v.id, stage }) });
    if (o.signal?.aborted) break;
    session.append({ type: 'result', variantId: v.id, result });
    evaluated++;
    strategy.observe?.(v, result);
    const ms = medianOf(result);
    const best = session.best();
    o.onEvent?.({ type: 'result', variantId: v.id, result, index: evaluated, budget: o.budget, speedup: ms && baseMs ? baseMs / ms : null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
    fill();
  }
  const best = session.best();
  session.append({ type: 'status', status: o.signal?.aborted ? 'stopped' : 'finished', budgetUsed: evaluated });
  o.onEvent?.({ type: 'done', evaluated, bestId: best?.variant.id ?? null, bestMs: best?.medianMs ?? null, bestSpeedup: best?.speedup ?? null });
  return { evaluated };
}
