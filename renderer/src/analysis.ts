// Pure numbers behind the plots and Compare (no React, no DOM; unit-tested in
// test/renderer-analysis.test.ts): five-number summaries and ECDFs of timing samples, log-axis
// ticks, whether two ranges call for a log axis, parameter importance, and the pace of a run.
import type { VariantDetail, VariantRow } from '../../main/contract/api.js';

type EvalResult = NonNullable<VariantDetail['result']>;

export interface BoxStats {
  n: number;
  min: number;
  q1: number;
  median: number;
  q3: number;
  max: number;
}

function quantile(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  return sorted[lo] + (sorted[Math.min(sorted.length - 1, lo + 1)] - sorted[lo]) * (h - lo);
}

export function boxStats(xs: number[]): BoxStats | null {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return null;
  return { n: s.length, min: s[0], q1: quantile(s, 0.25), median: quantile(s, 0.5), q3: quantile(s, 0.75), max: s[s.length - 1] };
}

/** Empirical CDF as steps: (x, fraction of samples ≤ x). */
export function ecdf(xs: number[]): Array<{ x: number; p: number }> {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.map((x, i) => ({ x, p: (i + 1) / s.length }));
}

/** A log axis when the values span more than a factor `ratio` (two distributions far apart read as two spikes on a linear one). */
export function wantsLogAxis(values: number[], ratio = 3): boolean {
  const v = values.filter((x) => Number.isFinite(x) && x > 0);
  return v.length > 1 && Math.max(...v) / Math.min(...v) > ratio;
}

/** Ticks for an axis over [lo, hi]: 1-2-5 per decade on a log axis, about `n` nice ones on a linear axis. */
export function axisTicks(lo: number, hi: number, log: boolean, n = 6): number[] {
  if (!(hi > lo)) return [lo];
  if (log && lo > 0) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (t >= lo * 0.999 && t <= hi * 1.001) out.push(t);
    }
    if (out.length >= 3) return out;
    // A narrow log range: nice linear ticks inside it.
  }
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

/** Short number for a tick: 0.25, 1.5k, 2M. */
export function fmtTick(x: number): string {
  const a = Math.abs(x);
  if (a >= 1e6) return `${Number((x / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((x / 1e3).toPrecision(3))}k`;
  return String(Number(x.toPrecision(3)));
}

export interface Importance {
  param: string;
  /** Share of the variance of log-speedup explained by this parameter's values (0..1), over timed variants. */
  importance: number;
  /** Distinct values seen. */
  values: number;
}

/**
 * Parameter importance as the share of variance of ln(speedup) each tunable explains on its own (a
 * one-way ANOVA η², the first-order term of optuna's fANOVA evaluator), normalised to sum to 1 over
 * the tunables. Over timed variants only; a tunable with one value explains nothing.
 */
export function paramImportance(rows: VariantRow[]): Importance[] {
  const timed = rows.filter((r) => r.speedup !== null && r.speedup > 0);
  if (timed.length < 3) return [];
  const y = timed.map((r) => Math.log(r.speedup!));
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  const total = y.reduce((a, b) => a + (b - mean) ** 2, 0);
  const params = [...new Set(timed.flatMap((r) => Object.keys(r.config)))];
  const raw = params.map((p) => {
    const groups = new Map<number, number[]>();
    timed.forEach((r, i) => {
      const v = r.config[p];
      if (v !== undefined) (groups.get(v) ?? groups.set(v, []).get(v)!).push(y[i]);
    });
    let between = 0;
    for (const g of groups.values()) {
      const m = g.reduce((a, b) => a + b, 0) / g.length;
      between += g.length * (m - mean) ** 2;
    }
    return { param: p, eta: total > 0 ? between / total : 0, values: groups.size };
  });
  const sum = raw.reduce((a, r) => a + r.eta, 0);
  return raw.map((r) => ({ param: r.param, importance: sum > 0 ? r.eta / sum : 0, values: r.values })).sort((a, b) => b.importance - a.importance);
}

