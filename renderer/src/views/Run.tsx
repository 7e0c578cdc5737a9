// Start, watch and steer a run: the form (it follows the open session: its task, strategy, backend
// and budget), progress with the best so far, the variant tree and the run's log in resizable
// panes. The log of a session opened later (or after a reload) is rebuilt from its journal.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useApp, fmtMs, fmtX } from '../store.js';
import { Split } from '../layout.js';
import { VariantTree } from './Tree.js';
import { GpuActivityPanel } from './GpuActivity.js';
import { EmptyState } from './Empty.js';
import { SIMULATED_GPU_LATENCY_MS } from '../../../main/contract/api.js';

function fmtEta(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return 'ETA –';
  if (s < 60) return `ETA ${Math.round(s)} s`;
  if (s < 3600) return `ETA ${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `ETA ${(s / 3600).toFixed(1)} h`;
}

/** Starts a run with the form's values (also the palette's "Run"). */
export async function startRun(p: { task: string; strategy: string; budget: number; backend: string; simulateGpus?: number }): Promise<void> {
  const { api, setError } = useApp.getState();
  if (!api) return;
  try {
    const rec = p.backend.startsWith('rec:') ? p.backend.slice(4) : null;
    const all = !rec && p.backend === 'gpu:all'; // one run on every GPU
    const gpu = !rec && !all && p.backend !== 'gpu:none' ? Number(p.backend.slice(4)) : null;
    const st = await api.call('runs.start', { task: p.task, strategy: p.strategy, budget: p.budget, gpu, ...(all ? { gpus: 'all' as const } : {}), ...(rec ? { recording: rec, ...(p.simulateGpus ? { simulateGpus: p.simulateGpus } : {}) } : {}) });
    useApp.setState((s) => ({ runs: { ...s.runs, [st.sessionId]: st } }));
    await useApp.getState().refreshSessions();
    await useApp.getState().openSession(st.sessionId);
  } catch (e) {
    setError(e);
  }
}

export async function controlRun(m: 'runs.pause' | 'runs.resume' | 'runs.stop'): Promise<void> {
  const { api, sessionId, setError } = useApp.getState();
  if (!api || !sessionId) return;
  try {
    const st = await api.call(m, { sessionId });
    useApp.setState((s) => ({ runs: { ...s.runs, [st.sessionId]: st } }));
  } catch (e) {
    setError(e);
  }
}

export function RunView() {
  const env = useApp((s) => s.env);
  const tasks = useApp((s) => s.tasks);
  const session = useApp((s) => s.session);
  const sessionId = useApp((s) => s.sessionId);
  const runs = useApp((s) => s.runs);
  const logs = useApp((s) => s.logs);
  const journalLog = useApp((s) => s.journalLog);
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  const setView = useApp((s) => s.setView);
  const marks = useApp((s) => s.compare);
  const mark = useApp((s) => s.mark);
  const currentTask = useApp((s) => s.task);
  const llmLive = useApp((s) => s.llmLive);
  const preset = useApp((s) => s.runPreset);
  const [taskId, setTaskId] = useState<string>('');
  const [strategy, setStrategy] = useState('contrastive');
  const [budget, setBudget] = useState(60);
  const [backend, setBackend] = useState<string>('gpu:none');
  // With a recording: replay it on this many SIMULATED GPUs (0: one replay, no pool), as optimize --simulate-gpus.
  const [simGpus, setSimGpus] = useState(0);
  const [starting, setStarting] = useState(false);
  const logRef = useRef<HTMLDivElement>(null);

  // The form follows the open session (its task, strategy, backend and budget), or a preset.
  useEffect(() => {
    if (!session) return;
    const t = tasks.find((x) => x.name === session.summary.task || x.dir === session.task.dir);
    if (t) setTaskId(t.id);
    const st = session.settings;
    if (typeof st.strategy === 'string') setStrategy(st.strategy);
    if (typeof st.budget === 'number') setBudget(st.budget);
    const b = st.backend as { kind?: string; recording?: string; gpu?: number; noGpu?: boolean; gpus?: unknown[] } | undefined;
    if (b?.kind === 'replay' && b.recording) setBackend(`rec:${b.recording}`);
    else if (session.replay) setBackend(`rec:${session.replay.recording}`);
    else if (b?.kind === 'gpu' && Array.isArray(b.gpus)) setBackend('gpu:all');
    else if (b?.kind === 'gpu' && typeof b.gpu === 'number') setBackend(`gpu:${b.gpu}`);
    else if (!session.gpu) setBackend('gpu:none');
  }, [session?.summary.id, tasks.length]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (!preset) return;
    if (preset.task) setTaskId(preset.task);
    if (preset.backend) setBackend(preset.backend);
    if (preset.strategy) setStrategy(preset.strategy);
    useApp.setState({ runPreset: null });
  }, [preset]);
  useEffect(() => {
    if (!taskId && !session && (currentTask || tasks[0])) setTaskId(currentTask?.id ?? tasks[0].id);
  }, [tasks, currentTask, taskId, session]);
  useEffect(() => {
    if (env?.gpus.length && backend === 'gpu:none' && !session) setBackend(`gpu:${env.gpus[0].index}`);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [env]);
  const task = tasks.find((t) => t.id === taskId);
  const recording = backend.startsWith('rec:') ? backend.slice(4) : '';
  // The open session's recording is offered too when the task's list does not hold it (e.g. a
  // session replaying a benchmark's results), so the form shows what the session ran on.
  const sessionRec = session?.replay && task && (task.name === session.summary.task) ? session.replay.recording : null;
  const recordings = [...(task?.recordings ?? []), ...(sessionRec && !task?.recordings.includes(sessionRec) ? [sessionRec] : [])];
  const backendValid = !recording || recordings.includes(recording);

  const run = sessionId ? runs[sessionId] : undefined;
  const live = !!run && ['running', 'paused', 'stopping', 'starting'].includes(run.phase);
  const sessionLogs = useMemo(() => {
    const past = journalLog && journalLog.sessionId === sessionId ? journalLog.lines : [];
    const since = journalLog && journalLog.sessionId === sessionId ? journalLog.at : '';
    const liveLines = logs.filter((l) => (l.sessionId === sessionId || !l.sessionId) && l.at > since);
    return [...past, ...liveLines].slice(-600);
  }, [logs, journalLog, sessionId]);
  useEffect(() => {
    logRef.current?.scrollTo({ top: logRef.current.scrollHeight });
  }, [sessionLogs.length]);

  const budgetOf = run?.budget ?? session?.summary.budget ?? 0;
  const evaluated = run?.evaluated ?? Math.max(0, (session?.summary.results ?? 0) - 1);
  const progress = budgetOf ? evaluated / budgetOf : 0;
  const compileOnly = session ? !session.replay && !session.gpu && !session.python : false;
  const best = session?.summary.best;
  const bestText = compileOnly
    ? `not timed (compile-only: ${session!.variants.filter((v) => v.status === 'built').length} built, ${session!.variants.filter((v) => v.status === 'failed').length} failed)`
    : best ? `${fmtX(best.speedup)} ${fmtMs(best.medianMs)} (${best.variantId})` : 'none timed yet';

  const start = async (): Promise<void> => {
    if (!task) return;
    setStarting(true);
    await startRun({ task: task.id, strategy, budget, backend: backendValid ? backend : 'gpu:none', ...(recording && backendValid && simGpus > 0 ? { simulateGpus: simGpus } : {}) });
    setStarting(false);
  };

  return (
    <div className="run pane-col">
      <div className="run-controls" data-testid="run-form">
        <label>Task <select data-testid="run-task" value={taskId} onChange={(e) => setTaskId(e.target.value)}>{tasks.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}</select></label>
        <label>Strategy <select data-testid="run-strategy" value={strategy} onChange={(e) => setStrategy(e.target.value)}>{(env?.strategies ?? []).map((s) => <option key={s.name} value={s.name} title={s.description}>{s.name}</option>)}</select></label>
        <label>Measure on <select data-testid="run-backend" title={recording ? `REPLAY: ${recording}` : undefined} value={backendValid ? backend : 'gpu:none'} onChange={(e) => setBackend(e.target.value)}>
          {(env?.gpus ?? []).map((g) => <option key={g.index} value={`gpu:${g.index}`}>GPU {g.index}: {g.name}</option>)}
          {(env?.gpus.length ?? 0) > 1 && <option value="gpu:all">all {env!.gpus.length} GPUs, one run</option>}
          <option value="gpu:none">no GPU (compile-only)</option>
          {recordings.map((r) => <option key={r} value={`rec:${r}`}>REPLAY: {r.split('/').slice(-2).join('/')}{r === sessionRec && !task?.recordings.includes(r) ? ' (the open session\'s)' : ''}</option>)}
        </select></label>
        {recording && backendValid && (
          <label title={`A pool run's scheduling without GPUs: each SIMULATED GPU answers from the recording after ${SIMULATED_GPU_LATENCY_MS} ms (optimize --simulate-gpus). 0: no pool.`}>
            SIMULATED GPUs <input data-testid="run-simulate-gpus" type="number" min={0} max={16} value={simGpus} onChange={(e) => setSimGpus(Math.max(0, Math.min(16, Math.round(Number(e.target.value) || 0))))} style={{ width: 48 }} />
          </label>
        )}
        <label>Budget <input data-testid="run-budget" type="number" min={0} max={100000} value={budget} onChange={(e) => setBudget(Number(e.target.value))} /></label>
        <span className="run-buttons">
          <button className="primary" data-testid="run-start" onClick={() => void start()} disabled={!task || starting} title="Start a new session with these settings (Ctrl+Shift+P: Run)">{starting ? 'Starting…' : 'Start'}</button>
          <button data-testid="run-pause" onClick={() => void controlRun('runs.pause')} disabled={!live || run?.phase !== 'running'}>Pause</button>
          <button data-testid="run-resume" onClick={() => void controlRun('runs.resume')} disabled={!live || run?.phase !== 'paused'}>Resume</button>
          <button data-testid="run-stop" onClick={() => void controlRun('runs.stop')} disabled={!live}>Stop</button>
        </span>
      </div>
      {recording && backendValid && <div className="replay-note" data-testid="run-replay-note">REPLAY: measurements will be answered from the recorded space {recording.split('/').slice(-3).join('/')}, not measured on a GPU{simGpus > 0 ? `, by ${simGpus} SIMULATED GPUs (a pool run's scheduling: each answers after ${SIMULATED_GPU_LATENCY_MS} ms)` : ''}.</div>}
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
          <div className="progress" data-testid="progress" data-progress={progress.toFixed(3)}><div className="bar" style={{ width: `${Math.min(100, progress * 100).toFixed(1)}%` }} /></div>
          <span data-testid="progress-text">
            {run ? `${run.phase} · ${run.evaluated}/${run.budget} · ${fmtEta(run.etaSeconds)}` : `${session.summary.status ?? 'idle'} · ${evaluated}/${budgetOf} evaluated`}
            {' · best '}<span data-testid="progress-best">{bestText}</span>
            {session.replay ? ' · REPLAY' : ''}
          </span>
        </div>
      )}
      {run?.gpus && <GpuActivityPanel gpus={run.gpus} />}
      <div className="run-body">
        {session ? (
          <Split id="run" dir="horizontal" panes={[{ id: 'run-tree', size: 58, min: 280 }, { id: 'run-log', size: 42, min: 220 }]}>
            <VariantTree rows={session.variants} selected={selected} bestId={session.bestId} marks={marks} onMark={mark} onSelect={select} onOpen={(id) => { select(id); setView('variants'); }} />
            <div className="log" ref={logRef} data-testid="run-log">
              {sessionLogs.length === 0 && <div className="muted">(no log lines for this session)</div>}
              {sessionLogs.map((l, i) => <div key={i} className={`log-${l.level}`}><span className="muted">{l.at.slice(11, 19)}</span> {l.message}</div>)}
            </div>
          </Split>
        ) : (
          <EmptyState
            title="No session open"
            testid="run-empty"
            actions={[
              { label: 'Start a run with the settings above', run: () => void start() },
              ...(tasks.find((t) => t.recordings.length) ? [{ label: 'Use a recorded space (REPLAY, no GPU needed)', run: () => { const t = tasks.find((x) => x.recordings.length)!; setTaskId(t.id); setBackend(`rec:${t.recordings[0]}`); } }] : []),
            ]}
          >
            Start a run, or pick a past session in the session picker above.
          </EmptyState>
        )}
      </div>
    </div>
  );
}
