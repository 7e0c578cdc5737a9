import { useEffect, useRef, useState } from 'react';
import Editor, { type OnMount } from '@monaco-editor/react';
import YAML from 'yaml';
import type { BuildOutcome, ManifestIssueDTO } from '../../../main/contract/api.js';
import { useApp } from '../store.js';
import { monaco } from '../monaco.js';

type Tab = 'kernel' | 'reference' | 'manifest';
type Code = Parameters<OnMount>[0];

function setMarkers(ed: Code | null, owner: string, items: Array<{ line?: number; column?: number; message: string; severity: 'error' | 'warning' }>): void {
  const model = ed?.getModel();
  if (!model) return;
  monaco.editor.setModelMarkers(
    model,
    owner,
    items.map((m) => {
      const line = Math.min(Math.max(1, m.line ?? 1), model.getLineCount());
      return {
        startLineNumber: line, endLineNumber: line, startColumn: m.column ?? 1, endColumn: model.getLineMaxColumn(line),
        message: m.message, severity: m.severity === 'error' ? monaco.MarkerSeverity.Error : monaco.MarkerSeverity.Warning,
      };
    }),
  );
}

/** The form's fields: edits rewrite the YAML text (other fields are kept as written). */
const FORM_FIELDS = ['name', 'description', 'entry'] as const;

function fieldIssues(issues: ManifestIssueDTO[], field: string): ManifestIssueDTO[] {
  return issues.filter((i) => i.field === field || i.field.startsWith(field + '.') || i.field.startsWith(field + '['));
}

function ManifestForm(props: { text: string; issues: ManifestIssueDTO[]; readOnly: boolean; onChange: (text: string) => void }) {
  let doc: YAML.Document | null = null;
  try {
    doc = YAML.parseDocument(props.text);
    if (doc.errors.length) doc = null;
  } catch {
    doc = null;
  }
  const get = (k: string): string => {
    const v = doc?.get(k);
    return v === undefined || v === null ? '' : String(v);
  };
  const tunables = (doc?.toJS() as { tunables?: Record<string, number[]> } | null)?.tunables ?? {};
  const restrictions = ((doc?.toJS() as { restrictions?: string[] } | null)?.restrictions ?? []).join('\n');
  const update = (k: string, v: unknown): void => {
    if (!doc) return;
    doc.set(k, v);
    props.onChange(doc.toString());
  };
  const Issue = ({ field }: { field: string }) => (
    <>
      {fieldIssues(props.issues, field).map((i, n) => (
        <div key={n} className="field-error" data-testid={`field-error-${field}`}>
          {i.field}: {i.message}{i.line ? ` (line ${i.line})` : ''}
        </div>
      ))}
    </>
  );
  if (!doc) return <p className="field-error">The manifest is not valid YAML: fix it in the text editor below.</p>;
  return (
    <form className="manifest-form" onSubmit={(e) => e.preventDefault()}>
      {FORM_FIELDS.map((f) => (
        <label key={f}>
          <span>{f}</span>
          <input data-testid={`manifest-${f}`} value={get(f)} readOnly={props.readOnly} onChange={(e) => update(f, e.target.value)} className={fieldIssues(props.issues, f).length ? 'invalid' : ''} />
          <Issue field={f} />
        </label>
      ))}
      <fieldset>
        <legend>tunables (values comma-separated)</legend>
        {Object.entries(tunables).map(([k, vals]) => (
          <label key={k}>
            <span className="mono">{k}</span>
            <input
              data-testid={`tunable-${k}`}
              defaultValue={vals.join(', ')}
              readOnly={props.readOnly}
              onBlur={(e) => {
                const parsed = e.target.value.split(',').map((x) => x.trim()).filter(Boolean).map((x) => (Number.isFinite(Number(x)) ? Number(x) : x));
                update('tunables', { ...tunables, [k]: parsed });
              }}
            />
            <Issue field={`tunables.${k}`} />
          </label>
        ))}
      </fieldset>
      <label>
        <span>restrictions (one per line)</span>
        <textarea data-testid="manifest-restrictions" rows={3} defaultValue={restrictions} readOnly={props.readOnly} onBlur={(e) => update('restrictions', e.target.value.split('\n').map((x) => x.trim()).filter(Boolean))} />
        <Issue field="restrictions" />
      </label>
      {['args', 'sizes', 'timed', 'defaults', 'metrics', 'tolerance'].map((f) => (
        <Issue key={f} field={f} />
      ))}
    </form>
  );
}

