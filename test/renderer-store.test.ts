// The renderer's state (zustand store and its pure reducers), without a DOM: selecting a session,
// and engine events (run state, new variants, results, logs, the LLM's streamed answer) updating
// the tree and the progress.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeSession, type ApiEvent, type FullVariantRow, type MethodName, type Params, type Result, type RunState, type SessionDetail, type TaskSummary, type Transport, type VariantRow } from '../main/contract/api.js';
import { appendLog, applyLlmDelta, applyToSession, mergeRow } from '../renderer/src/reducers.js';
import { useApp } from '../renderer/src/store.js';
import { openTask } from '../renderer/src/open-task.js';
import { flattenTree, matches } from '../renderer/src/tree.js';

const row = (id: string, o: Partial<FullVariantRow> = {}): FullVariantRow => ({
  id, parents: [], origin: 'random', config: { BLOCK: 128 }, flags: { opt: 3 }, transforms: [], createdAt: '2026-01-01T00:00:00Z', status: 'pending', failure: null,
  medianMs: null, ciLowMs: null, ciHighMs: null, speedup: null, registers: null, sharedBytes: null, spillBytes: null, source: null, label: null, evalIndex: null, ...o,
});

const runState = (sessionId: string, o: Partial<RunState> = {}): RunState => ({
  sessionId, task: 'softmax', strategy: 'random', budget: 10, evaluated: 0, phase: 'running', startedAt: '', etaSeconds: null, bestSpeedup: null, bestMs: null, replay: true, compileOnly: false, ...o,
});

function detail(id: string, rows: VariantRow[], run: RunState | null = null): SessionDetail {
  return {
    summary: { id, task: 'softmax', createdAt: '', strategy: 'random', budget: 10, variants: rows.length, results: rows.filter((r) => r.status !== 'pending').length, status: null, best: null, gpu: null, replay: true },
    task: { name: 'softmax', dir: '/x' }, gpu: null, settings: {}, variants: rows, duels: [], notes: [], baselineId: rows[0]?.id ?? null, bestId: null, replay: { recording: 'r.json' },
    plots: { timeline: [], baselines: [], paramEffects: [], modelAccuracy: [], roofline: null, rewardLabel: '' }, run,
  };
}

