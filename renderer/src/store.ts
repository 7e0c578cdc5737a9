// The renderer's state (zustand): what the engine told us, what the user selected, and the live log.
import { create } from 'zustand';
import type { ApiEvent, EnvDTO, RunState, SessionDetail, SessionSummaryDTO, TaskDetail, TaskSummary, Transport, VariantDetail, VariantRow } from '../../main/contract/api.js';
import { appendLog, applyLlmDelta, applyRunState, applyToSession, isFinalPhase, type LlmLive, type LogLine } from './reducers.js';

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
  error: string | null;
  setView(v: View): void;
  setError(e: unknown): void;
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
  error: null,
  setView: (view) => set({ view }),
  setError: (e) => set({ error: e === null ? null : e instanceof Error ? e.message : String(e) }),
  async init(api) {
    set({ api });
    api.subscribe((e) => get().onEvent(e));
    const [env, tasks, sessions, runs] = await Promise.all([api.call('env.describe', {}), api.call('tasks.list', {}), api.call('sessions.list', {}), api.call('runs.list', {})]);
    set({ env, tasks, sessions, connected: true, runs: Object.fromEntries(runs.map((r) => [r.sessionId, r])) });
    const first = runs[0]?.sessionId ?? sessions[0]?.id ?? null;
    if (first) await get().openSession(first);
  },
  async refreshSessions() {
    const api = get().api;
    if (api) set({ sessions: await api.call('sessions.list', {}) });
  },
  async openSession(id) {
    set({ sessionId: id, session: null, selected: null, compare: { a: null, b: null }, variantCache: {} });
    if (id) await get().refreshSession();
  },
  async refreshSession() {
    const { api, sessionId } = get();
    if (!api || !sessionId) return;
    try {
      const session = await api.call('sessions.get', { id: sessionId });
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
    if (e.type === 'run.state') {
      set((s) => ({ runs: applyRunState(s.runs, e.state) }));
      if (isFinalPhase(e.state.phase)) void get().refreshSessions();
    }
    const sid = e.type === 'run.state' ? e.state.sessionId : e.sessionId;
    if (sid !== get().sessionId) return;
    // Merge at once (the tree grows live); the plots follow with a throttled full refresh.
    set((s) => {
      const session = applyToSession(s.session, s.sessionId, e);
      return session ? { session } : {};
    });
    if (!refreshTimer) {
      refreshTimer = setTimeout(() => {
        refreshTimer = null;
        void get().refreshSession();
      }, 800);
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

export function fmtX(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : `${x.toFixed(2)}×`;
}

export function fmtConfig(c: Record<string, number>): string {
  const s = Object.entries(c).map(([k, v]) => `${k}=${v}`).join(' ');
  return s || '(defaults)';
}
