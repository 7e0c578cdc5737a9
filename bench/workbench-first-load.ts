// The workbench's first load in browser mode against the real backend: the time from navigating to
// the page to its DOMContentLoaded and load events and to the first view (the GPUs view) on screen,
// and the bytes of the scripts the page loaded by then. Each round opens the page in a fresh browser
// context (nothing cached). `--cpu-load K` keeps K busy loops running beside it (child processes), as
// a loaded machine (the test suite on 2 cores) does. `--builds DIR,DIR…` compares built workbenches
// (each served by its own `kernelduel serve --static DIR`), one page load of each per round, their
// order turning every round (a build is named by its folder's name); the default is the checkout's (out/renderer, rebuilt if stale).
//   npx tsx bench/workbench-first-load.ts [--rounds 5] [--cpu-load 0] [--builds DIR,DIR] [--label "..."]
// Writes bench/results/workbench-first-load-<label or host>.json. No GPU is involved.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { chromium } from 'playwright-core';
import { benchArgs as parseArgs } from './lib/args.js';
import { checkoutCommit } from './lib/results-file.js';
import { ensureRendererBuilt, ROOT } from '../test/e2e/build-renderer.js';
import { startServe } from '../test/e2e/serve.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'cpu-load': { type: 'string', default: '0' }, builds: { type: 'string', default: '' }, label: { type: 'string', default: '' } } });
const rounds = Number(args.rounds);
const cpuLoad = Number(args['cpu-load']);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: expected a positive integer, got "${args.rounds}"`);
if (!Number.isInteger(cpuLoad) || cpuLoad < 0) throw new Error(`--cpu-load: expected an integer of at least 0, got "${args['cpu-load']}"`);
const CHROMIUM = process.env.KERNELDUEL_CHROMIUM ?? '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set KERNELDUEL_CHROMIUM)`);
const log = (s: string): void => void process.stderr.write(s + '\n');

const builds = args.builds ? args.builds.split(',').map((d) => path.resolve(d)) : [path.join(ROOT, 'out', 'renderer')];
for (const b of builds) if (!fs.existsSync(path.join(b, 'index.html'))) throw new Error(`--builds: no built workbench in ${b} (index.html missing)`);
if (!args.builds) ensureRendererBuilt();
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-first-load-'));
const servers = await Promise.all(builds.map((b) => startServe(home, ['--static', b])));
const busy: ChildProcess[] = Array.from({ length: cpuLoad }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const loadAtStart = Number(os.loadavg()[0].toFixed(2));
const rows: Array<{ round: number; build: string; domContentLoadedMs: number; loadMs: number; firstViewMs: number; scriptBytes: number; scripts: number }> = [];
try {
  for (let round = 1; round <= rounds; round++) for (let k = 0; k < builds.length; k++) {
    const which = (k + round - 1) % builds.length;
    const url = servers[which].url;
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    let scriptBytes = 0;
    let scripts = 0;
    page.on('response', (r) => {
      if (r.request().resourceType() !== 'script') return;
      scripts++;
      void r.body().then((b) => (scriptBytes += b.length), () => undefined);
    });
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 300_000 });
    const domContentLoadedMs = Date.now() - t0;
    await page.waitForLoadState('load', { timeout: 300_000 });
    const loadMs = Date.now() - t0;
    await page.getByTestId('view-gpus').waitFor({ timeout: 300_000 });
    const firstViewMs = Date.now() - t0;
    await page.waitForTimeout(200); // the last bodies counted
    rows.push({ round, build: path.basename(builds[which]), domContentLoadedMs, loadMs, firstViewMs, scriptBytes, scripts });
    log(`round ${round}, ${builds[which]}: DOMContentLoaded ${domContentLoadedMs} ms, load ${loadMs} ms, GPUs view ${firstViewMs} ms; ${scripts} scripts, ${(scriptBytes / 1e6).toFixed(2)} MB`);
    await ctx.close();
  }
} finally {
  await browser.close();
  for (const b of busy) b.kill('SIGKILL');
  for (const s of servers) s.server.kill('SIGTERM');
  fs.rmSync(home, { recursive: true, force: true });
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const commit = checkoutCommit(ROOT);
const name = (args.label || os.hostname()).replace(/[^\w.-]+/g, '-');
const out = path.join(ROOT, 'bench', 'results', `workbench-first-load-${name}.json`);
fs.writeFileSync(out, JSON.stringify({
  what: 'the workbench\'s first load in browser mode (real backend): navigation to DOMContentLoaded, load and the GPUs view on screen; scripts loaded by then',
  machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), busyLoops: cpuLoad, loadAtStart, loadAtEnd: Number(os.loadavg()[0].toFixed(2)) },
  browser: `${CHROMIUM} (headless), 1440x900, a fresh context each round (nothing cached)`,
  date: new Date().toISOString(),
  commit,
  command: `npx tsx bench/workbench-first-load.ts --rounds ${rounds} --cpu-load ${cpuLoad}${args.builds ? ` --builds ${args.builds}` : ''}${args.label ? ` --label "${args.label}"` : ''}`,
  medians: builds.map((b) => {
    const of = rows.filter((r) => r.build === path.basename(b));
    return { build: path.basename(b), dir: b, domContentLoadedMs: median(of.map((r) => r.domContentLoadedMs)), loadMs: median(of.map((r) => r.loadMs)), firstViewMs: median(of.map((r) => r.firstViewMs)), scriptBytes: median(of.map((r) => r.scriptBytes)) };
  }),
  rounds: rows,
}, null, 2) + '\n');
log(`wrote ${path.relative(ROOT, out)}`);
