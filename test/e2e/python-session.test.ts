// End-to-end: a PyTorch-reference task and a session of Python candidates (ModelNew) in the
// workbench's browser mode, driven with playwright-core and Debian's Chromium against the real
// backend. The session is made by the real CLI on the CPU (Debian's torch; the LLM policy answered
// by the local fake OpenAI-compatible server): the UI must show the guarantee level, say CPU for
// every time, label each candidate (pytorch-only / fallback), and show the PyTorch reference.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { browserTestsOneAtATime, ensureRendererBuilt } from './build-renderer.js';
import { startServe } from './serve.js';
import { startFakeServer, type FakeServer } from '../fixtures/llm/server.js';
import { PY_CANDIDATES, pyAnswer, writePythonTask } from '../fixtures/python-task.js';
import { kernelduelCli } from '../fixtures/cli.js';
import { TORCH_PYTHON } from '../pytorch-env.js';

const CHROMIUM = process.env.KERNELDUEL_CHROMIUM ?? '/usr/bin/chromium';
const have = fs.existsSync(CHROMIUM);
const ORDER = ['good', 'fallback'] as const;
/** Monaco's text as shown (it renders spaces as no-break spaces). */
const shown = async (l: Locator): Promise<string> => (await l.innerText()).replace(/\u00a0/g, ' ');

let home = '';
let taskDir = '';
let sessionId = '';
let server: ChildProcess | undefined;
let url = '';
let browser: Browser | undefined;
let page: Page;
let llm: FakeServer | undefined;

let release: (() => void) | undefined;

