// The command palette's commands (Ctrl/Cmd+Shift+P), built from the state: every view, run / stop /
// pause / resume, build and evaluate the open task, compare the selected variants, export the best,
// open a task or a session, and the variant list's mode. A command that cannot run says why.
import { useApp, type View } from './store.js';
import { saveFile } from './page.js';
import { controlRun, startRun } from './views/Run.js';
import { evaluateBlocked, openTask } from './views/Tasks.js';

export interface Command {
  id: string;
  group: string;
  label: string;
  /** Keys shown beside it. */
  hint?: string;
  /** Why it cannot run now (the command is shown, disabled). */
  disabled?: string;
  run(): void | Promise<void>;
}

export const VIEW_LABELS: Array<[View, string]> = [
  ['gpus', 'GPUs'],
  ['tasks', 'Tasks'],
  ['run', 'Run'],
  ['variants', 'Variant tree'],
  ['compare', 'Compare'],
  ['plots', 'Plots'],
  ['llm', 'LLM policy'],
  ['export', 'Export'],
];

export function buildCommands(): Command[] {
  const s = useApp.getState();
  const out: Command[] = VIEW_LABELS.map(([v, label], i) => ({ id: `view:${v}`, group: 'View', label: `Go to ${label}`, hint: `Alt+${i + 1}`, run: () => s.setView(v) }));
  const session = s.session;
  const run = s.sessionId ? s.runs[s.sessionId] : undefined;
  const live = !!run && ['running', 'paused', 'starting'].includes(run.phase);
  const noSession = session ? undefined : 'no session open';
  // Run: the open session's settings again, else a REPLAY of the first recorded space.
  const rec = s.tasks.find((t) => t.recordings.length);
  const again = session
    ? (() => {
        const st = session.settings as { strategy?: string; budget?: number; backend?: { kind?: string; recording?: string } };
        const task = s.tasks.find((t) => t.name === session.summary.task);
        const backend = st.backend?.kind === 'replay' && st.backend.recording ? `rec:${st.backend.recording}` : session.gpu && s.env?.gpus[0] ? `gpu:${s.env.gpus[0].index}` : 'gpu:none';
        return task ? { task: task.id, strategy: st.strategy ?? 'contrastive', budget: st.budget ?? 60, backend } : null;
      })()
    : rec
      ? { task: rec.id, strategy: 'contrastive', budget: 60, backend: `rec:${rec.recordings[0]}` }
      : null;
  out.push(
    {
      id: 'run:start', group: 'Run', label: again ? `Run: start ${again.strategy} on ${s.tasks.find((t) => t.id === again.task)?.name ?? again.task} (${again.backend.startsWith('rec:') ? 'REPLAY' : again.backend === 'gpu:none' ? 'compile-only' : 'GPU'}, budget ${again.budget})` : 'Run: start',
      disabled: again ? undefined : 'no task to run', run: async () => { s.setView('run'); if (again) await startRun(again); },
    },
    { id: 'run:stop', group: 'Run', label: 'Run: stop', disabled: live ? undefined : 'no run in progress in the open session', run: () => controlRun('runs.stop') },
    { id: 'run:pause', group: 'Run', label: 'Run: pause', disabled: run?.phase === 'running' ? undefined : 'no running run', run: () => controlRun('runs.pause') },
    { id: 'run:resume', group: 'Run', label: 'Run: resume', disabled: run?.phase === 'paused' ? undefined : 'no paused run', run: () => controlRun('runs.resume') },
    {
      id: 'task:build', group: 'Task', label: `Task: build${s.task ? ` ${s.task.name}` : ''}`, disabled: s.task ? undefined : 'no task open',
      run: () => { s.setView('tasks'); useApp.setState({ action: { name: 'build', seq: Date.now() } }); },
    },
    {
      id: 'task:evaluate', group: 'Task', label: `Task: evaluate${s.task ? ` ${s.task.name}` : ''} (check and time on the GPU)`, disabled: s.task ? (evaluateBlocked() ?? undefined) : 'no task open',
      run: () => { s.setView('tasks'); useApp.setState({ action: { name: 'evaluate', seq: Date.now() } }); },
    },
  );
  const a = s.compare.a ?? s.selected;
  const b = s.compare.a ? (s.compare.b ?? (s.selected !== s.compare.a ? s.selected : null)) : null;
  out.push({
    id: 'compare:selected', group: 'Variants', label: a ? `Compare selected: ${a}${b ? ` against ${b}` : ' (then pick B)'}` : 'Compare selected', disabled: noSession ?? (a ? undefined : 'select a variant (or mark A and B with Space in the tree)'),
    run: () => { s.setCompare('a', a); s.setCompare('b', b); s.setView('compare'); },
  });
  if (session?.bestId) out.push({ id: 'variant:best', group: 'Variants', label: `Open the best variant (${session.bestId})`, run: () => { s.select(session.bestId); s.setView('variants'); } });
  out.push({
    id: 'export:best', group: 'Export', label: 'Export best variant (.cu)', disabled: noSession ?? (session?.bestId ? undefined : 'no variant was timed'),
    run: async () => {
      try {
        const f = await s.api!.call('export.variant', { sessionId: session!.summary.id, variantId: 'best' });
        await saveFile(f.fileName, f.content, f.mimeType);
      } catch (e) {
        s.setError(e);
      }
    },
  });
  for (const t of s.tasks) out.push({ id: `task:open:${t.id}`, group: 'Open task', label: `Open task: ${t.name}`, run: async () => { s.setView('tasks'); await openTask(t.id); } });
  for (const x of s.sessions.slice(0, 30)) out.push({ id: `session:${x.id}`, group: 'Open session', label: `Open session: ${x.task} · ${x.strategy} · ${x.results}/${x.variants}${x.replay ? ' · REPLAY' : ''} (${x.id})`, run: () => s.openSession(x.id) });
  return out;
}
