// Hostile captures beside honest duels (issue 17, `captureBesideDuels`): with the option on, a
// variant's capture started ahead (Evaluator.prepare) runs while two other variants duel. Each case
// of the hostile corpus that builds has its capture started ahead while the good control duels
// itself, duel after duel until the capture is done. Every one of those duels must say "same" (a
// capture beside a duel must not make an honest duel pick a side; a duel that fails beside a capture
// is run again with the GPU alone by the evaluator and that answer counts), the capture must have
// overlapped a duel (from a KERNELDUEL_TRACE trace, so that a pass means something), and the case's
// own evaluation afterwards (which uses the capture made beside the duel) must still fail or pass as
// the corpus expects. Writes <gpu>-beside-duels.json into $KERNELDUEL_RESULTS_DIR (default
// bench/results). Run: `./test-gpu beside-duels` (GPU bundle) or `npm run test:gpu -- test/gpu/beside-duels.test.ts`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTask } from '../../main/engine/task/resolve.js';
import { cudaSpec, evaluatorFor, hostileCorpus, hostileEvaluatorOptions } from './helpers.js';
import type { Evaluator, EvaluatorOptions } from '../../main/engine/measure/evaluate.js';
import type { DuelResult, Failure } from '../../main/engine/base/types.js';
import { gpuSlug } from '../../main/engine/platform/gpu/detect.js';
import { invokedAs } from '../../main/engine/base/provenance.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const { manifest, source } = hostileCorpus();
const spec = cudaSpec;
/** Outcomes of the corpus under which the variant passes its evaluation (the rest name a failure kind). */
const PASSING = new Set(['ok', 'ok-honest', 'ok-contained', 'duel-honest']);
/** The most duels run while one capture is pending (a capture that hangs is stopped at 30 s). */
const MAX_DUELS = 60;

// The hostile corpus's short limits; with the option under test. Cases of another task than the
// manifest's are left out: the duel is the good control's, a variant of the manifest's task.
const options: Partial<EvaluatorOptions> = { ...hostileEvaluatorOptions, captureBesideDuels: true };
const traceFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kd-beside-')), 'trace.jsonl');
let ev: Evaluator;
const good = spec(source('good_control.cu'));

interface Row {
  case: string;
  expected: string;
  got: string;
  /** Milliseconds of the case's capture that overlapped a duel of the good control. */
  overlapMs: number;
  captureMs: number;
  duels: Array<{ verdict?: string; ratio?: number; ratioLow?: number; ratioHigh?: number; failure?: string; ranAloneAfter?: string }>;
  pass: boolean;
  note: string;
}
const rows: Row[] = [];

before(async () => {
  process.env.KERNELDUEL_TRACE = traceFile;
  ev = await evaluatorFor(resolveTask(manifest.task), options);
  const g = await ev.evaluate(good);
  assert.equal(g.failure, undefined, `the good control must pass: ${g.failure?.kind} ${g.failure?.reason}`);
  const d = await ev.duel(good, good);
  assert.equal(d.failure, undefined, `the good control's self duel must run: ${d.failure?.reason}`);
  console.log(`# good control ${g.timing![0].medianMs.toFixed(4)} ms; self duel alone: ${d.duels![0].verdict} ${d.duels![0].ratio.toFixed(4)}`);
  // Captures run ahead only where the capture process's writes are confined (Landlock): elsewhere
  // every case would pass without anything beside its duels. An honest variant shows which it is.
  const probe = spec(`${source('good_control.cu')}\n// beside-duels probe\n`);
  const b = await ev.build(probe);
  assert.ok(b.ok && b.libPath, `the probe variant must build: ${b.failure?.reason}`);
  let done = false;
  const ahead = ev.prepare(probe).finally(() => (done = true));
  for (let i = 0; !done && i < 10; i++) await ev.duel(good, good);
  await ahead;
  const o = overlapOf(trace(), path.basename(path.dirname(b.libPath!)).slice(0, 12));
  assert.ok(o.overlapMs > 0, `no capture ran beside a duel (capture ${o.captureMs} ms): captures ahead are not allowed on this machine (they need Landlock confining the capture process's writes), so this test would test nothing`);
});

