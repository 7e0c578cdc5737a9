// The workbench at scale (issue 16): a 20,000-variant session in the variant tree and the table, in
// browser mode against the real backend, driven with playwright-core and Debian's Chromium. Times
// from the user's action to the answer on screen (open the session, scroll, filter, switch to the
// table, sort by a column), the rows in the DOM (virtualised), and the longest main-thread task the
// browser reported in each step (PerformanceObserver 'longtask': > 50 ms blocks input).
//   npx tsx bench/workbench-scale.ts [--variants 20000] [--label "..."]
// Writes bench/results/workbench-scale-<label or host>.json. The session is SYNTHETIC (test fixture
// timings answered by the ReplayMeasurer, every result labelled REPLAY); no GPU is involved.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureRendererBuilt, ROOT } from '../test/e2e/build-renderer.js';
import { startServe } from '../test/e2e/serve.js';
import { bigReplaySession } from '../test/fixtures/big-session.js';

const { values: args } = parseArgs({ options: { variants: { type: 'string', default: '20000' }, label: { type: 'string', default: '' } } });
const N = Number(args.variants);
if (!Number.isInteger(N) || N < 10) throw new Error(`--variants: expected an integer of at least 10, got "${args.variants}"`);
const CHROMIUM = process.env.KERNELDUEL_CHROMIUM ?? '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KERNELDUEL_CHROMIUM)`);
const log = (s: string): void => void process.stderr.write(s + '\n');

ensureRendererBuilt();
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-scale-'));
const load = Number(os.loadavg()[0].toFixed(2));
const t0 = Date.now();
const big = await bigReplaySession({ home, taskDir: path.join(ROOT, 'resources', 'tasks', 'axpy'), variants: N });
log(`made a ${N}-variant synthetic REPLAY session in ${Date.now() - t0} ms`);
const { server, url } = await startServe(home);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const steps: Record<string, { ms: number; longestTaskMs: number; rowsInDom?: number; note?: string }> = {};
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(`window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask', buffered: true });`);
  await page.goto(url);
  await page.getByTestId('nav-variants').click();
  await page.getByTestId('session-picker').locator(`option[value="${big.id}"]`).waitFor({ state: 'attached', timeout: 30_000 });
  const longest = async (): Promise<number> => page.evaluate<number>('(() => { const m = Math.max(0, ...window.__long); window.__long = []; return Math.round(m); })()');
  const step = async (name: string, act: () => Promise<unknown>, done: () => Promise<unknown>, rows?: string, note?: string): Promise<void> => {
    await longest();
    const s = Date.now();
    await act();
    await done();
    const ms = Date.now() - s;
    await page.waitForTimeout(300); // long tasks still being reported
    steps[name] = { ms, longestTaskMs: await longest(), ...(rows ? { rowsInDom: await page.getByTestId(rows).count() } : {}), ...(note ? { note } : {}) };
    log(`${name}: ${JSON.stringify(steps[name])}`);
  };
  const all = `${N + 1} of ${N + 1} variants`;
  const text = (id: string) => async (want: string | RegExp): Promise<void> => {
    const el = page.getByTestId(id);
    for (let i = 0; i < 600; i++) {
      const t = await el.innerText().catch(() => '');
      if (typeof want === 'string' ? t.startsWith(want) : want.test(t)) return;
      await page.waitForTimeout(50);
    }
    throw new Error(`${id} never showed ${String(want)}`);
  };
  await step('open session (tree)', () => page.getByTestId('session-picker').selectOption(big.id), async () => { await text('tree-count')(all); await page.getByTestId('tree-row').first().waitFor(); }, 'tree-row', 'includes sessions.get over the WebSocket');
  const tree = page.getByTestId('variant-tree');
  await step('tree: 10 scroll jumps to the end', async () => {
    for (let i = 1; i <= 10; i++) await tree.evaluate((el, f) => { el.scrollTop = el.scrollHeight * f; }, i / 10);
  }, () => page.getByTestId('tree-row').last().waitFor(), 'tree-row');
  const row = page.getByTestId('tree-row').nth(5);
  const vid = (await row.getAttribute('data-variant'))!;
  await step(`tree: click a variant (${vid}) until its detail shows`, () => row.click(), () => page.getByTestId('variant-panel').locator('h3', { hasText: new RegExp(`^${vid}\\b`) }).waitFor(), 'tree-row', 'variants.get over the WebSocket');
  const ids = await page.getByTestId('tree-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-variant')));
  const next = ids[ids.indexOf(vid) + 1]!;
  await step(`tree: down arrow to the next variant (${next}) until its detail shows`, () => page.keyboard.press('ArrowDown'), () => page.getByTestId('variant-panel').locator('h3', { hasText: new RegExp(`^${next}\\b`) }).waitFor(), 'tree-row');
  await step('tree: filter "BLOCK=1024 VEC=4"', () => page.getByTestId('tree-search').fill('BLOCK=1024 VEC=4'), () => text('tree-count')(/^\d+ of /), 'tree-row');
  await page.getByTestId('tree-search').fill('');
  await text('tree-count')(all);
  await step('switch to the table (sorted by speedup)', () => page.getByTestId('mode-table').click(), () => text('table-count')(`${all} · sorted by speedup ↓`), 'table-row');
  await step('table: sort by time', () => page.getByTestId('th-time').click(), () => text('table-count')(/sorted by time/), 'table-row');
  await step('table: sort by BLOCK', () => page.getByTestId('th-cfg:BLOCK').click(), () => text('table-count')(/sorted by BLOCK/), 'table-row');
  const table = page.getByTestId('variant-table');
  await step('table: 10 scroll jumps to the end', async () => {
    for (let i = 1; i <= 10; i++) await table.evaluate((el, f) => { el.scrollTop = el.scrollHeight * f; }, i / 10);
  }, () => page.getByTestId('table-row').last().waitFor(), 'table-row');
  await step('table: filter status failed', () => page.getByTestId('tree-status').selectOption('failed'), () => text('table-count')(/^\d+ of /), 'table-row');
} finally {
  await browser.close();
  server.kill('SIGTERM');
  fs.rmSync(home, { recursive: true, force: true });
}
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();
const name = (args.label || os.hostname()).replace(/[^\w.-]+/g, '-');
const out = path.join(ROOT, 'bench', 'results', `workbench-scale-${name}.json`);
fs.writeFileSync(out, JSON.stringify({
  what: `the workbench's variant tree and table with a ${N}-variant session: action to answer on screen, rows in the DOM, longest main-thread task`,
  data: 'SYNTHETIC REPLAY session (test fixture timings from test/fixtures/spaces/synthetic.ts, answered by the ReplayMeasurer); no GPU involved',
  machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), loadAtStart: load },
  browser: `${CHROMIUM} (headless), 1440x900`,
  date: new Date().toISOString(),
  commit,
  command: `npx tsx bench/workbench-scale.ts --variants ${N}${args.label ? ` --label "${args.label}"` : ''}`,
  variants: N,
  steps,
}, null, 2) + '\n');
log(`wrote ${path.relative(ROOT, out)}`);
