// Pure conversions from the engine's records to what the contract returns: variant rows, duels,
// plot series, build outcomes. No I/O here, so the shapes the UI depends on are testable without a GPU.
import { GUARANTEE_LEVELS, type EvalResult, type VariantRecord } from '../engine/base/types.js';
import { pytorchBaselinesIn, type SessionEvent } from '../engine/session/events.js';
import type { ConfirmedVariant, ConfirmReport } from '../engine/session/confirm.js';
import { parseCompilerMessages } from '../engine/build/compile.js';
import { timedMedianMs } from '../engine/measure/verdict.js';
import { placementsOf } from './compare.js';
import { baselineFigureMs, rooflinePoint, speedupOf, timelineOf, type PytorchBaselinesDTO, type BuildOutcome, type DuelDTO, type ParamEffect, type RooflinePoint, type SessionPlots, type SizeWork, type FullVariantRow, type ConfirmDTO, type ConfirmLineDTO } from '../contract/api.js';

export interface SessionEventLike {
  type: string;
  [k: string]: unknown;
}

export function variantRow(v: VariantRecord, r: EvalResult | undefined, baselineMs: number | null, evalIndex: number | null): FullVariantRow {
  const ms = timedMedianMs(r);
  const k = r?.build.resources?.[0];
  let status: FullVariantRow['status'] = 'pending';
  if (r) status = r.failure ? 'failed' : ms !== null ? 'timed' : r.build.ok ? 'built' : 'failed';
  const failure = r?.failure ?? (r && !r.build.ok ? r.build.failure : undefined);
  return {
    id: v.id,
    parents: v.parents,
    origin: v.origin,
    config: v.config,
    flags: v.flags,
    transforms: v.transforms ?? [],
    createdAt: v.createdAt,
    status,
    failure: failure ? { kind: failure.kind, reason: failure.reason } : null,
    medianMs: ms,
    ciLowMs: ms !== null ? r!.timing![0].ciLowMs : null,
    ciHighMs: ms !== null ? r!.timing![0].ciHighMs : null,
    speedup: speedupOf(baselineMs, ms),
    registers: k ? Math.max(...r!.build.resources.map((x) => x.registers)) : null,
    sharedBytes: k ? Math.max(...r!.build.resources.map((x) => x.sharedBytes)) : null,
    spillBytes: k ? r!.build.resources.reduce((a, x) => a + x.spillLoadBytes + x.spillStoreBytes, 0) : null,
    source: r?.source.kind ?? null,
    label: r?.python?.label ?? null,
    evalIndex,
  };
}

export interface SessionFacts {
  variants: VariantRecord[];
  /** Events in journal order. */
  events: SessionEventLike[];
  resultOf: (id: string) => EvalResult | undefined;
}

/** The baseline (first 'baseline' variant) and its timed median. */
export function baselineOf(f: SessionFacts): { id: string | null; ms: number | null } {
  const b = f.variants.find((v) => v.origin === 'baseline');
  return { id: b?.id ?? null, ms: b ? timedMedianMs(f.resultOf(b.id)) : null };
}

/**
 * The session's PyTorch baselines (its last pytorch-baselines event; null in sessions without one),
 * each placed on the plots' "speedup vs baseline" axis: the baseline variant's median over its own.
 */
export function pytorchBaselinesOf(f: SessionFacts): PytorchBaselinesDTO | null {
  const b = pytorchBaselinesIn(f.events as unknown as SessionEvent[]);
  if (!b) return null;
  const { id, ms: base } = baselineOf(f);
  // compared by the figure the session's variants hold (a per-call Python session: per-call)
  const figure = id ? f.resultOf(id)?.python?.figure : undefined;
  const by = { ...(figure ? { figure } : {}) };
  return {
    ...b, guaranteeTitle: GUARANTEE_LEVELS[b.guarantee].title, ...by,
    eagerSpeedup: speedupOf(base, baselineFigureMs(by, b.eager)), compileSpeedup: speedupOf(base, baselineFigureMs(by, b.compile)),
  };
}