after(() => {
  ev?.close();
  delete process.env.KERNELDUEL_TRACE;
  const outDir = process.env.KERNELDUEL_RESULTS_DIR ?? path.join(here, '..', '..', 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const gpu = ev?.gpu?.name ?? 'gpu';
  const file = path.join(outDir, `${gpuSlug(gpu)}-beside-duels.json`);
  const duels = rows.flatMap((r) => r.duels);
  fs.writeFileSync(file, JSON.stringify({
    gpu, uuid: ev?.gpu?.uuid, date: new Date().toISOString(), host: os.hostname(), command: invokedAs('npm run test:gpu -- test/gpu/beside-duels.test.ts (tsx --test)'),
    what: 'each hostile case built and captured ahead (captureBesideDuels) while the good control duels itself; duels must say same, outcomes as the corpus expects',
    passed: rows.filter((r) => r.pass).length, total: rows.length, withOverlap: rows.filter((r) => r.overlapMs > 0).length,
    duels: { total: duels.length, same: duels.filter((d) => d.verdict === 'same').length, failed: duels.filter((d) => d.failure).length, ranAloneAfterAFailureBeside: duels.filter((d) => d.ranAloneAfter).length },
    cases: rows,
  }, null, 2) + '\n');
  console.log(`# wrote ${file}`);
});

interface TraceLine { t: number; ev: string; what?: string; mode?: string; start?: number; end?: number }
function trace(): TraceLine[] {
  return fs.existsSync(traceFile) ? fs.readFileSync(traceFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as TraceLine) : [];
}
/** How long the capture of this library (its trace tag) overlapped a duel holding its place, and how long it took. */
function overlapOf(lines: TraceLine[], libTag: string): { overlapMs: number; captureMs: number } {
  const caps = lines.filter((l) => l.ev === 'capture' && l.what === libTag && l.start && l.end);
  const duels: Array<[number, number]> = [];
  let open: number | null = null;
  for (const l of lines) {
    if (!l.what?.startsWith('duel ')) continue;
    if (l.ev === 'got') open = l.t;
    if (l.ev === 'gave' && open !== null) {
      duels.push([open, l.t]);
      open = null;
    }
  }
  let overlapMs = 0;
  let captureMs = 0;
  for (const c of caps) {
    captureMs += c.end! - c.start!;
    for (const [a, b] of duels) overlapMs += Math.max(0, Math.min(b, c.end!) - Math.max(a, c.start!));
  }
  return { overlapMs, captureMs };
}

const only = process.env.KD_HOSTILE_CASES?.split(',').filter(Boolean);
for (const c of manifest.cases.filter((x) => (x.task ?? manifest.task) === manifest.task && (!only || only.includes(x.case)))) {
  test(`beside duels: ${c.case} (${c.expected})`, { timeout: 240_000, todo: c.knownGap ? `known gap: ${c.knownGap}` : undefined }, async () => {
    // A trailing comment gives each case a library of its own: the good control's own would be the
    // duel's, captured before any duel, so its capture ahead would run nothing (so it did on 2026-12-04).
    const s = spec(`${source(c.file)}\n// beside-duels: a build apart from the good control that duels\n`);
    const b = await ev.build(s);
    if (!b.ok || !b.libPath) {
      // Nothing to run beside a duel: the build (or the screen, in evaluate) refuses it.
      const r = await ev.evaluate(s);
      const got = r.failure?.kind ?? 'ok';
      rows.push({ case: c.case, expected: c.expected, got, overlapMs: 0, captureMs: 0, duels: [], pass: got === c.expected, note: 'did not build: no capture' });
      assert.equal(got, c.expected, `${c.case}: ${r.failure?.reason ?? ''}`);
      return;
    }
    const tag = path.basename(path.dirname(b.libPath)).slice(0, 12); // as the trace names it (evaluate.ts libTag)
    const seen = trace().length; // only this case's lines count
    let done = false;
    const ahead = ev.prepare(s).finally(() => {
      done = true;
    });
    const duels: Array<{ duels?: DuelResult[]; failure?: Failure }> = [];
    // Duels until the capture ahead is over (it waits for the next duel to start).
    while (!done && duels.length < MAX_DUELS) duels.push(await ev.duel(good, good));
    await ahead;
    const { overlapMs, captureMs } = overlapOf(trace().slice(seen), tag);
    const r = await ev.evaluate(s);
    const got = r.failure?.kind ?? 'ok';
    const outcomeOk = PASSING.has(c.expected) ? !r.failure : got === c.expected;
    const rowsOfDuels = duels.map((d) => ({ verdict: d.duels?.[0]?.verdict, ratio: d.duels?.[0]?.ratio, ratioLow: d.duels?.[0]?.ratioLow, ratioHigh: d.duels?.[0]?.ratioHigh, failure: d.failure ? `${d.failure.kind}: ${d.failure.reason.slice(0, 300)}` : undefined, ranAloneAfter: d.duels?.[0]?.ranAloneAfter }));
    const duelsOk = rowsOfDuels.every((d) => !d.failure && d.verdict === 'same');
    // Screened cases are refused before the capture: nothing ran ahead, as it must be.
    const screened = r.failure?.kind === 'rejected';
    const overlapOk = screened || overlapMs > 0 || captureMs === 0;
    const pass = outcomeOk && duelsOk && overlapOk;
    rows.push({ case: c.case, expected: c.expected, got, overlapMs: Math.round(overlapMs), captureMs: Math.round(captureMs), duels: rowsOfDuels, pass, note: screened ? 'screened: no capture ahead' : captureMs === 0 ? 'no capture traced (the evaluation captured it)' : '' });
    console.log(`# ${c.case}: expected ${c.expected}, got ${got}; ${duels.length} duel(s) ${rowsOfDuels.map((d) => d.failure ? 'failed' : `${d.verdict} ${d.ratio?.toFixed(3)}${d.ranAloneAfter ? ' (run again alone)' : ''}`).join(', ')}; capture ${Math.round(captureMs)} ms, ${Math.round(overlapMs)} ms beside a duel`);
    assert.ok(duelsOk, `${c.case}: a self duel of the good control with this case's capture beside it did not say "same": ${JSON.stringify(rowsOfDuels)}`);
    assert.ok(outcomeOk, `${c.case}: expected ${c.expected}, got ${got}: ${r.failure?.reason ?? ''}`);
    assert.ok(overlapOk, `${c.case}: its capture (${Math.round(captureMs)} ms) never overlapped a duel: the test did not test anything`);
  });
}
