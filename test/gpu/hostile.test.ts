// The hostile-variant corpus on a real GPU: every case of test/hostile/cases.json goes through the
// whole pipeline (screen -> build -> check -> time) with short timeouts and must end with its
// expected outcome; after every case the same GPU must still measure the good control variant
// correctly. Writes <gpu>-hostile.json (case, expected, got, reason) into $KERNELDUEL_RESULTS_DIR
// (default bench/results). Run: `npm run test:gpu` (needs an NVIDIA GPU and nvcc).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTask } from '../../main/task/resolve.js';
import { evaluatorFor } from './helpers.js';
import type { Evaluator } from '../../main/eval/evaluate.js';
import type { EvalResult } from '../../main/common/types.js';
import { sandboxStatus, setSandboxNotifier } from '../../main/sandbox/index.js';
import { gpuSlug } from '../../main/gpu/detect.js';
import { invokedAs } from '../../main/common/provenance.js';

interface Case {
  case: string;
  file: string;
  expected: string;
  reason: string;
  sideEffect?: { kind: 'file'; path: string } | { kind: 'tcp'; port: number } | { kind: 'processes' };
  /** A regular expression the failure's reason must match (the outcome must come for the stated reason). */
  detail?: string;
  /** The layer that catches the case: the check must report it active, and with it switched off (env) the case must end as `expected` instead, or the case proves nothing about that layer. */
  layer?: { name: string; active: string; env: Record<string, string>; expected: string };
}

const here = path.dirname(fileURLToPath(import.meta.url));
function hostileDir(): string {
  const c = [process.env.KERNELDUEL_TEST_DATA ? path.join(process.env.KERNELDUEL_TEST_DATA, 'hostile') : '', path.join(here, '..', 'hostile')].filter(Boolean);
  const d = c.find((x) => fs.existsSync(path.join(x, 'cases.json')));
  if (!d) throw new Error(`hostile corpus not found (looked in ${c.join(', ')})`);
  return d;
}
const dir = hostileDir();
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8')) as { task: string; cases: Case[] };
const task = resolveTask(manifest.task);
const source = (file: string): string => fs.readFileSync(path.join(dir, file), 'utf8');
const spec = (src: string) => ({ source: src, config: {}, flags: { opt: 3 as const } });

const notes: string[] = [];
setSandboxNotifier((m) => {
  notes.push(m);
  process.stderr.write(`# note: ${m}\n`);
});

let ev: Evaluator;
let goodMs = 0;
let sandboxed = false;
const rows: Array<{ case: string; expected: string; got: string; pass: boolean; reason: string; detail: string; afterwardsGood: boolean; seconds: number; isolation?: { refs: string; syscallFilter: string }; withoutLayer?: { layer: string; expected: string; got: string; detail: string } }> = [];
let tcpConnections = 0;
let server: net.Server | null = null;

before(async () => {
  ev = await evaluatorFor(task, { screen: true, checkTimeoutMs: 45_000, timeTimeoutMs: 60_000, timing: { maxMs: 600, minMs: 50 } });
  sandboxed = (await sandboxStatus()).active;
  server = net.createServer((s) => {
    tcpConnections++;
    s.destroy();
  });
  await new Promise<void>((r, j) => {
    server!.once('error', j);
    server!.listen(47343, '127.0.0.1', () => r());
  });
  const g = await ev.evaluate(spec(source('good_control.cu')));
  assert.equal(g.failure, undefined, `the good control must pass: ${g.failure?.kind} ${g.failure?.reason}`);
  goodMs = g.timing![0].medianMs;
  console.log(`# good control ${goodMs.toFixed(4)} ms; sandbox ${sandboxed ? 'on' : 'OFF'}`);
});