/** Rows in proposal order, each with the order in which its (last) result was recorded. */
export function variantRows(f: SessionFacts): FullVariantRow[] {
  const base = baselineOf(f);
  const order = new Map<string, number>();
  let n = 0;
  for (const e of f.events) if (e.type === 'result' && typeof e.variantId === 'string' && !order.has(e.variantId)) order.set(e.variantId, n++);
  return f.variants.map((v) => variantRow(v, f.resultOf(v.id), base.ms, order.get(v.id) ?? null));
}

export function duels(f: SessionFacts): DuelDTO[] {
  const out: DuelDTO[] = [];
  for (const e of f.events) {
    if (e.type !== 'duel') continue;
    const r = e.result as { size: number; ratio: number; ratioLow?: number; ratioHigh?: number; verdict: DuelDTO['verdict']; pairs: number; sets?: number; setRelSd?: number; placementsLow?: number; placementsHigh?: number };
    const p = e.prediction as { pAFaster?: unknown; model?: unknown } | undefined;
    const prediction = p && typeof p.pAFaster === 'number' && typeof p.model === 'string' ? { prediction: { pAFaster: p.pAFaster, model: p.model } } : {};
    const ratioLow = r.ratioLow ?? r.ratio;
    const ratioHigh = r.ratioHigh ?? r.ratio;
    const placements = placementsOf({ ...r, ratioLow, ratioHigh });
    out.push({ a: String(e.a), b: String(e.b), size: r.size, ratio: r.ratio, ratioLow, ratioHigh, verdict: r.verdict, pairs: r.pairs, ...prediction, ...(placements ? { placements } : {}), ...(r.sets !== undefined ? { sets: r.sets } : {}) });
  }
  return out;
}

/** `model: version=3 trainedOn=40 heldOutAccuracy=0.71 heldOutPairs=10` notes (written by the service). */
export const MODEL_NOTE = /^model: version=(\d+) trainedOn=(\d+) heldOutAccuracy=([0-9.]+|null) heldOutPairs=(\d+)/;

export function modelNote(s: { version: number; trainedOn: number; heldOutAccuracy: number | null; heldOutPairs: number }): string {
  return `model: version=${s.version} trainedOn=${s.trainedOn} heldOutAccuracy=${s.heldOutAccuracy === null ? 'null' : s.heldOutAccuracy.toFixed(4)} heldOutPairs=${s.heldOutPairs}`;
}

export interface RooflineInput {
  /** Bytes and flops of one call at a size index. */
  workOf: (sizeIndex: number) => { bytes?: number; flops?: number } | null;
  peakGbps: number | null;
  peakGflops: number | null;
  limitsSource: string | null;
  /** Why there are no limits (e.g. no measured limits for this GPU). */
  limitsNote?: string | null;
}

