// The engine foundation on a real GPU: baselines correct, planted bad kernels caught with the
// right failure, side-stream work timed honestly, and repeat measurements that agree.
// Run: `npm run test:gpu` (or `./test-gpu` in the GPU bundle). Needs an NVIDIA GPU and nvcc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTask, builtinTaskNames } from '../../main/task/resolve.js';
import { defaultConfig } from '../../main/task/space.js';
import { evaluatorFor, fixture } from './helpers.js';
import type { VariantSpec } from '../../main/common/types.js';

const softmax = resolveTask('softmax');
const variant = (source: string): VariantSpec => ({ source, config: {}, flags: { opt: 3 }, origin: 'user' });

for (const name of builtinTaskNames()) {
  test(`baseline of ${name} passes every check and is timed`, async () => {
    const task = resolveTask(name);
    const ev = await evaluatorFor(task, { timing: { maxMs: 1500 } });
    const r = await ev.evaluate({ source: task.baselineSource, config: defaultConfig(task), flags: { opt: 3 } });
    assert.equal(r.failure, undefined, `${name}: ${r.failure?.kind} ${r.failure?.reason}\n${r.failure?.log ?? ''}`);
    assert.equal(r.check?.ok, true);
    assert.ok(r.check!.checks.length >= task.manifest.sizes.length, 'every size checked');
    assert.ok(r.timing && r.timing[0].medianMs > 0);
    console.log(`# ${name} baseline median ${r.timing![0].medianMs.toFixed(4)} ms ±${(r.timing![0].relNoise * 100).toFixed(2)}% (${r.timing![0].samplesMs.length} samples, ${r.timing![0].timer})`);
  });
}

test('a planted wrong kernel fails the check naming buffer, index, expected and got', async () => {
  const ev = await evaluatorFor(softmax);
  const r = await ev.evaluate(variant(fixture('softmax_wrong.cu')));
  assert.equal(r.failure?.kind, 'correctness');
  assert.match(r.failure!.reason, /^y\[\d+\]: expected [-0-9.e]+ got [-0-9.e]+/);
});

test('a kernel that writes only half its output fails the check (poisoned outputs)', async () => {
  const ev = await evaluatorFor(softmax);
  const r = await ev.evaluate(variant(fixture('softmax_half.cu')));
  assert.equal(r.failure?.kind, 'correctness');
  assert.match(r.failure!.reason, /got NaN /);
});

test('a kernel that hangs ends as a timeout and the GPU still measures a good variant afterwards', async () => {
  const ev = await evaluatorFor(softmax, { checkTimeoutMs: 15_000 });
  const t0 = Date.now();
  const r = await ev.evaluate(variant(fixture('softmax_hang.cu')));
  assert.equal(r.failure?.kind, 'timeout', `${r.failure?.kind}: ${r.failure?.reason}`);
  assert.ok(Date.now() - t0 < 60_000);
  const good = await ev.evaluate(variant(fixture('softmax_warp.cu')), { time: false });
  assert.equal(good.failure, undefined, good.failure?.reason);
  assert.equal(good.check?.ok, true);
});

test('work moved to a second stream is checked and timed honestly, not rejected', async () => {
  const ev = await evaluatorFor(softmax, { timing: { maxMs: 1500 } });
  const side = await ev.evaluate(variant(fixture('softmax_stream_warp.cu')));
  const same = await ev.evaluate(variant(fixture('softmax_warp.cu')));
  assert.equal(side.failure, undefined, side.failure?.reason);
  assert.equal(same.failure, undefined, same.failure?.reason);
  const ts = side.timing![0];
  const tm = same.timing![0];
  assert.equal(ts.timer, 'wall', 'the side-stream variant must be timed with the wall clock');
  assert.equal(tm.timer, 'events');
  // Events alone would have seen almost nothing: the honest time is close to the same kernel's.
  const evMedian = [...ts.eventMs].sort((a, b) => a - b)[ts.eventMs.length >> 1];
  assert.ok(evMedian < 0.5 * tm.medianMs, `events saw ${evMedian} ms`);
  assert.ok(ts.medianMs > 0.8 * tm.medianMs, `side-stream ${ts.medianMs} ms vs default-stream ${tm.medianMs} ms`);
  console.log(`# side stream: events ${evMedian.toFixed(4)} ms, honest wall ${ts.medianMs.toFixed(4)} ms; default stream ${tm.medianMs.toFixed(4)} ms`);
});

