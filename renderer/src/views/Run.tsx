import { useEffect, useMemo, useRef, useState } from 'react';
import { useApp, fmtMs, fmtX } from '../store.js';
import { VariantTree } from './Tree.js';
import { GpuActivityPanel } from './GpuActivity.js';

function fmtEta(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return 'ETA –';
  if (s < 60) return `ETA ${Math.round(s)} s`;
  if (s < 3600) return `ETA ${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `ETA ${(s / 3600).toFixed(1)} h`;
}

export function RunView() {
  const api = useApp((s) => s.api);
  const env = useApp((s) => s.env);
  const tasks = useApp((s) => s.tasks);
  const session = useApp((s) => s.session);
  const sessionId = useApp((s) => s.sessionId);
  const runs = useApp((s) => s.runs);
  const logs = useApp((s) => s.logs);
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  const setView = useApp((s) => s.setView);
  const setError = useApp((s) => s.setError);
  const currentTask = useApp((s) => s.task);
  const llmLive = useApp((s) => s.llmLive);
  const [taskId, setTaskId] = useState<string>('');
  const [strategy, setStrategy] = useState('random');
  const [budget, setBudget] = useState(20);
  const [gpu, setGpu] = useState<string>('none');
  const [recording, setRecording] = useState<string>('');
  const [starting, setStarting] = useState(false);
  const logRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!taskId && (currentTask || tasks[0])) setTaskId(currentTask?.id ?? tasks[0].id);
  }, [tasks, currentTask, taskId]);
  useEffect(() => {
    if (env?.gpus.length && gpu === 'none') setGpu(String(env.gpus[0].index));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [env]);
  const task = tasks.find((t) => t.id === taskId);
  useEffect(() => {
    setRecording(task?.recordings[0] ?? '');
  }, [task?.id, task?.recordings]);
  useEffect(() => {
    logRef.current?.scrollTo({ top: logRef.current.scrollHeight });
  }, [logs.length]);

  const run = sessionId ? runs[sessionId] : undefined;
  const live = run && ['running', 'paused', 'stopping', 'starting'].includes(run.phase);
  const sessionLogs = useMemo(() => logs.filter((l) => !l.sessionId || l.sessionId === sessionId).slice(-400), [logs, sessionId]);
  const progress = run ? run.evaluated / Math.max(1, run.budget) : session ? session.summary.results / Math.max(1, (session.summary.budget ?? 0) + 1) : 0;

  const start = async (): Promise<void> => {
    if (!api || !task) return;
    setStarting(true);
    try {
      const st = await api.call('runs.start', { task: task.id, strategy, budget, gpu: gpu === 'none' || gpu === 'all' ? null : Number(gpu), ...(gpu === 'all' && !recording ? { gpus: 'all' as const } : {}), ...(recording ? { recording } : {}) });
      useApp.setState((s) => ({ runs: { ...s.runs, [st.sessionId]: st } }));
      await useApp.getState().refreshSessions();
      await useApp.getState().openSession(st.sessionId);
    } catch (e) {
      setError(e);
    } finally {
      setStarting(false);
    }
  };
  const ctl = async (m: 'runs.pause' | 'runs.resume' | 'runs.stop'): Promise<void> => {
    if (!api || !sessionId) return;
    try {
      const st = await api.call(m, { sessionId });
      useApp.setState((s) => ({ runs: { ...s.runs, [st.sessionId]: st } }));
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div className="run">
      <div className="run-controls">
        <label>Task <select data-testid="run-task" value={taskId} onChange={(e) => setTaskId(e.target.value)}>{tasks.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}</select></label>
        <label>Strategy <select data-testid="run-strategy" value={strategy} onChange={(e) => setStrategy(e.target.value)}>{(env?.strategies ?? []).map((s) => <option key={s.name} value={s.name} title={s.description}>{s.name}</option>)}</select></label>
        <label>Measure on <select data-testid="run-backend" value={recording ? `rec:${recording}` : `gpu:${gpu}`} onChange={(e) => {
          const v = e.target.value;
          if (v.startsWith('rec:')) setRecording(v.slice(4));
          else { setRecording(''); setGpu(v.slice(4)); }
        }}>
          {(env?.gpus ?? []).map((g) => <option key={g.index} value={`gpu:${g.index}`}>GPU {g.index}: {g.name}</option>)}
          {(env?.gpus.length ?? 0) > 1 && <option value="gpu:all">all {env!.gpus.length} GPUs, one run</option>}
          <option value="gpu:none">no GPU (compile-only)</option>
          {(task?.recordings ?? []).map((r) => <option key={r} value={`rec:${r}`}>REPLAY: {r.split('/').slice(-2).join('/')}</option>)}
        </select></label>
        <label>Budget <input data-testid="run-budget" type="number" min={0} max={100000} value={budget} onChange={(e) => setBudget(Number(e.target.value))} /></label>
        <button data-testid="run-start" onClick={() => void start()} disabled={!task || starting}>{starting ? 'Starting…' : 'Start'}</button>
        <button data-testid="run-pause" onClick={() => void ctl('runs.pause')} disabled={!live || run?.phase !== 'running'}>Pause</button>
        <button data-testid="run-resume" onClick={() => void ctl('runs.resume')} disabled={!live || run?.phase !== 'paused'}>Resume</button>
        <button data-testid="run-stop" onClick={() => void ctl('runs.stop')} disabled={!live}>Stop</button>
      </div>
      {recording && <div className="replay-note">REPLAY: measurements will be answered from the recorded space {recording}, not measured on a GPU.</div>}
      {(strategy === 'llm' || strategy === 'mixed') && (
        <div className="muted" data-testid="run-llm-note">
          The {strategy} policy asks the model set in <a href="#" onClick={(e) => { e.preventDefault(); setView('llm'); }}>LLM policy</a>; its code is screened, built, checked and timed like any variant.
          {recording ? <b className="fail"> A recorded space cannot answer new code: choose a GPU or compile-only.</b> : null}
        </div>
      )}
      {llmLive && llmLive.sessionId === sessionId && live && (
        <div className="llm-live" data-testid="llm-live">
          <div className="muted small">the model is writing {llmLive.answerId}{llmLive.attempt > 1 ? ` (attempt ${llmLive.attempt})` : ''}…</div>
          <pre>{llmLive.text}</pre>
        </div>
      )}
      {session && (
        <div className="progress-row">
          <div className="progress" data-testid="progress"><div className="bar" style={{ width: `${Math.min(100, progress * 100).toFixed(1)}%` }} /></div>
          <span data-testid="progress-text">
            {run ? `${run.phase} · ${run.evaluated}/${run.budget} · ${fmtEta(run.etaSeconds)}` : `${session.summary.status ?? 'idle'} · ${session.summary.results} results`}
            {' · best '}{fmtX(run?.bestSpeedup ?? session.summary.best?.speedup ?? null)} {fmtMs(run?.bestMs ?? session.summary.best?.medianMs ?? null)}
            {session.replay ? ' · REPLAY' : ''}
          </span>
        </div>
      )}
      {run?.gpus && <GpuActivityPanel gpus={run.gpus} />}
      <div className="run-body">
        <div className="run-tree">
          {session ? <VariantTree rows={session.variants} selected={selected} bestId={session.bestId} onSelect={(id) => { select(id); setView('variants'); }} height={420} /> : <p className="muted">Start a run, or pick a past session above.</p>}
        </div>
        <div className="log" ref={logRef} data-testid="run-log">
          {sessionLogs.map((l, i) => <div key={i} className={`log-${l.level}`}><span className="muted">{l.at.slice(11, 19)}</span> {l.message}</div>)}
        </div>
      </div>
    </div>
  );
}
