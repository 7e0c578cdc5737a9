#!/usr/bin/env node
// `npm start` for the workbench: the desktop app when Electron's binary is installed; otherwise says
// so and starts the browser mode (`kernelduel serve --open`) instead: it prints the URL with its
// access token and opens a browser when there is one (on a headless machine it only prints the URL).
// Builds out/ first when missing. The CLI optimisation of the examples is `npm run optimize-examples`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const built = ['out/renderer/index.html', 'out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs'].every((f) => existsSync(join(root, f)));
if (!built) {
  console.error('Building the workbench (electron-vite build)…');
  const b = spawnSync(process.execPath, [join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

const bin = electronBinary();
const passthrough = process.argv.slice(2);
let child;
if (bin) {
  child = spawn(bin, [join(root, 'out', 'main', 'index.js'), ...passthrough], { cwd: root, stdio: 'inherit' });
} else {
  console.error("Electron's binary is not installed here (its download is skipped by .npmrc), so KernelDuel starts in browser mode instead: open the URL it prints.");
  console.error('For the desktop app: ELECTRON_SKIP_BINARY_DOWNLOAD= npm install electron');
  child = spawn(process.execPath, ['--import', 'tsx', join(root, 'main', 'cli', 'index.ts'), 'serve', '--open', ...passthrough], { cwd: root, stdio: 'inherit' });
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
