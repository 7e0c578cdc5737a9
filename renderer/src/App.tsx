import { useApp, type View } from './store.js';
import { GpusView } from './views/Gpus.js';
import { TasksView } from './views/Tasks.js';
import { RunView } from './views/Run.js';
import { VariantsView } from './views/Variants.js';
import { CompareView } from './views/Compare.js';
import { PlotsView } from './views/Plots.js';
import { ExportView } from './views/Export.js';
import { LlmView } from './views/Llm.js';

const VIEWS: Array<[View, string]> = [
  ['gpus', 'GPUs'],
  ['tasks', 'Tasks'],
  ['run', 'Run'],
  ['variants', 'Variant tree'],
  ['compare', 'Compare'],
  ['plots', 'Plots'],
  ['llm', 'LLM policy'],
  ['export', 'Export'],
];

function SessionPicker() {
  const sessions = useApp((s) => s.sessions);
  const sessionId = useApp((s) => s.sessionId);
  const openSession = useApp((s) => s.openSession);
  return (
    <label className="session-picker">
      Session{' '}
      <select data-testid="session-picker" value={sessionId ?? ''} onChange={(e) => void openSession(e.target.value || null)}>
        <option value="">(none)</option>
        {sessions.map((s) => (
          <option key={s.id} value={s.id}>
            {s.id} · {s.task} · {s.strategy} · {s.results}/{s.variants}{s.replay ? ' · REPLAY' : ''}{s.status ? ` · ${s.status}` : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

export function App() {
  const view = useApp((s) => s.view);
  const setView = useApp((s) => s.setView);
  const error = useApp((s) => s.error);
  const setError = useApp((s) => s.setError);
  const session = useApp((s) => s.session);
  const env = useApp((s) => s.env);
  return (
    <div className="app">
      <nav className="sidebar">
        <div className="brand">KernelDuel</div>
        {VIEWS.map(([v, label]) => (
          <button key={v} data-testid={`nav-${v}`} className={v === view ? 'nav active' : 'nav'} onClick={() => setView(v)}>
            {label}
          </button>
        ))}
        <div className="mode">{env ? (env.mode === 'electron' ? 'desktop' : 'browser mode') : 'connecting…'}</div>
      </nav>
      <main className="content">
        <header className="topbar">
          <SessionPicker />
          {session?.replay && (
            <span className="replay-badge" data-testid="replay-badge" title={`answers from ${session.replay.recording}`}>
              REPLAY · recorded space, not a live measurement
            </span>
          )}
          {session && !session.replay && !session.gpu && <span className="compile-badge">COMPILE-ONLY · not timed</span>}
        </header>
        {error && (
          <div className="error" role="alert" data-testid="error">
            {error} <button onClick={() => setError(null)}>dismiss</button>
          </div>
        )}
        <section className="view" data-testid={`view-${view}`}>
          {view === 'gpus' && <GpusView />}
          {view === 'tasks' && <TasksView />}
          {view === 'run' && <RunView />}
          {view === 'variants' && <VariantsView />}
          {view === 'compare' && <CompareView />}
          {view === 'plots' && <PlotsView />}
          {view === 'llm' && <LlmView />}
          {view === 'export' && <ExportView />}
        </section>
      </main>
    </div>
  );
}
