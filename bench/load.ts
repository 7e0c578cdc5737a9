// Load: a session with 20,000 variants (each with a timed result) opens quickly, and the engine
// keeps the hosting process's event loop free while an optimisation runs in its worker thread.
//   npx tsx bench/load.ts [--variants 20000] [--samples 64] [--label "..."] [--open-only]
// Writes bench/results/load-<host>.json (machine, date, command, figures). The session is written in the
// journal format KernelDuel writes now (v2 envelopes, each kernel source once in a source event); the same
// session in the old format (v1 envelopes, the full source in every variant record) is opened as well, for
// the figures of a journal written by an earlier version.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchArgs as parseArgs } from './lib/args.js';
import { openSession } from '../main/engine/session/store.js';
import { listSessions } from '../main/engine/session/list.js';
import { SUMMARY_FILE } from '../main/engine/session/summary.js';
import { makeSession } from './lib/synthetic-session.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { startOptimisation, type OptimisationMessage } from '../main/core/run/worker.js';
import { syntheticSpace } from '../test/fixtures/spaces/synthetic.js';
import { findToolchain } from '../main/engine/platform/toolchain/nvcc.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: '20000' },
    label: { type: 'string', default: '' },
    samples: { type: 'string', default: '64' },
    'open-only': { type: 'boolean', default: false },
  },
});
const N = Number(args.variants);
const label = args.label;
const SAMPLES = Number(args.samples);
const LOAD_AT_START = Number(os.loadavg()[0].toFixed(2)); // other work on the machine inflates the figures
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-load-'));
const task = resolveTask('softmax');
const log = (s: string): void => void process.stderr.write(s + '\n');

// ------------------------------------------------------------------------------ a big session
// Written as the journal format directly (one envelope per line, with its CRC) in one go: appending
// 40,000 fsync'd records would measure the disk, not the opening.
interface OpenFigures {
  openMs: number;
  variantsMs: number;
  bestMs: number;
  totalMs: number;
  variants: number;
}

/** openSession + variants() + best() (+ close, not timed). */
function open(sessionsDir: string, id: string): OpenFigures {
  const t0 = performance.now();
  const s = openSession(sessionsDir, id);
  const t1 = performance.now();
  const vs = s.variants();
  const t2 = performance.now();
  const b = s.best();
  const t3 = performance.now();
  s.close();
  if (vs.length !== N || !b) throw new Error(`opened ${vs.length} variants, best ${b?.variant.id}`);
  if (vs[N - 1].source !== task.baselineSource) throw new Error('a variant came back without its source');
  if (!Array.isArray(b.result.timing?.[0]?.samplesMs)) throw new Error('a result came back without its samples');
  return { openMs: t1 - t0, variantsMs: t2 - t1, bestMs: t3 - t2, totalMs: t3 - t0, variants: vs.length };
}

function list(sessionsDir: string): number {
  const l0 = performance.now();
  const l = listSessions(sessionsDir);
  const ms = performance.now() - l0;
  if (l[0]?.variants !== N || l[0]?.results !== N || !l[0]?.best || l[0]?.error) throw new Error(`listSessions saw ${JSON.stringify(l[0])}`);
  return ms;
}

/** Figures for one session format: open (first, warm best of 3), listSessions without and with summary.json. */
function measure(format: 'v2' | 'v1'): Record<string, unknown> {
  const sessionsDir = path.join(root, `sessions-${format}`);
  log(`writing a session with ${N} variants (journal format ${format})…`);
  const made = makeSession(format, sessionsDir, task, N, SAMPLES);
  log(`  ${(made.bytes / 2 ** 20).toFixed(1)} MiB journal, ${made.lines} lines, in ${(made.writeMs / 1000).toFixed(1)} s`);
  const summary = path.join(sessionsDir, made.id, SUMMARY_FILE);
  // A session nobody has opened yet (no summary.json): listSessions reads the journal.
  const listNoSummaryMs = list(sessionsDir);
  fs.rmSync(summary, { force: true });
  const first = open(sessionsDir, made.id); // close() writes summary.json
  const warm = [open(sessionsDir, made.id), open(sessionsDir, made.id), open(sessionsDir, made.id)].sort((a, b) => a.totalMs - b.totalMs)[0];
  if (!fs.existsSync(summary)) throw new Error('close() wrote no summary.json');
  const listMs = Math.min(list(sessionsDir), list(sessionsDir), list(sessionsDir));
  log(`  open+variants+best: first ${first.totalMs.toFixed(0)} ms, warm ${warm.totalMs.toFixed(0)} ms; listSessions ${listMs.toFixed(0)} ms (${listNoSummaryMs.toFixed(0)} ms without summary.json)`);
  return {
    journalMiB: Number((made.bytes / 2 ** 20).toFixed(1)),
    journalLines: made.lines,
    first: round(first as unknown as Record<string, number>),
    warmBestOf3: round(warm as unknown as Record<string, number>),
    listSessionsMs: Math.round(listMs),
    listSessionsWithoutSummaryMs: Math.round(listNoSummaryMs),
    pass: first.totalMs < 2000 && listMs < 2000,
  };
}

