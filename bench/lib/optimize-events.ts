// What an `optimize --json` run's event lines say, for the benchmarks that run the CLI
// (bench/measure-truth.ts): where each variant's time went, and the best variant after each
// evaluation. Both bundles' CLIs write the same lines: {"type":"result","result":{"failure",
// "medianMs","stages"},...} per evaluation and {"type":"duel",...} per duel.
import { median } from '../../main/engine/measure/stats.js';
import { CAPTURE_PHASE_STAGES } from '../../main/engine/measure/evaluate.js';

/** One line of a run's standard output and when it arrived (ms since the run started). */
export interface EventLine {
  t: number;
  text: string;
}
/** Milliseconds per part of a variant's time: median, mean and count. */
export type Breakdown = Record<string, { median: number; mean: number; n: number }>;

/**
 * Where a variant's time went in an optimisation run, from its --json event lines. The interval
 * between two consecutive results holds the duel after the first (to its duel line) and the
 * evaluation of the second: its stages as the evaluator reports them (queued for the GPU, the
 * capture process, the judge's check, its timing; bundles before the change report none), and the
 * rest (waiting for the build, the policy, the journal). Medians and means in milliseconds.
 */
export function breakdown(lines: EventLine[]): Breakdown {
  const marks: StageMark[] = [];
  for (const l of lines) {
    const ev = parseEvent(l);
    if (ev?.type === 'result') marks.push({ t: l.t, kind: 'result', stages: ev.result?.stages });
    else if (ev?.type === 'duel') marks.push({ t: l.t, kind: 'duel', stages: duelStages(ev.result) });
  }
  return breakdownOf(marks);
}

/** What breakdown() and perEvaluation() read of a line; null for a line that is not JSON (cut short). */
interface EventFields {
  type?: string;
  variantId?: string;
  result?: { failure?: { kind?: string } | string | null; medianMs?: number; samples?: number; cutoffMs?: number; stages?: Record<string, number> } & DuelParts;
}
/** What a duel line's result (a DuelResult) says of where the duel's time went. */
interface DuelParts {
  setupMs?: unknown;
  verifyMs?: unknown;
  timedMs?: unknown;
  start?: { executorsMs?: unknown; sparesWaitMs?: unknown };
}
/**
 * A duel's parts as stages for breakdownOf: its set-up (buffer sets, warm-up), its pairs' loop and
 * the verified pairs' reference runs within it (judges from 2026-12-08 on), and before them getting
 * both executors and waiting for the spares' contexts (DuelResult.start, from 2026-12-08 01:00 on).
 */
export function duelStages(d: DuelParts | undefined): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  const put = (k: string, x: unknown): void => {
    if (typeof x === 'number' && Number.isFinite(x)) out[k] = x;
  };
  put('duelSetupMs', d?.setupMs);
  put('duelTimedMs', d?.timedMs);
  put('duelVerifyMs', d?.verifyMs);
  put('duelExecutorsMs', d?.start?.executorsMs);
  put('duelSparesWaitMs', d?.start?.sparesWaitMs);
  return Object.keys(out).length ? out : undefined;
}
const DUEL_PARTS = { duelSetupMs: 'duelSetup', duelTimedMs: 'duelTimed', duelVerifyMs: 'duelVerify', duelExecutorsMs: 'duelExecutors', duelSparesWaitMs: 'duelSparesWait' } as const;
function parseEvent(l: EventLine): EventFields | null {
  try {
    return JSON.parse(l.text) as EventFields;
  } catch {
    return null;
  }
}

/** A run's result or duel as it arrived (ms from any fixed start), for breakdownOf. */
export interface StageMark {
  t: number;
  kind: 'result' | 'duel';
  stages?: Record<string, number>;
}

