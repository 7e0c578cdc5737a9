// The LLM policy's settings: the provider form (validated with the engine's own schema), the API
// key (desktop: saved to the OS keychain and never shown again; browser: read from the server's
// environment only), a connection test, and the prompt the policy would send next.
import { useEffect, useState } from 'react';
import { LlmSettingsSchema, type ConnectionReportDTO, type LlmSettings, type LlmSettingsDTO, type PromptPreviewDTO } from '../../../main/contract/api.js';
import { useApp } from '../store.js';

type Field = 'baseURL' | 'model' | 'apiKeyEnv' | 'temperature' | 'maxTokens' | 'requestTimeoutMs' | 'concurrency';
const FIELDS: Array<{ key: Field; label: string; kind: 'text' | 'number'; hint: string }> = [
  { key: 'baseURL', label: 'Base URL', kind: 'text', hint: 'an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama)' },
  { key: 'model', label: 'Model', kind: 'text', hint: 'the model name the server knows' },
  { key: 'apiKeyEnv', label: 'API key variable', kind: 'text', hint: 'environment variable read for the key' },
  { key: 'temperature', label: 'Temperature', kind: 'number', hint: '0 to 2' },
  { key: 'maxTokens', label: 'Max tokens', kind: 'number', hint: 'per answer' },
  { key: 'requestTimeoutMs', label: 'Timeout (ms)', kind: 'number', hint: 'whole request' },
  { key: 'concurrency', label: 'Concurrency', kind: 'number', hint: 'requests in flight' },
];

type Draft = Record<Field, string>;

function toDraft(s: LlmSettings): Draft {
  return Object.fromEntries(FIELDS.map((f) => [f.key, String(s[f.key])])) as Draft;
}

/** Field errors of a draft, from the same schema the engine validates with (pure). */
export function validateDraft(d: Draft, base: LlmSettings): { settings: LlmSettings | null; errors: Partial<Record<Field, string>> } {
  const candidate: Record<string, unknown> = { ...base };
  for (const f of FIELDS) candidate[f.key] = f.kind === 'number' ? (d[f.key].trim() === '' ? NaN : Number(d[f.key])) : d[f.key].trim();
  const r = LlmSettingsSchema.safeParse(candidate);
  if (r.success) return { settings: r.data, errors: {} };
  const errors: Partial<Record<Field, string>> = {};
  for (const i of r.error.issues) {
    const k = String(i.path[0]) as Field;
    errors[k] ??= k === 'baseURL' ? 'not an http(s) URL (e.g. http://127.0.0.1:11434/v1)' : i.message;
  }
  return { settings: null, errors };
}