async function main(): Promise<void> {
  const current = measure('v2');
  const legacy = measure('v1');

  // Event-loop stalls of this (hosting) process while the worker optimises.
  const runs: Array<Record<string, unknown>> = [];
  const recording = path.join(root, 'softmax-space.json');
  fs.writeFileSync(recording, JSON.stringify(syntheticSpace(task, { seed: 5 })));
  const tc = await findToolchain();
  const plans: Array<{ name: string; budget: number; backend: { kind: 'replay'; recording: string } | { kind: 'gpu' } }> = [
    { name: 'replay (synthetic recording), contrastive strategy, budget 300', budget: 300, backend: { kind: 'replay', recording } },
  ];
  if (args['open-only']) plans.length = 0;
  else if (tc.nvcc) plans.push({ name: 'compile-only (real nvcc builds, no GPU), random strategy, budget 6', budget: 6, backend: { kind: 'gpu' } });
  process.env.KERNELDUEL_NVIDIA_SMI = '/nonexistent';
  process.env.KERNELDUEL_HOME = path.join(root, 'home');
  for (const p of plans) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    // A timer that also notices stalls directly (largest gap between 5 ms ticks).
    let last = performance.now();
    let maxGap = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last - 5);
      last = now;
    }, 5);
    h.enable();
    const t0 = performance.now();
    const handle = startOptimisation({ task: 'softmax', strategy: p.backend.kind === 'replay' ? 'contrastive' : 'random', budget: p.budget, seed: 1, backend: p.backend, sessionsRoot: path.join(root, 'opt-sessions'), flags: false, transforms: false });
    let events = 0;
    let error: string | null = null;
    for await (const m of handle.events as AsyncIterable<OptimisationMessage>) {
      events++;
      if (m.type === 'error') error = m.message;
    }
    const wallMs = performance.now() - t0;
    h.disable();
    clearInterval(tick);
    const r = { run: p.name, wallMs: Math.round(wallMs), messages: events, error, maxStallMs: Number((h.max / 1e6).toFixed(2)), p99StallMs: Number((h.percentile(99) / 1e6).toFixed(2)), meanDelayMs: Number((h.mean / 1e6).toFixed(3)), maxTimerGapMs: Number(maxGap.toFixed(2)) };
    runs.push(r);
    log(`  ${p.name}: ${events} messages in ${(wallMs / 1000).toFixed(1)} s; largest event-loop stall ${r.maxStallMs} ms (p99 ${r.p99StallMs} ms)${error ? `; ERROR ${error}` : ''}`);
  }

  const cpu = os.cpus()[0]?.model ?? 'cpu';
  const dir = args['open-only'] ? root : path.join(here, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `load-${os.hostname().replace(/[^A-Za-z0-9_.-]/g, '_') || cpu.replace(/[^A-Za-z0-9]+/g, '-')}.json`);
  const out = {
    label: label || undefined,
    machine: { host: os.hostname(), cpu, cores: os.cpus().length, memGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)), loadAvg1mAtStart: LOAD_AT_START, os: `${os.type()} ${os.release()}`, node: process.version },
    date: new Date().toISOString(),
    command: `npx tsx bench/load.ts${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}`,
    session: { variants: N, results: N, samplesPerTimer: SAMPLES, note: 'every variant uses the same kernel source (as tunables-only variants do); every result carries three sample arrays; written to the journal directly in one go (appending 40,000 fsync\'d records would measure the disk)' },
    open: { targetMs: 2000, what: 'openSession + variants() + best(); listSessions with summary.json (as after a run or any open/close) and without it (first listing of a session written by an earlier version, or never closed)', journalV2: current, journalV1: legacy, pass: current.pass === true },
    before: previousFigures(file),
    eventLoop: runs,
  };
  fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  log(`wrote ${file}`);
  if (process.env.KD_LOAD_KEEP) log(`kept ${root}`);
  else fs.rmSync(root, { recursive: true, force: true });
}
/** The figures measured before the journal format change (carried over from the previous result file). */
function previousFigures(file: string): unknown {
  try {
    const old = JSON.parse(fs.readFileSync(file, 'utf8')) as { before?: unknown; date?: string; command?: string; session?: { journalMiB?: number }; open?: { first?: { totalMs?: number }; warmBestOf3?: { totalMs?: number }; listSessionsMs?: number } };
    if (old.before) return old.before;
    if (typeof old.open?.first?.totalMs === 'number') {
      return { note: 'same bench and machine before journal v2, source dedup, the fast validation and summary.json (v1 journal, source in every variant)', date: old.date, command: old.command, journalMiB: old.session?.journalMiB, openFirstMs: old.open.first.totalMs, openWarmMs: old.open.warmBestOf3?.totalMs, listSessionsMs: old.open.listSessionsMs };
    }
  } catch {
    /* none */
  }
  return undefined;
}
function round(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v)]));
}

await main();
