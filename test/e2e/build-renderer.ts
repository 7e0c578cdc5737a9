// Builds the workbench (electron-vite: main, preload, renderer) when its output is missing or older
// than its sources, so the end-to-end tests always drive the current app. Called by the tests that
// need it (test/e2e/), not before every test run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { withLockFile } from '../../main/engine/platform/gpu/lock.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

function newest(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return fs.readdirSync(p).reduce((m, f) => Math.max(m, newest(path.join(p, f))), st.mtimeMs);
}

function upToDate(): boolean {
  // Everything electron-vite builds, and everything it builds it from.
  const outputs = ['out/renderer/index.html', 'out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs'].map((p) => path.join(ROOT, p));
  const sources = ['renderer', 'main', 'preload', 'electron.vite.config.ts'].map((p) => path.join(ROOT, p));
  const built = outputs.every((o) => fs.existsSync(o)) ? Math.min(...outputs.map((o) => fs.statSync(o).mtimeMs)) : 0;
  return built > 0 && sources.every((s) => newest(s) <= built);
}

/** Builds the workbench when it is stale. Call it holding browserTestsOneAtATime(): two builds at once into out/ replaced each other's hashed assets under a loading page. */
export function ensureRendererBuilt(): void {
  if (!upToDate()) execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * The browser test files, one at a time (the engine's cross-process lock file, withLockFile: owner pid,
 * a dead owner's lock taken over): each drives a backend that compiles with nvcc or runs torch, and two at once on
 * CI's 2 cores starved each other past their timeouts (a workbench build waiting 90 s for nvcc while
 * the other file's CLI built a torch extension). Resolves, once held, with its release.
 */
export function browserTestsOneAtATime(): Promise<() => void> {
  return new Promise((acquired, failed) => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    withLockFile(path.join(ROOT, 'node_modules', '.kd-test', 'browser-tests.lock'), () => (acquired(release), held), { pollMs: 500 }, 'the browser tests').catch(failed);
  });
}
