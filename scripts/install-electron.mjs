#!/usr/bin/env node
// Downloads Electron's binary (the desktop app) by running the electron package's own install
// script, node_modules/electron/install.js. package.json denies npm running that script itself
// (allowScripts: electron false): where Electron's download host cannot be reached (CI, a GPU
// server that sees only the npm registry) it fails, and with it the whole `npm install`.
//
// `npm install` runs this file as our postinstall with --optional: a failed download prints one
// line and succeeds (`npm start` then says so and uses the browser mode). `npm run
// install-electron` runs it without --optional: a failed download is an error (exit 1) with
// electron's own message. Where Electron comes from is install.js's business: it honours
// Electron's own variables (ELECTRON_MIRROR, electron_config_cache, ELECTRON_SKIP_BINARY_DOWNLOAD...).
// `--script <install.js>` runs another install script (the tests' stand-in for the download).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/** The first line of install.js's error output worth showing (its stack trace starts with the error itself). */
function firstErrorLine(stderr) {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => !l.startsWith('at ')) ?? '';
}

/** Runs an install script; resolves { ok } or { ok: false, reason, stderr }. */
function runInstall(script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { cwd: dirname(script), stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr = (stderr + d.toString()).slice(-64_000);
    });
    child.on('error', (e) => resolve({ ok: false, reason: `cannot run ${script}: ${e.message}`, stderr }));
    child.on('close', (code, signal) => {
      resolve(code === 0 ? { ok: true } : { ok: false, reason: firstErrorLine(stderr) || `${script} exited with ${code ?? signal}`, stderr });
    });
  });
}

/** electron's install.js in this checkout, or null when the electron package is not installed. */
function electronInstallScript() {
  try {
    return createRequire(import.meta.url).resolve('electron/install.js');
  } catch {
    return null;
  }
}

async function main(argv) {
  const optional = argv.includes('--optional');
  const i = argv.indexOf('--script');
  const script = i >= 0 ? argv[i + 1] : electronInstallScript();
  if (!script) {
    console.error('kernelduel: the electron package is not installed (npm install --omit=dev?): `npm start` will use the browser mode.');
    return optional ? 0 : 1;
  }
  const r = await runInstall(script);
  if (r.ok) return 0;
  if (optional) {
    console.error(`kernelduel: Electron's binary could not be downloaded (${r.reason}); \`npm start\` will use the browser mode (to retry: npm run install-electron).`);
    return 0;
  }
  process.stderr.write(r.stderr);
  console.error(`kernelduel: Electron's binary could not be downloaded: ${r.reason}`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
