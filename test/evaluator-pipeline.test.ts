// The evaluator's bookkeeping around the harness, with a stand-in harness (no GPU): the capture
// process (the only one that runs variant host code) and the judge (which checks and times). A
// capture that fails, crashes or hangs ends the evaluation with the right kind and message; a
// variant that rewrites its own library during capture is refused; the judge's answers become
// check and timing results with stage events; a judge that hangs or dies is stopped or replaced
// and the next evaluation gets a new one; duels map through. A PyTorch task: its reference data is
// asked for once (for the evaluator's GPU, with the check counts), only the judge's plan carries it,
// the judge loads no reference library, and closing the evaluator removes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaptureShare, Evaluator, goLine, type ReferenceDataHandle, type ReferenceDataRequest } from '../main/engine/measure/evaluate.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { writePythonTask } from './fixtures/python-task.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { resetSandboxProbe } from '../main/engine/platform/sandbox/index.js';
import type { BuildResult, VariantSpec } from '../main/engine/base/types.js';
import type { GpuInfo } from '../main/engine/base/types.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-pipeline-'));
const fake = path.join(root, 'fake-harness.mjs');
// Same command lines as resources/harness: probe|capture <plan> <result> ...; judge <plan> <ref.so>.
fs.writeFileSync(
  fake,
  `#!/usr/bin/env node
import fs from 'node:fs';
import readline from 'node:readline';
const [mode, plan, out, lib, desc] = process.argv.slice(2);
const tMain = Date.now();
const nonce = /^nonce (.*)$/m.exec(fs.readFileSync(plan, 'utf8'))?.[1] ?? '';
const result = (status, body, error) => fs.writeFileSync(out, JSON.stringify({ kdresult: 1, nonce, status, error, body }));
const filter = process.env.KERNELDUEL_SYSCALL_FILTER === 'off' ? 'off (KERNELDUEL_SYSCALL_FILTER=off)' : 'active';
if (mode === 'probe') {
  result('ok', { name: 'Fake GPU', cc: '9.0', sms: 1, l2Bytes: 1, globalMemBytes: 1, emptyWallMs: 0.01, syscallFilter: filter, driverApi: 'ok', capture: 'ok' });
} else if (mode === 'capture') {
  // Gated (the last argument "gate"): say ready, then wait for "go" on stdin, as kd_capture.h's
  // await_gate; the variant's folder gets the times of both (gate-ready, gate-go).
  let tGo = null;
  if (process.argv[7] === 'gate') {
    fs.appendFileSync(lib + '.gate-ready', Date.now() + '\\n');
    process.stdout.write('kd-ready\\n');
    const line = await new Promise((r) => {
      let b = '';
      process.stdin.on('data', (c) => { b += c; if (b.includes('\\n')) r(b.split('\\n')[0]); });
      process.stdin.on('end', () => r(b));
    });
    if (line !== 'go') {
      result('runtime', { syscallFilter: filter }, 'capture: the engine did not open the gate');
      process.exit(0);
    }
    tGo = Date.now();
    fs.appendFileSync(lib + '.gate-go', tGo + '\\n');
  }
  if (lib.includes('capcrash')) process.kill(process.pid, 'SIGSEGV');
  else if (lib.includes('caphang')) setTimeout(() => {}, 1e9);
  else if (lib.includes('hog')) {
    // A capture that holds something duels need (as one that takes the GPU's memory) for 300 ms.
    const libsDir = lib.split('/').slice(0, -2).join('/');
    fs.writeFileSync(libsDir + '/hog-running', '');
    await new Promise((r) => setTimeout(r, 300));
    fs.writeFileSync(libsDir + '/hog-done', '');
    fs.rmSync(libsDir + '/hog-running');
    fs.writeFileSync(desc, 'kdwork 1\\nend\\n');
    fs.writeFileSync(desc + '.blob', '');
    result('ok', { syscallFilter: filter, sizes: [{ size: 0, ops: 1, kernels: 1, scratchBytes: 0 }], modules: [lib] });
  }
  else if (lib.includes('capconstraints')) result('constraints', { syscallFilter: filter }, 'size 0: cudaDeviceSynchronize (cudaErrorStreamCaptureUnsupported) was called inside the entry point');
  else {
    if (lib.includes('rewrite')) fs.appendFileSync(lib, 'x');
    fs.writeFileSync(desc, 'kdwork 1\\nend\\n');
    fs.writeFileSync(desc + '.blob', '');
    // Phase times as the harness reports them (the liar's are out of order, as a variant could make them).
    const t = Date.now();
    const phasesMs = lib.includes('phaseliar')
      ? { main: tMain, context: t, locked: t, runtimeCode: t, loaded: t, ready: t - 5000, sizes: t, written: t }
      : tGo !== null
        ? { main: tMain, context: tMain + 0.25, locked: tMain + 0.5, runtimeCode: tMain + 0.75, go: tGo, loaded: tGo + 0.25, ready: tGo + 0.5, sizes: Math.max(t, tGo + 0.75), written: Math.max(t, tGo + 0.75) + 0.125 }
        : { main: tMain, context: tMain + 0.25, locked: tMain + 0.5, runtimeCode: tMain + 0.75, loaded: tMain + 1, ready: tMain + 1.25, sizes: Math.max(t, tMain + 1.5), written: Math.max(t, tMain + 1.5) + 0.125 };
    result('ok', { syscallFilter: filter, sizes: [{ size: 0, ops: 1, kernels: 1, scratchBytes: 0 }], modules: [lib], phasesMs });
  }
} else if (mode === 'judge') {
  fs.appendFileSync('judge-starts', 'x');
  fs.writeFileSync('judge-reference', plan.length ? process.argv[4] : '');
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  say({ id: 'hello', kdresult: 1, status: 'ok', body: { name: 'Fake GPU' } });
  const checks = [{ buffer: 'y', size: 0, seed: 1, elements: 4, mismatches: 0, maxAbsErr: 0, maxRelErr: 0, relL2: 0 }];
  const isolation = { refs: 'judge', measurement: 'executor' };
  // After the check of a timed eval the judge waits for the engine's "go" (or "stop") before it times.
  let timing = null;
  readline.createInterface({ input: process.stdin }).on('line', async (line) => {
    if (timing) {
      const t = timing;
      timing = null;
      fs.appendFileSync('judge-go', line + '\\n');
      if (line !== 'go' && !line.startsWith('go ')) return say({ id: t.id, kdresult: 1, status: 'runtime', stage: 'time', error: 'timing was called off by the engine', body: { isolation, checks } });
      // "go CUTOFF": as kd_judge.h, a timing stopped at the cutoff says so (this stand-in always stops there).
      return t.run(line.length > 3 ? Number(line.slice(3)) : 0);
    }
    const f = line.split('\\t');
    const [cmd, id, libA] = f;
    if (cmd === 'quit') process.exit(0);
    if (libA.includes('judgehang')) return;
    if (libA.includes('judgedie')) process.exit(9);
    if (cmd === 'duel') {
      // With libs/hog-expected (a test's marker), the duel waits for the hog capture to start or end
      // and fails while it runs, as a duel whose executors find the GPU's memory taken would.
      const libsDir = libA.split('/').slice(0, -2).join('/');
      if (fs.existsSync(libsDir + '/hog-expected')) {
        const t0 = Date.now();
        while (!fs.existsSync(libsDir + '/hog-running') && !fs.existsSync(libsDir + '/hog-done') && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 5));
        if (fs.existsSync(libsDir + '/hog-running')) return say({ id, kdresult: 1, status: 'runtime', error: 'size 0: out of memory (A)' });
      }
    }
    // A duel's start (judges from 2026-12-08 01:00 on) on its first size; "badstart" sends a malformed one.
    const start = libA.includes('badstart') ? { a: 'borrowed', b: 'idle', executorsMs: 1, sparesWaitMs: 2 } : { a: 'idle', b: 'spare-starting', executorsMs: 160.5, sparesWaitMs: 4.5 };
    if (cmd === 'duel') return say({ id, kdresult: 1, status: 'ok', body: { duels: [{ size: 0, start, sets: 2, setupMs: 7, verifyMs: 2.5, timedMs: 30, aEventMs: [1, 1, 1, 1], aWallMs: [1, 1, 1, 1], bEventMs: [2, 2, 2, 2.2], bWallMs: [2, 2, 2, 2.2] }] } });
    if (libA.includes('wrong')) return say({ id, kdresult: 1, status: 'correctness', stage: 'check', error: 'y[3]: expected 1 got 2 (size 0, seed 1)', body: { isolation, checks } });
    if (f[4] !== '1') return say({ id, kdresult: 1, status: 'ok', stage: 'check', body: { isolation, checks } });
    say({ id, event: 'time' });
    timing = {
      id,
      run: (cutoff) => {
        if (libA.includes('stale')) return say({ id, kdresult: 1, status: 'correctness', stage: 'time', error: 'y[0]: expected 1 got NaN in timed call 12', body: { isolation, checks } });
        // Where the timing's wall time went (judges from 2026-12-08 on); an older judge's ("oldjudge") says nothing of it.
        const wall = libA.includes('oldjudge') ? {} : { setupMs: 12.5, verifyMs: 3.25, timedMs: 40 };
        // The check's executor and the wait for the spares (judges from 2026-12-08 01:00 on); "badexec" sends a malformed executor.
        const exec = libA.includes('oldjudge') ? {} : { executor: libA.includes('badexec') ? { from: 'spare', ms: -3 } : { from: 'spare-starting', ms: 171.25 }, sparesWaitMs: 2.5 };
        say({ id, kdresult: 1, status: 'ok', stage: 'time', body: { isolation, checks, ...exec, l2FlushBytes: 64, timings: [{ size: 0, bufferSets: 4, warmupCalls: 3, converged: !cutoff, verified: 2, ...(cutoff ? { cutoffMs: cutoff } : {}), ...wall, eventMs: [1, 1.1, 0.9, 1, 1, 1.1, 0.9, 1], wallMs: [1.02, 1.12, 0.92, 1.02, 1.02, 1.12, 0.92, 1.02] }] } });
      },
    };
  });
}
`,
  { mode: 0o755 },
);

