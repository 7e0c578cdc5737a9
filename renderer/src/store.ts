// The renderer's state (zustand): what the engine told us, what the user selected, and the live log.
import { create } from 'zustand';
import { decodeSession, type ApiEvent, type EnvDTO, type RunState, type SessionDetail, type SessionSummaryDTO, type TaskDetail, type TaskSummary, type Transport, type VariantDetail, type VariantRow } from '../../main/contract/api.js';
import { appendLog, applyLlmDelta, applyRunState, applyToSession, isFinalPhase, patchSummary, type LlmLive, type LogLine } from './reducers.js';

export type { LogLine, LlmLive } from './reducers.js';

export type View = 'gpus' | 'tasks' | 'run' | 'variants' | 'compare' | 'plots' | 'llm' | 'export';

export interface AppState {
  api: Transport | null;
  view: View;
  connected: boolean;
  env: EnvDTO | null;
  tasks: TaskSummary[];
  task: TaskDetail | null;
  sessions: SessionSummaryDTO[];
  sessionId: string | null;
  session: SessionDetail | null;
  runs: Record<string, RunState>;
  selected: string | null;
  compare: { a: string | null; b: string | null };
  variantCache: Record<string, VariantDetail>;
  logs: LogLine[];
  /** The LLM's answer being written (llm / mixed runs). */
  llmLive: LlmLive | null;
  /** A session's log as its journal tells it (fetched when the session is opened: survives a reload). */
  journalLog: { sessionId: string; lines: LogLine[]; at: string } | null;
  /** The command palette is open. */
  paletteOpen: boolean;
  /** What the run form should show next (set by actions elsewhere, e.g. "open a recorded space"). */
  runPreset: { task?: string; backend?: string; strategy?: string } | null;
  /** An action asked for by the palette and carried out by the view that owns it (seq: each request once). */
  action: { name: 'build' | 'evaluate'; seq: number } | null;
  error: string | null;
  setView(v: View): void;
  setError(e: unknown): void;
  setPalette(open: boolean): void;
  /** Space in the tree: marks a variant A, then B (again: unmarks it). */
  mark(id: string): void;
  init(api: Transport): Promise<void>;
  refreshSessions(): Promise<void>;
  openSession(id: string | null): Promise<void>;
  refreshSession(): Promise<void>;
  select(id: string | null): void;
  setCompare(which: 'a' | 'b', id: string | null): void;
  variant(id: string): Promise<VariantDetail>;
  onEvent(e: ApiEvent): void;
}

let refreshTimer: ReturnType<typeof setTimeout> | null = null;
/** How long the last full refresh took: a live run's refreshes are spaced by at least three times that (a large session's journal is re-read by the server each time). */
let lastRefreshMs = 0;
export const REFRESH_MS = 800;
const YIELD_ABOVE_ROWS = 2000;
/** Events received while a session's reply is being decoded (and its rendering waits a task). */
const arrivingLater = new Set<ApiEvent[]>();

