// runProcess's gate (the gated capture process, resources/harness/kd_capture.h await_gate): open()
// is asked only once the process said it is ready; no deadline runs while it waits for its turn;
// the timeout counts from "go"; a gate that stays shut closes stdin and the process ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../main/engine/platform/proc/run.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-gate-'));
const script = path.join(dir, 'gated.mjs');
// argv: <ms before ready> <ms of work after go>; prints what it read on stdin.
fs.writeFileSync(script, `
const [before, work] = process.argv.slice(2).map(Number);
await new Promise((r) => setTimeout(r, before));
process.stdout.write('ready-line\\n');
let b = '';
process.stdin.on('data', (c) => (b += c));
process.stdin.on('end', async () => {
  process.stdout.write('read:' + JSON.stringify(b) + '\\n');
  if (b === 'go\\n') await new Promise((r) => setTimeout(r, work));
  process.stdout.write('done\\n');
});
`);
const node = process.execPath;

describe('runProcess with a gate', () => {
  it('asks open() after the ready line, waits for it without a deadline, then writes go; the timeout counts from go', async () => {
    let askedAt = 0;
    const t0 = Date.now();
    const r = await runProcess(node, [script, '50', '50'], {
      timeoutMs: 400,
      gate: { line: 'ready-line', open: async () => { askedAt = Date.now(); await new Promise((x) => setTimeout(x, 600)); return true; } },
    });
    expect(askedAt - t0).toBeGreaterThanOrEqual(40);
    expect(r.timedOut).toBe(false); // 600 ms waiting for the turn, more than timeoutMs: not counted
    expect(r.stdout).toContain('read:"go\\n"');
    expect(r.stdout).toContain('done');
    expect(r.goAtMs).toBeGreaterThanOrEqual(askedAt + 590);
  });

  it('after go a process that works longer than timeoutMs is killed as timed out', async () => {
    const r = await runProcess(node, [script, '0', '5000'], { timeoutMs: 300, gate: { line: 'ready-line', open: () => Promise.resolve(true) } });
    expect(r.timedOut).toBe(true);
    expect(r.stdout).not.toContain('done');
  });

  it('a gate that stays shut closes stdin without go: the process ends; goAtMs is absent', async () => {
    const r = await runProcess(node, [script, '0', '0'], { timeoutMs: 2000, gate: { line: 'ready-line', open: () => Promise.resolve(false) } });
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toContain('read:""');
    expect(r.goAtMs).toBeUndefined();
  });

  it('a process that never says it is ready is stopped after readyTimeoutMs, and open() is never asked', async () => {
    let asked = false;
    const r = await runProcess(node, [script, '5000', '0'], { timeoutMs: 60_000, gate: { line: 'ready-line', readyTimeoutMs: 300, open: () => { asked = true; return Promise.resolve(true); } } });
    expect(r.timedOut).toBe(true);
    expect(r.durationMs).toBeLessThan(3000);
    expect(asked).toBe(false);
  });
});
