// A live run's session in the workbench: the run appends to a large journal and the view refreshes.
// Measures what one refresh costs the server (SessionViews.withSession + the session's detail) after
// a few results were appended to a SYNTHETIC session of N variants: the snapshot catching up with
// the new lines (now) against opening the journal afresh (as every refresh did before).
//   npx tsx bench/session-refresh.ts [--variants 20000] [--appends 10] [--rounds 5] [--label "..."]
// Writes bench/results/session-refresh-<host>.json. No GPU: the session is synthetic.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchArgs as parseArgs } from './lib/args.js';
import { fileURLToPath } from 'node:url';
import { SessionViews } from '../main/core/sessions.js';
import { openSession, openSessionReadOnly } from '../main/engine/session/store.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { median } from '../main/engine/measure/stats.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { makeSession, samples } from './lib/synthetic-session.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({ options: { variants: { type: 'string', default: '20000' }, appends: { type: 'string', default: '10' }, rounds: { type: 'string', default: '5' }, label: { type: 'string', default: '' } } });
const N = Number(args.variants);
const APPENDS = Number(args.appends);
const ROUNDS = Number(args.rounds);
const task = resolveTask('softmax');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-refresh-'));
const log = (s: string): void => void process.stderr.write(s + '\n');

const made = makeSession('v2', root, task, N, 64);
log(`synthetic session: ${N} variants, ${(made.bytes / 1e6).toFixed(1)} MB journal`);
let next = N + 1;
/** A run's next results, appended as a run appends them. */
function appendSome(): void {
  const s = openSession(root, made.id);
  let seed = next;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let k = 0; k < APPENDS; k++, next++) {
    const id = `v${next}`;
    s.append({ type: 'variant', variant: { id, source: task.baselineSource, config: { BLOCK: 256, TPR: 4, VEC: 4, ONLINE: 0 }, flags: { opt: 3 }, origin: 'mutation', parents: ['v1'], createdAt: new Date().toISOString() } });
    const ms = 0.1 + 0.05 * rnd();
    const ev = samples(ms, 64, rnd);
    s.append({ type: 'result', variantId: id, result: { build: { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 900 }, check: { ok: true, checks: [], durationMs: 300 }, timing: [{ size: 0, samplesMs: ev, eventMs: ev, wallMs: ev, timer: 'events', medianMs: ms, meanMs: ms, minMs: ms, ciLowMs: ms, ciHighMs: ms, relNoise: 0.002, converged: true, warmupCalls: 10, l2FlushBytes: 1 << 28 }], source: { kind: 'gpu', gpu: 'SYNTHETIC' } } });
  }
  s.close();
}

const views = new SessionViews(root, () => null);
views.payload(made.id); // the view opened the session once
const catchUpMs: number[] = [];
const freshMs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  appendSome();
  let t0 = performance.now();
  const p = views.payload(made.id);
  catchUpMs.push(performance.now() - t0);
  // The same refresh as before this change: a new snapshot, read whole, and the same detail.
  t0 = performance.now();
  const fresh = new SessionViews(root, () => null);
  const q = fresh.payload(made.id);
  freshMs.push(performance.now() - t0);
  if (p.summary.variants !== q.summary.variants || p.summary.variants !== next - 1) throw new Error(`caught-up view has ${p.summary.variants} variants, a fresh read ${q.summary.variants}, expected ${next - 1}`);
}
const snap = openSessionReadOnly(root, made.id);
const out = {
  benchmark: 'session-refresh',
  measured: 'this machine (CPU); SYNTHETIC session, no GPU',
  date: new Date().toISOString(),
  command: invokedAs(`npx tsx bench/session-refresh.ts --variants ${N} --appends ${APPENDS} --rounds ${ROUNDS}`),
  host: { cpus: os.cpus().length, model: os.cpus()[0]?.model, load1: Number(os.loadavg()[0].toFixed(2)), label: args.label },
  journalMB: Number((fs.statSync(path.join(root, made.id, 'journal.jsonl')).size / 1e6).toFixed(2)),
  variants: snap.variants().length,
  appendsPerRefresh: APPENDS,
  refreshMs: { caughtUp: catchUpMs.map((x) => Number(x.toFixed(1))), fresh: freshMs.map((x) => Number(x.toFixed(1))), caughtUpMedian: Number(median(catchUpMs).toFixed(1)), freshMedian: Number(median(freshMs).toFixed(1)) },
  note: 'A refresh = sessions.get of the session (SessionViews.payload) after APPENDS variants with results were appended. caughtUp: the kept snapshot reads only the appended lines (Session.catchUp) and the rows and payload are rebuilt from it; fresh: a new snapshot reads the whole journal, as every refresh did before.',
};
snap.close();
const file = path.join(here, 'results', `session-refresh-${os.hostname() === 'vm' ? 'vm' : 'host'}.json`);
fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
log(`refresh after ${APPENDS} appends: caught up ${out.refreshMs.caughtUpMedian} ms, fresh ${out.refreshMs.freshMedian} ms (median of ${ROUNDS}); wrote ${file}`);
fs.rmSync(root, { recursive: true, force: true });
