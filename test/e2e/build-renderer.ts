// Builds the workbench (electron-vite: main, preload, renderer) when its output is missing or older
// than its sources, so the end-to-end tests always drive the current app. Called by the tests that
// need it (test/e2e/), not before every test run.
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
  // Everything electron-vite builds, and everything it builds it from.
  const outputs = ['out/renderer/index.html', 'out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs'].map((p) => path.join(ROOT, p));
  const sources = ['renderer', 'main', 'preload', 'electron.vite.config.ts'].map((p) => path.join(ROOT, p));
  const built = outputs.every((o) => fs.existsSync(o)) ? Math.min(...outputs.map((o) => fs.statSync(o).mtimeMs)) : 0;
  if (built && sources.every((s) => newest(s) <= built)) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'inherit' });
}