export function sessionPlots(f: SessionFacts, rows: FullVariantRow[], roof: RooflineInput | null): SessionPlots {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const rewards = new Map<string, number>();
  for (const e of f.events) if (e.type === 'reward' && typeof e.variantId === 'string' && typeof e.reward === 'number') rewards.set(e.variantId, e.reward);
  // Rows in the order of their first result (evalIndex), shared with the renderer's decoding.
  const timeline = timelineOf(rows, rewards);
  // Per tunable and value (nested maps: no key strings built per row and tunable).
  const effects = new Map<string, Map<number, { sum: number; n: number; count: number; failures: number }>>();
  for (const r of rows) {
    if (r.origin === 'baseline' || r.status === 'pending') continue;
    for (const k in r.config) {
      const v = r.config[k];
      let byValue = effects.get(k);
      if (!byValue) effects.set(k, (byValue = new Map()));
      let x = byValue.get(v);
      if (!x) byValue.set(v, (x = { sum: 0, n: 0, count: 0, failures: 0 }));
      x.count++;
      if (r.status === 'failed') x.failures++;
      if (r.speedup !== null) {
        x.sum += r.speedup;
        x.n++;
      }
    }
  }
  const paramEffects: ParamEffect[] = [...effects.entries()]
    .flatMap(([param, byValue]) => [...byValue.entries()].map(([value, x]) => ({ param, value, count: x.count, meanSpeedup: x.n ? x.sum / x.n : null, failures: x.failures })))
    .sort((a, b) => (a.param === b.param ? a.value - b.value : a.param < b.param ? -1 : 1));
  const modelAccuracy: SessionPlots['modelAccuracy'] = [];
  let evalsSoFar = 0;
  for (const e of f.events) {
    if (e.type === 'result') evalsSoFar++;
    if (e.type === 'note' && typeof e.message === 'string') {
      const m = MODEL_NOTE.exec(e.message);
      if (m && m[3] !== 'null') modelAccuracy.push({ index: Math.max(0, evalsSoFar - 1), accuracy: Number(m[3]) });
    }
  }
  let roofline: SessionPlots['roofline'] = null;
  if (roof) {
    const points: RooflinePoint[] = [];
    // The work of one call at each timed size (null: the task's metrics give none there).
    const work = new Map<number, SizeWork | null>();
    for (const v of f.variants) {
      const r = f.resultOf(v.id);
      const ms = timedMedianMs(r);
      if (ms === null || r!.source.kind === 'cpu') continue; // a CPU time is never plotted against a GPU's roofs
      const size = r!.timing![0].size;
      let sw = work.get(size);
      if (sw === undefined) {
        const w = roof.workOf(size);
        work.set(size, (sw = w && w.bytes && w.flops ? { size, bytes: w.bytes, flops: w.flops } : null));
      }
      if (sw) points.push(rooflinePoint(v.id, sw, ms, byId.get(v.id)?.speedup ?? null));
    }
    const used = [...work.values()].filter((w): w is SizeWork => w !== null).sort((a, b) => a.size - b.size);
    roofline = { points, work: used, peakGbps: roof.peakGbps, peakGflops: roof.peakGflops, limitsSource: roof.limitsSource, limitsNote: roof.limitsNote ?? null };
  }
  const anyRecordedReward = rewards.size > 0;
  const cpu = rows.some((r) => r.source === 'cpu') ? " — CPU times (Python candidates on the CPU), not a GPU's" : '';
  return {
    timeline,
    baselines: [],
    paramEffects,
    modelAccuracy,
    roofline,
    rewardLabel: `${anyRecordedReward ? 'reward (recorded by the strategy)' : 'reward proxy: ln(speedup vs baseline)'}${cpu}`,
  };
}

/** A build as the editor shows it: compiler messages by line (of the variant's own file), resources, the log. */
export function buildOutcome(r: EvalResult['build']): BuildOutcome {
  return {
    ok: r.ok, arch: r.arch, command: r.command, messages: parseCompilerMessages(r.log ?? '', 'variant.cu'), resources: r.resources, log: r.log ?? '',
    durationMs: r.durationMs, cached: !!r.cached, failure: r.failure ? { kind: r.failure.kind, reason: r.failure.reason } : undefined,
  };
}

/** One line of a confirmation without its result (the samples stay in the journal). */
function lineDTO(l: ConfirmedVariant): ConfirmLineDTO {
  const t = l.ms !== null ? l.result.timing?.[0] : undefined;
  const { variantId, origin, searchMs, ms, ciLowMs, ciHighMs, placementSd, speedup, speedupLow, speedupHigh, failure, at } = l;
  const gpu = l.result.source.kind === 'gpu' ? l.result.source.gpu : null;
  return { variantId, origin, searchMs, ms, ciLowMs, ciHighMs, placementSd, speedup, speedupLow, speedupHigh, failure, at, gpu, samples: t?.samplesMs?.length ?? null, contexts: t ? (t.contexts ?? 1) : null, bufferSets: t ? (t.bufferSets ?? 1) : null };
}

/** A confirmation as the contract sends it (no samples). */
export function confirmDTO(r: ConfirmReport): ConfirmDTO {
  return { timing: r.timing, baseline: r.baseline ? lineDTO(r.baseline) : null, variants: r.variants.map(lineDTO), bestId: r.bestId, searchBestId: r.searchBestId, tiedWithBest: r.tiedWithBest, reproducibility: r.reproducibility, tieDuels: r.tieDuels };
}
