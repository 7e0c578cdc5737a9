// Opening a task in the Tasks view (and from the command palette): apart from the view so the
// store's tests can run it without a DOM.
import { useApp } from './store.js';

let openSeq = 0;
/**
 * Loads a task into the editor (the palette's "Open task" too); clears the previous task's error.
 * Only the latest call's answer is shown: a slow earlier one (the view's first task, opened while
 * the user clicked another) never replaces it.
 */
export async function openTask(taskId: string): Promise<void> {
  const { api, setError } = useApp.getState();
  if (!api) return;
  const seq = ++openSeq;
  try {
    const t = await api.call('tasks.get', { taskId });
    if (seq === openSeq) useApp.setState({ task: t, error: null });
  } catch (e) {
    if (seq === openSeq) setError(e);
  }
}
