#!/usr/bin/env node
// `npm start` for the workbench: the desktop app when Electron's binary is installed; otherwise says
// so and opens the browser mode (`kernelduel serve --open`) instead. Builds out/ first when missing.
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

if (!existsSync(join(root, 'out', 'renderer', 'index.html')) || !existsSync(join(root, 'out', 'main', 'index.js'))) {
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
  console.error("Electron's binary is not installed here (its download is skipped by .npmrc), so KernelDuel opens in your browser instead.");
  console.error('For the desktop app: ELECTRON_SKIP_BINARY_DOWNLOAD= npm install electron');
  child = spawn(process.execPath, ['--import', 'tsx', join(root, 'main', 'cli', 'index.ts'), 'serve', '--open', ...passthrough], { cwd: root, stdio: 'inherit' });
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