export function LlmView() {
  const api = useApp((s) => s.api);
  const tasks = useApp((s) => s.tasks);
  const sessionId = useApp((s) => s.sessionId);
  const session = useApp((s) => s.session);
  const setError = useApp((s) => s.setError);
  const [saved, setSaved] = useState<LlmSettingsDTO | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [key, setKey] = useState('');
  const [status, setStatus] = useState('');
  const [report, setReport] = useState<ConnectionReportDTO | null>(null);
  const [testing, setTesting] = useState(false);
  const [taskId, setTaskId] = useState('');
  const [useSession, setUseSession] = useState(true);
  const [preview, setPreview] = useState<PromptPreviewDTO | null>(null);

  useEffect(() => {
    if (!api) return;
    void api.call('llm.getSettings', {}).then((s) => {
      setSaved(s);
      setDraft(toDraft(s.settings));
    }, setError);
  }, [api, setError]);
  useEffect(() => {
    if (!taskId && tasks.length) setTaskId(tasks.find((t) => t.name === session?.task.name)?.id ?? tasks[0].id);
  }, [tasks, taskId, session?.task.name]);
  const sessionFits = !!session && session.task.name === tasks.find((t) => t.id === taskId)?.name;
  const refreshPreview = async (): Promise<void> => {
    if (!api || !taskId) return;
    try {
      setPreview(await api.call('llm.previewPrompt', { taskId, ...(useSession && sessionFits && sessionId ? { sessionId } : {}) }));
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    void refreshPreview();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, taskId, sessionId, useSession, sessionFits]);

  if (!saved || !draft) return <p className="muted">Loading the LLM settings…</p>;
  const { settings, errors } = validateDraft(draft, saved.settings);
  const save = async (): Promise<void> => {
    if (!api || !settings) return;
    try {
      const r = await api.call('llm.saveSettings', { settings, ...(key ? { apiKey: key } : {}) });
      setSaved(r);
      setDraft(toDraft(r.settings));
      setKey(''); // the key is never kept in the page after saving
      setStatus(`saved${key ? '; the API key is in the OS keychain' : ''}`);
    } catch (e) {
      setError(e);
    }
  };
  const test = async (): Promise<void> => {
    if (!api || !settings) return;
    setTesting(true);
    setReport(null);
    try {
      // A key typed here goes with the test; the saved one only to the saved base URL.
      setReport(await api.call('llm.testConnection', { settings, ...(key ? { apiKey: key } : {}) }));
    } catch (e) {
      setError(e);
    } finally {
      setTesting(false);
    }
  };
  return (
    <div className="llm" data-testid="llm-view">
      <section className="llm-settings">
        <h3>Language-model provider</h3>
        <p className="muted">The <b>llm</b> and <b>mixed</b> strategies ask any OpenAI-compatible chat-completions server. The defaults point at a local Ollama, so tuning stays offline.</p>
        <div className="form-grid">
          {FIELDS.map((f) => (
            <label key={f.key}>
              <span>{f.label}</span>
              <input
                data-testid={`llm-${f.key}`}
                className={errors[f.key] ? 'invalid' : ''}
                type="text"
                inputMode={f.kind === 'number' ? 'decimal' : undefined}
                value={draft[f.key]}
                onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
                title={f.hint}
              />
              {errors[f.key] ? <span className="field-error" data-testid={`llm-error-${f.key}`}>{errors[f.key]}</span> : <span className="muted small">{f.hint}</span>}
            </label>
          ))}
          <label>
            <span>API key</span>
            {saved.apiKey.canStore ? (
              <input data-testid="llm-apikey" type="password" autoComplete="off" placeholder={saved.apiKey.source === 'keychain' ? 'stored in the OS keychain (type to replace)' : 'saved encrypted in the OS keychain'} value={key} onChange={(e) => setKey(e.target.value)} />
            ) : (
              <span className="mono" data-testid="llm-apikey-env">${saved.apiKey.env}</span>
            )}
            <span className="muted small" data-testid="llm-apikey-state">
              {saved.apiKey.source === 'keychain' ? 'a key is stored in the OS keychain (never shown again)' : saved.apiKey.source === 'env' ? `set in the environment variable ${saved.apiKey.env}` : `no key: ${saved.apiKey.canStore ? 'enter one, or set' : 'set'} ${saved.apiKey.env} ${saved.mode === 'browser' ? 'where the server runs (browser mode reads it from there only)' : ''} — local servers need none`}
            </span>
          </label>
        </div>
        <div className="row">
          <button data-testid="llm-save" disabled={!settings} onClick={() => void save()}>Save</button>
          <button data-testid="llm-test" disabled={!settings || testing} onClick={() => void test()}>{testing ? 'Testing…' : 'Test connection'}</button>
          <span className="muted" data-testid="llm-status">{status}</span>
        </div>
        {report && (
          <div className={report.ok ? 'ok-box' : 'error-box'} data-testid="llm-test-result">
            {report.ok ? `connected to ${report.baseURL} in ${report.latencyMs} ms; ${report.model} replied "${report.reply ?? ''}"` : `${report.error?.kind ?? 'failed'}: ${report.error?.message ?? 'no answer'}`}
            {report.note && <div className="muted small" data-testid="llm-test-note">{report.note}</div>}
            {report.models && <div className="muted small">models listed: {report.models.join(', ') || 'none'}{report.modelListed === false ? ` — ${report.model} is not among them` : ''}</div>}
          </div>
        )}
      </section>
      <section className="llm-preview">
        <h3>Prompt preview: the next request</h3>
        <div className="row">
          <label>Task <select data-testid="llm-preview-task" value={taskId} onChange={(e) => setTaskId(e.target.value)}>{tasks.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}</select></label>
          <label title="draw the exemplars from the open session's measured variants"><input type="checkbox" checked={useSession} disabled={!sessionFits} onChange={(e) => setUseSession(e.target.checked)} /> from session {sessionFits ? sessionId : '(open a session of this task)'}</label>
          <button data-testid="llm-preview-refresh" onClick={() => void refreshPreview()}>Refresh</button>
        </div>
        {preview && (
          <>
            <p className="muted small" data-testid="llm-preview-note">prompt {preview.promptId} · {preview.note}</p>
            <div className="prompt" data-testid="llm-preview">
              {preview.messages.map((m, i) => (
                <div key={i} className={`msg msg-${m.role}`}>
                  <div className="role">{m.role}</div>
                  <pre>{m.content}</pre>
                </div>
              ))}
            </div>
          </>
        )}
      </section>
    </div>
  );
}
