// End-to-end: the browser mode of the workbench, driven with playwright-core and Debian's Chromium
// against the real backend (`kernelduel serve` in a child process, a temporary KERNELDUEL_HOME).
// No mocked API. The run replays the space recorded on a real NVIDIA H200
// (bench/spaces/h200/axpy.json: every configuration measured, 2026-11-30) because this machine has
// no GPU; the UI must show it as REPLAY. A synthetic space (labelled as such, in the temporary home
// only) is offered beside it and must not be the one picked.
// Every main view is screenshotted: into a temporary folder, or into docs/screenshots/ with
// `npm run screenshots` (KERNELDUEL_SCREENSHOTS=1), so `npm test` leaves the checkout as it was.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureRendererBuilt, ROOT } from './build-renderer.js';
import { loadTask } from '../../main/engine/task/manifest.js';
import { syntheticSpace } from '../fixtures/spaces/synthetic.js';
import { startFakeServer, type FakeServer } from '../fixtures/llm/server.js';
import { bigReplaySession } from '../fixtures/big-session.js';
import { h200FoundationSession } from '../fixtures/h200-foundation-session.js';
import { answer } from '../fixtures/llm/answers.js';
import { NO_NVCC } from '../fixtures/toolchain.js';

const CHROMIUM = process.env.KERNELDUEL_CHROMIUM ?? '/usr/bin/chromium';
const DOC_SHOTS = process.env.KERNELDUEL_SCREENSHOTS === '1';
const SHOTS = DOC_SHOTS ? path.join(ROOT, 'docs', 'screenshots') : path.join(os.tmpdir(), `kd-e2e-shots-${process.pid}`);
const have = fs.existsSync(CHROMIUM);
if (!have) console.warn(`e2e: skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KERNELDUEL_CHROMIUM)`);

