// Monaco's editors, loaded on first use instead of with the page. Monaco (with its features and
// languages) was most of the workbench's one 10 MB script, and a browser must parse all of a script
// before the first view shows: the GPUs view waited for an editor it never shows. Now the page's
// script leaves Monaco out: it is fetched once the app has its first answers and the page is idle
// (preloadEditor), or at once when a view shows an editor before that, with a line saying so while it
// loads.
import { Component, lazy, Suspense, type ReactElement, type ReactNode } from 'react';
import type { DiffEditorProps, EditorProps, Monaco } from '@monaco-editor/react';

let loaded: Monaco | null = null;
let loading: Promise<typeof import('@monaco-editor/react')> | null = null;

/** Monaco, configured (./monaco.ts) before @monaco-editor/react can look for it anywhere else. */
function load(): Promise<typeof import('@monaco-editor/react')> {
  loading ??= import('./monaco.js').then(async (m) => {
    loaded = m.monaco;
    return import('@monaco-editor/react');
  });
  // A load that failed (the server gone for a moment) is not remembered: the next call tries again.
  loading.catch(() => (loading = null));
  return loading;
}

/** Starts loading Monaco when the page is next idle (within 3 s), so the first editor opens without waiting. */
export function preloadEditor(): void {
  const start = (): void => void load().catch(() => undefined); // a failed preload is tried again by the first editor
  if (typeof requestIdleCallback === 'function') requestIdleCallback(start, { timeout: 3000 });
  else setTimeout(start, 1000);
}

const LazyEditor = lazy(() => load().then((r) => ({ default: r.Editor })));
const LazyDiffEditor = lazy(() => load().then((r) => ({ default: r.DiffEditor })));

const waiting = <p className="muted" data-testid="editor-loading">loading the editor…</p>;

/** A failed load (the server gone while Monaco was fetched) says so in the editor's place, not a blank app. */
class LoadFailed extends Component<{ children: ReactNode }, { error: string | null }> {
  state = { error: null as string | null };
  static getDerivedStateFromError(e: unknown): { error: string } {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  render(): ReactNode {
    if (this.state.error === null) return this.props.children;
    return <p className="error" data-testid="editor-failed">the editor could not be loaded ({this.state.error}): reload the page</p>;
  }
}

/** An editor once Monaco is loaded: "loading the editor…" meanwhile, the reason if the load fails. */
function Loaded({ children }: { children: ReactNode }): ReactElement {
  return (
    <LoadFailed>
      <Suspense fallback={waiting}>{children}</Suspense>
    </LoadFailed>
  );
}

export const Editor = (props: EditorProps): ReactElement => <Loaded><LazyEditor {...props} /></Loaded>;
export const DiffEditor = (props: DiffEditorProps): ReactElement => <Loaded><LazyDiffEditor {...props} /></Loaded>;

/** Monaco once an editor has loaded it (every editor's onMount runs after that), else null. */
export function monacoIfLoaded(): Monaco | null {
  return loaded;
}