describe.skipIf(!have || !TORCH_PYTHON)('workbench: a PyTorch task and a Python-candidate session (browser mode, CPU)', () => {
  beforeAll(async () => {
    release = await browserTestsOneAtATime();
    ensureRendererBuilt();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-e2e-py-'));
    // A batch of 4096 rows, not the problem's 16: a forward of a few microseconds timed on a CPU shared
    // with other test files read 2.13x faster than its baseline once (CI, 2026-12-01), and the
    // outlier check then rightly rejected it as not reproduced; the test needs v2 timed.
    taskDir = writePythonTask(home, undefined, 4096);
    llm = await startFakeServer();
    llm.handler = (_b, i) => ({ type: 'ok', text: pyAnswer(PY_CANDIDATES[ORDER[i % ORDER.length]]) });
    // One torch thread (OMP_NUM_THREADS=1): with torch's default of one thread per core, a forward
    // timed while the other test worker was busy ran at half speed, so the baseline read 2.92 ms and
    // v2 2.05x faster than it, which the re-measurement rightly rejected (CI, 2026-12-04); one thread
    // keeps a core of its own on CI's two.
    const r = await kernelduelCli(home, TORCH_PYTHON!, ['optimize', taskDir, '--strategy', 'llm', '--budget', '2', '--duel-rounds', '2', '--llm-base-url', llm.url], { OMP_NUM_THREADS: '1' });
    expect(r.code, r.stderr).toBe(0);
    sessionId = /session (\S+) \(/.exec(r.stderr)![1];
    ({ server, url } = await startServe(home));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (e) => console.error('page error:', e.message));
    page.setDefaultNavigationTimeout(120_000); // a load is a step here, not the subject: see workbench.test.ts
  }, 300_000 + 900_000);

  afterAll(async () => {
    await llm?.close();
    await browser?.close();
    server?.kill('SIGTERM');
    if (home) fs.rmSync(home, { recursive: true, force: true });
    release?.();
  });

  it('opens the session: guarantee level and CPU in the banner, labels in the tree, Python facts', async () => {
    await page.goto(url);
    await page.getByTestId('session-picker').waitFor();
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${sessionId}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('nav-variants').click();
    await page.getByTestId('session-picker').selectOption(sessionId);
    const banner = page.getByTestId('python-banner');
    await banner.waitFor();
    expect(await banner.innerText()).toMatch(/Python candidates \(ModelNew\) · guarantee level PYTHON-IN-PROCESS: the candidate's host code runs in the measuring process · CPU: every time is a CPU time, not a GPU's/);
    // The top bar says PYTHON and CPU, never COMPILE-ONLY (nothing here is a GPU's figure, and it was timed).
    expect(await page.getByTestId('python-badge').innerText()).toBe("PYTHON · python-in-process · CPU times, not a GPU's");
    expect(await page.locator('.compile-badge').count()).toBe(0);
    await expect.poll(() => page.getByTestId('tree-row').count(), { timeout: 30_000 }).toBe(3);
    const labels = await page.getByTestId('tree-row').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-variant')} ${e.querySelector('[data-testid="py-label"]')?.textContent ?? '-'} ${e.querySelector('.cpu-inline') ? 'CPU' : ''}`.trim()));
    expect(labels, (await page.getByTestId('tree-row').allInnerTexts()).join(' | ')).toEqual(['v1 pytorch-only CPU', 'v2 pytorch-only CPU', 'v3 fallback']);
    // The fallback: a failed build, labelled so.
    await page.locator('[data-testid="tree-row"][data-variant="v3"]').click();
    await page.getByTestId('python-facts').waitFor();
    expect(await page.getByTestId('python-label').innerText()).toBe('fallback');
    expect(await page.getByTestId('python-facts').innerText()).toMatch(/status\s+failed — compile: fallback: its extension build failed/);
    // A timed rewrite: its CPU time and its guarantee level.
    await page.locator('[data-testid="tree-row"][data-variant="v2"]').click();
    await expect.poll(() => page.getByTestId('python-label').innerText()).toBe('pytorch-only');
    const facts = await page.getByTestId('python-facts').innerText();
    expect(facts).toMatch(/vs the eager baseline\s*CPU/);
    expect(facts).toContain('python-in-process: not ranked beside isolated (CUDA harness) results');
    expect(facts).toContain("yes at KernelBench's tolerance, yes at 1e-2");
    expect(await page.getByTestId('python-device').innerText()).toMatch(/^CPU \(torch [^)]+\): CPU times, not a GPU's/);
    // Its speedup vs the session's PyTorch baselines (timed by optimize before the search); CPU said so.
    expect(await page.getByTestId('vs-pytorch').innerText()).toMatch(/^[0-9.]+× vs PyTorch eager \([0-9.]+ (µs|ms)\) · (torch\.compile: none \(.+\)|[0-9.]+× vs torch\.compile \(.+\))\s*CPU$/);
    // The variant's facts and the baselines' legend, looked at (npm run screenshots keeps them in docs/screenshots/)
    const shots = process.env.KERNELDUEL_SCREENSHOTS === '1' ? path.resolve('docs', 'screenshots') : home;
    const size = page.viewportSize();
    for (const [width, height, name] of [[1440, 900, 'python-variant'], [1024, 700, 'python-variant-1024']] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: path.join(shots, `${name}.png`) });
    }
    if (size) await page.setViewportSize(size);
    // No PTX/SASS tabs for a Python candidate; its source and the reference are Python.
    expect(await page.getByTestId('vtab-ptx').count()).toBe(0);
    await page.getByTestId('vtab-source').click();
    await expect.poll(() => shown(page.getByTestId('effective-source').locator('.view-lines'))).toContain('class ModelNew(nn.Module):');
    await page.getByTestId('vtab-reference').click();
    await expect.poll(() => shown(page.getByTestId('python-reference').locator('.view-lines'))).toContain('class Model(nn.Module):');
    await page.screenshot({ path: path.join(home, 'python-session.png') });
  }, 120_000);

  it('draws the PyTorch eager reference line on the best-so-far plot, labelled with its CPU time; torch.compile only with a time', async () => {
    await page.getByTestId('nav-plots').click();
    const history = page.getByTestId('plot-history');
    await history.waitFor();
    // The line's label is drawn in the chart's SVG.
    await expect.poll(() => history.locator('svg text', { hasText: 'PyTorch eager' }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await history.locator('svg text', { hasText: 'PyTorch eager' }).first().textContent()).toMatch(/^PyTorch eager [0-9.]+ (µs|ms) \[CPU\]$/);
    expect(await history.locator('.recharts-reference-line').count()).toBeGreaterThan(0);
    const legend = await page.getByTestId('pytorch-baselines').innerText();
    expect(legend).toMatch(/PyTorch eager [0-9.]+ (µs|ms) \(wall, \d+ samples; line at [0-9.]+×\)/);
    expect(legend).toMatch(/CPU: CPU times, not a GPU's · trusted-python/);
    const compile = await page.getByTestId('pytorch-compile').innerText();
    if (compile.startsWith('torch.compile: no line')) {
      // torch without torch.compile (Debian's 1.13): its reason, and no line drawn for it.
      expect(compile).toMatch(/^torch\.compile: no line — torch \S+ has no torch\.compile$/);
      expect(await history.locator('svg text', { hasText: 'torch.compile' }).count()).toBe(0);
    }
  }, 60_000);

  it('opens the PyTorch task: its reference model.py as Python, read-only (typing changes nothing), and what it takes', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-axpy').waitFor(); // the view has loaded its list (and will not reset the folder field)
    // Filled and opened again while the task does not show: once in CI the first open was lost
    // (the page still showed axpy 30 s later; the same test takes 1.4 s alone).
    const opened = async (): Promise<boolean> => {
      if ((await page.getByTestId('pytorch-task').count()) > 0) return true;
      await page.getByTestId('open-folder-path').fill(taskDir);
      await page.getByTestId('open-folder').click();
      await page.getByTestId('pytorch-task').waitFor({ timeout: 15_000 }).catch(() => undefined);
      return (await page.getByTestId('pytorch-task').count()) > 0;
    };
    await expect.poll(opened, { timeout: 90_000 }).toBe(true).catch(async (e: unknown) => {
      console.error(`e2e: no PyTorch-task line; the page says:\n${(await page.locator('body').innerText()).slice(0, 2000)}`);
      throw e;
    });
    expect(await page.getByTestId('pytorch-task').innerText()).toContain('model.py is the trusted reference (read-only)');
    await page.getByTestId('tab-reference').click();
    const editor = page.getByTestId('task-editor');
    await expect.poll(() => shown(editor.locator('.view-lines'))).toContain('def get_init_inputs():');
    // Read-only: typing changes nothing.
    await editor.locator('.view-lines').click();
    await page.keyboard.type('XYZZY');
    expect(await shown(editor.locator('.view-lines'))).not.toContain('XYZZY');
  }, 150_000);
});