export function TasksView() {
  const api = useApp((s) => s.api);
  const tasks = useApp((s) => s.tasks);
  const task = useApp((s) => s.task);
  const setError = useApp((s) => s.setError);
  const [tab, setTab] = useState<Tab>('kernel');
  const [texts, setTexts] = useState<Record<Tab, string>>({ kernel: '', reference: '', manifest: '' });
  const [issues, setIssues] = useState<ManifestIssueDTO[]>([]);
  const [build, setBuild] = useState<BuildOutcome | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [folder, setFolder] = useState('');
  const editorRef = useRef<Code | null>(null);

  const load = async (taskId: string): Promise<void> => {
    if (!api) return;
    try {
      const t = await api.call('tasks.get', { taskId });
      useApp.setState({ task: t });
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    if (!task && tasks.length) void load(tasks[0].id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tasks.length]);
  useEffect(() => {
    if (!task) return;
    setTexts({ kernel: task.kernel, reference: task.reference, manifest: task.manifestText });
    setIssues(task.issues ?? []);
    setBuild(null);
  }, [task]);
  // Validate the manifest as it is edited (debounced), through the engine's own validator.
  useEffect(() => {
    if (!api || !task) return;
    const t = setTimeout(() => {
      void api.call('tasks.validateManifest', { text: texts.manifest }).then((r) => setIssues(r.issues), setError);
    }, 250);
    return () => clearTimeout(t);
  }, [texts.manifest, api, task, setError]);
  useEffect(() => {
    const ed = editorRef.current;
    if (tab === 'manifest') setMarkers(ed, 'manifest', issues.map((i) => ({ line: i.line, message: `${i.field || '(manifest)'}: ${i.message}`, severity: 'error' })));
    else if (tab === 'kernel') setMarkers(ed, 'nvcc', build?.messages ?? []);
    else setMarkers(ed, 'nvcc', []);
  }, [issues, build, tab]);

  const openFolder = async (): Promise<void> => {
    if (!api) return;
    let dir = folder.trim();
    if (!dir && window.kernelduel) dir = (await window.kernelduel.pickFolder()) ?? '';
    if (!dir) return;
    try {
      const t = await api.call('tasks.open', { dir });
      useApp.setState({ task: t, tasks: await api.call('tasks.list', {}) });
    } catch (e) {
      setError(e);
    }
  };
  const doBuild = async (run: boolean): Promise<void> => {
    if (!api || !task) return;
    setBusy(run ? 'evaluating…' : 'building…');
    try {
      if (run) {
        const env = useApp.getState().env;
        const r = await api.call('eval.run', { taskId: task.id, source: texts.kernel, gpu: env?.gpus[0]?.index ?? null });
        setBuild(r.build);
        if (r.result.failure) setError(`${r.result.failure.kind}: ${r.result.failure.reason}`);
      } else setBuild(await api.call('eval.build', { taskId: task.id, source: texts.kernel }));
      setTab('kernel');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const save = async (): Promise<void> => {
    if (!api || !task) return;
    try {
      for (const f of ['kernel', 'reference', 'manifest'] as const) await api.call('tasks.saveFile', { taskId: task.id, file: f, text: texts[f] });
      await load(task.id);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div className="tasks">
      <aside className="task-list">
        <h3>Tasks</h3>
        <ul>
          {tasks.map((t) => (
            <li key={t.id}>
              <button data-testid={`task-${t.name}`} className={task?.id === t.id ? 'active' : ''} onClick={() => void load(t.id)} title={t.description}>
                {t.name} {t.builtin ? <small>built-in</small> : <small>folder</small>}
                {t.error ? <small className="field-error"> invalid</small> : <small> · {t.spaceSize ?? '?'} configs</small>}
              </button>
            </li>
          ))}
        </ul>
        <div className="open-folder">
          <input data-testid="open-folder-path" placeholder="/path/to/task-folder" value={folder} onChange={(e) => setFolder(e.target.value)} />
          <button data-testid="open-folder" onClick={() => void openFolder()}>{window.kernelduel && !folder ? 'Open folder…' : 'Open'}</button>
        </div>
      </aside>
      {task ? (
        <div className="task-editor">
          <div className="task-head">
            <h2>{task.name}</h2>
            <span className="muted">{task.description}</span>
            <div className="muted mono">{task.entrySignature}</div>
          </div>
          <div className="tabs">
            {(['kernel', 'reference', 'manifest'] as const).map((t) => (
              <button key={t} data-testid={`tab-${t}`} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>
                {t === 'manifest' ? task.files.manifest : t === 'kernel' ? task.files.kernel : task.files.reference}
                {t === 'manifest' && issues.length ? <span className="count">{issues.length}</span> : null}
              </button>
            ))}
            <span className="spacer" />
            <button data-testid="build" disabled={!!busy} onClick={() => void doBuild(false)}>Build</button>
            <button data-testid="evaluate" disabled={!!busy} onClick={() => void doBuild(true)}>Evaluate</button>
            {!task.readOnly && <button onClick={() => void save()}>Save</button>}
            {task.readOnly && <span className="muted">built-in: read-only</span>}
            {busy && <span className="muted">{busy}</span>}
          </div>
          {tab === 'manifest' && <ManifestForm text={texts.manifest} issues={issues} readOnly={false} onChange={(manifest) => setTexts((x) => ({ ...x, manifest }))} />}
          <div className={tab === 'manifest' ? 'editor short' : 'editor'}>
            <Editor
              key={`${task.id}-${tab}`}
              language={tab === 'manifest' ? 'yaml' : 'cuda'}
              value={texts[tab]}
              theme="vs"
              onMount={(ed) => {
                editorRef.current = ed;
                if (tab === 'kernel') setMarkers(ed, 'nvcc', build?.messages ?? []);
              }}
              onChange={(v) => setTexts((x) => ({ ...x, [tab]: v ?? '' }))}
              options={{ minimap: { enabled: false }, fontSize: 13, scrollBeyondLastLine: false, readOnly: tab === 'reference' && task.readOnly }}
            />
          </div>
          {build && (
            <div className={build.ok ? 'build ok' : 'build failed'} data-testid="build-result">
              <strong>{build.ok ? 'Build ok' : `Build failed: ${build.failure?.reason ?? ''}`}</strong> ({build.arch}, {(build.durationMs / 1000).toFixed(1)} s{build.cached ? ', cached' : ''})
              {build.messages.map((m, i) => (
                <div key={i} className="compiler-msg" data-testid="compiler-message">line {m.line}: {m.severity}: {m.message}</div>
              ))}
              {build.resources.map((r) => (
                <div key={r.name} className="mono">{r.name}: {r.registers} regs, {r.sharedBytes} B smem, spills {r.spillStoreBytes}/{r.spillLoadBytes} B</div>
              ))}
            </div>
          )}
        </div>
      ) : (
        <p>Choose a task.</p>
      )}
    </div>
  );
}
