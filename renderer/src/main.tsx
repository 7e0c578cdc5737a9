import { createRoot } from 'react-dom/client';
import './monaco.js';
import './styles.css';
import { App } from './App.js';
import { createTransport } from './page.js';
import { useApp } from './store.js';

const api = createTransport();
void useApp.getState().init(api).catch((e: unknown) => useApp.getState().setError(e));
createRoot(document.getElementById('root')!).render(<App />);
