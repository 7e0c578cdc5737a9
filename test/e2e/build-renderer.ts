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

function upToDate(): boolean {
  // Everything electron-vite builds, and everything it builds it from.
  const outputs = ['out/renderer/index.html', 'out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs'].map((p) => path.join(ROOT, p));
  const sources = ['renderer', 'main', 'preload', 'electron.vite.config.ts'].map((p) => path.join(ROOT, p));
  const built = outputs.every((o) => fs.existsSync(o)) ? Math.min(...outputs.map((o) => fs.statSync(o).mtimeMs)) : 0;
  return built > 0 && sources.every((s) => newest(s) <= built);
}

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Test files run in parallel processes, and more than one drives the workbench: one builds while
 * the others wait (a lock folder, made atomically), then finds it built. Two builds at once into
 * out/ replaced each other's hashed assets under a page that was loading them (seen in a full run:
 * "Failed to fetch dynamically imported module", then a page without its app).
 */
export function ensureRendererBuilt(): void {
  const lock = path.join(ROOT, 'node_modules', '.kd-test', 'workbench-build-lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const t0 = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A lock left by a build that was killed: older than any build takes.
      const st = fs.statSync(lock, { throwIfNoEntry: false });
      if (!st) continue;
      if (Date.now() - st.mtimeMs > 600_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() - t0 > 600_000) throw new Error(`${lock}: another test process has been building the workbench for 10 minutes`, { cause: e });
      else sleep(250);
    }
  }
  try {
    if (!upToDate()) execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'inherit' });
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}


/**
 * The browser test files, one at a time: each drives a real backend that compiles with nvcc or runs
 * torch, and two at once on CI's 2 cores starved each other past their timeouts (a workbench build
 * waiting 90 s for nvcc while the other file's CLI built a torch extension). Resolves with the
 * release; a lock whose owner process is gone is taken over.
 */
export async function browserTestsOneAtATime(): Promise<() => void> {
  const lock = path.join(ROOT, 'node_modules', '.kd-test', 'browser-tests-lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8') || NaN);
      } catch {
        /* not written yet, or released meanwhile */
      }
      const st = fs.statSync(lock, { throwIfNoEntry: false });
      if (!st) continue;
      let alive = true;
      if (Number.isInteger(owner)) {
        try {
          process.kill(owner, 0);
        } catch {
          alive = false;
        }
      } else if (st && Date.now() - st.mtimeMs > 10_000) alive = false; // made, but no owner written: a killed process
      if (!alive) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
}