export const useApp = create<AppState>((set, get) => ({
  api: null,
  view: 'gpus',
  connected: false,
  env: null,
  tasks: [],
  task: null,
  sessions: [],
  sessionId: null,
  session: null,
  runs: {},
  selected: null,
  compare: { a: null, b: null },
  variantCache: {},
  logs: [],
  llmLive: null,
  journalLog: null,
  paletteOpen: false,
  runPreset: null,
  action: null,
  error: null,
  setView: (view) => set({ view }),
  setError: (e) => set({ error: e === null ? null : e instanceof Error ? e.message : String(e) }),
  setPalette: (paletteOpen) => set({ paletteOpen }),
  mark: (id) =>
    set((s) => {
      const { a, b } = s.compare;
      if (a === id) return { compare: { a: null, b } };
      if (b === id) return { compare: { a, b: null } };
      return { compare: !a ? { a: id, b } : { a, b: id } };
    }),
  async init(api) {
    set({ api });
    api.subscribe((e) => get().onEvent(e));
    const tasksBefore = get().tasks;
    const [env, tasks, sessions, runs] = await Promise.all([api.call('env.describe', {}), api.call('tasks.list', {}), api.call('sessions.list', {}), api.call('runs.list', {})]);
    // A task list set while these were answered (a folder opened, a recording imported) is newer than this one.
    set((s) => ({ env, tasks: s.tasks !== tasksBefore ? s.tasks : tasks, sessions, connected: true, runs: Object.fromEntries(runs.map((r) => [r.sessionId, r])) }));
    const first = runs[0]?.sessionId ?? sessions[0]?.id ?? null;
    if (first) await get().openSession(first);
  },
  async refreshSessions() {
    const api = get().api;
    if (api) set({ sessions: await api.call('sessions.list', {}) });
  },
  async openSession(id) {
    set({ sessionId: id, session: null, selected: null, compare: { a: null, b: null }, variantCache: {}, journalLog: null, error: null });
    if (!id) return;
    const api = get().api;
    const at = new Date().toISOString();
    // The session first (the server answers in order), then its log as the journal tells it: what
    // the run said, also after a reload of the page.
    const loaded = get().refreshSession();
    if (api) {
      void api.call('sessions.log', { id }).then(
        (lines) => get().sessionId === id && set({ journalLog: { sessionId: id, at, lines: lines.map((l) => ({ ...l, sessionId: id })) } }),
        () => undefined,
      );
    }
    await loaded;
  },
  async refreshSession() {
    const { api, sessionId } = get();
    if (!api || !sessionId) return;
    const t0 = Date.now();
    try {
      // Rows come as columns (main/contract/session-payload.ts): decoded here, checked as they are.
      const payload = await api.call('sessions.get', { id: sessionId });
      // Events that arrive from here on are newer than the reply: applied on top of it below.
      const later: ApiEvent[] = [];
      arrivingLater.add(later);
      let session: SessionDetail;
      try {
        session = decodeSession(payload);
        lastRefreshMs = Date.now() - t0;
        // Rendering a large session's tree is a task of its own: the page takes input in between.
        if (session.variants.length > YIELD_ABOVE_ROWS) await new Promise((r) => setTimeout(r, 0));
      } finally {
        arrivingLater.delete(later);
      }
      for (const e of later) session = applyToSession(session, sessionId, e) ?? session;
      if (get().sessionId === sessionId) set({ session });
    } catch (e) {
      get().setError(e);
    }
  },
  select: (id) => set({ selected: id }),
  setCompare: (which, id) => set((s) => ({ compare: { ...s.compare, [which]: id } })),
  async variant(id) {
    const { api, sessionId, variantCache } = get();
    const hit = variantCache[id];
    if (hit && hit.row.status !== 'pending') return hit;
    if (!api || !sessionId) throw new Error('no session open');
    const d = await api.call('variants.get', { sessionId, variantId: id });
    set((s) => ({ variantCache: { ...s.variantCache, [id]: d } }));
    return d;
  },
  onEvent(e) {
    if (e.type === 'log') {
      set((s) => ({ logs: appendLog(s.logs, e) }));
      return;
    }
    if (e.type === 'llm.delta') {
      set((s) => ({ llmLive: applyLlmDelta(s.llmLive, e) }));
      return;
    }
    if (e.type === 'llm.prompt') return;
    for (const later of arrivingLater) later.push(e);
    if (e.type === 'run.state') {
      set((s) => ({ runs: applyRunState(s.runs, e.state) }));
      if (isFinalPhase(e.state.phase)) void get().refreshSessions();
    }
    const sid = e.type === 'run.state' ? e.state.sessionId : e.sessionId;
    if (sid !== get().sessionId) return;
    // Merge at once (the tree grows live); the plots follow with a throttled full refresh.
    set((s) => {
      const session = applyToSession(s.session, s.sessionId, e);
      return session ? { session, sessions: patchSummary(s.sessions, session) } : {};
    });
    if (!refreshTimer) {
      refreshTimer = setTimeout(() => {
        refreshTimer = null;
        void get().refreshSession();
      }, Math.max(REFRESH_MS, 3 * lastRefreshMs));
    }
  },
}));

export function speedupColor(speedup: number | null, status: VariantRow['status']): string {
  if (status === 'failed') return '#b91c1c';
  if (status === 'pending') return '#6b7280';
  if (speedup === null) return '#64748b';
  const t = Math.max(-1, Math.min(1, Math.log2(speedup)));
  if (t >= 0) return `hsl(142, ${40 + 50 * t}%, ${45 - 15 * t}%)`;
  return `hsl(25, ${40 - 60 * t}%, ${50 + 10 * t}%)`;
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  return ms >= 1 ? `${ms.toFixed(3)} ms` : `${(ms * 1000).toFixed(2)} µs`;
}

/** A rate in GB/s or GFLOP/s with its unit scaled: 1205.7 GFLOP/s -> "1.21 TFLOP/s". */
export function fmtRate(x: number | null | undefined, unit: 'B/s' | 'FLOP/s'): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  return x >= 1000 ? `${(x / 1000).toPrecision(3)} T${unit}` : x >= 1 ? `${x.toPrecision(3)} G${unit}` : `${(x * 1000).toPrecision(3)} M${unit}`;
}

export function fmtPct(x: number | null | undefined, digits = 0): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : `${(x * 100).toFixed(digits)}%`;
}

export function fmtX(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : `${x.toFixed(2)}×`;
}

export function fmtConfig(c: Record<string, number>): string {
  const s = Object.entries(c).map(([k, v]) => `${k}=${v}`).join(' ');
  return s || '(defaults)';
}
