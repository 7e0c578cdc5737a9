// End-to-end: the browser mode of the workbench, driven with playwright-core and Debian's Chromium
// against the real backend (`kernelduel serve` in a child process, a temporary KERNELDUEL_HOME).
// No mocked API. The run replays the space recorded on a real NVIDIA H200
// (bench/spaces/h200/axpy.json: every configuration measured, 2026-11-30) because this machine has
// no GPU; the UI must show it as REPLAY. A synthetic space (labelled as such, in the temporary home
// only) is offered beside it and must not be the one picked.
// Every main view is screenshotted: into a temporary folder, or into docs/screenshots/ with
// `npm run screenshots` (KERNELDUEL_SCREENSHOTS=1), so `npm test` leaves the checkout as it was.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { browserTestsOneAtATime, ensureRendererBuilt, ROOT } from './build-renderer.js';
import { startServe } from './serve.js';
import { loadTask } from '../../main/engine/task/manifest.js';
import { syntheticSpace } from '../fixtures/spaces/synthetic.js';
import { toyKernelTunerCache } from '../fixtures/spaces/kernel-tuner-toy.js';
import { startFakeServer, type FakeServer } from '../fixtures/llm/server.js';
import { bigReplaySession } from '../fixtures/big-session.js';
import { h200FoundationSession } from '../fixtures/h200-foundation-session.js';
import { h200StagesSession } from '../fixtures/h200-stages-session.js';
import { confirmSessionFixture } from '../fixtures/confirm-session.js';
import { setsSession } from '../fixtures/sets-session.js';
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

/** How long after a result arrives the run view may still show the state before it. */
const LIVE_BOUND_MS = 250;

interface LiveProbe {
  /** run.result frames as the page handled them (page time). */
  results: Array<{ t: number; sessionId: string; id: string; status: string; ms: number | null; index: number; budget: number }>;
  /** The run view at each animation frame and after each change to the page while a run's session is shown. */
  frames: Array<{ t: number; sessionId: string; text: string; progress: string | null; barPct: number | null; summaryBest: string | null; tags: string[] }>;
}

/**
 * Installed before the app starts: wraps the page's WebSocket to note run.result frames as they
 * are handled, and samples the run view at every animation frame between start() and stop().
 */
const LIVE_PROBE = `(() => {
  const W = window.WebSocket;
  const probe = { on: false, results: [], frames: [] };
  window.WebSocket = class extends W {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', (m) => {
        const d = String(m.data);
        if (!probe.on || !d.startsWith('{"event":{"type":"run.result"')) return;
        const e = JSON.parse(d).event;
        probe.results.push({ t: performance.now(), sessionId: e.sessionId, id: e.row.id, status: e.row.status, ms: e.row.medianMs, index: e.index, budget: e.budget });
      });
    }
  };
  // A sample at every animation frame, and after every change React commits to the page (a
  // mutation observer: headless Chromium paints only ~15 frames a second while the tree grows, so
  // frames alone saw as few as 9 states of a 1.2 s run): every state the page held is checked.
  const sample = () => {
    if (!probe.on) return;
    const text = document.querySelector('[data-testid="progress-text"]');
    const bar = document.querySelector('[data-testid="progress"]');
    if (text && bar) {
      const inner = bar.querySelector('.bar');
      const best = document.querySelector('[data-testid="progress-best"]')?.textContent ?? '';
      probe.frames.push({
        t: performance.now(),
        sessionId: document.querySelector('[data-testid="session-picker"]')?.value ?? '',
        text: text.textContent ?? '',
        progress: bar.getAttribute('data-progress'),
        barPct: inner ? (100 * inner.getBoundingClientRect().width) / bar.getBoundingClientRect().width : null,
        summaryBest: (/\\((v\\d+)\\)$/.exec(best) ?? [])[1] ?? null,
        tags: [...document.querySelectorAll('[data-testid="best-tag"]')].map((t) => t.closest('[data-variant]')?.getAttribute('data-variant') ?? '?'),
      });
    }
  };
  const frame = () => {
    if (!probe.on) return;
    sample();
    requestAnimationFrame(frame);
  };
  const changes = new MutationObserver(sample);
  window.__kdProbe = {
    start() {
      probe.on = true; probe.results = []; probe.frames = [];
      changes.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      requestAnimationFrame(frame);
    },
    stop() { probe.on = false; changes.disconnect(); return { results: probe.results, frames: probe.frames }; },
  };
})();`;

/**
 * What a live run view got wrong: each frame while the run was running must show, LIVE_BOUND_MS
 * after a result arrived, a best at least as fast as every timed result so far (the summary and
 * the tree's best tag on the same variant), progress at least that result's index, and a bar as
 * long as its text says.
 */
function liveProblems(p: LiveProbe): { problems: string[]; frames: number; bestMoves: number } {
  const out: string[] = [];
  const fail = (why: string) => ({ problems: [why], frames: 0, bestMoves: 0 });
  const sid = p.results[0]?.sessionId;
  if (!sid || p.results.length < 10) return fail(`too few results seen (${p.results.length}): no live run to check`);
  const results = p.results.filter((r) => r.sessionId === sid);
  // A variant's median as the run reported it (its last result).
  const msOf = new Map(results.filter((r) => r.status === 'timed' && r.ms !== null).map((r) => [r.id, r.ms!]));
  const frames = p.frames.filter((f) => f.sessionId === sid && /^running · /.test(f.text));
  if (frames.length < 10) return fail(`too few frames of the running session (${frames.length})`);
  let bestMoves = 0;
  let checkedBest = 0;
  let prevBest: string | null = null;
  for (const f of frames) {
    const known = results.filter((r) => r.t <= f.t - LIVE_BOUND_MS);
    if (!known.length) continue;
    const at = `${Math.round(f.t)} ms ("${f.text.slice(0, 60)}")`;
    // Progress: the text's count, the bar's attribute and the bar's drawn width agree, and are not behind.
    const m = /^running · (\d+)\/(\d+)/.exec(f.text)!;
    const [n, budget] = [Number(m[1]), Number(m[2])];
    const newest = Math.max(...known.map((r) => r.index));
    if (n < newest) out.push(`${at}: progress says ${n}/${budget}, result ${newest} arrived ${LIVE_BOUND_MS} ms before`);
    if (f.progress !== (n / budget).toFixed(3)) out.push(`${at}: the bar's data-progress ${f.progress} is not ${n}/${budget}`);
    if (f.barPct === null || Math.abs(f.barPct - (100 * n) / budget) > 1) out.push(`${at}: the bar is drawn at ${f.barPct?.toFixed(1)}%, its text says ${n}/${budget}`);
    // The best: the fastest timed result so far, named by the summary and tagged in the tree.
    let fastest: { id: string; ms: number } | null = null;
    for (const r of known) if (r.status === 'timed' && r.ms !== null && (!fastest || r.ms < fastest.ms)) fastest = { id: r.id, ms: r.ms };
    if (!fastest) continue;
    checkedBest++;
    const shown = f.summaryBest;
    const shownMs = shown ? msOf.get(shown) : undefined;
    if (shownMs === undefined || shownMs > fastest.ms) out.push(`${at}: the summary's best is ${shown ?? 'none'} (${shownMs ?? '-'} ms), ${fastest.id} (${fastest.ms} ms) arrived ${LIVE_BOUND_MS} ms before`);
    if (f.tags.length !== 1 || f.tags[0] !== shown) out.push(`${at}: the best tag is on ${f.tags.join(', ') || 'no row'}, the summary names ${shown}`);
    if (shown !== prevBest) bestMoves++;
    prevBest = shown;
  }
  // The check must have had something to check: the best moved during the run.
  if (checkedBest < 10 || bestMoves < 2) out.push(`the best was checked on ${checkedBest} frames and moved ${bestMoves} times: too little to show it follows`);
  return { problems: out, frames: checkedBest, bestMoves };
}

