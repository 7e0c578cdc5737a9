import { useState } from 'react';
import type { ExportFile } from '../../../main/contract/api.js';
import { useApp } from '../store.js';
import { saveFile } from '../page.js';

export function ExportView() {
  const api = useApp((s) => s.api);
  const session = useApp((s) => s.session);
  const selected = useApp((s) => s.selected);
  const setError = useApp((s) => s.setError);
  const [file, setFile] = useState<ExportFile | null>(null);
  const [status, setStatus] = useState('');
  if (!session || !api) return <p className="muted">Open a session first.</p>;
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
        <button data-testid="export-best" disabled={!session.bestId} title={session.bestId ? '' : 'no variant was timed'} onClick={() => void go(() => api.call('export.variant', { sessionId: session.summary.id, variantId: 'best' }))}>
          Best variant (.cu){session.bestId ? ` — ${session.bestId}` : ' — none timed'}
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
