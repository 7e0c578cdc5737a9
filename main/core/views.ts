// Pure conversions from the engine's records to what the contract returns: variant rows, duels,
// plot series, build outcomes. No I/O here, so the shapes the UI depends on are testable without a GPU.
import type { EvalResult, VariantRecord } from '../engine/base/types.js';
import { parseCompilerMessages } from '../engine/build/compile.js';
import { timedMedianMs } from '../engine/measure/verdict.js';
import type { BuildOutcome, DuelDTO, ParamEffect, PlotPoint, RooflinePoint, SessionPlots, VariantRow } from '../contract/api.js';

export interface SessionEventLike {
  type: string;
  [k: string]: unknown;
}

export function variantRow(v: VariantRecord, r: EvalResult | undefined, baselineMs: number | null, evalIndex: number | null): VariantRow {
  const ms = timedMedianMs(r);
  const k = r?.build.resources?.[0];
  let status: VariantRow['status'] = 'pending';
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
    speedup: ms !== null && baselineMs ? baselineMs / ms : null,
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

/** Rows in proposal order, each with the order in which its (last) result was recorded. */
export function variantRows(f: SessionFacts): VariantRow[] {
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
    const r = e.result as { size: number; ratio: number; ratioLow?: number; ratioHigh?: number; verdict: DuelDTO['verdict']; pairs: number };
    const p = e.prediction as { pAFaster?: unknown; model?: unknown } | undefined;
    const prediction = p && typeof p.pAFaster === 'number' && typeof p.model === 'string' ? { prediction: { pAFaster: p.pAFaster, model: p.model } } : {};
    out.push({ a: String(e.a), b: String(e.b), size: r.size, ratio: r.ratio, ratioLow: r.ratioLow ?? r.ratio, ratioHigh: r.ratioHigh ?? r.ratio, verdict: r.verdict, pairs: r.pairs, ...prediction });
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

export function sessionPlots(f: SessionFacts, rows: VariantRow[], roof: RooflineInput | null): SessionPlots {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const timeline: PlotPoint[] = [];
  let best: number | null = null;
  let index = 0;
  const seen = new Set<string>();
  const rewards = new Map<string, number>();
  for (const e of f.events) if (e.type === 'reward' && typeof e.variantId === 'string' && typeof e.reward === 'number') rewards.set(e.variantId, e.reward);
  for (const e of f.events) {
    if (e.type !== 'result' || typeof e.variantId !== 'string' || seen.has(e.variantId)) continue;
    seen.add(e.variantId);
    const row = byId.get(e.variantId);
    if (!row) continue;
    const isBaseline = row.origin === 'baseline';
    if (row.speedup !== null) best = best === null ? row.speedup : Math.max(best, row.speedup);
    const reward = rewards.get(row.id) ?? (row.speedup !== null ? Math.log(row.speedup) : row.status === 'failed' ? null : null);
    timeline.push({ index: isBaseline ? 0 : ++index, variantId: row.id, speedup: row.speedup, bestSpeedup: best, reward });
  }
  const effects = new Map<string, { sum: number; n: number; count: number; failures: number }>();
  for (const r of rows) {
    if (r.origin === 'baseline' || r.status === 'pending') continue;
    for (const [k, v] of Object.entries(r.config)) {
      const key = `${k}\u0000${v}`;
      const x = effects.get(key) ?? { sum: 0, n: 0, count: 0, failures: 0 };
      x.count++;
      if (r.status === 'failed') x.failures++;
      if (r.speedup !== null) {
        x.sum += r.speedup;
        x.n++;
      }
      effects.set(key, x);
    }
  }
  const paramEffects: ParamEffect[] = [...effects.entries()]
    .map(([key, x]) => {
      const [param, value] = key.split('\u0000');
      return { param, value: Number(value), count: x.count, meanSpeedup: x.n ? x.sum / x.n : null, failures: x.failures };
    })
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
    for (const v of f.variants) {
      const r = f.resultOf(v.id);
      const ms = timedMedianMs(r);
      if (ms === null || r!.source.kind === 'cpu') continue; // a CPU time is never plotted against a GPU's roofs
      const w = roof.workOf(r!.timing![0].size);
      if (!w || !w.bytes || !w.flops) continue;
      const s = ms / 1000;
      points.push({ variantId: v.id, intensity: w.flops / w.bytes, gflops: w.flops / s / 1e9, gbps: w.bytes / s / 1e9, speedup: byId.get(v.id)?.speedup ?? null });
    }
    roofline = { points, peakGbps: roof.peakGbps, peakGflops: roof.peakGflops, limitsSource: roof.limitsSource, limitsNote: roof.limitsNote ?? null };
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
