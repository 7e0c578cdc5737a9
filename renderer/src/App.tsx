// The workbench's frame: the views in a sidebar (Alt+1…8), the session picker, the global error
// banner (cleared when a task or session is opened or a build succeeds), the command palette
// (Ctrl/Cmd+Shift+P) and the open view, which fills the window.
import { useEffect } from 'react';
import { useApp } from './store.js';
import { VIEW_LABELS } from './commands.js';
import { CommandPalette } from './palette.js';
import { GpusView } from './views/Gpus.js';
import { TasksView } from './views/Tasks.js';
import { RunView } from './views/Run.js';
import { VariantsView } from './views/Variants.js';
import { CompareView } from './views/Compare.js';
import { PlotsView } from './views/Plots.js';
import { ExportView } from './views/Export.js';
import { LlmView } from './views/Llm.js';

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
            {s.task} · {s.strategy} · {s.results}/{s.variants}{s.replay ? ' · REPLAY' : ''}{s.status ? ` · ${s.status}` : ''}{s.confirmed?.speedup ? ` · confirmed ${s.confirmed.speedup.toFixed(3)}×` : ''} · {s.id}
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
  const setPalette = useApp((s) => s.setPalette);
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && e.shiftKey && (e.key === 'P' || e.key === 'p')) {
        e.preventDefault();
        setPalette(!useApp.getState().paletteOpen);
      } else if (e.altKey && !e.ctrlKey && !e.metaKey && /^Digit[1-8]$/.test(e.code)) {
        e.preventDefault();
        setView(VIEW_LABELS[Number(e.code.slice(5)) - 1][0]);
      }
    };
    // Capture: before Monaco, which would otherwise keep Ctrl+Shift+P to itself.
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [setPalette, setView]);
  return (
    <div className="app">
      <nav className="sidebar">
        <div className="brand">KernelDuel</div>
        {VIEW_LABELS.map(([v, label], i) => (
          <button key={v} data-testid={`nav-${v}`} className={v === view ? 'nav active' : 'nav'} onClick={() => setView(v)} title={`${label} (Alt+${i + 1})`}>
            {label}
          </button>
        ))}
        <button className="nav palette-button" data-testid="open-palette" onClick={() => setPalette(true)} title="Command palette (Ctrl+Shift+P)">⌘ Commands</button>
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
          {session?.python && (
            <span className="python-badge" data-testid="python-badge" title={session.python.guaranteeTitle}>
              PYTHON · {session.python.guarantee}{session.python.device === 'cpu' ? ' · CPU times, not a GPU\'s' : ''}
            </span>
          )}
          {session && !session.replay && !session.gpu && !session.python && <span className="compile-badge">COMPILE-ONLY · not timed</span>}
          <span className="spacer" />
          <span className="muted small">Ctrl+Shift+P: commands</span>
        </header>
        {error && (
          <div className="error" role="alert" data-testid="error">
            {error} <button onClick={() => setError(null)}>dismiss</button>
          </div>
        )}
        <section className={`view view-${view}`} data-testid={`view-${view}`}>
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
      <CommandPalette />
    </div>
  );
}