after(() => {
  server?.close();
  const outDir = process.env.KERNELDUEL_RESULTS_DIR ?? path.join(here, '..', '..', 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const gpu = ev?.gpu?.name ?? 'gpu';
  const file = path.join(outDir, `${gpuSlug(gpu)}-hostile.json`);
  fs.writeFileSync(file, JSON.stringify({
    gpu, uuid: ev?.gpu?.uuid, date: new Date().toISOString(), host: os.hostname(), command: invokedAs('npm run test:gpu -- test/gpu/hostile.test.ts (tsx --test)'),
    sandbox: sandboxed, notes, goodControlMs: goodMs, passed: rows.filter((r) => r.pass).length, total: rows.length, cases: rows,
  }, null, 2) + '\n');
  console.log(`# wrote ${file}`);
});

function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The outcome in the corpus's vocabulary, with what it rests on. */
function outcome(c: Case, r: EvalResult, sideEffectSeen: string | null): { got: string; detail: string } {
  if (r.failure) return { got: r.failure.kind, detail: r.failure.reason.slice(0, 400) };
  const t = r.timing?.[0];
  const timed = t ? `median ${t.medianMs.toFixed(4)} ms (${t.timer}) vs good control ${goodMs.toFixed(4)} ms` : 'not timed';
  if (c.expected === 'ok-honest') {
    if (!t) return { got: 'ok-untimed', detail: timed };
    return t.medianMs >= 0.8 * goodMs ? { got: 'ok-honest', detail: timed } : { got: 'ok-dishonest', detail: `${timed}: faster than the same kernel measured plainly` };
  }
  if (c.sideEffect) return sideEffectSeen ? { got: 'ok-uncontained', detail: `${sideEffectSeen}; ${timed}` } : { got: 'ok-contained', detail: timed };
  return { got: 'ok', detail: timed };
}

for (const c of manifest.cases) {
  test(`hostile ${c.case}: ${c.expected}`, { timeout: 240_000 }, async (t) => {
    const t0 = Date.now();
    const escapeFile = c.sideEffect?.kind === 'file' ? c.sideEffect.path.replace('$HOME', os.homedir()) : null;
    if (escapeFile) fs.rmSync(escapeFile, { force: true });
    const tcpBefore = tcpConnections;
    const r = await ev.evaluate(spec(source(c.file)));
    let seen: string | null = null;
    if (escapeFile && fs.existsSync(escapeFile)) {
      seen = `wrote ${escapeFile}`;
      fs.rmSync(escapeFile, { force: true });
    }
    if (c.sideEffect?.kind === 'tcp') {
      await new Promise((res) => setTimeout(res, 200));
      if (tcpConnections > tcpBefore) seen = `${tcpConnections - tcpBefore} TCP connection(s) reached 127.0.0.1:${c.sideEffect.port}`;
    }
    if (c.sideEffect?.kind === 'processes' && r.build.libPath) {
      await new Promise((res) => setTimeout(res, 300));
      const left = processesWith(r.build.libPath);
      if (left.length) {
        seen = `${left.length} processes left running`;
        for (const pid of left) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
      }
    }
    const { got, detail } = outcome(c, r, seen);
    // The case again with the layer that should catch it switched off: it must then get through.
    let withoutLayer: (typeof rows)[number]['withoutLayer'];
    if (c.layer) {
      const saved = Object.fromEntries(Object.keys(c.layer.env).map((k) => [k, process.env[k]]));
      Object.assign(process.env, c.layer.env);
      try {
        const o = outcome(c, await ev.evaluate(spec(source(c.file))), null);
        withoutLayer = { layer: c.layer.name, expected: c.layer.expected, got: o.got, detail: o.detail };
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    }
    // The same GPU must still measure the good variant correctly.
    const g = await ev.evaluate(spec(source('good_control.cu')));
    const gMs = g.timing?.[0]?.medianMs ?? NaN;
    const afterwardsGood = !g.failure && g.check?.ok === true && gMs > 0.7 * goodMs && gMs < 1.3 * goodMs;
    // New processes and IP sockets are refused by the harness's system-call filter with or without
    // the sandbox; writes outside the work folder are blocked only by the sandbox.
    const contained = c.expected !== 'ok-contained' || sandboxed || c.sideEffect?.kind === 'processes' || c.sideEffect?.kind === 'tcp';
    const reasonOk = !c.detail || !r.failure || new RegExp(c.detail, 'i').test(r.failure.reason);
    const layerOk = !c.layer || (new RegExp(c.layer.active).test(r.check?.isolation?.refs ?? '') && withoutLayer?.got === c.layer.expected);
    const pass = got === c.expected && reasonOk && layerOk;
    rows.push({ case: c.case, expected: c.expected, got, pass, reason: c.reason, detail, afterwardsGood, seconds: (Date.now() - t0) / 1000, isolation: r.check?.isolation, withoutLayer });
    console.log(`# ${c.case}: expected ${c.expected}, got ${got} — ${detail.split('\n')[0]} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    assert.ok(afterwardsGood, `after ${c.case} the good control failed or drifted: ${g.failure?.kind} ${g.failure?.reason ?? ''} ${gMs} ms vs ${goodMs} ms`);
    if (!contained) {
      t.diagnostic(`no bubblewrap sandbox on this machine: ${c.case} is not contained (${got}); install bubblewrap for this case`);
      return;
    }
    assert.equal(got, c.expected, `${c.case}: ${detail}\n${r.failure?.log?.slice(-2000) ?? ''}`);
    assert.ok(reasonOk, `${c.case}: the outcome is right but not for the stated reason (expected /${c.detail}/): ${detail}`);
    if (c.layer) {
      assert.match(r.check?.isolation?.refs ?? '(not reported)', new RegExp(c.layer.active), `${c.case}: ${c.layer.name} was not active in the check`);
      assert.equal(withoutLayer?.got, c.layer.expected, `${c.case} without ${c.layer.name}: ${withoutLayer?.detail}`);
    }
  });
}