/** A live run's pace: elapsed seconds and evaluations per minute. */
export function pace(startedAt: string, evaluated: number, now = Date.now()): { elapsedS: number; perMin: number | null } {
  const t0 = Date.parse(startedAt);
  const elapsedS = Number.isFinite(t0) ? Math.max(0, (now - t0) / 1000) : 0;
  return { elapsedS, perMin: elapsedS > 1 ? (evaluated / elapsedS) * 60 : null };
}

export function fmtDuration(s: number): string {
  if (s < 60) return `${s.toFixed(0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** One part of a variant's evaluation time, for the variant panel. */
export interface TimePart {
  label: string;
  ms: number;
}

/**
 * Where a GPU evaluation's wall time went (its stages, measure/evaluate.ts): the build, waiting for
 * the GPU, the capture process (when it ran inside the evaluation), the judge's check, the timing;
 * and, apart, the capture process's own phases largest first (also when it ran ahead of the
 * evaluation, beside other variants' work, so that its time is not on this evaluation's path), and
 * the check's and the timing's own parts where the judge reports them (the verifying can be most of
 * a timing; a spare executor still making its CUDA context most of a check).
 * Null without stages (replays, compile-only, failures before the GPU).
 */
export function timeSpent(r: Pick<EvalResult, 'build' | 'stages'>): { parts: TimePart[]; capture: TimePart[]; captureAhead: boolean; check: TimePart[]; timing: TimePart[] } | null {
  const st = r.stages;
  if (!st) return null;
  const parts: TimePart[] = [
    { label: 'build', ms: r.build.durationMs },
    { label: 'queued for the GPU', ms: st.queuedMs },
    { label: 'capture', ms: st.captureMs },
    { label: 'check', ms: st.checkMs },
    { label: 'timing', ms: st.timeMs },
  ];
  const phases: Array<[string, number | undefined]> = [
    ['process start', st.captureStartMs], ['CUDA context', st.captureContextMs], ['lockdown', st.captureLockdownMs], ['runtime-code recorder', st.captureRuntimeCodeMs],
    ['gated: waiting for its place (off the GPU)', st.captureWaitMs || undefined],
    ['loading the variant', st.captureLoadMs], ['first buffers', st.captureBuffersMs], ['calls and capture', st.captureCallsMs], ['writing the work', st.captureWriteMs], ['exit (teardown)', st.captureExitMs],
  ];
  const capture = phases.filter((x): x is [string, number] => typeof x[1] === 'number').map(([label, ms]) => ({ label, ms })).sort((a, b) => b.ms - a.ms);
  // A gated process's wait for its place is not work (it ran ready, beside other variants' timing).
  const captureTotal = capture.reduce((a, p) => a + p.ms, 0) - (st.captureWaitMs ?? 0);
  // The timing's own parts, where the judge reports them (from 2026-12-08): its buffer sets and
  // warm-up, the verified calls' reference runs, and the rest (the samples, and the go and answer).
  // From 2026-12-08 01:00 also the wait for the judge's spare executors' contexts before it.
  const spares = st.timeSparesWaitMs ?? 0;
  const timing: TimePart[] = st.timeSetupMs !== undefined && st.timeVerifyMs !== undefined
    ? [
      ...(st.timeSparesWaitMs !== undefined ? [{ label: "waiting for the judge's spare executors", ms: spares }] : []),
      { label: 'set-up (buffer sets, warm-up)', ms: st.timeSetupMs }, { label: 'verifying against the reference', ms: st.timeVerifyMs },
      { label: 'samples', ms: Math.max(0, st.timeMs - spares - st.timeSetupMs - st.timeVerifyMs) },
    ]
    : [];
  // The check's parts (from 2026-12-08 01:00): getting its executor, and the checks themselves.
  const check: TimePart[] = st.checkExecMs !== undefined
    ? [{ label: 'getting an executor', ms: st.checkExecMs }, { label: 'every size and seed', ms: Math.max(0, st.checkMs - st.checkExecMs) }]
    : [];
  // Ahead: the evaluation waited for less than half of what the capture process took.
  return { parts, capture, captureAhead: capture.length > 0 && st.captureMs < captureTotal / 2, check, timing };
}