/** breakdown() of events seen in process (bench/vs-pytorch.ts runs the loop itself). */
export function breakdownOf(marks: StageMark[]): Breakdown {
  const results: Array<{ t: number; duelMs: number; stages?: Record<string, number> }> = [];
  const acc: Record<string, number[]> = { perVariant: [], duel: [], queued: [], capture: [], check: [], time: [], rest: [] };
  for (const m of marks) {
    if (m.kind === 'result') results.push({ t: m.t, duelMs: 0, stages: m.stages });
    else if (results.length) results[results.length - 1].duelMs = m.t - results[results.length - 1].t;
    // Parts of a duel's time (duelStages): not parts of the interval's `rest`.
    if (m.kind === 'duel') for (const [k, name] of Object.entries(DUEL_PARTS)) if (typeof m.stages?.[k] === 'number') (acc[name] ??= []).push(m.stages[k]);
  }
  for (let i = 1; i < results.length; i++) {
    const total = results[i].t - results[i - 1].t;
    const duel = results[i - 1].duelMs;
    acc.perVariant.push(total);
    acc.duel.push(duel);
    const st = results[i].stages;
    if (!st) continue;
    acc.queued.push(st.queuedMs);
    acc.capture.push(st.captureMs);
    acc.check.push(st.checkMs);
    acc.time.push(st.timeMs);
    acc.rest.push(total - duel - st.queuedMs - st.captureMs - st.checkMs - st.timeMs);
    // The capture process's own phases (bundles from 2026-12-04 on), whether it ran inside this
    // evaluation or ahead of it: not parts of the interval, so apart from `rest`.
    for (const k of CAPTURE_PHASE_STAGES) if (typeof st[k] === 'number') (acc[k] ??= []).push(st[k]);
    // Parts of the time stage (judges from 2026-12-08 on): buffer sets and warm-up, and the
    // verified calls' reference runs.
    if (typeof st.timeSetupMs === 'number') (acc.timeSetup ??= []).push(st.timeSetupMs);
    if (typeof st.timeVerifyMs === 'number') (acc.timeVerify ??= []).push(st.timeVerifyMs);
    // Getting the check's executor (a spare still making its context: ~150-250 ms), and the time
    // stage's wait for the spares' contexts (judges from 2026-12-08 01:00 on).
    if (typeof st.checkExecMs === 'number') (acc.checkExec ??= []).push(st.checkExecMs);
    if (typeof st.timeSparesWaitMs === 'number') (acc.timeSparesWait ??= []).push(st.timeSparesWaitMs);
  }
  const out: Breakdown = {};
  for (const [k, v] of Object.entries(acc)) if (v.length) out[k] = { median: median(v), mean: v.reduce((x, y) => x + y, 0) / v.length, n: v.length };
  return out;
}

/**
 * A breakdown's medians in one line, for a benchmark's log: "per variant 892, duel 548 (…), check
 * 23 (…), time 276 (…), rest 9 ms (medians)", each stage followed by the parts the judge reported.
 */
export function breakdownWords(b: Breakdown): string {
  const m = (k: string): string | null => (b[k] ? `${Math.round(b[k].median)}` : null);
  const parts = (keys: Array<[string, string]>): string => {
    const got = keys.flatMap(([k, label]) => (m(k) !== null ? [`${label} ${m(k)}`] : []));
    return got.length ? ` (${got.join(', ')})` : '';
  };
  const out = [
    m('perVariant') !== null ? `per variant ${m('perVariant')}` : null,
    m('duel') !== null ? `duel ${m('duel')}${parts([['duelExecutors', 'executors'], ['duelSparesWait', 'spares wait'], ['duelSetup', 'set-up'], ['duelTimed', 'pairs'], ['duelVerify', 'verifying']])}` : null,
    m('check') !== null ? `check ${m('check')}${parts([['checkExec', 'executor']])}` : null,
    m('time') !== null ? `time ${m('time')}${parts([['timeSparesWait', 'spares wait'], ['timeSetup', 'set-up'], ['timeVerify', 'verifying']])}` : null,
    m('rest') !== null ? `rest ${m('rest')}` : null,
  ].filter((x): x is string => x !== null);
  return out.length ? `${out.join(', ')} ms (medians)` : 'no stages reported';
}