let home: string;
let server: ChildProcess;
let url: string;
let browser: Browser;
let page: Page;
let llmServer: FakeServer;

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
    server = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'main', 'doors', 'cli', 'index.ts'), 'serve', '--port', '0', '--json'], {
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
    await llmServer?.close();
    await browser?.close();
    server?.kill('SIGTERM');
    if (home) fs.rmSync(home, { recursive: true, force: true });
    if (!DOC_SHOTS) fs.rmSync(SHOTS, { recursive: true, force: true });
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
    const replay = await backend.locator('option', { hasText: 'REPLAY: h200/axpy.json' }).first().getAttribute('value');
    expect(replay).toBeTruthy();
    expect(replay).toContain(path.join('bench', 'spaces', 'h200', 'axpy.json'));
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
    // The default pair is the best variant and the opponent it dueled: the preference model's
    // prediction for that pair, recorded before the duel, is shown.
    expect(await page.getByText(/^Preference model: P\(A faster\) = \d+% \(preference model v\d+ \(trained on \d+ pairs\), before the duel\)$/).count()).toBe(1);
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await shot('compare');
  });

  it('plots best-so-far, rewards, parameter effects and the model', async () => {
    await page.getByTestId('nav-plots').click();
    await page.getByTestId('plots').waitFor();
    await page.locator('.recharts-line-curve').first().waitFor();
    // The baseline strategies replayed on the same recorded H200 space, beside the run's own curve.
    for (const name of ['random', 'anneal', 'genetic']) await page.getByText(`${name} (REPLAY, median of 5)`).first().waitFor({ timeout: 30_000 });
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

  it.skipIf(NO_NVCC)('pauses and resumes a run (the worker holds measurements while paused)', async () => {
    await page.getByTestId('nav-run').click();
    await page.getByTestId('run-task').selectOption('axpy');
    await page.getByTestId('run-strategy').selectOption('random');
    // Compile-only: every variant is a real nvcc build (seconds), so the pause surely lands while
    // the run is going; a replay measures hundreds of variants a second and can finish first.
    await page.getByTestId('run-backend').selectOption('gpu:none');
    await page.getByTestId('run-budget').fill('20');
    const before = await page.getByTestId('session-picker').inputValue();
    await page.getByTestId('run-start').click();
    await page.getByTestId('run-pause').click({ timeout: 60_000 });
    const text = page.getByTestId('progress-text');
    await expect.poll(() => text.innerText(), { timeout: 60_000 }).toMatch(/^paused · \d+\/20/);
    await expect.poll(() => page.getByTestId('session-picker').inputValue(), { timeout: 30_000 }).not.toBe(before);
    const count = async (): Promise<number> => Number(/(\d+)\/20/.exec(await text.innerText())![1]);
    const at = await count();
    await page.waitForTimeout(5000);
    // At most the measurement in flight when pause arrived completes.
    expect(await count()).toBeLessThanOrEqual(at + 1);
    expect(at).toBeLessThan(20);
    await page.getByTestId('run-resume').click();
    // Resumed: measurements go on; then stop it (a finished run is fine too, if it got there first).
    await expect.poll(count, { timeout: 120_000 }).toBeGreaterThan(at + 1);
    await page.getByTestId('run-stop').click().catch(() => undefined);
    await expect.poll(() => text.innerText(), { timeout: 120_000 }).toMatch(/^(stopped|finished)/);
  });

  it('LLM policy settings: a bad base URL shows the field error; test connection; prompt preview', async () => {
    let n = 0;
    llmServer = await startFakeServer();
    llmServer.handler = (body) =>
      (body.max_tokens === 16 ? { type: 'ok', text: 'OK' } : { type: 'ok', text: answer(fs.readFileSync(path.join(ROOT, 'resources', 'tasks', 'axpy', 'kernel.cu'), 'utf8').replace(/\/\/[^\n]*\n/, `// rewritten ${++n}\n`), { analysis: 'The baseline is memory bound: each element is read and written once; vector loads would cut instructions.', design: 'Grid-stride loop with float4 loads and stores, 256 threads per block.' }), chunk: 30 });
    await page.getByTestId('nav-llm').click();
    const base = page.getByTestId('llm-baseURL');
    await base.fill('not a url');
    await page.getByTestId('llm-error-baseURL').waitFor();
    expect(await page.getByTestId('llm-error-baseURL').innerText()).toContain('not an http(s) URL');
    expect(await page.getByTestId('llm-save').isDisabled()).toBe(true);
    expect(await page.getByTestId('llm-test').isDisabled()).toBe(true);
    await page.getByTestId('llm-temperature').fill('7');
    await page.getByTestId('llm-error-temperature').waitFor();
    await shot('llm-settings-invalid');
    await page.getByTestId('llm-temperature').fill('0.3');
    await base.fill(llmServer.url);
    await page.getByTestId('llm-model').fill('test-model');
    await expect.poll(() => page.getByTestId('llm-error-baseURL').count()).toBe(0);
    // Browser mode: the key comes from the server's environment only.
    expect(await page.getByTestId('llm-apikey-env').innerText()).toContain('KERNELDUEL_LLM_API_KEY');
    await page.getByTestId('llm-save').click();
    await expect.poll(() => page.getByTestId('llm-status').innerText()).toContain('saved');
    await page.getByTestId('llm-test').click();
    const result = page.getByTestId('llm-test-result');
    await result.waitFor();
    await expect.poll(() => result.innerText()).toContain('replied "OK"');
    await page.getByTestId('llm-preview-task').selectOption('axpy');
    const preview = page.getByTestId('llm-preview');
    await expect.poll(() => preview.innerText()).toContain('void axpy(');
    expect(await preview.innerText()).toContain('Performance analysis');
    await shot('llm-settings');
  });

  it.skipIf(NO_NVCC)('runs the LLM policy compile-only against the local model server; the variant shows its three parts', async () => {
    await page.getByTestId('nav-run').click();
    await page.getByTestId('run-task').selectOption('axpy');
    await page.getByTestId('run-strategy').selectOption('llm');
    await page.getByTestId('run-backend').selectOption('gpu:none');
    await page.getByTestId('run-budget').fill('1');
    const before = await page.getByTestId('session-picker').inputValue();
    await page.getByTestId('run-start').click();
    // The worker prepares the run (toolchain, transforms) before the new session opens.
    await expect.poll(() => page.getByTestId('session-picker').inputValue(), { timeout: 60_000 }).not.toBe(before);
    await expect.poll(() => page.getByTestId('progress-text').innerText(), { timeout: 90_000 }).toMatch(/^finished/);
    await page.getByTestId('nav-variants').click();
    const llmRow = page.locator('[data-testid="tree-row"]', { hasText: 'built' }).last();
    await llmRow.click();
    const parts = page.getByTestId('llm-parts');
    await parts.waitFor();
    expect(await page.getByTestId('llm-analysis').innerText()).toContain('memory bound');
    expect(await page.getByTestId('llm-design').innerText()).toContain('float4');
    expect(await page.getByTestId('llm-code').innerText()).toMatch(/\d+ lines/);
    await page.locator('.monaco-editor .view-lines').first().waitFor();
    await shot('variant-llm');
  });

  it('draws the roofline against the GPU\'s measured limits (real H200 figures, REPLAY-labelled)', async () => {
    const { id } = h200FoundationSession({ home, root: ROOT, task: 'matmul' });
    await page.goto(url);
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${id}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('session-picker').selectOption(id);
    await page.getByTestId('nav-plots').click();
    const roof = page.getByTestId('roofline');
    await expect.poll(() => roof.getAttribute('data-limits')).toBe('bench/results/h200-foundation.json');
    const legend = await roof.locator('.recharts-legend-wrapper').innerText();
    expect(legend).toContain('memory roof 4.19 TB/s');
    expect(legend).toContain('compute roof 50.5 TFLOP/s');
    expect(await page.getByText(/roofs measured on this GPU: copy 4\.19 TB\/s, FP32 SGEMM 50\.5 TFLOP\/s/).count()).toBe(1);
    await roof.scrollIntoViewIfNeeded();
    await shot('plots-roofline-h200');
  });

  it('renders a 5,000-variant session in the tree, scrolls it and filters it', async () => {
    const big = await bigReplaySession({ home, taskDir: path.join(ROOT, 'resources', 'tasks', 'axpy'), variants: 5000 });
    console.log(`e2e: made a 5,000-variant REPLAY session (synthetic space) through the real loop and store in ${big.ms} ms`);
    await page.goto(url);
    await page.getByTestId('session-picker').waitFor();
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${big.id}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('nav-variants').click();
    const t0 = Date.now();
    await page.getByTestId('session-picker').selectOption(big.id);
    const count = page.getByTestId('tree-count');
    await expect.poll(() => count.innerText(), { timeout: 60_000 }).toMatch(/^5001 of 5001 variants/);
    await page.getByTestId('tree-row').first().waitFor();
    const renderMs = Date.now() - t0;
    console.log(`e2e: 5,000-variant tree: session loaded and rendered in ${renderMs} ms (select -> rows on screen, including sessions.get)`);
    // Virtualised: only the rows in view (plus overscan) are in the DOM.
    const inDom = await page.getByTestId('tree-row').count();
    expect(inDom).toBeGreaterThan(10);
    expect(inDom).toBeLessThan(120);
    // Scrolls to the end: the last rows are rendered and the page stays responsive.
    const tree = page.getByTestId('variant-tree');
    const s0 = Date.now();
    for (let i = 1; i <= 10; i++) await tree.evaluate((el, f) => { el.scrollTop = el.scrollHeight * f; }, i / 10);
    const last = await tree.evaluate((el) => { el.scrollTop = el.scrollHeight; return el.scrollHeight; });
    expect(last).toBeGreaterThan(5000 * 20);
    await expect.poll(async () => page.getByTestId('tree-row').last().getAttribute('data-variant')).toMatch(/^v\d+$/);
    const bottomIds = await page.getByTestId('tree-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-variant')));
    console.log(`e2e: 5,000-variant tree: 11 scroll jumps in ${Date.now() - s0} ms; ${inDom} rows in the DOM`);
    await shot('tree-5000');
    expect(bottomIds).not.toContain('v1');
    // Filter: by config text and by status.
    const f0 = Date.now();
    await page.getByTestId('tree-search').fill('BLOCK=1024 VEC=4');
    await expect.poll(() => count.innerText()).toMatch(/^\d+ of 5001 variants/);
    const filtered = Number(/^(\d+) of/.exec(await count.innerText())![1]);
    expect(filtered).toBeGreaterThan(0);
    expect(filtered).toBeLessThan(5001);
    for (const cfg of await page.getByTestId('tree-row').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? ''))) {
      if (!/: /.test(cfg)) expect(cfg).toMatch(/BLOCK=1024.*VEC=4|VEC=4.*BLOCK=1024/);
    }
    await page.getByTestId('tree-search').fill('');
    await page.getByTestId('tree-status').selectOption('failed');
    await expect.poll(() => count.innerText()).toMatch(/^\d+ of 5001 variants · \d+ failed/);
    const m = /^(\d+) of 5001 variants · (\d+) failed/.exec(await count.innerText())!;
    expect(m[1]).toBe(m[2]);
    console.log(`e2e: 5,000-variant tree: filters applied in ${Date.now() - f0} ms`);
    await page.getByTestId('tree-status').selectOption('all');
  }, 300_000);
});
