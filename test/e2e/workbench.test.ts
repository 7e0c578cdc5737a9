// End-to-end: the browser mode of the workbench, driven with playwright-core and Debian's Chromium
// against the real backend (`kernelduel serve` in a child process, a temporary KERNELDUEL_HOME).
// No mocked API. The run replays a SYNTHETIC recorded space (written to the temporary home only,
// labelled as such) because this machine has no GPU; the UI must show it as REPLAY.
// Screenshots of each main view go to docs/screenshots/.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureRendererBuilt, ROOT } from './build-renderer.js';
import { loadTask } from '../../main/task/manifest.js';
import { syntheticSpace } from '../fixtures/spaces/synthetic.js';

const CHROMIUM = process.env.KERNELDUEL_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.join(ROOT, 'docs', 'screenshots');
const have = fs.existsSync(CHROMIUM);
if (!have) console.warn(`e2e: skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KERNELDUEL_CHROMIUM)`);

let home: string;
let server: ChildProcess;
let url: string;
let browser: Browser;
let page: Page;

async function shot(name: string): Promise<void> {
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

describe.skipIf(!have)('workbench in browser mode (real backend)', () => {
  beforeAll(async () => {
    ensureRendererBuilt();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-e2e-'));
    const task = loadTask(path.join(ROOT, 'resources', 'tasks', 'axpy'));
    const spaceDir = path.join(home, 'spaces', 'synthetic-test-fixture');
    fs.mkdirSync(spaceDir, { recursive: true });
    fs.writeFileSync(path.join(spaceDir, 'axpy.json'), JSON.stringify(syntheticSpace(task, { seed: 3, samples: 30, failRate: 0.08 })));
    server = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'main', 'cli', 'index.ts'), 'serve', '--port', '0', '--json'], {
      cwd: ROOT, env: { ...process.env, KERNELDUEL_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      const t = setTimeout(() => reject(new Error(`kernelduel serve did not start: ${err}`)), 30_000);
      server.stderr!.on('data', (d) => (err += d));
      server.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) {
          clearTimeout(t);
          resolve((JSON.parse(line) as { url: string }).url);
        }
      });
      server.on('exit', (c) => reject(new Error(`kernelduel serve exited with ${c}: ${err}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page.on('pageerror', (e) => console.error('page error:', e.message));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('without the token the server refuses the page', async () => {
    const res = await page.goto(url.replace(/\?token=.*/, ''));
    expect(res?.status()).toBe(401);
  });

  it('opens on the GPU view with a clear no-GPU state', async () => {
    await page.goto(url);
    await page.getByTestId('view-gpus').waitFor();
    await expect.poll(() => page.getByTestId('no-gpu').or(page.getByTestId('gpu-table')).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.getByText('CUDA toolchain').waitFor();
    await shot('gpus');
  });

  it('opens a suite task in Monaco; bad manifest input shows the field\'s error', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-axpy').click();
    await page.locator('.monaco-editor .view-lines').first().waitFor();
    await expect.poll(() => page.locator('.monaco-editor .view-lines').first().innerText()).toContain('axpy');
    await page.getByTestId('tab-manifest').click();
    const name = page.getByTestId('manifest-name');
    await name.fill('Bad Name!');
    const err = page.getByTestId('field-error-name');
    await err.waitFor();
    expect(await err.innerText()).toContain('lower-case letters');
    await shot('tasks-manifest');
    await name.fill('axpy');
    await expect.poll(() => page.getByTestId('field-error-name').count()).toBe(0);
    await page.getByTestId('tab-kernel').click();
    await shot('tasks-editor');
  });

  it('starts a REPLAY run of the contrastive optimiser and the tree grows', async () => {
    await page.getByTestId('nav-run').click();
    await page.getByTestId('run-task').selectOption('axpy');
    await page.getByTestId('run-strategy').selectOption('contrastive');
    const backend = page.getByTestId('run-backend');
    const replay = await backend.locator('option', { hasText: 'REPLAY' }).first().getAttribute('value');
    expect(replay).toBeTruthy();
    await backend.selectOption(replay!);
    await page.getByTestId('run-budget').fill('60');
    await page.getByTestId('run-start').click();
    const rows = page.getByTestId('tree-row');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBeGreaterThan(3);
    await expect.poll(() => page.getByTestId('progress-text').innerText(), { timeout: 60_000 }).toContain('finished');
    expect(await page.getByTestId('replay-badge').innerText()).toContain('REPLAY');
    expect(await page.getByTestId('tree-count').innerText()).toMatch(/^\d+ of (6\d|5\d) variants/);
    await shot('run-tree');
  });

  it('selects a variant in the tree and diffs it against its parent', async () => {
    await page.getByTestId('nav-variants').click();
    await page.getByTestId('tree-status').selectOption('timed');
    await page.getByTestId('tree-row').nth(3).click();
    await page.getByTestId('variant-panel').waitFor();
    await page.getByTestId('diff-tab').click();
    await page.locator('.monaco-diff-editor').first().waitFor();
    await shot('variant-tree');
  });

  it('compares two variants: distributions, ratio with CI and verdict', async () => {
    await page.getByTestId('nav-compare').click();
    const verdict = page.getByTestId('compare-verdict');
    await verdict.waitFor();
    await expect.poll(() => verdict.innerText()).toMatch(/A is (faster|slower|same|unsure): \d+\.\d+× \[\d+\.\d+, \d+\.\d+\] 95% CI/);
    expect(await page.getByTestId('compare-table').innerText()).toContain('registers');
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await shot('compare');
  });

  it('plots best-so-far, rewards, parameter effects and the model', async () => {
    await page.getByTestId('nav-plots').click();
    await page.getByTestId('plots').waitFor();
    await page.locator('.recharts-line-curve').first().waitFor();
    await shot('plots');
  });

  it('exports the best variant as a .cu with provenance, and a report', async () => {
    await page.getByTestId('nav-export').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-best').click()]);
    expect(download.suggestedFilename()).toMatch(/^axpy-v\d+\.cu$/);
    const file = await download.path();
    const text = fs.readFileSync(file!, 'utf8');
    expect(text).toContain('Exported from KernelDuel');
    expect(text).toContain('REPLAYED from recording');
    expect(text).toMatch(/#define BLOCK \d+/);
    expect(text).toContain('void axpy(');
    const [report] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-report-md').click()]);
    const md = fs.readFileSync((await report.path())!, 'utf8');
    expect(md).toContain('# KernelDuel run report: axpy');
    expect(md).toContain('REPLAY');
    await shot('export');
  });
});
