// Launches the desktop app with Playwright's _electron where an Electron binary exists; skips with a
// clear message elsewhere (where Electron's download host cannot be reached, npm install goes on without it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { _electron as electron } from 'playwright-core';
import { browserTestsOneAtATime, ensureRendererBuilt, ROOT } from './build-renderer.js';

function electronBinary(): string | null {
  try {
    const p = createRequire(import.meta.url)('electron') as unknown;
    return typeof p === 'string' && fs.existsSync(p) ? p : null;
  } catch {
    return null;
  }
}

const bin = electronBinary();
if (!bin) console.warn('electron e2e: skipped: Electron\'s binary is not installed (npm run install-electron downloads it where its host can be reached)');

describe.skipIf(!bin)('desktop app (Electron)', () => {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await browserTestsOneAtATime();
  }, 900_000);
  afterAll(() => release?.());
  // Launched with --no-sandbox: Chromium's OS-level sandbox cannot start as root (CI) or without
  // user namespaces, so this test does not claim it. What it checks is the page: no Node in it, one
  // window, and the engine reached only through the preload's four functions.
  it('opens one window whose page has no Node and reaches the engine only through window.kernelduel', async () => {
    ensureRendererBuilt();
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-electron-'));
    const app = await electron.launch({ executablePath: bin!, args: [path.join(ROOT, 'out', 'main', 'index.js'), '--no-sandbox'], env: { ...process.env, KERNELDUEL_HOME: home } });
    try {
      const win = await app.firstWindow();
      await win.getByTestId('view-gpus').waitFor();
      expect(await win.evaluate(() => typeof (globalThis as unknown as { require?: unknown }).require)).toBe('undefined');
      expect(await win.evaluate(() => Object.keys((globalThis as unknown as { kernelduel: object }).kernelduel).sort())).toEqual(['call', 'pickFolder', 'saveAs', 'subscribe']);
      const refused = await win.evaluate(() => (globalThis as unknown as { kernelduel: { call(m: string, p: unknown): Promise<unknown> } }).kernelduel.call('fs.readFile', {}).then(() => 'called', (e: Error) => e.message));
      expect(refused).toContain('unknown method');
      expect(app.windows()).toHaveLength(1);
    } finally {
      await app.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