const libs = path.join(root, 'libs');
fs.mkdirSync(libs);
class FakeEvaluator extends Evaluator {
  override harness(): Promise<string> {
    return Promise.resolve(fake);
  }
  override build(spec: Pick<VariantSpec, 'source' | 'config' | 'flags'>): Promise<BuildResult> {
    const name = spec.source.length > 40 ? 'reference' : spec.source;
    const lib = path.join(libs, name, 'variant.so');
    fs.mkdirSync(path.dirname(lib), { recursive: true });
    if (!fs.existsSync(lib)) fs.writeFileSync(lib, name);
    return Promise.resolve({ ok: true, libPath: lib, arch: 'sm_90', command: [], resources: [], log: '', durationMs: 0 });
  }
}
const gpu: GpuInfo = { index: 0, name: 'Fake GPU', uuid: 'GPU-fake', computeCapability: '9.0', arch: 'sm_90', memoryTotalMiB: 1, smClockMHz: null, memClockMHz: null, maxSmClockMHz: null, maxMemClockMHz: null, driverVersion: '0' };
const toolchain = { nvcc: '/bin/false', version: '0', cudaHome: null, libDir: null, targets: [], hostCompiler: null, problems: [] };
const make = (o: Partial<ConstructorParameters<typeof Evaluator>[0]> = {}) =>
  new FakeEvaluator({ task: resolveTask('softmax'), toolchain, gpu, workRoot: fs.mkdtempSync(path.join(root, 'w-')), seeds: [1, 2, 3], captureTimeoutMs: 3000, ...o });
