import { useState } from 'react';
import type { ExportFile } from '../../../main/contract/api.js';
import { useApp } from '../store.js';
import { saveFile } from '../page.js';
import { confirmBlocked, confirmNotes, confirmRows } from '../confirm-summary.js';

export function ExportView() {
  const api = useApp((s) => s.api);
  const session = useApp((s) => s.session);
  const selected = useApp((s) => s.selected);
  const setError = useApp((s) => s.setError);
  const [file, setFile] = useState<ExportFile | null>(null);
  const [status, setStatus] = useState('');
  const [confirming, setConfirming] = useState(false);
  const refreshSession = useApp((s) => s.refreshSession);
  if (!session || !api) return <p className="muted">Open a session first.</p>;
  const blocked = confirmBlocked(session);
  const confirm = async (): Promise<void> => {
    setConfirming(true);
    try {
      await api.call('sessions.confirm', { id: session.summary.id });
      await refreshSession();
    } catch (e) {
      setError(e);
    } finally {
      setConfirming(false);
    }
  };
  const bestId = session.confirm?.bestId ?? session.bestId;
  const go = async (p: () => Promise<ExportFile>): Promise<void> => {
    try {
      const f = await p();
      setFile(f);
      setStatus(await saveFile(f.fileName, f.content, f.mimeType));
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div className="export">
      <h2>Export from session {session.summary.id}</h2>
      {session.replay && <div className="replay-note">REPLAY session: exported files say their timings were replayed from {session.replay.recording}.</div>}
      <div className="export-buttons">
        <button data-testid="export-best" disabled={!bestId} title={bestId ? '' : 'no variant was timed'} onClick={() => void go(() => api.call('export.variant', { sessionId: session.summary.id, variantId: 'best' }))}>
          Best variant (.cu){bestId ? ` — ${bestId}${session.confirm?.bestId ? ' (confirmed)' : ''}` : ' — none timed'}
        </button>
        <button data-testid="export-selected" disabled={!selected} onClick={() => selected && void go(() => api.call('export.variant', { sessionId: session.summary.id, variantId: selected }))}>
          Selected variant (.cu){selected ? ` — ${selected}` : ''}
        </button>
        {(['md', 'html', 'json'] as const).map((f) => (
          <button key={f} data-testid={`export-report-${f}`} onClick={() => void go(() => api.call('export.report', { sessionId: session.summary.id, format: f }))}>
            Run report (.{f})
          </button>
        ))}
      </div>
      <div className="export-confirm">
        <h4>Confirm the figure</h4>
        <p className="muted">
          The search times variants quickly to rank them; the figure to report is the precise timing: the baseline and the 3 fastest variants measured again (at least 2.5 s of calls each over 4 executors, each checked again), about 10 s a variant.
        </p>
        <button data-testid="export-confirm" disabled={!!blocked || confirming} title={blocked ?? ''} onClick={() => void confirm()}>
          {confirming ? 'Measuring again with the precise timing…' : session.confirm ? 'Confirm again (precise timing)' : 'Confirm with the precise timing'}
        </button>
        {blocked && <span className="muted" data-testid="export-confirm-blocked"> Not available: {blocked}.</span>}
        {session.confirm && (
          <>
            <table className="confirm-table" data-testid="confirm-table">
              <thead>
                <tr><th>variant</th><th>origin</th><th>search median</th><th>precise median ±95%</th><th>speedup vs the precise baseline (interval)</th></tr>
              </thead>
              <tbody>
                {confirmRows(session.confirm).map((r) => (
                  <tr key={r.variantId} className={r.failed ? 'bad' : ''}>
                    <td>{r.variantId}</td><td>{r.origin}</td><td>{r.search}</td><td>{r.precise}</td><td>{r.speedup}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {confirmNotes(session.confirm).map((n) => (
              <p key={n} className="muted" data-testid="confirm-note">{n}</p>
            ))}
          </>
        )}
      </div>
      {status && <p className="muted" data-testid="export-status">{status}</p>}
      {file && (
        <>
          <h4 data-testid="export-filename">{file.fileName}</h4>
          <pre className="export-preview" data-testid="export-preview">{file.content.slice(0, 20000)}</pre>
        </>
      )}
    </div>
  );
}