/** A transport answering from fixed data; records calls; events are pushed by the test. */
function fakeTransport(sessions: Record<string, SessionDetail>): Transport & { calls: string[]; push(e: ApiEvent): void } {
  const listeners = new Set<(e: ApiEvent) => void>();
  const calls: string[] = [];
  const answers: Partial<{ [M in MethodName]: (p: Params<M>) => Result<M> }> = {
    'env.describe': () => ({ host: { cpu: 'x', cores: 1, memTotalBytes: 1, os: 'linux', hostname: 'h' }, gpus: [], gpuSource: 'none', driverVersion: null, toolchain: { nvcc: null, version: null, targets: [], cudaHome: null }, canCompile: false, canRun: false, messages: [], strategies: [], mode: 'browser' }),
    'tasks.list': () => [],
    'sessions.list': () => Object.values(sessions).map((s) => s.summary),
    'runs.list': () => [],
    'sessions.get': (p) => {
      const s = sessions[(p as { id: string }).id];
      if (!s) throw new Error('not found');
      return encodeSession(s);
    },
  };
  return {
    kind: 'browser',
    calls,
    async call(method, params) {
      calls.push(method);
      const f = answers[method] as ((p: unknown) => unknown) | undefined;
      if (!f) throw new Error(`unexpected call ${method}`);
      return f(params) as never;
    },
    subscribe(l) {
      listeners.add(l);
      return () => void listeners.delete(l);
    },
    push(e) {
      for (const l of listeners) l(e);
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
  useApp.setState({ api: null, sessionId: null, session: null, runs: {}, logs: [], llmLive: null, selected: null, sessions: [] });
});

describe('reducers (pure)', () => {
  it('mergeRow replaces a row in place (keeping its evaluation order) or appends it', () => {
    const rows = [row('v1', { evalIndex: 0 }), row('v2', { evalIndex: 1 })];
    const updated = mergeRow(rows, row('v2', { status: 'timed', speedup: 1.5 }));
    expect(updated.map((r) => [r.id, r.status, r.evalIndex])).toEqual([['v1', 'pending', 0], ['v2', 'timed', 1]]);
    expect(rows[1].status).toBe('pending'); // not mutated
    expect(mergeRow(rows, row('v3')).map((r) => r.id)).toEqual(['v1', 'v2', 'v3']);
  });

  it('applyToSession: a variant grows the tree, a result moves the progress, other sessions change nothing', () => {
    const s = detail('s1', [row('v1', { status: 'timed', origin: 'baseline' })], runState('s1'));
    expect(applyToSession(s, 's1', { type: 'run.variant', sessionId: 's2', row: row('x') })).toBeNull();
    expect(applyToSession(s, 's1', { type: 'log', sessionId: 's1', level: 'info', message: 'm', at: '' })).toBeNull();
    const a = applyToSession(s, 's1', { type: 'run.variant', sessionId: 's1', row: row('v2', { parents: ['v1'] }) })!;
    expect(a.variants.map((r) => r.id)).toEqual(['v1', 'v2']);
    const b = applyToSession(a, 's1', { type: 'run.result', sessionId: 's1', row: row('v2', { parents: ['v1'], status: 'timed', speedup: 2, medianMs: 0.5 }), index: 1, budget: 10, bestSpeedup: 2, bestMs: 0.5 })!;
    expect(b.variants[1]).toMatchObject({ status: 'timed', speedup: 2 });
    expect(b.run).toMatchObject({ evaluated: 1, bestSpeedup: 2, bestMs: 0.5 });
    expect(b.summary).toMatchObject({ variants: 2, results: 2 });
    const c = applyToSession(b, 's1', { type: 'run.state', state: runState('s1', { phase: 'paused', evaluated: 1 }) })!;
    expect(c.run?.phase).toBe('paused');
    // The tree follows: v2 under v1.
    expect(flattenTree(c.variants).map((n) => [n.row.id, n.depth])).toEqual([['v1', 0], ['v2', 1]]);
  });

  it('appendLog keeps the newest lines; applyLlmDelta streams one answer and restarts on a new one or a retry', () => {
    let logs = appendLog([], { type: 'log', sessionId: null, level: 'info', message: 'a', at: 't' }, 3);
    for (const m of ['b', 'c', 'd']) logs = appendLog(logs, { type: 'log', sessionId: 's', level: 'warn', message: m, at: 't' }, 3);
    expect(logs.map((l) => l.message)).toEqual(['b', 'c', 'd']);
    const d = (answerId: string, delta: string, attempt = 1): Extract<ApiEvent, { type: 'llm.delta' }> => ({ type: 'llm.delta', sessionId: 's', promptId: 'p', answerId, delta, attempt });
    let live = applyLlmDelta(null, d('a1', '## Performance'));
    live = applyLlmDelta(live, d('a1', ' analysis'));
    expect(live).toMatchObject({ answerId: 'a1', text: '## Performance analysis' });
    expect(applyLlmDelta(live, d('a1', 'again', 2)).text).toBe('again');
    expect(applyLlmDelta(live, d('a2', 'x')).text).toBe('x');
  });

  it('tree filter matches config text, failures and status', () => {
    const r = row('v7', { config: { BLOCK: 256, VEC: 4 }, status: 'failed', failure: { kind: 'correctness', reason: 'y[3] wrong' } });
    expect(matches(r, 'BLOCK=256 vec=4', 'all')).toBe(true);
    expect(matches(r, 'correctness', 'failed')).toBe(true);
    expect(matches(r, 'BLOCK=128', 'all')).toBe(false);
    expect(matches(r, '', 'timed')).toBe(false);
  });
});

describe('the zustand store', () => {
  it('init opens the newest session; selecting another loads it and clears the selection', async () => {
    const api = fakeTransport({ s2: detail('s2', [row('v1')]), s1: detail('s1', [row('v1'), row('v2')]) });
    await useApp.getState().init(api);
    expect(useApp.getState()).toMatchObject({ connected: true, sessionId: 's2' });
    expect(useApp.getState().session?.summary.id).toBe('s2');
    useApp.getState().select('v1');
    useApp.getState().setCompare('a', 'v1');
    await useApp.getState().openSession('s1');
    expect(useApp.getState()).toMatchObject({ sessionId: 's1', selected: null, compare: { a: null, b: null } });
    expect(useApp.getState().session?.variants).toHaveLength(2);
    await useApp.getState().openSession(null);
    expect(useApp.getState().session).toBeNull();
  });

  it("init does not replace a task list set while its first answers were coming (an import or a folder opened meanwhile)", async () => {
    const api = fakeTransport({});
    const newer = [{ id: 'space:1', name: 'imported', description: '', dir: '/x', builtin: false, spaceSize: 16, tunables: {} }] as unknown as TaskSummary[];
    const slow = { ...api, call: async (m: MethodName, p: unknown) => (m === 'env.describe' ? (useApp.setState({ tasks: newer }), api.call(m, p as never)) : api.call(m, p as never)) } as Transport;
    useApp.setState({ tasks: [] });
    await useApp.getState().init(slow);
    expect(useApp.getState().tasks).toBe(newer);
    // Without anything set meanwhile, init's own list is taken.
    useApp.setState({ tasks: newer });
    await useApp.getState().init(api);
    expect(useApp.getState().tasks).toEqual([]);
  });

  it('incoming loop events update the tree and the progress live, then a throttled refresh follows', async () => {
    vi.useFakeTimers();
    const api = fakeTransport({ s1: detail('s1', [row('v1', { origin: 'baseline', status: 'timed', medianMs: 1, speedup: 1 })], runState('s1')) });
    await useApp.getState().init(api);
    const gets = (): number => api.calls.filter((c) => c === 'sessions.get').length;
    const before = gets();
    api.push({ type: 'run.variant', sessionId: 's1', row: row('v2', { parents: ['v1'] }) });
    api.push({ type: 'run.result', sessionId: 's1', row: row('v2', { parents: ['v1'], status: 'timed', medianMs: 0.5, speedup: 2 }), index: 1, budget: 10, bestSpeedup: 2, bestMs: 0.5 });
    api.push({ type: 'run.state', state: runState('s1', { evaluated: 1, bestSpeedup: 2 }) });
    api.push({ type: 'run.variant', sessionId: 'other', row: row('zz') });
    api.push({ type: 'log', sessionId: 's1', level: 'info', message: '[1/10] v2 0.5 ms', at: '2026-01-01T00:00:01Z' });
    api.push({ type: 'llm.delta', sessionId: 's1', promptId: 'p', answerId: 'p-1', delta: 'The baseline is memory bound', attempt: 1 });
    const st = useApp.getState();
    expect(st.session!.variants.map((r) => [r.id, r.status])).toEqual([['v1', 'timed'], ['v2', 'timed']]);
    expect(st.session!.run).toMatchObject({ evaluated: 1, bestSpeedup: 2 });
    expect(st.runs.s1).toMatchObject({ evaluated: 1 });
    expect(st.logs.at(-1)?.message).toBe('[1/10] v2 0.5 ms');
    expect(st.llmLive?.text).toBe('The baseline is memory bound');
    // The full refresh is throttled: one call after the burst.
    expect(gets()).toBe(before);
    await vi.advanceTimersByTimeAsync(900);
    expect(gets()).toBe(before + 1);
    // A finished run refreshes the session list.
    const lists = api.calls.filter((c) => c === 'sessions.list').length;
    api.push({ type: 'run.state', state: runState('s1', { phase: 'finished', evaluated: 10 }) });
    await vi.advanceTimersByTimeAsync(10);
    expect(api.calls.filter((c) => c === 'sessions.list').length).toBe(lists + 1);
    expect(useApp.getState().runs.s1.phase).toBe('finished');
  });

  it('a large session renders in a task of its own; results that arrive meanwhile are kept', async () => {
    // 2,500 rows: the store decodes the reply, then waits a task before rendering it. A result that
    // arrives in between is newer than the reply and must not be lost when the reply is shown.
    const rows = [row('v1', { origin: 'baseline', status: 'timed', medianMs: 1, speedup: 1, evalIndex: 0 }), ...Array.from({ length: 2499 }, (_, i) => row(`v${i + 2}`, { parents: ['v1'] }))];
    const base = fakeTransport({ s1: detail('s1', rows, runState('s1')) });
    let release: () => void = () => undefined;
    const api: Transport = {
      ...base,
      async call(method, params) {
        if (method === 'sessions.get') await new Promise<void>((r) => (release = r));
        return base.call(method, params);
      },
    };
    useApp.setState({ api });
    api.subscribe((e) => useApp.getState().onEvent(e));
    const opened = useApp.getState().openSession('s1');
    await new Promise((r) => setTimeout(r, 0));
    release();
    // The reply's microtasks run (decoding); the rendering waits for a timer, which cannot run in between.
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(useApp.getState().session).toBeNull();
    base.push({ type: 'run.result', sessionId: 's1', row: row('v2', { parents: ['v1'], status: 'timed', medianMs: 0.25, speedup: 4 }), index: 1, budget: 10, bestSpeedup: 4, bestMs: 0.25 });
    await opened;
    const s = useApp.getState().session!;
    expect(s.variants).toHaveLength(2500);
    expect(s.variants[1]).toMatchObject({ id: 'v2', status: 'timed', medianMs: 0.25 });
    expect(s.bestId).toBe('v2');
    expect(s.summary.best).toMatchObject({ variantId: 'v2', speedup: 4 });
  });
});

describe('opening tasks', () => {
  it('shows the task opened last, even when an earlier request answers after it', async () => {
    const base = fakeTransport({});
    const waiting: Record<string, () => void> = {};
    const api: Transport = {
      ...base,
      async call(method, params) {
        if (method === 'tasks.get') {
          const id = (params as { taskId: string }).taskId;
          await new Promise<void>((r) => (waiting[id] = r));
          return { id, name: id } as unknown as Result<typeof method>;
        }
        return base.call(method, params);
      },
    };
    useApp.setState({ api, task: null });
    const first = openTask('axpy'); // the view's first task, opened on its own
    const second = openTask('softmax'); // the one the user clicked
    await new Promise((r) => setTimeout(r, 0));
    waiting.softmax();
    await second;
    expect(useApp.getState().task?.id).toBe('softmax');
    waiting.axpy();
    await first;
    expect(useApp.getState().task?.id).toBe('softmax');
  });
});