/** One evaluation of a run as its result line and the duel after it tell. */
export interface EvaluationRow {
  /** 1-based, in the order the results arrived. */
  evaluation: number;
  variantId: string | null;
  /** The timed figure; null when the variant failed or was not timed. */
  medianMs: number | null;
  /** Timed samples behind it (bundles from 2026-12-07 on; null before). */
  samples: number | null;
  /** The cutoff its timing stopped at (`--time-cutoff`, bundles from 2026-12-07 on); null when it ran to its precision or cap. */
  cutoffMs: number | null;
  failure: string | null;
  /** The evaluator's stages (queuedMs, captureMs, checkMs, timeMs, …) as the line has them. */
  stages: Record<string, number> | null;
  /** From this result to the last duel line before the next result (breakdownOf's duel); null when none followed. */
  duelMs: number | null;
}

/**
 * Each evaluation of a run, so a difference between two runs' breakdown() can be traced to the
 * variants that made it (a histogram run, 2026-12-07: the median time stage 706 ms in one bundle,
 * 2585 ms in the other, with the same proposals).
 */
export function perEvaluation(lines: EventLine[]): EvaluationRow[] {
  const rows: EvaluationRow[] = [];
  let last: { row: EvaluationRow; t: number } | null = null;
  for (const l of lines) {
    const ev = parseEvent(l);
    if (!ev) {
      if (isResultLine(l)) rows.push({ evaluation: rows.length + 1, variantId: null, medianMs: null, samples: null, cutoffMs: null, failure: 'line cut short', stages: null, duelMs: null });
      last = null;
    } else if (ev.type === 'result') {
      const f = ev.result?.failure;
      const row: EvaluationRow = {
        evaluation: rows.length + 1,
        variantId: ev.variantId ?? null,
        medianMs: !f && typeof ev.result?.medianMs === 'number' ? ev.result.medianMs : null,
        samples: typeof ev.result?.samples === 'number' ? ev.result.samples : null,
        cutoffMs: typeof ev.result?.cutoffMs === 'number' ? ev.result.cutoffMs : null,
        failure: f ? (typeof f === 'string' ? f : (f.kind ?? 'failed')) : null,
        stages: ev.result?.stages ?? null,
        duelMs: null,
      };
      rows.push(row);
      last = { row, t: l.t };
    } else if (ev.type === 'duel' && last) {
      last.row.duelMs = l.t - last.t; // to the last duel before the next result, as breakdownOf counts it
    }
  }
  return rows;
}

/** A variant's result line (the CLI writes `type` first, so a line cut short still counts). */
export const isResultLine = (l: EventLine): boolean => l.text.startsWith('{"type":"result"');

/**
 * The fastest variant an optimisation run timed, from its --json result lines, and the best so far
 * after each evaluation (null until one is timed): what lets a run stopped early be compared with a
 * whole one at the same number of evaluations.
 */
export function bestOf(lines: EventLine[]): { medianMs: number; evaluation: number; byEvaluation: Array<number | null> } | null {
  let best: { medianMs: number; evaluation: number } | null = null;
  const byEvaluation: Array<number | null> = [];
  for (const l of lines) {
    if (!isResultLine(l)) continue;
    const ev = parseEvent(l) ?? { type: 'result' }; // a truncated line counts as an evaluation that timed nothing
    if (ev.type !== 'result') continue;
    // `optimize --json` (old bundles and new) writes a result's figure as result.medianMs.
    const ms = ev.result && !ev.result.failure ? ev.result.medianMs : undefined;
    if (typeof ms === 'number' && (!best || ms < best.medianMs)) best = { medianMs: ms, evaluation: byEvaluation.length + 1 };
    byEvaluation.push(best?.medianMs ?? null);
  }
  return best ? { ...best, byEvaluation } : null;
}