async function shot(name: string): Promise<void> {
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** A screenshot at 1024x700 (after `before`, e.g. a scroll), the window back at 1440x900 afterwards whatever happens. */
async function shotNarrow(name: string, before?: () => Promise<void>): Promise<void> {
  await page.setViewportSize({ width: 1024, height: 700 });
  try {
    await before?.();
    await shot(name);
  } finally {
    await page.setViewportSize({ width: 1440, height: 900 });
  }
}

const pageErrors: string[] = [];
/** The page's console errors and warnings, for a failure's message. */
const consoleLines: string[] = [];
let serverStderr: () => string = () => '';

/** What the Tasks view shows now, for a failure's message: its heading, active tab and banners. */
async function tasksViewState(): Promise<string> {
  // A string (as LIVE_PROBE): the tests are type-checked without the DOM's types.
  return page.evaluate<string>(`(() => {
    const q = (sel) => document.querySelector(sel);
    const head = q('.task-head h2')?.textContent ?? '(no task heading)';
    const tab = q('.tabs button.active')?.getAttribute('data-testid') ?? '(no active tab)';
    const form = q('[data-testid="manifest-form"]')?.getAttribute('data-task') ?? '(no manifest form)';
    const err = q('[data-testid="error"]')?.textContent ?? '';
    const text = (q('.tasks')?.textContent ?? document.body.textContent ?? '').slice(0, 300);
    return 'heading ' + head + '; active tab ' + tab + '; form ' + form + '; error "' + err + '"; view text "' + text + '"';
  })()`);
}

/**
 * Opens a task and one of its tabs the way a user does: clicks the task, waits until the view
 * shows it, then clicks the tab and waits until it is the active one. A step that does not happen
 * within 20 s fails naming what the view showed instead, and the page's errors so far (a CI run on
 * 2026-12-03 waited 30 s for the manifest form with nothing but a timeout to read).
 */
async function openTaskTab(task: string, tab: 'kernel' | 'reference' | 'manifest'): Promise<void> {
  const step = async (what: string, cond: () => Promise<boolean>): Promise<void> => {
    const until = Date.now() + 20_000;
    while (!(await cond().catch(() => false))) {
      if (Date.now() > until) throw new Error(`${what} within 20 s: ${await tasksViewState()}; page errors: ${pageErrors.join(' | ') || 'none'}`);
      await page.waitForTimeout(50);
    }
  };
  await page.getByTestId(`task-${task}`).click();
  await step(`task ${task} did not open`, async () => (await page.locator('.task-head h2').innerText({ timeout: 1000 })) === task);
  await page.getByTestId(`tab-${tab}`).click();
  await step(`tab ${tab} of ${task} did not become active`, async () => ((await page.getByTestId(`tab-${tab}`).getAttribute('class', { timeout: 1000 })) ?? '').includes('active'));
  if (tab === 'manifest') await step(`the manifest form of ${task} did not appear`, async () => ((await page.getByTestId('manifest-form').getAttribute('data-task', { timeout: 1000 })) ?? '').includes(task));
}

let release: (() => void) | undefined;

describe.skipIf(!have)('workbench in browser mode (real backend)', () => {
  beforeAll(async () => {
    release = await browserTestsOneAtATime();
    ensureRendererBuilt();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-e2e-'));
    const task = loadTask(path.join(ROOT, 'resources', 'tasks', 'axpy'));
    const spaceDir = path.join(home, 'spaces', 'synthetic-test-fixture');
    fs.mkdirSync(spaceDir, { recursive: true });
    fs.writeFileSync(path.join(spaceDir, 'axpy.json'), JSON.stringify(syntheticSpace(task, { seed: 3, samples: 30, failRate: 0.08 })));
    ({ server, url, stderrTail: serverStderr } = await startServe(home));
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page.on('pageerror', (e) => {
      pageErrors.push(e.message);
      console.error('page error:', e.message);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') consoleLines.push(`${m.type()}: ${m.text().slice(0, 300)}`);
    });
    // A page load is a test's step, not its subject (the time to the first view is measured by
    // bench/workbench-first-load.ts): in the full suite on 2 cores the first load once took 37 s and
    // once more than Playwright's default 30 s (CI, 2026-12-07).
    page.setDefaultNavigationTimeout(120_000);
  }, 180_000 + 900_000);

  afterAll(async () => {
    await llmServer?.close();
    await browser?.close();
    server?.kill('SIGTERM');
    if (home) fs.rmSync(home, { recursive: true, force: true });
    if (!DOC_SHOTS) fs.rmSync(SHOTS, { recursive: true, force: true });
    release?.();
  });

  it('without the token the server refuses the page', async () => {
    const res = await page.goto(url.replace(/\?token=.*/, ''));
    expect(res?.status()).toBe(401);
  });

  it('opens on the GPU view with a clear no-GPU state', async () => {
    await page.goto(url);
    await page.getByTestId('view-gpus').waitFor();
    // The GPUs view fills when env.describe answers: nvidia-smi, `nvcc --version` (up to its 20 s
    // limit) and systeminformation, all slow on CI's loaded 2 cores (this step took 30 s there once).
    await expect.poll(() => page.getByTestId('no-gpu').or(page.getByTestId('gpu-table')).count(), { timeout: 90_000 }).toBeGreaterThan(0);
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
    await expect.poll(() => name.inputValue()).toBe('axpy');
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

  it('the manifest form follows the open task: switching tasks writes nothing; an edit changes one line', async () => {
    const softmax = fs.readFileSync(path.join(ROOT, 'resources', 'tasks', 'softmax', 'task.yaml'), 'utf8');
    await openTaskTab('softmax', 'manifest');
    expect(await page.getByTestId('tunable-TPR').inputValue()).toBe('1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024');
    // Focus softmax's fields, then switch: reduce_sum's form must show reduce_sum's own values, and
    // clicking in and out of its fields must not write softmax's into its manifest (issue 16).
    await page.getByTestId('tunable-BLOCK').click();
    await page.getByTestId('task-reduce_sum').click();
    await expect.poll(() => page.getByTestId('manifest-form').getAttribute('data-task')).toContain('reduce_sum');
    expect(await page.getByTestId('tunable-TPR').count()).toBe(0);
    expect(await page.getByTestId('tunable-BLOCK').inputValue()).toBe('128, 256, 512, 1024');
    await page.getByTestId('tunable-BLOCK').click();
    await page.getByTestId('manifest-restrictions').click();
    await page.getByTestId('manifest-name').click();
    expect(await page.getByTestId('manifest-changes').innerText()).toBe('no unsaved changes');
    expect(await page.getByTestId('manifest-restrictions').inputValue()).not.toContain('TPR');
    // An edit rewrites only its own value, in its own style (flow list, comment kept).
    await page.getByTestId('task-softmax').click();
    await expect.poll(() => page.getByTestId('manifest-form').getAttribute('data-task')).toContain('softmax');
    await page.getByTestId('tunable-VEC').fill('1, 2');
    await page.getByTestId('manifest-name').click();
    const line = softmax.split('\n').findIndex((l) => l.trimStart().startsWith('VEC:')) + 1;
    await expect.poll(() => page.getByTestId('manifest-changes').innerText()).toMatch(new RegExp(`^unsaved: line ${line}: VEC: \\[1, 2\\] +# floats per vector load$`));
    // Without a GPU, Evaluate is off and says why.
    expect(await page.getByTestId('evaluate').isDisabled()).toBe(true);
    expect(await page.getByTestId('evaluate-why').innerText()).toContain('no NVIDIA GPU');
    // ... and so is its precise timing, offered beside it.
    expect(await page.getByTestId('evaluate-precise').isDisabled()).toBe(true);
  });

  it('the error banner goes when another task is opened', async () => {
    await page.getByTestId('open-folder-path').fill('/nonexistent/kd-task');
    await page.getByTestId('open-folder').click();
    await page.getByTestId('error').waitFor();
    expect(await page.getByTestId('error').innerText()).toContain('/nonexistent/kd-task');
    await page.getByTestId('task-axpy').click();
    await expect.poll(() => page.getByTestId('error').count()).toBe(0);
  });

  it("names a task's islands (transpose's REG4 configurations) in the list and the task's head", async () => {
    await expect.poll(() => page.getByTestId('task-islands-transpose').count()).toBe(1);
    expect(await page.getByTestId('task-islands-softmax').count()).toBe(0);
    await page.getByTestId('task-transpose').click();
    const note = page.getByTestId('space-islands');
    await note.waitFor();
    expect(await note.innerText()).toMatch(/116 of 924 configurations \(.*REG4=1\) lie in 1 island/);
    await shot('tasks-islands');
    await shotNarrow('tasks-islands-1024');
    await page.getByTestId('task-softmax').click();
    await expect.poll(() => page.getByTestId('space-islands').count()).toBe(0);
  });

  it('starts a REPLAY run of the contrastive optimiser; the tree grows, and the best tag, summary and progress follow each result as it arrives', async () => {
    // Issue 16: during a run the best tag stayed on v1 while 3.03× existed, the summary said 0/1 at
    // 15/60, and the bar lagged its text. The page records every run.result and run.state frame as
    // it handles it, and what the run view shows at every frame (a tall window: every row of the
    // tree, so the best tag, is in the DOM); afterwards each frame is checked against the results
    // that had arrived LIVE_BOUND_MS before it.
    await page.addInitScript(LIVE_PROBE);
    await page.setViewportSize({ width: 1440, height: 2400 });
    try {
      await liveRun();
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 }); // whatever happened, the next tests get the usual window
    }
    expect(await page.getByTestId('replay-badge').innerText()).toContain('REPLAY');
    expect(await page.getByTestId('tree-count').innerText()).toMatch(/^\d+ of (6\d|5\d) variants/);
    await shot('run-tree');
  });

  async function liveRun(): Promise<void> {
    await page.goto(url);
    await page.getByTestId('nav-run').click();
    await page.getByTestId('run-task').selectOption('axpy');
    await page.getByTestId('run-strategy').selectOption('contrastive');
    const backend = page.getByTestId('run-backend');
    const replay = await backend.locator('option', { hasText: 'REPLAY: h200/axpy.json' }).first().getAttribute('value');
    expect(replay).toBeTruthy();
    expect(replay).toContain(path.join('bench', 'spaces', 'h200', 'axpy.json'));
    await backend.selectOption(replay!);
    await page.getByTestId('run-budget').fill('60');
    await page.evaluate('window.__kdProbe.start()');
    await page.getByTestId('run-start').click();
    const rows = page.getByTestId('tree-row');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBeGreaterThan(3);
    await expect.poll(() => page.getByTestId('progress-text').innerText(), { timeout: 60_000 }).toContain('finished');
    const live = await page.evaluate<LiveProbe>('window.__kdProbe.stop()');
    const { problems, frames, bestMoves } = liveProblems(live);
    const span = live.results.length ? live.results[live.results.length - 1].t - live.results[0].t : 0;
    console.log(`e2e: live run: ${live.results.length} results over ${span.toFixed(0)} ms, ${live.frames.length} frames sampled; the best checked on ${frames} frames, shown on ${bestMoves} variants in turn; ${problems.length} problems`);
    expect(problems.slice(0, 8), problems.slice(0, 30).join('\n')).toEqual([]);
  }

  it('the run view is rebuilt after a reload: its log from the journal, its form from the session', async () => {
    const id = await page.getByTestId('session-picker').inputValue();
    const bestBefore = await page.getByTestId('progress-best').innerText();
    expect(bestBefore).toMatch(/^\d+\.\d+× .* \(v\d+\)$/);
    // The best tag sits on the variant the summary names. The tree is virtualised: scroll until the best's row is drawn.
    const tree = page.getByTestId('variant-tree');
    for (let i = 0; i < 60 && !(await page.getByTestId('best-tag').count()); i++) await tree.evaluate((el) => { el.scrollTop += el.clientHeight / 2; });
    expect(bestBefore).toContain(`(${await page.getByTestId('best-tag').locator('xpath=..').getAttribute('data-variant')})`);
    await page.reload();
    await page.getByTestId('nav-run').click();
    await expect.poll(() => page.getByTestId('session-picker').inputValue()).toBe(id);
    await expect.poll(() => page.getByTestId('run-log').innerText(), { timeout: 15_000 }).toMatch(/axpy, contrastive, budget 60, .*\(from the journal\)/);
    expect(await page.getByTestId('run-log').innerText()).not.toContain('no log lines');
    expect(await page.getByTestId('run-task').inputValue()).toBe('axpy');
    expect(await page.getByTestId('run-backend').inputValue()).toContain(path.join('bench', 'spaces', 'h200', 'axpy.json'));
    expect(await page.getByTestId('progress-text').innerText()).toMatch(/^finished · 60\/60/);
    expect(await page.getByTestId('progress-best').innerText()).toBe(bestBefore);
  });

  it('the lineage is a tree (depth > 1); arrows move, Space marks A and B, Enter opens', async () => {
    const m = /depth (\d+)/.exec(await page.getByTestId('tree-count').innerText());
    expect(Number(m![1])).toBeGreaterThan(1);
    expect(await page.locator('[data-testid="tree-row"][data-depth="2"]').count()).toBeGreaterThan(0);
    const first = page.getByTestId('tree-row').first();
    await first.click();
    const selected = () => page.locator('[data-testid="tree-row"][aria-selected="true"]').getAttribute('data-variant');
    expect(await selected()).toBe('v1');
    // ← folds the baseline's subtree (everything else hangs under it), → unfolds it.
    const shown = await page.getByTestId('tree-row').count();
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => page.getByTestId('tree-row').count()).toBe(1);
    expect(await first.getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.getByTestId('tree-row').count()).toBe(shown);
    await page.keyboard.press('ArrowDown');
    await expect.poll(selected).toBe(await page.getByTestId('tree-row').nth(1).getAttribute('data-variant'));
    await page.keyboard.press('Space');
    const a = await selected();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Space');
    const b = await selected();
    expect(b).not.toBe(a);
    expect(await page.getByTestId('mark-A').locator('xpath=..').getAttribute('data-variant')).toBe(a);
    expect(await page.getByTestId('mark-B').locator('xpath=..').getAttribute('data-variant')).toBe(b);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await expect.poll(selected).toBe(a);
    await page.keyboard.press('Enter');
    await page.getByTestId('view-variants').waitFor();
    await expect.poll(() => page.getByTestId('variant-panel').locator('h3').innerText()).toContain(a!);
  });

  it('selects a variant in the tree: its lineage from the baseline, facts and a diff against its parent', async () => {
    await page.getByTestId('tree-status').selectOption('timed');
    const deep = page.locator('[data-testid="tree-row"][data-depth="2"]').first();
    const id = await deep.getAttribute('data-variant');
    await deep.click();
    await page.getByTestId('variant-panel').waitFor();
    await expect.poll(() => page.getByTestId('lineage-path').innerText()).toMatch(new RegExp(`^v1 → v\\d+ → ${id}`));
    expect(await page.getByTestId('variant-facts').innerText()).toContain('REPLAY');
    await page.getByTestId('vtab-diff').click();
    // Tuning-only variants share the source text: the diff says so and shows the -D values instead.
    await page.getByTestId('same-source').or(page.locator('.monaco-diff-editor')).first().waitFor();
    if (await page.getByTestId('same-source').count()) expect(await page.getByTestId('same-source').locator('tr.differs').count()).toBeGreaterThan(0);
    await page.getByTestId('tree-status').selectOption('all');
    await shot('variant-tree');
  });

  it('"Compare as A" asks for B and offers choices; the pair compares with a delta per metric', async () => {
    const id = await page.getByTestId('variant-panel').locator('h3').innerText();
    // No B chosen (cleared): Compare as A must not leave a blank page.
    await page.getByTestId('nav-compare').click();
    await page.getByTestId('compare-b').selectOption('');
    await page.getByTestId('nav-variants').click();
    await page.getByTestId('compare-as-a').click();
    await page.getByTestId('view-compare').waitFor();
    expect(await page.getByTestId('compare-a').inputValue()).toBe(id.split(' ')[0]);
    const hint = page.getByTestId('compare-pick-hint');
    await hint.waitFor();
    expect(await hint.innerText()).toContain('Pick B');
    expect(await hint.getByTestId('empty-action').first().innerText()).toMatch(/^B = the baseline \(v1\)$/);
    await hint.getByTestId('empty-action').first().click();
    const verdict = page.getByTestId('compare-verdict');
    await expect.poll(() => verdict.innerText()).toMatch(/A is (faster|slower|same|unsure): \d+\.\d+× \[\d+\.\d+, \d+\.\d+\] 95% CI/);
    // The delta column: A − B of the medians, with its sign and the relative change.
    const cells = await page.getByTestId('compare-table').locator('tbody tr').first().locator('td').allInnerTexts();
    const us = (t: string): number => (t.endsWith(' µs') ? Number(t.slice(0, -3)) : Number(t.replace(' ms', '')) * 1000);
    const [ta, tb] = [us(cells[1]), us(cells[2])];
    const d = await page.getByTestId('delta-time').innerText();
    const dm = /^([+−±])(\d+\.\d+) (µs|ms) \(([+−±])(\d+\.\d+)%\)$/.exec(d);
    expect(dm, d).not.toBeNull();
    expect(dm![1]).toBe(ta > tb ? '+' : ta < tb ? '−' : '±');
    expect(Number(dm![2]) * (dm![3] === 'ms' ? 1000 : 1)).toBeCloseTo(Math.abs(ta - tb), 0);
    expect(Number(dm![5])).toBeCloseTo((Math.abs(ta - tb) / tb) * 100, 0);
  });

  it('compares the best with its last duel opponent: distributions, ratio with CI, verdict and prediction', async () => {
    // Re-opening the session clears the pair: Compare then defaults to the best and its opponent.
    const id = await page.getByTestId('session-picker').inputValue();
    await page.getByTestId('session-picker').selectOption('');
    await page.getByTestId('session-picker').selectOption(id);
    await page.getByTestId('nav-compare').click();
    const verdict = page.getByTestId('compare-verdict');
    await verdict.waitFor();
    await expect.poll(() => verdict.innerText()).toMatch(/A is (faster|slower|same|unsure): \d+\.\d+× \[\d+\.\d+, \d+\.\d+\] 95% CI/);
    expect(await page.getByTestId('compare-table').innerText()).toContain('registers');
    // The default pair is the best variant and the opponent it dueled: the preference model's
    // prediction for that pair, recorded before the duel, is shown beside the measured verdict; a
    // REPLAY duel is labelled as resampled from the recording, not as a GPU duel.
    await expect.poll(() => page.getByTestId('compare-prediction').innerText()).toMatch(/Preference model: P\(A faster\) = \d+% \(preference model v\d+ \(trained on \d+ pairs\), before the duel\)/);
    expect(await page.getByTestId('compare-method').innerText()).toBe('(REPLAY: duel resampled from the recorded space)');
    expect(await page.getByTestId('distributions').locator('[data-testid="box-A"], [data-testid="box-B"]').count()).toBe(2);
    expect(await page.getByTestId('dist-x-title').textContent()).toMatch(/^time per call \((µs|ms)(, log scale)?\)$/);
    await shot('compare');
  });

  it('plots best-so-far, rewards, parameter effects and the model', async () => {
    await page.getByTestId('nav-plots').click();
    await page.getByTestId('plots').waitFor();
    await page.locator('.recharts-line-curve').first().waitFor();
    // The baseline strategies replayed on the same recorded H200 space, beside the run's own curve.
    for (const name of ['random', 'anneal', 'genetic']) await page.getByText(`${name} (REPLAY, median of 5)`).first().waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('plot-importance').locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('pc-line').count()).toBeGreaterThan(10);
    await shot('plots');
    // A point names its variant on hover, and a click opens that variant.
    // (Found by its variant, not by position: the hovered point's active dot is one more plot-point.)
    const history = page.getByTestId('plot-history');
    const vid = await history.getByTestId('plot-point').nth(5).getAttribute('data-variant');
    const point = history.locator(`[data-testid="plot-point"][data-variant="${vid}"]`).first();
    await point.hover();
    await expect.poll(() => page.getByTestId('chart-tip').first().innerText()).toContain(vid!);
    await point.click();
    await page.getByTestId('view-variants').waitFor();
    await expect.poll(() => page.getByTestId('variant-panel').locator('h3').innerText()).toContain(vid!);
    // A click beside a point, off its dot, opens the evaluation the tooltip names there.
    await page.getByTestId('nav-plots').click();
    const other = await history.getByTestId('plot-point').nth(8).getAttribute('data-variant');
    const box = (await history.locator(`[data-testid="plot-point"][data-variant="${other}"]`).first().boundingBox())!;
    const grid = (await history.locator('.recharts-cartesian-grid').first().boundingBox())!;
    const y = box.y + box.height / 2 > grid.y + grid.height / 2 ? grid.y + 4 : grid.y + grid.height - 4;
    await page.mouse.move(box.x + box.width / 2, y);
    await expect.poll(() => page.getByTestId('chart-tip').first().innerText()).toContain(other!);
    await page.mouse.click(box.x + box.width / 2, y);
    await page.getByTestId('view-variants').waitFor();
    await expect.poll(() => page.getByTestId('variant-panel').locator('h3').innerText()).toContain(other!);
  });

  it('the command palette (Ctrl+Shift+P) goes to views and runs commands; disabled ones say why', async () => {
    await page.keyboard.press('Control+Shift+P');
    const input = page.getByTestId('palette-input');
    await input.waitFor();
    await input.fill('go to plots');
    await page.keyboard.press('Enter');
    await page.getByTestId('view-plots').waitFor();
    await expect.poll(() => input.count()).toBe(0);
    await page.keyboard.press('Control+Shift+P');
    await input.fill('run: stop');
    const stop = page.locator('[data-testid="palette-item"][data-command="run:stop"]');
    expect(await stop.getAttribute('aria-disabled')).toBe('true');
    expect(await stop.innerText()).toContain('no run in progress');
    await input.fill('open the best variant');
    await page.keyboard.press('Enter');
    await page.getByTestId('view-variants').waitFor();
    await expect.poll(() => page.getByTestId('variant-panel').locator('h3').innerText()).toMatch(/^v\d+/);
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
    // A REPLAY session cannot be confirmed: the button is off and says why.
    expect(await page.getByTestId('export-confirm').isDisabled()).toBe(true);
    expect(await page.getByTestId('export-confirm-blocked').innerText()).toMatch(/Not available: a REPLAY session: its times come from .*axpy/);
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
    // Compile-only: nothing is timed, and the summary says so (not "best - -").
    expect(await page.getByTestId('progress-best').innerText()).toMatch(/^not timed \(compile-only: \d+ built, \d+ failed\)$/);
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
    await page.getByTestId('vtab-llm').click();
    const parts = page.getByTestId('llm-parts');
    await parts.waitFor();
    expect(await page.getByTestId('llm-analysis').innerText()).toContain('memory bound');
    expect(await page.getByTestId('llm-design').innerText()).toContain('float4');
    expect(await page.getByTestId('llm-code').innerText()).toMatch(/\d+ lines/);
    await page.getByTestId('vtab-source').click();
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
    // The run form follows this session: matmul, replayed from the benchmark's recorded results.
    await page.getByTestId('nav-run').click();
    expect(await page.getByTestId('run-task').inputValue()).toBe('matmul');
    expect(await page.getByTestId('run-backend').inputValue()).toMatch(/^rec:.*h200-foundation\.json$/);
  });

  it("a variant's panel says where its evaluation's time went, the capture process's phases included (real H200 stages, REPLAY-labelled)", async () => {
    const { id } = h200StagesSession({ home, root: ROOT });
    await page.goto(url);
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${id}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('session-picker').selectOption(id);
    await page.getByTestId('nav-variants').click();
    await page.locator('[data-testid="tree-row"][data-variant="v1"]').click();
    const spent = page.getByTestId('variant-time-spent');
    await spent.waitFor();
    const text = await spent.innerText();
    // As recorded: queued 31 ms, capture 379 ms, check 449 ms, timing 243 ms; the capture's CUDA context first.
    expect(text).toMatch(/build [\d.]+ s · queued for the GPU 31 ms · capture 379 ms · check 449 ms · timing 243 ms/);
    expect(text).toMatch(/capture process: CUDA context \d+ ms · exit \(teardown\) \d+ ms/);
    expect(await page.getByTestId('variant-facts').innerText()).toContain('REPLAY');
    await spent.scrollIntoViewIfNeeded();
    await shot('variant-time-spent');
    await shotNarrow('variant-time-spent-1024', () => spent.scrollIntoViewIfNeeded());
  });

  it('panes are resizable and keep their size after a reload; at 1024×700 nothing overflows sideways', async () => {
    await page.getByTestId('nav-variants').click();
    const list = page.getByTestId('pane-variants-list');
    await list.waitFor();
    const w0 = (await list.boundingBox())!.width;
    const handle = (await page.getByTestId('split-handle-variants-1').boundingBox())!;
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + 120, handle.y + handle.height / 2, { steps: 6 });
    await page.mouse.up();
    await expect.poll(async () => (await list.boundingBox())!.width).toBeGreaterThan(w0 + 80);
    const w1 = (await list.boundingBox())!.width;
    await page.reload();
    await page.getByTestId('nav-variants').click();
    await expect.poll(async () => Math.round((await page.getByTestId('pane-variants-list').boundingBox())!.width)).toBe(Math.round(w1));
    await page.setViewportSize({ width: 1024, height: 700 });
    // Elements of the view that reach past the window's right edge (scrolling lists, editors and charts clip their own content).
    const overflow = () => page.evaluate<string[]>(`[...document.querySelectorAll('.view, .view *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.tree-scroll, .table-scroll, .monaco-editor, .monaco-diff-editor, .recharts-wrapper')).map((el) => (el.tagName.toLowerCase() + '.' + el.getAttribute('class') + ' ' + (el.getAttribute('data-testid') ?? '')).slice(0, 80)).slice(0, 5)`);
    for (const [view, extra] of [['tasks', 'tab-manifest'], ['run', null], ['variants', null], ['compare', null], ['plots', null]] as const) {
      await page.getByTestId(`nav-${view}`).click();
      if (extra) await page.getByTestId(extra).click();
      await page.waitForTimeout(200);
      expect(await overflow(), view).toEqual([]);
      if (DOC_SHOTS) await shot(`${view}${extra ? '-manifest' : ''}-1024`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
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
    // The same session as a table: sorted by speedup, a click on a header sorts by that column.
    await page.getByTestId('mode-table').click();
    const tcount = page.getByTestId('table-count');
    await expect.poll(() => tcount.innerText()).toBe('5001 of 5001 variants · sorted by speedup ↓');
    expect(await page.getByTestId('table-row').count()).toBeLessThan(120);
    const firstSpeed = async (): Promise<number> => Number((await page.getByTestId('table-row').first().locator('[role="gridcell"]').nth(1).innerText()).replace('×', ''));
    const top = await firstSpeed();
    await page.getByTestId('th-speedup').click();
    await expect.poll(() => tcount.innerText()).toContain('sorted by speedup ↑');
    expect(await firstSpeed()).toBeLessThan(top);
    await page.getByTestId('th-cfg:BLOCK').click();
    await expect.poll(() => tcount.innerText()).toContain('sorted by BLOCK ↓');
    expect(await page.getByTestId('table-row').first().locator('[role="gridcell"]').nth(5).innerText()).toBe('1024');
    await page.getByTestId('mode-tree').click();
  }, 300_000);

  it.skipIf(NO_NVCC)('a compiler message jumps to its line in the editor', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-axpy').click();
    await page.getByTestId('tab-kernel').click();
    const ed = page.locator('.monaco-editor .view-lines').first();
    await expect.poll(() => ed.innerText()).toContain('axpy');
    await ed.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    // The line goes in as one insertion, not key by key: typed under load, Monaco's suggestion widget
    // once took "broken" out of it (CI, 2026-12-01: "int kd_ = ;"). Escape closes any widget.
    await page.keyboard.insertText('int kd_broken = ;');
    await page.keyboard.press('Escape');
    // The typed line must be in the editor (the cursor is on it, so it is drawn): a lost key would
    // leave a source that builds, and no message would ever come.
    await expect.poll(() => ed.innerText(), { message: 'the typed line "int kd_broken = ;" is not in the editor', timeout: 15_000 }).toContain('kd_broken');
    const line = Number(/Ln (\d+)/.exec(await page.getByTestId('editor-status').innerText())![1]);
    // Pressed again while the status is not there yet (idempotent): under load a key pressed while
    // Monaco was still closing its widget was seen lost.
    await expect.poll(async () => {
      await page.keyboard.press('Control+Home');
      return page.getByTestId('editor-status').innerText();
    }).toMatch(/^Ln 1, Col 1/);
    // nvcc on a loaded 2-core machine (another test file compiling beside it) took over 90 s once;
    // four times in CI no message came in 170 s at all: the server's first `nvcc --version` had timed
    // out (20 s) under that load and the toolchain cache kept the failure, so every build failed with
    // it (found 2026-12-07 by this failure's message; since then a timed-out answer is not cached). The
    // build is asked for again (idempotent: the same source) every 60 s while no message shows, within
    // the same 170 s.
    const until = Date.now() + 170_000;
    for (;;) {
      await page.getByTestId('build').click();
      const left = until - Date.now();
      const shown = await page.getByTestId('compiler-message').first().waitFor({ timeout: Math.max(1_000, Math.min(60_000, left)) }).then(() => true, () => false);
      if (shown) break;
      const result = await page.getByTestId('build-result').innerText().catch(() => '');
      if (/Build ok/.test(result)) throw new Error(`the build succeeded, so the typed error was not in the source it saw (${result.slice(0, 200)})`);
      // The error banner too: a build call that failed (its answer lost, a timeout) shows there, not in the
      // build pane (CI, 2026-12-07: "no result; busy: false" a third time, cause still not found).
      const banner = await page.getByTestId('error').first().innerText({ timeout: 1_000 }).catch(() => '');
      if (Date.now() >= until) {
        throw new Error(`no compiler message within 170 s (the build was asked for every 60 s; build pane: ${result.slice(0, 200) || 'no result'}; error banner: ${banner.slice(0, 300) || 'none'}; busy: ${await page.getByTestId('build').isDisabled()}; `
          + `view: ${await tasksViewState()}; page errors: ${pageErrors.join(' | ') || 'none'}; console: ${consoleLines.slice(-10).join(' | ') || 'nothing'}; server stderr: ${serverStderr().slice(-1000) || 'nothing'})`);
      }
    }
    expect(await page.getByTestId('compiler-message').evaluateAll((els) => els.map((e) => e.getAttribute('data-line')))).toContain(String(line));
    const msg = page.locator(`[data-testid="compiler-message"][data-line="${line}"]`).first();
    await msg.click();
    await expect.poll(() => page.getByTestId('editor-status').innerText()).toMatch(new RegExp(`^Ln ${line}, `));
    // Monaco's own keys: F8 shows the next problem (nvcc's message as a marker), F1 its command palette.
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('F8');
    await page.locator('.marker-widget').first().waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget').first().waitFor();
    await page.keyboard.press('Escape');
    // Opening another task clears the failed build (and its banner).
    await page.getByTestId('task-softmax').click();
    await expect.poll(() => page.getByTestId('build-result').count()).toBe(0);
  }, 240_000);

  it('shows a timing\'s buffer sets: each set\'s median and their share of the median\'s uncertainty (synthetic samples)', async () => {
    const { id } = setsSession({ home, root: ROOT, cutVariant: true });
    await page.goto(url);
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${id}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('nav-variants').click();
    await page.getByTestId('session-picker').selectOption(id);
    await page.locator('[data-testid="tree-row"][data-variant="v1"]').click();
    const sets = page.getByTestId('variant-sets');
    await sets.waitFor();
    expect(await sets.innerText()).toMatch(/150\.00 µs · 165\.00 µs · 135\.00 µs · 150\.00 µs .*their mean's sd is 4\.08% of the median: placement, which the interval above leaves out and more samples do not shrink/);
    await shot('variant-sets');
    // A timing stopped at its cutoff (optimize --time-cutoff) says so beside its time.
    await page.locator('[data-testid="tree-row"][data-variant="v3"]').click();
    const cut = page.getByTestId('variant-cutoff');
    await cut.waitFor();
    expect(await cut.innerText()).toMatch(/timing stopped early at the cutoff 450\.00 µs \(15 samples\): decidedly slower than the best, so no precise time/);
    // Where its timing's wall time went, as the judge reports it: mostly verifying against the reference.
    expect(await page.getByTestId('variant-timing-parts').innerText()).toBe("timing: waiting for the judge's spare executors 5 ms · set-up (buffer sets, warm-up) 40 ms · verifying against the reference 70 ms · samples 5 ms");
    expect(await page.getByTestId('variant-check-parts').innerText()).toBe('check: getting an executor 15 ms · every size and seed 8 ms');
    await shot('variant-cutoff');
    await shotNarrow('variant-cutoff-1024');
    // A duel over buffer sets: the Compare view gives its interval over the pairs and the
    // placements beside the verdict, and says when the placements alone could make the difference.
    await page.getByTestId('nav-compare').click();
    await page.getByTestId('compare-a').selectOption('v2');
    await page.getByTestId('compare-b').selectOption('v1');
    // The default pair (the best against its duel's opponent) may show first: wait for v2 against v1.
    await expect.poll(() => page.getByTestId('compare-verdict').innerText()).toMatch(/A is faster: 1\.012× \[1\.011, 1\.013\] 95% CI/);
    const placements = page.getByTestId('compare-placements');
    expect(await placements.innerText()).toMatch(/^over the pairs and the buffer placements 0\.99\d\d–1\.02\d\d \(95%; the placements' sd 0\.75% over 4 buffer sets, which more pairs do not shrink\): this interval holds 1, so the buffer placements alone could make this difference$/);
    await shot('compare-placements');
    await shotNarrow('compare-placements-1024');
  });

  it('a REPLAY run on 2 SIMULATED GPUs shows each GPU\'s activity: state, results, evaluations a minute, busy share (issue 19\'s panel)', async () => {
    await page.goto(url);
    // The newest session opens by itself and the run form follows it (its task) once loaded: wait for
    // that, then close it, so the form keeps what is chosen below.
    await expect.poll(() => page.getByTestId('session-picker').inputValue(), { timeout: 30_000 }).not.toBe('');
    await page.getByTestId('session-picker').selectOption('');
    await page.getByTestId('nav-run').click();
    await page.getByTestId('run-task').selectOption('axpy');
    await page.getByTestId('run-strategy').selectOption('random');
    const backend = page.getByTestId('run-backend');
    const replay = await backend.locator('option', { hasText: 'REPLAY: h200/axpy.json' }).first().getAttribute('value');
    await backend.selectOption(replay!);
    await page.getByTestId('run-simulate-gpus').fill('2');
    expect(await page.getByTestId('run-replay-note').innerText()).toContain('by 2 SIMULATED GPUs');
    await page.getByTestId('run-budget').fill('80');
    await page.getByTestId('run-start').click();
    const panel = page.getByTestId('gpu-activity');
    await panel.waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('progress-text').innerText(), { timeout: 60_000 }).toMatch(/^finished · 80\/80/);
    const rows = await panel.locator('tbody tr').allInnerTexts();
    expect(rows).toHaveLength(2);
    // Both simulated GPUs measured part of the 80 (and the baseline), and say so.
    const results = rows.map((r) => Number(r.split('\t')[3]));
    expect(results.every((n) => n > 0), rows.join('\n')).toBe(true);
    expect(results[0] + results[1]).toBeGreaterThanOrEqual(80);
    expect(await panel.innerText()).toMatch(/SIMULATED/);
    await shot('run-simulated-gpus');
    await shotNarrow('run-simulated-gpus-1024');
  });

  it('shows a session\'s confirmation in the Export view: the precise medians, speedups with their intervals, a changed ranking, a tie and its duel (FIXTURE results)', async () => {
    const { id } = confirmSessionFixture({ home, root: ROOT });
    await page.goto(url);
    await expect.poll(() => page.getByTestId('session-picker').locator(`option[value="${id}"]`).count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('session-picker').selectOption(id);
    await page.getByTestId('nav-export').click();
    const table = page.getByTestId('confirm-table');
    await table.waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows.map((r) => r.split(/\s+/)[0])).toEqual(['v0', 'v2', 'v1']);
    expect(rows[1]).toMatch(/160\.60 µs\s+159\.80 µs ±0\.04% · placements' sd 0\.00%\s+1\.747× \(1\.736–1\.757\)/);
    expect(await page.getByTestId('confirm-note').allInnerTexts()).toEqual([
      expect.stringMatching(/^Confirmed best: v2, 1\.747× the baseline \(precise timing on FIXTURE \(no GPU ran: hand-written results\), 15000 samples over 16 placements in 4 executors; /),
      'The search ranked v1 first; the precise timing ranks v2 first, so "Best variant" exports v2.',
      'v1 is within 0.50% of v2: separate precise timings of these variants spread that much (their buffer placements), so it is tied with it.',
      'Duel of v2 against v1 (412 interleaved pairs in one process): v2 is faster by 0.21%, within the duel\'s ±1% "same" band: v2\'s speed over v1\'s 1.0021× (95% interval 1.0008–1.0034 over the pairs and the buffer placements, whose sd is 0.05%; the pairs alone 1.0012–1.0030).',
    ]);
    expect(await page.getByTestId('export-best').innerText()).toContain('v2 (confirmed)');
    expect(await page.getByTestId('session-picker').locator(`option[value="${id}"]`).innerText()).toContain('confirmed 1.747×');
    await shot('export-confirmed');
    await shotNarrow('export-confirmed-1024');
    // Confirming again needs a GPU of the session's model: here there is none, and the error says so.
    await page.getByTestId('export-confirm').click();
    await page.getByTestId('error').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('error').innerText()).toContain(`no usable NVIDIA GPU here: session ${id} was measured on FIXTURE (no GPU ran: hand-written results)`);
    await page.getByTestId('error').locator('button').click();
  });

  it('imports a Kernel Tuner cache from the task list (an upload to the server): listed as a REPLAY-only task; the same name again is replaced only if confirmed', async () => {
    // SYNTHETIC: a 4 x 4 Kernel Tuner cache with a formula for time (measured on no GPU).
    const kt = toyKernelTunerCache({ deviceName: 'SYNTHETIC GPU (e2e fixture)' });
    await page.goto(url);
    await page.getByTestId('nav-tasks').click();
    // The first task open in the editor: until then the list is drawn in a placeholder layout and moves into the
    // editor's panes when the task has loaded (a new element: a file set on the old input would be lost with it).
    await page.getByTestId('task-editor').waitFor({ timeout: 60_000 });
    await page.getByTestId('import-recording-file').setInputFiles({ name: 'ui-cache.json.gz', mimeType: 'application/gzip', buffer: gzipSync(Buffer.from(kt)) });
    await page.getByTestId('import-note').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('import-note').innerText()).toMatch(/^imported ui-cache\.json\.gz \(kernel-tuner cache\): ui-cache, 16 configurations \(0 failed\), 2 tunables, recorded on SYNTHETIC GPU \(e2e fixture\)\. REPLAY only/);
    await expect.poll(() => page.getByTestId('task-ui-cache').innerText()).toContain('REPLAY only');
    // Written where `kernelduel import` writes, in the server's KERNELDUEL_HOME.
    expect(fs.existsSync(path.join(home, 'spaces', 'synthetic-gpu-e2e-fixture', 'ui-cache.json'))).toBe(true);
    // Opened in the editor's layout (the list moved with it, see above) before the next file is set.
    await expect.poll(() => page.locator('.task-head h2').innerText().catch(() => ''), { timeout: 30_000 }).toBe('ui-cache');
    // Its recording is not validated as a task.yaml (it is none): no issue count on its tab.
    await page.waitForTimeout(600);
    expect(await page.getByTestId('tab-manifest').locator('.count').count()).toBe(0);
    // Nothing to build or evaluate: its help line says what a recorded space is for instead.
    expect(await page.getByTestId('build').count()).toBe(0);
    expect(await page.getByTestId('replay-help').innerText()).toMatch(/nothing to build or evaluate/);
    // In place of an empty editor: the recording's configurations, fastest first (the fixture's formula: 64 x 2).
    expect(await page.getByTestId('recorded-table').locator('p').innerText()).toMatch(/^As recorded on SYNTHETIC GPU \(e2e fixture\) \(REPLAY data: no GPU ran here\): 16 configurations, 0 failed\. The fastest 16, by mean time \(Kernel Tuner's objective, as recorded\):/);
    expect(await page.getByTestId('recorded-table').locator('tbody tr').first().innerText()).toMatch(/^1\s+64\s+2\s+1\.000\s+100\.0%/);
    expect(await page.getByTestId('recorded-table').locator('tr.baseline').innerText()).toMatch(/\s16\s+1\s+2\.000\s+50\.0%\s+baseline$/);
    await shot('import-recording');
    // The same file again: the server refuses to replace it unless confirmed (the dialog answered no here).
    page.once('dialog', (d) => void d.dismiss());
    await page.getByTestId('import-recording-file').setInputFiles({ name: 'ui-cache.json', mimeType: 'application/json', buffer: Buffer.from(kt) });
    await expect.poll(() => page.getByTestId('error').innerText().catch(() => ''), { timeout: 30_000 }).toMatch(/a recorded space named ui-cache already exists/);
    await shotNarrow('import-recording-refused-1024');
  });
});
