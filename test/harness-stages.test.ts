// checktime (check and time in one harness process): the check stage keeps a deadline of its own,
// and a run that ends without a result is placed in the stage it reached. Exercised with stand-in
// harness scripts (no GPU): the harness creates <result>.time when timing starts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHarness } from '../main/eval/harness.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-stages-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function fake(name: string, body: string): string {
  const f = path.join(root, `${name}.sh`);
  fs.writeFileSync(f, `#!/bin/bash\nnonce=$(sed -n 's/^nonce //p' "$2")\n${body}\n`, { mode: 0o755 });
  return f;
}
const run = (harness: string, checkTimeoutMs: number, timeoutMs = 20_000, onTimingStarted?: () => void) =>
  runHarness<{ x?: number }>({ harness, mode: 'checktime', plan: null, libs: [], workDir: fs.mkdtempSync(path.join(root, 'w-')), gpu: null, timeoutMs, checkTimeoutMs, onTimingStarted, isolation: { sandbox: false } });

describe('checktime stages', () => {
  it('a check that hangs is killed at the check deadline, not the whole run\'s, and says so', async () => {
    const t0 = Date.now();
    const r = await run(fake('hang-in-check', 'sleep 30'), 1000, 20_000);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(r.ok).toBe(false);
    expect(r.stage).toBe('check');
    expect(r.failure).toMatchObject({ kind: 'timeout' });
    expect(r.failure!.reason).toMatch(/^check did not finish within 1 s/);
  });

  it('once timing has started the check deadline no longer applies; the result carries its stage', async () => {
    let started = 0;
    const r = await run(fake('slow-timing', 'touch "$3.time"; sleep 2; printf \'{"kdresult":1,"nonce":"%s","status":"ok","stage":"time","body":{"x":1}}\' "$nonce" > "$3"'), 500, 20_000, () => started++);
    expect(r.ok, r.failure?.reason).toBe(true);
    expect(started).toBe(1); // the engine learns when timing starts (its 'time' stage event)
    expect(r.stage).toBe('time');
    expect(r.body).toEqual({ x: 1 });
  });

  it('a crash while timing is placed in the time stage', async () => {
    const r = await run(fake('crash-in-timing', 'touch "$3.time"; kill -SEGV $$'), 5000);
    expect(r.ok).toBe(false);
    expect(r.stage).toBe('time');
    expect(r.failure!.reason).toMatch(/^the time process was killed by SIGSEGV/);
  });

  it('a crash before timing is placed in the check stage', async () => {
    const r = await run(fake('exit-in-check', 'exit 0'), 5000);
    expect(r.stage).toBe('check');
    expect(r.failure!.reason).toMatch(/^the check process exited with code 0 without a result/);
  });
});

describe('isolation switches reach the harness', () => {
  const echo = () => fake('echo-switches', 'printf \'{"kdresult":1,"nonce":"%s","status":"ok","body":{"filter":"%s","refs":"%s"}}\' "$nonce" "${KERNELDUEL_SYSCALL_FILTER:-on}" "${KERNELDUEL_HIDE_REFS:-on}" > "$3"');
  const go = (isolation: { syscallFilter?: boolean; hideRefs?: boolean }) =>
    runHarness<{ filter: string; refs: string }>({ harness: echo(), mode: 'check', plan: null, libs: [], workDir: fs.mkdtempSync(path.join(root, 'sw-')), gpu: null, timeoutMs: 10_000, isolation: { sandbox: false, ...isolation } });

  it('KERNELDUEL_SYSCALL_FILTER=off and KERNELDUEL_HIDE_REFS=off set by the user turn the layers off; other values are not passed on', async () => {
    const saved = { f: process.env.KERNELDUEL_SYSCALL_FILTER, r: process.env.KERNELDUEL_HIDE_REFS };
    try {
      delete process.env.KERNELDUEL_SYSCALL_FILTER;
      delete process.env.KERNELDUEL_HIDE_REFS;
      expect((await go({})).body).toEqual({ filter: 'on', refs: 'on' });
      expect((await go({ hideRefs: false })).body).toEqual({ filter: 'on', refs: 'off' }); // dropped by the probe
      process.env.KERNELDUEL_SYSCALL_FILTER = 'off';
      process.env.KERNELDUEL_HIDE_REFS = 'off';
      expect((await go({})).body).toEqual({ filter: 'off', refs: 'off' });
      process.env.KERNELDUEL_HIDE_REFS = 'no';
      expect((await go({})).body).toEqual({ filter: 'off', refs: 'on' });
    } finally {
      for (const [k, v] of [['KERNELDUEL_SYSCALL_FILTER', saved.f], ['KERNELDUEL_HIDE_REFS', saved.r]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
