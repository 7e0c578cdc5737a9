// Tasks: the list, and the open task's kernel, reference and task.yaml in Monaco (with Monaco's own
// command palette on F1 and problem navigation on F8), the manifest form, Build and Evaluate, and the
// build's compiler messages (click one: the editor jumps to its line). Panes are resizable.
import { useEffect, useRef, useState } from 'react';
import type { OnMount } from '@monaco-editor/react';
import type { BuildOutcome, ManifestIssueDTO, RecordedTable, VariantDetail } from '../../../main/contract/api.js';
import { evalSummary } from '../eval-summary.js';
import { useApp } from '../store.js';
import { Editor, monacoIfLoaded } from '../editor.js';
import { Split } from '../layout.js';
import { ManifestForm } from './ManifestForm.js';
import { openTask } from '../open-task.js';

export { openTask };

type Tab = 'kernel' | 'reference' | 'manifest';
type Code = Parameters<OnMount>[0];

function setMarkers(ed: Code | null, owner: string, items: Array<{ line?: number; column?: number; message: string; severity: 'error' | 'warning' }>): void {
  const model = ed?.getModel();
  const monaco = monacoIfLoaded();
  if (!model || !monaco) return;
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

/** Why Evaluate cannot run here, or null. */
export function evaluateBlocked(): string | null {
  const env = useApp.getState().env;
  if (!env) return 'connecting…';
  if (!env.canRun) return env.gpus.length ? 'the GPU cannot run variants here (see the GPUs view)' : 'no NVIDIA GPU here: Evaluate checks and times on a GPU; Build still compiles and reports registers and shared memory';
  return null;
}

/** The largest upload spaces.import takes: base64 of it (4/3 larger) and the message around it fit the web server's 8 MiB frames. */
const MAX_IMPORT_BYTES = 6_000_000;

function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function TasksView() {
  const api = useApp((s) => s.api);
  const tasks = useApp((s) => s.tasks);
  const task = useApp((s) => s.task);
  const env = useApp((s) => s.env);
  const setError = useApp((s) => s.setError);
  const [tab, setTab] = useState<Tab>('kernel');
  // The texts being edited, and the task they belong to: nothing of one task is shown (or written) under another.
  const [texts, setTexts] = useState<Record<Tab, string> & { task: string }>({ task: '', kernel: '', reference: '', manifest: '' });
  const [issues, setIssues] = useState<ManifestIssueDTO[]>([]);
  const [build, setBuild] = useState<BuildOutcome | null>(null);
  // What the last Evaluate found (check, times), and whether it asked for the precise timing.
  const [evaluated, setEvaluated] = useState<{ result: NonNullable<VariantDetail['result']>; precise: boolean } | null>(null);
  const [precise, setPrecise] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [folder, setFolder] = useState('');
  const [cursor, setCursor] = useState<{ line: number; column: number }>({ line: 1, column: 1 });
  const editorRef = useRef<Code | null>(null);
  const pendingJump = useRef<number | null>(null);
  void env;
  const blocked = evaluateBlocked();

  useEffect(() => {
    if (!task && tasks.length) void openTask(tasks[0].id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tasks.length]);
  // The task's texts as last loaded: the same task loaded again unchanged (opened twice) keeps the edits.
  const loaded = useRef<{ id: string; kernel: string; reference: string; manifest: string } | null>(null);
  useEffect(() => {
    if (!task) return;
    const l = loaded.current;
    if (l && l.id === task.id && l.kernel === task.kernel && l.reference === task.reference && l.manifest === task.manifestText) return;
    loaded.current = { id: task.id, kernel: task.kernel, reference: task.reference, manifest: task.manifestText };
    setTexts({ task: task.id, kernel: task.kernel, reference: task.reference, manifest: task.manifestText });
    setIssues(task.issues ?? []);
    setBuild(null);
    setEvaluated(null);
  }, [task]);
  // Validate the manifest as it is edited (debounced), through the engine's own validator; an answer
  // for a text that has changed since is dropped (a slow one must not hide the newer text's issues).
  const validateSeq = useRef(0);
  useEffect(() => {
    // A recorded space's tab shows its recording (JSON), not a task.yaml: nothing to validate as one.
    if (!api || !task || task.replayOnly) return;
    const seq = ++validateSeq.current;
    const t = setTimeout(() => {
      void api.call('tasks.validateManifest', { text: texts.manifest }).then((r) => {
        if (seq === validateSeq.current) setIssues(r.issues);
      }, setError);
    }, 250);
    return () => clearTimeout(t);
  }, [texts.manifest, api, task, setError]);
  useEffect(() => {
    const ed = editorRef.current;
    if (tab === 'manifest') setMarkers(ed, 'manifest', issues.map((i) => ({ line: i.line, message: `${i.field || '(manifest)'}: ${i.message}`, severity: 'error' })));
    else if (tab === 'kernel') setMarkers(ed, 'nvcc', build?.messages ?? []);
    else setMarkers(ed, 'nvcc', []);
  }, [issues, build, tab]);

  const jump = (line: number, column = 1): void => {
    const ed = editorRef.current;
    if (tab !== 'kernel' || !ed) {
      pendingJump.current = line;
      setTab('kernel');
      return;
    }
    ed.revealLineInCenter(line);
    ed.setPosition({ lineNumber: line, column });
    ed.focus();
  };
  const openFolder = async (): Promise<void> => {
    if (!api) return;
    let dir = folder.trim();
    if (!dir && window.kernelduel) dir = (await window.kernelduel.pickFolder()) ?? '';
    if (!dir) return;
    try {
      const t = await api.call('tasks.open', { dir });
      useApp.setState({ task: t, tasks: await api.call('tasks.list', {}), error: null });
    } catch (e) {
      setError(e);
    }
  };
  // Another tuner's recorded results (a Kernel Tuner cache or a T4 file), uploaded to the machine that
  // serves the workbench and listed as a REPLAY-only task (spaces.import): the browser mode's way to
  // what `kernelduel import kernel-tuner` does in a shell there.
  const importInput = useRef<HTMLInputElement | null>(null);
  const [imported, setImported] = useState<string | null>(null);
  const importRecording = async (file: File, replace = false): Promise<void> => {
    if (!api) return;
    if (file.size > MAX_IMPORT_BYTES) {
      setError(`${file.name} is ${(file.size / 1e6).toFixed(1)} MB: the workbench takes files up to ${(MAX_IMPORT_BYTES / 1e6).toFixed(1)} MB (one message); import a larger one where KernelDuel runs with: kernelduel import kernel-tuner ${file.name}`);
      return;
    }
    setBusy(`importing ${file.name}…`);
    try {
      const r = await api.call('spaces.import', { fileName: file.name, contentBase64: toBase64(new Uint8Array(await file.arrayBuffer())), ...(replace ? { replace } : {}) });
      useApp.setState({ tasks: await api.call('tasks.list', {}), error: null });
      setImported(`imported ${file.name} (${r.format}): ${r.name}, ${r.configurations} configurations (${r.failed} failed), ${r.tunables} tunables, recorded on ${r.gpu}${r.replaced ? '; replaced the earlier space of that name' : ''}. REPLAY only: choose it in Run.`);
      await openTask(r.taskId);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (!replace && /already exists/.test(msg) && window.confirm(`${msg}\n\nReplace it?`)) return importRecording(file, true);
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const doBuild = async (run: boolean): Promise<void> => {
    if (!api || !task) return;
    setBusy(run ? (precise ? 'evaluating (precise timing: at least 2.5 s over 4 executors)…' : 'evaluating…') : 'building…');
    setEvaluated(null);
    try {
      if (run) {
        const r = await api.call('eval.run', { taskId: task.id, source: texts.kernel, gpu: env?.gpus[0]?.index ?? null, ...(precise ? { precise } : {}) });
        setBuild(r.build);
        setEvaluated({ result: r.result, precise });
        if (r.result.failure) setError(`${r.result.failure.kind}: ${r.result.failure.reason}`);
        else setError(null);
      } else {
        const b = await api.call('eval.build', { taskId: task.id, source: texts.kernel });
        setBuild(b);
        if (b.ok) setError(null);
      }
      setTab('kernel');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  // Build / Evaluate asked for from the command palette.
  const action = useApp((s) => s.action);
  useEffect(() => {
    if (!action || !task) return;
    useApp.setState({ action: null });
    if (action.name === 'evaluate' && blocked) return;
    void doBuild(action.name === 'evaluate');
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [action?.seq]);
  const save = async (): Promise<void> => {
    if (!api || !task) return;
    try {
      // A PyTorch task's reference (model.py) is trusted and shown read-only: never saved from here.
      for (const f of task.pytorch ? (['kernel', 'manifest'] as const) : (['kernel', 'reference', 'manifest'] as const)) await api.call('tasks.saveFile', { taskId: task.id, file: f, text: texts[f] });
      await openTask(task.id);
    } catch (e) {
      setError(e);
    }
  };

  const list = (
    <aside className="task-list pane-col">
      <h3>Tasks</h3>
      <ul>
        {tasks.map((t) => (
          <li key={t.id}>
            <button data-testid={`task-${t.name}`} className={task?.id === t.id ? 'active' : ''} onClick={() => void openTask(t.id)} title={t.description}>
              {t.name} {t.replayOnly ? <small title={t.replayOnly}>REPLAY only</small> : t.builtin ? <small>built-in</small> : <small>folder</small>}
              {t.error ? <small className="field-error"> invalid</small> : <small> · {t.spaceSize ?? '?'} configs</small>}
              {t.spaceNote ? <small data-testid={`task-islands-${t.name}`} title={t.spaceNote}> · islands</small> : null}
            </button>
          </li>
        ))}
      </ul>
      <div className="open-folder">
        <input data-testid="open-folder-path" placeholder="/path/to/task-folder" value={folder} onChange={(e) => setFolder(e.target.value)} />
        <button data-testid="open-folder" onClick={() => void openFolder()}>{window.kernelduel && !folder ? 'Open folder…' : 'Open'}</button>
      </div>
      <div className="open-folder">
        <button data-testid="import-recording" disabled={!!busy} title="A Kernel Tuner cache (.json or .json.gz) or a T4 results file: listed as a REPLAY-only task" onClick={() => importInput.current?.click()}>Import recording…</button>
        <input
          ref={importInput}
          data-testid="import-recording-file"
          type="file"
          accept=".json,.gz"
          style={{ display: 'none' }}
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = '';
            if (f) void importRecording(f);
          }}
        />
      </div>
      {busy?.startsWith('importing') ? <p className="muted">{busy}</p> : null}
      {imported ? <p className="muted" data-testid="import-note">{imported}</p> : null}
    </aside>
  );
  if (!task) return <div className="tasks">{list}<p>Choose a task.</p></div>;
  if (texts.task !== task.id) return <div className="tasks">{list}<p className="muted">Opening {task.name}…</p></div>;
  const editor = (
    <div className="editor fill" data-testid="task-editor">
      <Editor
        key={`${task.id}-${tab}`}
        language={tab === 'manifest' ? 'yaml' : tab === 'reference' && task.pytorch ? 'python' : 'cuda'}
        value={texts[tab]}
        theme="vs"
        onMount={(ed) => {
          editorRef.current = ed;
          const at = ed.getPosition();
          setCursor({ line: at?.lineNumber ?? 1, column: at?.column ?? 1 });
          if (tab === 'kernel') setMarkers(ed, 'nvcc', build?.messages ?? []);
          ed.onDidChangeCursorPosition((e) => setCursor({ line: e.position.lineNumber, column: e.position.column }));
          if (pendingJump.current !== null) {
            const line = pendingJump.current;
            pendingJump.current = null;
            ed.revealLineInCenter(line);
            ed.setPosition({ lineNumber: line, column: 1 });
            ed.focus();
          }
        }}
        onChange={(v) => setTexts((x) => ({ ...x, [tab]: v ?? '' }))}
        options={{ minimap: { enabled: false }, fontSize: 13, scrollBeyondLastLine: false, automaticLayout: true, readOnly: tab === 'reference' && (task.readOnly || !!task.pytorch) }}
      />
    </div>
  );
  const output = (
    <div className="build-pane pane-col" data-testid="build-pane">
      {build ? (
        <div className={build.ok ? 'build ok' : 'build failed'} data-testid="build-result">
          <strong>{build.ok ? 'Build ok' : `Build failed: ${build.failure?.reason ?? ''}`}</strong> ({build.arch}, {(build.durationMs / 1000).toFixed(1)} s{build.cached ? ', cached' : ''})
          {build.messages.map((m, i) => (
            <button key={i} className="compiler-msg" data-testid="compiler-message" data-line={m.line} title="go to this line" onClick={() => jump(m.line, m.column)}>
              line {m.line}{m.column ? `:${m.column}` : ''}: {m.severity}: {m.message}
            </button>
          ))}
          {build.resources.map((r) => (
            <div key={r.name} className="mono">{r.name}: {r.registers} regs, {r.sharedBytes} B smem, spills {r.spillStoreBytes}/{r.spillLoadBytes} B</div>
          ))}
          {evaluated && (
            <div className="eval-result" data-testid="eval-result">
              <strong>Evaluated{evaluated.precise ? ' (precise timing)' : ''}</strong>
              {evalSummary(evaluated.result).map((l, i) => (
                <div key={i} className={`mono ${l.tone === 'bad' ? 'fail' : l.tone === 'note' ? 'muted small' : ''}`}>{l.text}</div>
              ))}
            </div>
          )}
        </div>
      ) : task.replayOnly ? (
        <p className="muted small" data-testid="replay-help">A recorded space has nothing to build or evaluate here: its configurations were measured when it was recorded. Run replays them (REPLAY: no GPU runs); the Variant tree, Compare and Plots show what a replay found.</p>
      ) : (
        <p className="muted small">Build (compile with nvcc, report registers / shared memory / spills) or Evaluate (check against the reference and time on a GPU). In the editor: F1 commands, F8 next problem, Ctrl+G go to line.</p>
      )}
    </div>
  );
  return (
    <Split id="tasks" dir="horizontal" panes={[{ id: 'tasks-list', size: 20, min: 170 }, { id: 'tasks-editor', size: 80, min: 420 }]}>
      {list}
      <div className="task-editor pane-col">
        <div className="task-head">
          <h2>{task.name}</h2>
          <span className="muted">{task.description}</span>
          <div className="muted mono small">{task.entrySignature}</div>
          {task.spaceNote && <div className="muted small space-note" data-testid="space-islands">Space: {task.spaceNote}.</div>}
          {task.pytorch && (
            <div className="muted small" data-testid="pytorch-task">
              PyTorch-reference task: {task.files.reference} is the trusted reference (read-only); candidates are CUDA entry points ({task.files.kernel}) or Python files defining ModelNew (<span className="mono">kernelduel optimize --candidates python --strategy llm</span>, guarantee level python-in-process)
            </div>
          )}
        </div>
        <div className="tabs">
          {(['kernel', 'reference', 'manifest'] as const).map((t) => (
            <button key={t} data-testid={`tab-${t}`} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>
              {t === 'manifest' ? task.files.manifest : t === 'kernel' ? task.files.kernel : task.files.reference}
              {t === 'manifest' && issues.length ? <span className="count">{issues.length}</span> : null}
            </button>
          ))}
          <span className="spacer" />
          {!task.replayOnly && <button data-testid="build" disabled={!!busy} onClick={() => void doBuild(false)}>Build</button>}
          {!task.replayOnly && <button data-testid="evaluate" disabled={!!busy || !!blocked} title={blocked ?? 'check against the reference and time on the GPU'} onClick={() => void doBuild(true)}>Evaluate</button>}
          {!task.replayOnly && (
            <label className="small check-inline" title="for a final figure: at least 2.5 s of timed calls over 4 executors of the variant (16 buffer placements), so that fresh processes agree to ~0.1-0.3%; the default timing is the search's (~0.1-0.35 s)">
              <input type="checkbox" data-testid="evaluate-precise" checked={precise} disabled={!!busy || !!blocked} onChange={(e) => setPrecise(e.target.checked)} /> precise
            </label>
          )}
          {!task.readOnly && <button onClick={() => void save()}>Save</button>}
          {task.readOnly && <span className="muted small" data-testid="read-only">{task.replayOnly ?? 'built-in: read-only'}</span>}
          {busy && <span className="muted">{busy}</span>}
        </div>
        {blocked && !task.replayOnly && <div className="muted small" data-testid="evaluate-why">Evaluate is off: {blocked}.</div>}
        <Split id={tab === 'manifest' ? 'tasks-manifest' : 'tasks-code'} dir="vertical" panes={tab === 'manifest' ? [{ id: 'manifest-form', size: 45, min: 120 }, { id: 'manifest-text', size: 55, min: 120 }] : [{ id: 'code-editor', size: 74, min: 160 }, { id: 'code-output', size: 26, min: 60 }]}>
          {tab === 'manifest' ? (
            <div className="pane-scroll"><ManifestForm taskId={task.id} text={texts.manifest} saved={task.manifestText} issues={issues} readOnly={false} onChange={(manifest) => setTexts((x) => ({ ...x, manifest }))} /></div>
          ) : tab === 'kernel' && task.recorded ? (
            <Recorded table={task.recorded} tunables={task.tunables} />
          ) : (
            editor
          )}
          {tab === 'manifest' ? editor : output}
        </Split>
        <div className="statusbar muted small" data-testid="editor-status">{tab === 'kernel' && task.recorded ? 'recorded configurations (no kernel source)' : <>Ln {cursor.line}, Col {cursor.column} · {tab === 'manifest' ? 'YAML' : 'CUDA'}{build ? ` · ${build.messages.filter((m) => m.severity === 'error').length} errors, ${build.messages.filter((m) => m.severity === 'warning').length} warnings` : ''}</>}</div>
      </div>
    </Split>
  );
}

/** A recorded space's configurations as its recording holds them (measured when it was recorded, not here). */
function Recorded({ table, tunables }: { table: RecordedTable; tunables: Record<string, number[]> }) {
  const all = Object.keys(table.fastest[0]?.config ?? table.baseline?.config ?? {});
  // A tunable of one value is the same in every row: said once above the table, not in a column.
  const fixed = all.filter((n) => tunables[n]?.length === 1);
  const names = all.filter((n) => !fixed.includes(n));
  const row = (r: { config: Record<string, number>; medianMs: number; ofBest: number }, rank: number, base: boolean) => (
    <tr key={rank} className={base ? 'baseline' : undefined}>
      <td className="num">{rank}</td>
      {names.map((n) => <td key={n} className="num mono">{r.config[n]}</td>)}
      <td className="num mono">{r.medianMs.toPrecision(4)}</td>
      <td className="num">{(r.ofBest * 100).toFixed(1)}%</td>
      <td>{base ? 'baseline' : ''}</td>
    </tr>
  );
  return (
    <div className="pane-scroll recorded" data-testid="recorded-table">
      <p className="muted small">
        As recorded on {table.gpu} (REPLAY data: no GPU ran here): {table.configurations} configurations, {table.failed} failed.
        {fixed.length ? ` Fixed in every configuration: ${fixed.map((n) => `${n} = ${tunables[n][0]}`).join(', ')}.` : ''}
        {table.fastest.length ? ` The fastest ${table.fastest.length}, by ${table.time === 'median' ? 'median time' : 'mean time (Kernel Tuner\'s objective, as recorded)'}:` : ' None was timed.'}
      </p>
      {table.fastest.length > 0 && (
        <table className="grid small">
          <thead>
            <tr><th>#</th>{names.map((n) => <th key={n}>{n}</th>)}<th>{table.time === 'median' ? 'median ms' : 'mean ms'}</th><th>of best</th><th /></tr>
          </thead>
          <tbody>
            {table.fastest.map((r, i) => row(r, i + 1, r.baseline))}
            {table.baseline && row(table.baseline, table.baseline.rank, true)}
          </tbody>
        </table>
      )}
    </div>
  );
}
