// Pure state transitions of the renderer's store (no zustand, no DOM): how incoming engine events
// change the session's rows, the runs, the log and the LLM's live answer. Unit-tested directly.
import type { ApiEvent, RunState, SessionDetail, SessionSummaryDTO, VariantRow } from '../../main/contract/api.js';

export interface LogLine {
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  sessionId: string | null;
}

/** The LLM's answer being written, per session (only the latest answer is kept). */
export interface LlmLive {
  sessionId: string;
  promptId: string;
  answerId: string;
  attempt: number;
  text: string;
}

export const MAX_LOG = 2000;
export const MAX_LIVE_CHARS = 20_000;

export function appendLog(logs: LogLine[], e: Extract<ApiEvent, { type: 'log' }>, max = MAX_LOG): LogLine[] {
  return [...logs.slice(-(max - 1)), { at: e.at, level: e.level, message: e.message, sessionId: e.sessionId }];
}

export function applyRunState(runs: Record<string, RunState>, state: RunState): Record<string, RunState> {
  return { ...runs, [state.sessionId]: state };
}

/** Merges a row into a session's rows: replaced in place (keeping its evaluation order) or appended. */
export function mergeRow(rows: VariantRow[], row: VariantRow): VariantRow[] {
  const out = rows.slice();
  const i = out.findIndex((r) => r.id === row.id);
  if (i >= 0) out[i] = { ...row, evalIndex: row.evalIndex ?? out[i].evalIndex };
  else out.push(row);
  return out;
}

/** What an event changes in the open session (null: nothing). Events of other sessions change nothing. */
export function applyToSession(session: SessionDetail | null, sessionId: string | null, e: ApiEvent): SessionDetail | null {
  if (!session || e.type === 'log' || e.type === 'llm.delta' || e.type === 'llm.prompt') return null;
  const sid = e.type === 'run.state' ? e.state.sessionId : e.sessionId;
  if (sid !== sessionId) return null;
  if (e.type === 'run.state') return { ...session, run: e.state };
  const rows = mergeRow(session.variants, e.row);
  if (e.type === 'run.variant') return { ...session, variants: rows };
  // A result: the row, the run's progress, the best and the summary's counts move together.
  const results = rows.filter((r) => r.status !== 'pending').length;
  const run = session.run ? { ...session.run, evaluated: e.index, bestSpeedup: e.bestSpeedup, bestMs: e.bestMs } : session.run;
  const best = bestRow(rows);
  const summary: SessionSummaryDTO = {
    ...session.summary, variants: rows.length, results, status: session.run ? 'running' : session.summary.status,
    best: best && best.medianMs !== null ? { variantId: best.id, medianMs: best.medianMs, speedup: best.speedup } : session.summary.best,
  };
  return { ...session, variants: rows, run, bestId: best?.id ?? session.bestId, summary };
}

/** The session's best as the engine defines it: the lowest median among timed variants (null when none is timed). */
export function bestRow(rows: VariantRow[]): VariantRow | null {
  let best: VariantRow | null = null;
  for (const r of rows) if (r.status === 'timed' && r.medianMs !== null && (!best || r.medianMs < best.medianMs!)) best = r;
  return best;
}

/** The session list's entry for a session the open view has fresher counts of (the picker follows a live run). */
export function patchSummary(list: SessionSummaryDTO[], s: SessionDetail): SessionSummaryDTO[] {
  const i = list.findIndex((x) => x.id === s.summary.id);
  if (i < 0) return list;
  const out = list.slice();
  out[i] = { ...out[i], variants: s.summary.variants, results: s.summary.results, best: s.summary.best, status: s.run && !isFinalPhase(s.run.phase) ? 'running' : out[i].status };
  return out;
}

/** The LLM's answer as it streams: a new answer (or a retry) starts over; text is capped. */
export function applyLlmDelta(live: LlmLive | null, e: Extract<ApiEvent, { type: 'llm.delta' }>): LlmLive {
  if (!live || live.answerId !== e.answerId || live.sessionId !== e.sessionId || live.attempt !== e.attempt) {
    return { sessionId: e.sessionId, promptId: e.promptId, answerId: e.answerId, attempt: e.attempt, text: e.delta.slice(-MAX_LIVE_CHARS) };
  }
  return { ...live, text: (live.text + e.delta).slice(-MAX_LIVE_CHARS) };
}

/** Phases after which a run is over (the session list is refreshed). */
export function isFinalPhase(phase: RunState['phase']): boolean {
  return phase === 'finished' || phase === 'stopped' || phase === 'failed';
}
