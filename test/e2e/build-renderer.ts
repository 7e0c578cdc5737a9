// Builds the workbench (electron-vite: main, preload, renderer) when out/renderer is missing or older
// than its sources, so the end-to-end tests always drive the current UI. Usable as a vitest globalSetup.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

function newest(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return fs.readdirSync(p).reduce((m, f) => Math.max(m, newest(path.join(p, f))), st.mtimeMs);
}

export function ensureRendererBuilt(): void {
  const index = path.join(ROOT, 'out', 'renderer', 'index.html');
  const sources = ['renderer', 'main/contract/api.ts', 'main/contract/methods.ts', 'electron.vite.config.ts'].map((p) => path.join(ROOT, p));
  const built = fs.existsSync(index) ? fs.statSync(index).mtimeMs : 0;
  if (built && sources.every((s) => newest(s) <= built)) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'inherit' });
}

export default function setup(): void {
  ensureRendererBuilt();
}
