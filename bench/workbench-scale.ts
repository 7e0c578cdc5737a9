// The workbench at scale (issue 16): a 20,000-variant session in the variant tree and the table, in
// browser mode against the real backend, driven with playwright-core and Debian's Chromium. Times
// from the user's action to the answer on screen (open the session, scroll, filter, switch to the
// table, sort by a column), the rows in the DOM (virtualised), and the longest main-thread task the
// browser reported in each step (PerformanceObserver 'longtask': > 50 ms blocks input); for an open,
// when sessions.get's reply arrived and its size.
//   npx tsx bench/workbench-scale.ts [--variants 20000] [--label "..."]
// Writes bench/results/workbench-scale-<label or host>.json. The session is SYNTHETIC (test fixture
// timings answered by the ReplayMeasurer, every result labelled REPLAY); no GPU is involved.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { checkoutCommit } from './lib/results-file.js';
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
// A small session, newer: the one the app opens by itself at start, so the big one's first open is measured cold.
await new Promise((r) => setTimeout(r, 1100));
await bigReplaySession({ home, taskDir: path.join(ROOT, 'resources', 'tasks', 'axpy'), variants: 10 });
const { server, url } = await startServe(home);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const steps: Record<string, { ms: number; longestTaskMs: number; rowsInDom?: number; note?: string; replyAfterMs?: number; replyBytes?: number }> = {};
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  // Long tasks (> 50 ms on the main thread: input waits), and the arrival and size of every
  // sessions.get reply on the WebSocket (the page's own socket, wrapped before the app starts).
  await page.addInitScript(`
    window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask', buffered: true });
    window.__replies = []; const W = window.WebSocket; const sent = new Map();
    window.WebSocket = class extends W {
      constructor(...a) {
        super(...a);
        this.addEventListener('message', (m) => { const id = /^[{]"id":([0-9]+),"reply"/.exec(String(m.data).slice(0, 40)); if (id && sent.has(id[1])) window.__replies.push({ at: performance.now(), bytes: String(m.data).length, method: sent.get(id[1]) }); });
      }
      send(d) { try { const f = JSON.parse(d); sent.set(String(f.id), f.method); } catch {} return super.send(d); }
    };`);
  await page.goto(url);
  await page.getByTestId('nav-variants').click();
  await page.getByTestId('session-picker').locator(`option[value="${big.id}"]`).waitFor({ state: 'attached', timeout: 30_000 });
  // The app opens the newest session (the small one) by itself: let that settle and close it, so the
  // step below measures one open of the big session, its first, from a page with no session open
  // (until 2026-12-01 the app's own open of the big session overlapped the measured one).
  await page.getByTestId('tree-count').waitFor({ timeout: 60_000 });
  await page.getByTestId('session-picker').selectOption('');
  await page.getByTestId('no-session').waitFor();
  await page.waitForTimeout(500);
  const longest = async (): Promise<number> => page.evaluate<number>('(() => { const m = Math.max(0, ...window.__long); window.__long = []; return Math.round(m); })()');
  const step = async (name: string, act: () => Promise<unknown>, done: () => Promise<unknown>, rows?: string, note?: string): Promise<void> => {
    await longest();
    await page.evaluate('window.__replies = []');
    const pageStart = await page.evaluate<number>('performance.now()');
    const s = Date.now();
    await act();
    await done();
    const ms = Date.now() - s;
    await page.waitForTimeout(300); // long tasks still being reported
    const get = (await page.evaluate<Array<{ at: number; bytes: number; method: string }>>('window.__replies')).find((r) => r.method === 'sessions.get');
    steps[name] = {
      ms, longestTaskMs: await longest(), ...(rows ? { rowsInDom: await page.getByTestId(rows).count() } : {}), ...(note ? { note } : {}),
      ...(get ? { replyAfterMs: Math.round(get.at - pageStart), replyBytes: get.bytes } : {}),
    };
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
  const open = async (): Promise<void> => {
    await text('tree-count')(all);
    await page.getByTestId('tree-row').first().waitFor();
  };
  await step('open session (tree)', () => page.getByTestId('session-picker').selectOption(big.id), open, 'tree-row', 'from no session open: sessions.get over the WebSocket (the server reads the journal), decoding, the tree; replyAfterMs: when the reply had arrived');
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
  await page.getByTestId('tree-status').selectOption('all');
  await page.getByTestId('mode-tree').click();
  await page.getByTestId('session-picker').selectOption('');
  await page.getByTestId('no-session').waitFor();
  await page.waitForTimeout(500);
  await step('open the session again (journal unchanged: the server answers from its cache)', () => page.getByTestId('session-picker').selectOption(big.id), open, 'tree-row');
} finally {
  await browser.close();
  server.kill('SIGTERM');
  fs.rmSync(home, { recursive: true, force: true });
}
const commit = checkoutCommit(ROOT);
const name = (args.label || os.hostname()).replace(/[^\w.-]+/g, '-');
const out = path.join(ROOT, 'bench', 'results', `workbench-scale-${name}.json`);
fs.writeFileSync(out, JSON.stringify({
  what: `the workbench's variant tree and table with a ${N}-variant session: action to answer on screen, rows in the DOM, longest main-thread task`,
  data: 'SYNTHETIC REPLAY session (test fixture timings from test/fixtures/spaces/synthetic.ts, answered by the ReplayMeasurer); no GPU involved',
  machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), loadAtStart: load, loadAtEnd: Number(os.loadavg()[0].toFixed(2)) },
  browser: `${CHROMIUM} (headless), 1440x900`,
  date: new Date().toISOString(),
  commit,
  command: `npx tsx bench/workbench-scale.ts --variants ${N}${args.label ? ` --label "${args.label}"` : ''}`,
  variants: N,
  steps,
}, null, 2) + '\n');
log(`wrote ${path.relative(ROOT, out)}`);
