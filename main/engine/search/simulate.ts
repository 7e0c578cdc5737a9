// A fast, in-memory run of a strategy against a measurer (no session journal): the same protocol
// as runLoop (the baseline first, proposals one at a time, a duel after each timed result when
// the strategy asks for one), for benchmarks and tests on recorded spaces.
import type { DuelResult, EvalResult, VariantRecord } from '../base/types.js';
import { isTimedSuccess } from '../measure/verdict.js';
import { defaultConfig } from '../task/space.js';
import { duelDecidedByMedians, type ModelStats, type Strategy } from './loop.js';
import type { Measurer } from '../measure/measurer.js';
import { variantKey } from '../measure/replay.js';

export interface SimStep {
  index: number;
  id: string;
  /** The variant's identity in a recording (tunables, flags, transforms): repeats are the same configuration. */
  key: string;
  medianMs: number | null;
  bestMs: number | null;
  failure?: string;
}

export interface SimResult {
  baselineMs: number | null;
  /** The baseline's variant key (it is evaluated first). */
  baselineKey: string;
  steps: SimStep[];
  duels: Array<{ a: string; b: string; result: DuelResult }>;
  model: ModelStats | null;
  /** Model stats right after each evaluation (index -> stats). */
  modelAt: Map<number, ModelStats | null>;
}

export interface SimulateOptions {
  /** Give the event loop a turn every this many evaluations (a replay answers at once, so a long
   * run would otherwise hold the thread it runs on: the app's main process, the web server). */
  yieldEvery?: number;
  /** As runLoop's `duelSkip` (`--duel-skip`): no duel for a variant the medians already call slower by this fraction. */
  duelSkip?: number;
}

export async function simulate(strategy: Strategy, m: Measurer, budget: number, o: SimulateOptions = {}): Promise<SimResult> {
  const variants = new Map<string, VariantRecord>();
  const results = new Map<string, EvalResult>();
  const now = new Date(0).toISOString();
  const base: VariantRecord = { id: 'v0', source: m.task.baselineSource, config: defaultConfig(m.task), flags: { opt: 3 }, origin: 'baseline', parents: [], createdAt: now };
  const br = await m.evaluate(base);
  variants.set(base.id, base);
  results.set(base.id, br);
  strategy.observe?.(base, br);
  const baselineMs = isTimedSuccess(br) ? br.timing[0].medianMs : null;
  let best = baselineMs;
  const steps: SimStep[] = [];
  const duels: SimResult['duels'] = [];
  const modelAt = new Map<number, ModelStats | null>();
  for (let i = 1; i <= budget; i++) {
    if (o.yieldEvery && i % o.yieldEvery === 0) await new Promise((r) => setImmediate(r));
    const [p] = strategy.propose(1);
    if (!p) break;
    const v: VariantRecord = { id: `v${i}`, source: p.source, config: p.config, flags: p.flags, transforms: p.transforms, origin: p.origin ?? strategy.name, parents: p.parents ?? ['v0'], createdAt: now };
    variants.set(v.id, v);
    const r = await m.evaluate(v);
    results.set(v.id, r);
    strategy.observe?.(v, r);
    const ms = isTimedSuccess(r) ? r.timing[0].medianMs : null;
    if (ms !== null && (best === null || ms < best)) best = ms;
    steps.push({ index: i, id: v.id, key: variantKey(v), medianMs: ms, bestMs: best, failure: r.failure?.kind });
    if (strategy.opponentFor && ms !== null) {
      const oppId = strategy.opponentFor(v, r);
      const opp = oppId ? variants.get(oppId) : undefined;
      if (opp && duelDecidedByMedians(r, results.get(opp.id), o.duelSkip)) strategy.observeDuelSkipped?.(v, opp);
      else if (opp && isTimedSuccess(results.get(opp.id))) {
        const d = await m.duel(v, opp);
        if (d.duels?.length) {
          duels.push({ a: v.id, b: opp.id, result: d.duels[0] });
          strategy.observeDuel?.(v, opp, d.duels[0]);
        }
      }
    }
    modelAt.set(i, strategy.modelStats?.() ?? null);
  }
  return { baselineMs, baselineKey: variantKey(base), steps, duels, model: strategy.modelStats?.() ?? null, modelAt };
}
