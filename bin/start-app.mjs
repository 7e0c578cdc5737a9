#!/usr/bin/env node
// `npm start` for the workbench: the desktop app when Electron's binary is installed and there is a
// display; otherwise says why and starts the browser mode (`kernelduel serve --open`) in this
// process: it prints the URL with its access token and opens a browser when there is one (on a
// headless machine it only prints the URL). Arguments after `npm start --` go to either (e.g.
// `npm start -- --port 0`). Builds out/ first when missing. The CLI optimisation of the examples is
// `npm run optimize-examples`.
//
// Stopping: npm runs this file through `sh -c`, and on SIGTERM npm signals that shell, which dies
// without passing the signal on; so this process also stops (and stops the app or the server) when
// its parent goes away, instead of being left running with the port taken.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function electronBinary() {
  try {
    const p = require('electron');
    return typeof p === 'string' && existsSync(p) ? p : null;
  } catch {
    return null;
  }
}

/** Calls `onOrphaned` once when this process's parent (npm's shell) has gone. */
function watchParent(onOrphaned) {
  const parent = process.ppid;
  const t = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(t);
      onOrphaned();
    }
  }, 500);
  t.unref();
}

const built = ['out/renderer/index.html', 'out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs'].every((f) => existsSync(join(root, f)));
if (!built) {
  console.error('Building the workbench (electron-vite build)…');
  const b = spawnSync(process.execPath, [join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

const bin = electronBinary();
const noDisplay = process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY;
const passthrough = process.argv.slice(2);
if (bin && !noDisplay) {
  const child = spawn(bin, [join(root, 'out', 'main', 'index.js'), ...passthrough], { cwd: root, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  watchParent(() => child.kill('SIGTERM'));
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  console.error(
    bin
      ? 'No display here (DISPLAY and WAYLAND_DISPLAY are unset), so KernelDuel starts in browser mode instead of the desktop app: open the URL it prints.'
      : "Electron's binary is not installed here (its download failed or was skipped during npm install), so KernelDuel starts in browser mode instead: open the URL it prints.",
  );
  if (!bin) console.error('For the desktop app: npm run install-electron');
  // The serve command's own SIGTERM handler closes the server (runs in progress keep what they measured).
  watchParent(() => process.kill(process.pid, 'SIGTERM'));
  process.argv = [process.argv[0], join(root, 'bin', 'kernelduel.mjs'), 'serve', '--open', ...passthrough];
  await import(pathToFileURL(join(root, 'bin', 'kernelduel.mjs')).href);
}