test('the same variant measured 5 times has a median spread under 1%', async () => {
  const ev = await evaluatorFor(softmax);
  const src = fixture('softmax_warp.cu');
  const medians: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await ev.evaluate(variant(src));
    assert.equal(r.failure, undefined, r.failure?.reason);
    medians.push(r.timing![0].medianMs);
  }
  const sorted = [...medians].sort((a, b) => a - b);
  const spread = (sorted[4] - sorted[0]) / sorted[2];
  console.log(`# 5 medians ${medians.map((m) => m.toFixed(4)).join(', ')} ms: spread ${(spread * 100).toFixed(3)}%`);
  assert.ok(spread < 0.01, `spread ${(spread * 100).toFixed(2)}%`);
});

test('a duel of a variant against itself says same, against a much slower one says faster', async () => {
  const ev = await evaluatorFor(softmax, { timing: { maxMs: 1500 } });
  const fast = variant(fixture('softmax_warp.cu'));
  const self = await ev.duel(fast, fast);
  assert.equal(self.failure, undefined);
  assert.ok(['same', 'unsure'].includes(self.duels![0].verdict), `self duel: ${self.duels![0].verdict} ${self.duels![0].ratio}`);
  const slow = { source: softmax.baselineSource, config: defaultConfig(softmax), flags: { opt: 3 as const }, origin: 'baseline' };
  const d = await ev.duel(fast, slow);
  assert.equal(d.duels![0].verdict, 'faster', `ratio ${d.duels![0].ratio}`);
  console.log(`# duel warp vs baseline: ${d.duels![0].ratio.toFixed(3)}× [${d.duels![0].ratioLow.toFixed(3)}, ${d.duels![0].ratioHigh.toFixed(3)}]; self ${self.duels![0].ratio.toFixed(4)}`);
});

test('check and time in one harness process agree with the two-process way, and take less wall time', async () => {
  const one = await evaluatorFor(softmax);
  const two = await evaluatorFor(softmax, { separateTiming: true });
  const v = variant(fixture('softmax_warp.cu'));
  await one.evaluate(v); // reference, probe and build out of the way
  const a: number[] = [];
  const b: number[] = [];
  const wa: number[] = [];
  const wb: number[] = [];
  for (let i = 0; i < 3; i++) {
    let t0 = Date.now();
    const ra = await one.evaluate(v);
    wa.push(Date.now() - t0);
    t0 = Date.now();
    const rb = await two.evaluate(v);
    wb.push(Date.now() - t0);
    assert.equal(ra.failure, undefined, ra.failure?.reason);
    assert.equal(rb.failure, undefined, rb.failure?.reason);
    assert.equal(ra.check?.ok, true);
    assert.ok((ra.check?.checks.length ?? 0) > 0 && ra.check!.checks.length === rb.check!.checks.length, 'the same checks');
    a.push(ra.timing![0].medianMs);
    b.push(rb.timing![0].medianMs);
  }
  const med = (x: number[]) => [...x].sort((p, q) => p - q)[1];
  console.log(`# one process ${med(a).toFixed(4)} ms in ${med(wa)} ms wall; two processes ${med(b).toFixed(4)} ms in ${med(wb)} ms wall`);
  assert.ok(Math.abs(med(a) - med(b)) / med(b) < 0.02, `medians ${med(a)} vs ${med(b)}`);
  // A half-written output is still caught in one process.
  const stale = await one.evaluate(variant(fixture('softmax_half.cu')));
  assert.equal(stale.failure?.kind, 'correctness');
});
