import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './App.js';
import { preloadEditor } from './editor.js';
import { createTransport } from './page.js';
import { useApp } from './store.js';

const api = createTransport();
// Monaco is fetched once the app has its first answers (the view they fill is drawn first).
void useApp.getState().init(api).catch((e: unknown) => useApp.getState().setError(e)).finally(preloadEditor);
createRoot(document.getElementById('root')!).render(<App />);