const spec = (marker: string) => ({ source: marker, config: {}, flags: {} });

const saved = process.env.KERNELDUEL_SANDBOX;
beforeAll(() => {
  process.env.KERNELDUEL_SANDBOX = 'off'; // the stand-in needs no sandbox (the sandbox has tests of its own)
  resetSandboxProbe();
});
afterAll(() => {
  if (saved === undefined) delete process.env.KERNELDUEL_SANDBOX;
  else process.env.KERNELDUEL_SANDBOX = saved;
  resetSandboxProbe();
});

describe('the evaluator with a stand-in harness', () => {
  it('a passing variant: captured, checked, then timed, with stage events and the isolation it ran under', async () => {
    const ev = make();
    const stages: string[] = [];
    const r = await ev.evaluate(spec('good'), { onStage: (s) => stages.push(s) });
    expect(r.failure).toBeUndefined();
    expect(stages).toEqual(['build', 'check', 'time']);
    expect(r.check).toMatchObject({ ok: true, isolation: { refs: 'judge', measurement: 'executor', syscallFilter: 'active' } });
    expect(r.timing?.[0]).toMatchObject({ medianMs: 1, timer: 'events', verifiedCalls: 2, bufferSets: 4, samplesMs: [1, 1.1, 0.9, 1, 1, 1.1, 0.9, 1] });
    // Call i on set i mod 4: the sets' medians 1, 1.1, 0.9, 1; sd 0.0816 / √4 of the median 1.
    expect(r.timing?.[0].perSetMedianMs).toEqual([1, 1.1, 0.9, 1]);
    expect(r.timing?.[0].setRelSd).toBeCloseTo(0.0408, 4);
    expect(r.source).toEqual({ kind: 'gpu', gpu: 'Fake GPU', uuid: 'GPU-fake' });
    // The judge timed only after the engine said "go"; where the time went is reported.
    expect(fs.readFileSync(path.join(ev.judgeDir, 'judge-go'), 'utf8')).toBe('go\n');
    expect(r.stages).toMatchObject({ queuedMs: expect.any(Number), captureMs: expect.any(Number), checkMs: expect.any(Number), timeMs: expect.any(Number) });
    // The capture process's phases split its time: they add up to the capture's own duration.
    const st = r.stages!;
    expect(st.captureContextMs).toBe(0.3); // 0.25 rounded to a tenth
    expect(st.captureRuntimeCodeMs).toBe(0.3);
    expect(st.captureBuffersMs).toBe(0.3);
    const phases = st.captureStartMs! + st.captureContextMs! + st.captureLockdownMs! + st.captureRuntimeCodeMs! + st.captureLoadMs! + st.captureBuffersMs! + st.captureCallsMs! + st.captureWriteMs! + st.captureExitMs!;
    expect(Math.abs(phases - st.captureMs)).toBeLessThanOrEqual(10); // two clocks of whole ms, tenths rounded
    // Phases out of order (a variant's host code runs in that process and could write anything) are dropped.
    const liar = await ev.evaluate(spec('phaseliar'));
    expect(liar.failure).toBeUndefined();
    expect(liar.stages?.captureContextMs).toBeUndefined();
    // The judge's split of the timing's wall time: set-up, the sampling loop, verifying within it.
    expect(r.timing?.[0]).toMatchObject({ setupMs: 12.5, verifyMs: 3.25, timedMs: 40 });
    expect(st).toMatchObject({ timeSetupMs: 12.5, timeVerifyMs: 3.25 });
    // Where the check's executor came from (a spare still making its context) and the time stage's wait for the spares.
    expect(r.check?.executor).toEqual({ from: 'spare-starting', ms: 171.25 });
    expect(st).toMatchObject({ checkExecMs: 171.25, timeSparesWaitMs: 2.5 });
    const bad = await ev.evaluate(spec('badexec'));
    expect(bad.failure).toBeUndefined();
    expect(bad.check?.executor).toBeUndefined();
    expect(bad.stages?.checkExecMs).toBeUndefined();
    expect(bad.stages?.timeSparesWaitMs).toBe(2.5);
    const old = await ev.evaluate(spec('oldjudge'));
    expect(old.failure).toBeUndefined();
    expect(old.check?.executor).toBeUndefined();
    expect(old.stages?.checkExecMs).toBeUndefined();
    expect(old.stages?.timeSparesWaitMs).toBeUndefined();
    expect(old.timing?.[0].verifyMs).toBeUndefined();
    expect(old.stages?.timeVerifyMs).toBeUndefined();
    expect(old.stages?.timeSetupMs).toBeUndefined();
    const checkOnly = await ev.evaluate(spec('good'), { time: false });
    expect(checkOnly.check?.ok).toBe(true);
    expect(checkOnly.timing).toBeUndefined();
    ev.close();
  });

  it('KERNELDUEL_SPARES_WAIT=0 or 2 (experiments) turns the judge\'s wait for its spare executors off in the plan; an explicit timing setting wins', () => {
    const saved = process.env.KERNELDUEL_SPARES_WAIT;
    try {
      process.env.KERNELDUEL_SPARES_WAIT = '0';
      expect(make().timing.sparesWait).toBe(0);
      expect(make({ timing: { sparesWait: 1 } }).timing.sparesWait).toBe(1);
      process.env.KERNELDUEL_SPARES_WAIT = '2';
      expect(make().timing.sparesWait).toBe(2);
      process.env.KERNELDUEL_SPARES_WAIT = '1';
      expect(make().timing.sparesWait).toBeUndefined();
      process.env.KERNELDUEL_SPARES_WAIT = '3';
      expect(make().timing.sparesWait).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.KERNELDUEL_SPARES_WAIT;
      else process.env.KERNELDUEL_SPARES_WAIT = saved;
    }
  });

  it('a timing cutoff reaches the judge on its "go" line, and a timing stopped there says so; without one the line is a plain "go"', async () => {
    expect(goLine(undefined)).toBe('go');
    expect(goLine(0)).toBe('go');
    expect(goLine(Number.NaN)).toBe('go');
    expect(goLine(Number.POSITIVE_INFINITY)).toBe('go');
    expect(goLine(0.36612345678)).toBe('go 0.366123');
    const ev = make();
    const plain = await ev.evaluate(spec('good'));
    expect(plain.timing?.[0].cutoffMs).toBeUndefined();
    const cut = await ev.evaluate(spec('good2'), { cutoffMs: 0.5 });
    expect(cut.failure).toBeUndefined();
    expect(cut.timing?.[0]).toMatchObject({ cutoffMs: 0.5, converged: false, medianMs: 1 });
    expect(fs.readFileSync(path.join(ev.judgeDir, 'judge-go'), 'utf8').trim().split('\n').slice(-2)).toEqual(['go', 'go 0.500000']);
    ev.close();
  });

  it('a capture that breaks the rules, crashes or hangs ends the evaluation with its kind and reason, before any judge work', async () => {
    const ev = make();
    const c = await ev.evaluate(spec('capconstraints'));
    expect(c.failure).toMatchObject({ kind: 'constraints' });
    expect(c.failure!.reason).toMatch(/^capture: size 0: cudaDeviceSynchronize/);
    expect(c.check?.ok).toBe(false);
    const crash = await ev.evaluate(spec('capcrash'));
    expect(crash.failure?.kind).toBe('runtime');
    expect(crash.failure?.reason).toMatch(/capture process was killed by SIGSEGV/);
    const t0 = Date.now();
    const hang = await ev.evaluate(spec('caphang'));
    expect(hang.failure?.kind).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(15_000);
    ev.close();
  }, 30_000);

  it('a variant that rewrites its own library while its host code runs is refused', async () => {
    const ev = make();
    const r = await ev.evaluate(spec('rewrite'));
    expect(r.failure).toMatchObject({ kind: 'runtime' });
    expect(r.failure!.reason).toMatch(/library changed while its host code ran/);
    ev.close();
  });

  it('a wrong result fails the check; stale results found in timed calls fail in the time stage', async () => {
    const ev = make();
    const w = await ev.evaluate(spec('wrong'));
    expect(w.failure).toMatchObject({ kind: 'correctness', reason: 'y[3]: expected 1 got 2 (size 0, seed 1)' });
    expect(w.check?.ok).toBe(false);
    const s = await ev.evaluate(spec('stale'));
    expect(s.failure?.kind).toBe('correctness');
    expect(s.failure?.reason).toMatch(/in timed call/);
    expect(s.check?.ok).toBe(true); // the check passed: the failure is the timing stage's
    ev.close();
  });

  it('a judge that hangs is stopped at its deadline; one that dies is replaced; the next evaluation works', async () => {
    const ev = make({ checkTimeoutMs: 500, timeTimeoutMs: 500 });
    // The backstop is the command's limits plus 60 s; shorten it for the test by calling through.
    const judge = await ev.reference();
    const t0 = Date.now();
    await expect(judge.call(['eval', path.join(libs, 'judgehang', 'variant.so'), 'x', '1', '1', '1'], 1000)).rejects.toThrow(/no answer from the judge within 1 s/);
    expect(Date.now() - t0).toBeLessThan(5000);
    const died = await ev.evaluate(spec('judgedie'));
    expect(died.failure?.kind).toBe('runtime');
    expect(died.failure?.reason).toMatch(/judge process exited with code 9/);
    const ok = await ev.evaluate(spec('good'));
    expect(ok.failure).toBeUndefined();
    expect(fs.readFileSync(path.join(ev.judgeDir, 'judge-starts'), 'utf8').length).toBe(3); // first, after the hang, after the death
    ev.close();
  }, 30_000);

  it('a duel maps to a speedup with its interval and verdict', async () => {
    const ev = make();
    const d = await ev.duel(spec('fast'), spec('slow'));
    expect(d.failure).toBeUndefined();
    expect(d.duels?.[0]).toMatchObject({ ratio: 2, verdict: 'faster', pairs: 4, sets: 2, setupMs: 7, verifyMs: 2.5, timedMs: 30 });
    expect(d.duels?.[0].start).toEqual({ a: 'idle', b: 'spare-starting', executorsMs: 160.5, sparesWaitMs: 4.5 });
    // A start naming no known origin is left out, not passed on.
    const bad = await ev.duel(spec('badstart'), spec('slow'));
    expect(bad.failure).toBeUndefined();
    expect(bad.duels?.[0].start).toBeUndefined();
    // Pair i on set i mod 2: ratios 2, 2 on set 0 and 2, 2.2 on set 1 (medians 2 and 2.1).
    expect(d.duels?.[0].setRelSd).toBeCloseTo(0.0707 / Math.SQRT2 / 2, 3);
    ev.close();
  });

  it("a pool's evaluators share captures across GPUs of one model (a duel on B reuses A's), never across models or without the share", async () => {
    const captures = (name: string): number => {
      const runs = path.join(libs, name, 'runs');
      if (!fs.existsSync(runs)) return 0;
      return fs.readdirSync(runs).reduce((n, d) => n + fs.readdirSync(path.join(runs, d)).filter((f) => f.endsWith('.kdw')).length, 0);
    };
    const share = new CaptureShare();
    const a = make({ captureShare: share });
    const b = make({ gpu: { ...gpu, index: 1, uuid: 'GPU-fake-b' }, captureShare: share });
    expect((await a.evaluate(spec('shareA'))).failure).toBeUndefined();
    expect(captures('shareA')).toBe(1);
    const d = await b.duel(spec('shareB'), spec('shareA'));
    expect(d.failure).toBeUndefined();
    expect(captures('shareA')).toBe(1); // A's capture, reused by B's duel
    expect(captures('shareB')).toBe(1);
    // B's evaluation of a library A captured ahead reuses it too.
    expect((await b.evaluate(spec('shareA'))).failure).toBeUndefined();
    expect(captures('shareA')).toBe(1);
    // Another model in the same share, or a GPU of the same model without it: captured again.
    const other = make({ gpu: { ...gpu, index: 2, uuid: 'GPU-fake-c', name: 'Fake GPU Max' }, captureShare: share });
    expect((await other.duel(spec('shareB'), spec('shareA'))).failure).toBeUndefined();
    expect(captures('shareA')).toBe(2);
    expect(captures('shareB')).toBe(2);
    const own = make({ gpu: { ...gpu, index: 3, uuid: 'GPU-fake-d' } });
    expect((await own.duel(spec('shareB'), spec('shareA'))).failure).toBeUndefined();
    expect(captures('shareA')).toBe(3);
    for (const e of [a, b, other, own]) e.close();
  });

  it('captures started ahead ask for a place beside duels with captureBesideDuels (on by default; off: beside checks only)', async () => {
    const modes = async (o: { captureBesideDuels?: boolean }): Promise<string[]> => {
      const file = path.join(fs.mkdtempSync(path.join(root, 'trace-')), 't.jsonl');
      const ev = make({ gpu: { ...gpu, uuid: `GPU-fake-${Math.random().toString(16).slice(2, 8)}` }, ...o });
      // As where Landlock confines capture writes (this stand-in runs without a sandbox): captures may run ahead.
      (ev as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
      process.env.KERNELDUEL_TRACE = file;
      try {
        await ev.prepare(spec(`ahead${String(o.captureBesideDuels)}${process.env.KERNELDUEL_CAPTURE_BESIDE_DUELS ?? ''}`));
        expect((await ev.duel(spec('fast'), spec('slow'))).failure).toBeUndefined();
      } finally {
        delete process.env.KERNELDUEL_TRACE;
        ev.close();
      }
      return fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ev: string; mode: string; what: string }).filter((l) => l.ev === 'ask' && /^(capture-ahead|duel) /.test(l.what)).map((l) => `${l.what.split(' ')[0]} ${l.mode}`);
    };
    expect(await modes({ captureBesideDuels: false })).toEqual(['capture-ahead shared', 'duel exclusive']);
    expect(await modes({ captureBesideDuels: true })).toEqual(['capture-ahead capture', 'duel paired']);
    expect(await modes({})).toEqual(['capture-ahead capture', 'duel paired']);
    process.env.KERNELDUEL_CAPTURE_BESIDE_DUELS = '0';
    try {
      expect(await modes({})).toEqual(['capture-ahead shared', 'duel exclusive']);
    } finally {
      delete process.env.KERNELDUEL_CAPTURE_BESIDE_DUELS;
    }
  });

  it('with captureGate a capture started ahead makes its context while another job holds the GPU and runs the variant only in its own place; an evaluation that needs it meanwhile lets it go on under its place', async () => {
    type Q = { run: <T>(mode: string, fn: () => Promise<T>, what?: string) => Promise<T> };
    const lines = (f: string): number[] => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').map(Number) : []);
    const waitFor = async (f: string): Promise<void> => {
      for (let i = 0; i < 300 && !fs.existsSync(f); i++) await new Promise((r) => setTimeout(r, 10));
    };
    const file = path.join(fs.mkdtempSync(path.join(root, 'trace-')), 't.jsonl');
    process.env.KERNELDUEL_TRACE = file;
    const ev = make({ gpu: { ...gpu, uuid: 'GPU-fake-gate' }, captureGate: true, captureBesideDuels: true });
    (ev as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
    try {
      await ev.evaluate(spec('fast')); // the judge and the duel's sides exist before the race below
      await ev.evaluate(spec('slow'));
      // Another job has the GPU alone (as a timing): the gated process gets ready, and waits.
      let free: () => void = () => undefined;
      const held = (ev as unknown as { queue: () => Q }).queue().run('exclusive', () => new Promise<void>((r) => (free = r)), 'time held');
      const lib = path.join(libs, 'gated1', 'variant.so');
      const ahead = ev.prepare(spec('gated1'));
      await waitFor(`${lib}.gate-ready`);
      await new Promise((r) => setTimeout(r, 100));
      expect(lines(`${lib}.gate-ready`)).toHaveLength(1);
      expect(fs.existsSync(`${lib}.gate-go`)).toBe(false); // nothing of the variant ran beside the held GPU
      const freedAt = Date.now();
      free();
      await held;
      const d = await ev.duel(spec('fast'), spec('slow')); // its place comes beside this duel
      await ahead;
      expect(d.failure).toBeUndefined();
      expect(lines(`${lib}.gate-go`)).toHaveLength(1);
      expect(lines(`${lib}.gate-go`)[0]).toBeGreaterThanOrEqual(freedAt);
      // The evaluation finds the capture done; its stages say how long the process waited, ready.
      const r = await ev.evaluate(spec('gated1'));
      expect(r.failure).toBeUndefined();
      expect(lines(`${lib}.gate-ready`)).toHaveLength(1);
      expect(r.stages?.captureWaitMs).toBeGreaterThanOrEqual(90);
      // Nothing waits for a duel here: the evaluation that needs the capture lets it go on in its own
      // place at once, instead of waiting for the capture's place (2 s without a duel, or never).
      const lib2 = path.join(libs, 'gated2', 'variant.so');
      const ahead2 = ev.prepare(spec('gated2'));
      await waitFor(`${lib2}.gate-ready`);
      const r2 = await ev.evaluate(spec('gated2'));
      expect(r2.failure).toBeUndefined();
      const go2 = lines(`${lib2}.gate-go`);
      expect(go2).toHaveLength(1);
      await ahead2;
      const trace = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: number; ev: string; what: string });
      const checkGot = trace.find((l) => l.ev === 'got' && l.what === 'check gated2');
      expect(checkGot).toBeDefined();
      expect(go2[0]).toBeGreaterThanOrEqual(checkGot!.t);
      // It never asks for a place of its own (nothing waits for one after it went on).
      await new Promise((r) => setTimeout(r, 2100));
      expect(trace.concat(fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: number; ev: string; what: string })).filter((l) => l.ev === 'ask' && l.what === 'capture-ahead gated2')).toHaveLength(0);
      expect(fs.readdirSync(path.join(libs, 'gated2', 'runs')).flatMap((d2) => fs.readdirSync(path.join(libs, 'gated2', 'runs', d2))).filter((f) => f.endsWith('.kdw'))).toHaveLength(1);
    } finally {
      delete process.env.KERNELDUEL_TRACE;
      ev.close();
    }
  });

  it('a gated capture whose place never comes (the run stopped) ends without running the variant', async () => {
    const ev = make({ gpu: { ...gpu, uuid: 'GPU-fake-gate-stop' }, captureGate: true, captureBesideDuels: true });
    (ev as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
    const lib = path.join(libs, 'gated3', 'variant.so');
    const stop = new AbortController();
    try {
      const ahead = ev.prepare(spec('gated3'), stop.signal);
      for (let i = 0; i < 300 && !fs.existsSync(`${lib}.gate-ready`); i++) await new Promise((r) => setTimeout(r, 10));
      expect(fs.existsSync(`${lib}.gate-ready`)).toBe(true);
      stop.abort();
      await ahead;
      expect(fs.existsSync(`${lib}.gate-go`)).toBe(false);
      // Not kept as a capture: an evaluation captures it afresh.
      const r = await ev.evaluate(spec('gated3'));
      expect(r.failure).toBeUndefined();
      expect(r.stages?.captureWaitMs ?? 0).toBe(0);
    } finally {
      ev.close();
    }
  });

  it('prepare never builds nor captures ahead a source the screen refuses (screen on); it does with the screen off', async () => {
    const asked = async (screen: boolean): Promise<number> => {
      const file = path.join(fs.mkdtempSync(path.join(root, 'trace-')), 't.jsonl');
      const ev = make({ gpu: { ...gpu, uuid: `GPU-fake-screen-${screen ? 1 : 0}` }, screen });
      (ev as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
      process.env.KERNELDUEL_TRACE = file;
      try {
        await ev.prepare(spec('fork();'));
      } finally {
        delete process.env.KERNELDUEL_TRACE;
        ev.close();
      }
      return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('"ev":"ask"') && l.includes('capture-ahead')).length : 0;
    };
    expect(await asked(true)).toBe(0);
    expect(await asked(false)).toBe(1);
  });

  it('a duel that fails with a capture beside it runs again with the GPU alone, and that answer stands', async () => {
    const file = path.join(fs.mkdtempSync(path.join(root, 'trace-')), 't.jsonl');
    const ev = make({ gpu: { ...gpu, uuid: 'GPU-fake-hog' }, captureBesideDuels: true });
    (ev as unknown as { overlapAllowed: () => boolean }).overlapAllowed = () => true;
    const expected = path.join(libs, 'hog-expected');
    fs.writeFileSync(expected, '');
    process.env.KERNELDUEL_TRACE = file;
    try {
      await ev.evaluate(spec('fast')); // the judge and both sides' captures exist before the race below
      await ev.evaluate(spec('slow'));
      const ahead = ev.prepare(spec('hog')); // waits for the next duel, then captures beside it
      const d = await ev.duel(spec('fast'), spec('slow'));
      await ahead;
      expect(d.failure).toBeUndefined();
      expect(d.duels?.[0].ratio).toBeCloseTo(2, 5);
      expect(d.duels?.[0].ranAloneAfter).toBe('size 0: out of memory (A)');
      const asks = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ev: string; mode: string; what: string }).filter((l) => l.ev === 'got' && /^(capture-ahead|duel) /.test(l.what)).map((l) => `${l.what.split(' ')[0]} ${l.mode}`);
      expect(asks).toEqual(['duel paired', 'capture-ahead capture', 'duel exclusive']);
      // A duel that fails with no capture beside it is not run again: its failure stands.
      fs.writeFileSync(path.join(libs, 'hog-running'), '');
      const failed = await ev.duel(spec('fast'), spec('slow'));
      expect(failed.failure).toMatchObject({ kind: 'runtime', reason: 'size 0: out of memory (A)' });
      const duels = fs.readFileSync(file, 'utf8').trim().split('\n').filter((l) => l.includes('"ev":"got"') && l.includes('"what":"duel '));
      expect(duels).toHaveLength(3);
    } finally {
      delete process.env.KERNELDUEL_TRACE;
      fs.rmSync(expected, { force: true });
      for (const f of ['hog-done', 'hog-running']) fs.rmSync(path.join(libs, f), { force: true });
      ev.close();
    }
  });

  it('a PyTorch task: reference data computed once for this GPU, only in the judge\'s plan, no reference library; removed on close', async () => {
    const task = loadTask(writePythonTask(fs.mkdtempSync(path.join(root, 'py-')), 'py-pipeline'));
    const asked: ReferenceDataRequest[] = [];
    let cleaned = 0;
    const dir = fs.mkdtempSync(path.join(root, 'kd-ref-'));
    const files = [0, 1, 2, 3].map((arg) => ({ size: 0, id: 0, arg, bytes: 4, sha256: 'a'.repeat(64), rel: `s0/0/${arg}.bin` }));
    const referenceData = (r: ReferenceDataRequest): Promise<ReferenceDataHandle> => {
      asked.push(r);
      return Promise.resolve({ dir, samples: [{ size: 0, id: 0, timing: false }, { size: 0, id: 1, timing: true }], files, bytes: 16, seconds: 0, cleanup: () => void cleaned++ });
    };
    const ev = make({ task, referenceData });
    const r = await ev.evaluate(spec('good'));
    expect(r.failure).toBeUndefined();
    await ev.evaluate(spec('good'), { time: false });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ gpu: { uuid: 'GPU-fake' }, checks: 3, checksBySize: {} });
    const judgePlan = fs.readFileSync(path.join(ev.judgeDir, 'plan.txt'), 'utf8');
    expect(judgePlan).toContain(`reference files ${dir}\n`);
    expect(judgePlan).toMatch(/^refsample 0 1 timing$/m);
    expect(judgePlan).toMatch(/^reffile 0 0 3 4 a{64} s0\/0\/3\.bin$/m);
    expect(fs.readFileSync(path.join(ev.judgeDir, 'judge-reference'), 'utf8')).toBe('files');
    const capturePlan = fs.readFileSync(path.join(libs, 'good', 'runs', 'GPU-fake', 'plan-capture.txt'), 'utf8');
    expect(capturePlan).not.toMatch(/reference|refsample|reffile/);
    // Here the capture runs without bubblewrap (KERNELDUEL_SANDBOX=off): results say the data was not hidden.
    expect(r.check?.isolation?.refs).toMatch(/NOT hidden from variants' host code here/);
    ev.close();
    expect(cleaned).toBe(1);
    await ev.evaluate(spec('good'), { time: false });
    expect(asked).toHaveLength(2);
    ev.close();
    // A provider that fails (no CUDA torch, no room) fails the evaluation with its message.
    const bad = make({ task, referenceData: () => Promise.reject(new Error('checking its CUDA variants needs torch with CUDA')) });
    const f = await bad.evaluate(spec('good'));
    expect(f.failure).toMatchObject({ kind: 'runtime', reason: 'checking its CUDA variants needs torch with CUDA' });
    // Without a provider the evaluator says why it cannot check.
    const none = await make({ task }).evaluate(spec('good'));
    expect(none.failure?.reason).toMatch(/has a PyTorch reference .* this evaluator was made without a way to compute it/);
  });

  it('KERNELDUEL_SYSCALL_FILTER=off set by the user reaches the capture process; other values are not passed on', async () => {
    const keep = process.env.KERNELDUEL_SYSCALL_FILTER;
    try {
      process.env.KERNELDUEL_SYSCALL_FILTER = 'off';
      const off = make();
      expect((await off.evaluate(spec('good'))).check?.isolation?.syscallFilter).toMatch(/^off/);
      off.close();
      process.env.KERNELDUEL_SYSCALL_FILTER = 'no';
      const on = make();
      expect((await on.evaluate(spec('good'))).check?.isolation?.syscallFilter).toBe('active');
      on.close();
    } finally {
      if (keep === undefined) delete process.env.KERNELDUEL_SYSCALL_FILTER;
      else process.env.KERNELDUEL_SYSCALL_FILTER = keep;
    }
  });
});
