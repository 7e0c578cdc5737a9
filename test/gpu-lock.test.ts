// Measurements on one GPU are serialised across processes by a lock file per GPU.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, hostname } from 'node:os';
import { join } from 'node:path';
import { gpuLockPath, parseLockOwner, withGpuLock } from '../main/engine/platform/gpu/lock.js';
import { GpuQueue } from '../main/engine/measure/evaluate.js';

const dir = mkdtempSync(join(tmpdir(), 'kd-lock-'));

describe('GPU lock', () => {
  it('waits while another process holds the GPU, then runs; the lock is gone afterwards', async () => {
    const path = gpuLockPath('GPU-test', dir);
    const released = join(dir, 'GPU-test.released');
    // Another process takes the lock for ~1.5 s (plain Node: O_EXCL create, sleep), marks that it
    // lets go, then unlinks it: the job must start after that mark, however slow the machine is.
    const child = spawn(process.execPath, ['-e', `const fs=require('fs');fs.writeFileSync(${JSON.stringify(path)}, process.pid+' '+require('os').hostname()+' x\\n',{flag:'wx'});console.log('held');setTimeout(()=>{fs.writeFileSync(${JSON.stringify(released)}, '');fs.unlinkSync(${JSON.stringify(path)});process.exit(0)},1500)`]);
    await new Promise<void>((res) => child.stdout.once('data', () => res()));
    const waited: string[] = [];
    const ranAfterRelease = await withGpuLock('GPU-test', async () => existsSync(released), { dir, onWait: (o) => waited.push(o), pollMs: 20 });
    expect(waited).toHaveLength(1);
    expect(waited[0]).toMatch(new RegExp(`pid ${child.pid}`));
    expect(ranAfterRelease).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('takes over a lock left by a process that died', async () => {
    const path = gpuLockPath('GPU-stale', dir);
    writeFileSync(path, `999999 ${hostname()} 2026-01-01\n`); // no such pid
    let waited = false;
    const r = await withGpuLock('GPU-stale', async () => 'ran', { dir, onWait: () => (waited = true) });
    expect(r).toBe('ran');
    expect(waited).toBe(false);
  });

  it('releases the lock when the job throws', async () => {
    await expect(withGpuLock('GPU-throw', async () => Promise.reject(new Error('boom')), { dir })).rejects.toThrow('boom');
    expect(existsSync(gpuLockPath('GPU-throw', dir))).toBe(false);
  });
});

describe('GPU lock: the wait message names its owner', () => {
  it('parseLockOwner reads "<pid> <host> <time>" and nothing less', () => {
    expect(parseLockOwner('123 box 2026-01-01\n')).toEqual({ pid: 123, host: 'box' });
    for (const t of ['', '\n', '123', ' box', 'x box', '0 box']) expect(parseLockOwner(t), JSON.stringify(t)).toBeNull();
  });

  it('a lock file caught between its creation and its owner line never gives "pid  on ?"', async () => {
    const path = gpuLockPath('GPU-torn', dir);
    // Another process creates the file empty, writes its owner 300 ms later, holds it 1 s more.
    const child = spawn(process.execPath, ['-e', `const fs=require('fs');fs.writeFileSync(${JSON.stringify(path)}, '', {flag:'wx'});console.log('created');setTimeout(()=>{fs.writeFileSync(${JSON.stringify(path)}, process.pid+' '+require('os').hostname()+' x\\n');setTimeout(()=>{fs.unlinkSync(${JSON.stringify(path)});process.exit(0)},1000)},300)`]);
    await new Promise<void>((res) => child.stdout.once('data', () => res()));
    const waited: string[] = [];
    // However late the owner line comes on a busy machine, it is waited for (not reported as missing).
    await withGpuLock('GPU-torn', async () => 'ran', { dir, onWait: (o) => waited.push(o), pollMs: 10, ownerWaitMs: 60_000 });
    expect(waited).toEqual([`pid ${child.pid} on ${hostname()}`]);
  });

  it('a lock file that never gets an owner line is named, with what to do', async () => {
    const path = gpuLockPath('GPU-empty', dir);
    writeFileSync(path, '');
    const waited: string[] = [];
    const job = withGpuLock('GPU-empty', async () => 'ran', { dir, onWait: (o) => waited.push(o), pollMs: 10, ownerWaitMs: 100 });
    while (!waited.length) await new Promise((r) => setTimeout(r, 20));
    expect(waited[0]).toContain(path);
    expect(waited[0]).toMatch(/delete that file/);
    unlinkSync(path);
    expect(await job).toBe('ran');
  });

  it('the lock file is complete the moment it exists (linked into place with its owner line)', async () => {
    const path = gpuLockPath('GPU-whole', dir);
    await withGpuLock('GPU-whole', async () => {
      expect(parseLockOwner(readFileSync(path, 'utf8'))).toEqual({ pid: process.pid, host: hostname() });
    }, { dir });
    expect(readdirSync(dir).filter((f) => f.startsWith('gpu-GPU-whole'))).toEqual([]);
  });
});

describe('GPU queue: shared jobs together, exclusive ones alone, first come first served', () => {
  it('runs shared jobs side by side, never beside an exclusive one, and holds back shared jobs queued after a waiting exclusive one', async () => {
    process.env.KERNELDUEL_HOME = mkdtempSync(join(tmpdir(), 'kd-queue-'));
    const q = new GpuQueue(`test-${process.pid}`);
    const log: string[] = [];
    let running = { shared: 0, exclusive: 0 };
    const job = (name: string, mode: 'shared' | 'exclusive', ms: number) => async () => {
      running = { ...running, [mode]: running[mode] + 1 };
      log.push(`${name}+ s${running.shared} x${running.exclusive}`);
      await new Promise((r) => setTimeout(r, ms));
      running = { ...running, [mode]: running[mode] - 1 };
      log.push(`${name}-`);
    };
    const a = q.share(job('a', 'shared', 60));
    const b = q.share(job('b', 'shared', 60));
    const x = q.add(job('x', 'exclusive', 30));
    const c = q.share(job('c', 'shared', 10)); // after x: waits for it
    await Promise.all([a, b, x, c]);
    // a and b overlap; x starts only after both ended and runs alone; c only after x.
    expect(log.slice(0, 2).map((l) => l[0]).sort()).toEqual(['a', 'b']);
    expect(log[1]).toMatch(/\+ s2 x0$/);
    const xi = log.indexOf('x+ s0 x1');
    expect(xi).toBeGreaterThan(log.indexOf('a-'));
    expect(xi).toBeGreaterThan(log.indexOf('b-'));
    expect(log.indexOf('c+ s1 x0')).toBeGreaterThan(log.indexOf('x-'));
    expect(q.pending).toBe(0);
    // The lock file is given back shortly after the last job.
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(gpuLockPath(`test-${process.pid}`))).toBe(false);
  });

  it('KERNELDUEL_TRACE: every place asked for, given and handed back, in order, with its job name; nothing written without it', async () => {
    process.env.KERNELDUEL_HOME = mkdtempSync(join(tmpdir(), 'kd-queue-'));
    const file = join(mkdtempSync(join(tmpdir(), 'kd-trace-')), 'trace.jsonl');
    const q = new GpuQueue(`trace-${process.pid}`);
    await q.share(() => Promise.resolve(), 'untraced');
    expect(existsSync(file)).toBe(false);
    process.env.KERNELDUEL_TRACE = file;
    try {
      const s = q.share(() => new Promise((r) => setTimeout(r, 30)), 'capture-ahead v2');
      const x = q.add(() => Promise.resolve(), 'time v1');
      await Promise.all([s, x]);
    } finally {
      delete process.env.KERNELDUEL_TRACE;
    }
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: number; q: string; ev: string; mode: string; what: string });
    expect(lines.map((l) => `${l.ev} ${l.what}`)).toEqual(['ask capture-ahead v2', 'got capture-ahead v2', 'ask time v1', 'gave capture-ahead v2', 'got time v1', 'gave time v1']);
    expect(lines.every((l) => l.q === `trace-${process.pid}` && typeof l.t === 'number')).toBe(true);
    expect(lines.find((l) => l.what === 'time v1')?.mode).toBe('exclusive');
  });

  it('captures started ahead run beside a duel (paired), which runs beside nothing else; timing waits for both; first come, first served', async () => {
    process.env.KERNELDUEL_HOME = mkdtempSync(join(tmpdir(), 'kd-queue-'));
    const q = new GpuQueue(`paired-${process.pid}`);
    const log: string[] = [];
    const beside: Record<string, string[]> = {}; // what else was running at some point while a job ran
    const running = new Set<string>();
    const job = (name: string, ms: number) => async () => {
      log.push(`${name}+`);
      beside[name] = [...running];
      for (const other of running) beside[other].push(name);
      running.add(name);
      await new Promise((r) => setTimeout(r, ms));
      running.delete(name);
      log.push(`${name}-`);
    };
    const check = q.run('shared', job('check', 40));
    const duel = q.run('paired', job('duel', 60)); // waits for the check (a judge's work), not for captures
    const cap1 = q.run('capture', job('cap1', 30)); // after the waiting duel: starts with it
    await Promise.all([check, duel, cap1]);
    expect(log.indexOf('duel+')).toBeGreaterThan(log.indexOf('check-'));
    expect(beside.duel).toEqual(['cap1']);
    // A check asked for while a duel runs waits for it; a capture does not; a timing waits for both.
    const d2 = q.run('paired', job('duel2', 60));
    const cap2 = q.run('capture', job('cap2', 90));
    const c2 = q.run('shared', job('check2', 10));
    const t2 = q.run('exclusive', job('time2', 10));
    await Promise.all([d2, cap2, c2, t2]);
    expect(beside.duel2).toEqual(['cap2']);
    expect(log.indexOf('check2+')).toBeGreaterThan(log.indexOf('duel2-'));
    expect(beside.check2).toEqual(['cap2']);
    expect(beside.time2).toEqual([]);
    // A capture never runs beside timing.
    const t3 = q.run('exclusive', job('time3', 40));
    const cap3 = q.run('capture', job('cap3', 10));
    await Promise.all([t3, cap3]);
    expect(beside.time3).toEqual([]);
    expect(log.slice(-4)).toEqual(['time3+', 'time3-', 'cap3+', 'cap3-']);
    expect(q.pending).toBe(0);
  });

  it('captureBesidePaired: whether a capture ran beside the duel holding its place (one already running, or one that came after)', async () => {
    process.env.KERNELDUEL_HOME = mkdtempSync(join(tmpdir(), 'kd-queue-'));
    const q = new GpuQueue(`beside-${process.pid}`);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const seen: boolean[] = [];
    // Alone.
    await q.run('paired', async () => {
      await sleep(10);
      seen.push(q.captureBesidePaired);
    });
    // A capture that came after the duel got its place.
    const d1 = q.run('paired', async () => {
      await sleep(40);
      seen.push(q.captureBesidePaired);
    });
    await sleep(5);
    await q.run('capture', () => sleep(10));
    await d1;
    // A capture already running when the duel got its place.
    const c2 = q.run('capture', () => sleep(40));
    await q.run('paired', async () => {
      seen.push(q.captureBesidePaired);
    });
    await c2;
    // The next duel alone again.
    await q.run('paired', async () => {
      seen.push(q.captureBesidePaired);
    });
    expect(seen).toEqual([false, true, true, false]);
  });

  it('nextPaired: settles when the next duel gets its place (not before), or after its timeout', async () => {
    process.env.KERNELDUEL_HOME = mkdtempSync(join(tmpdir(), 'kd-queue-'));
    const q = new GpuQueue(`next-paired-${process.pid}`);
    const t0 = Date.now();
    const events: string[] = [];
    const waiting = q.nextPaired(5000).then(() => events.push(`woke ${q.running}`));
    await q.run('shared', () => new Promise((r) => setTimeout(r, 30)), 'check');
    expect(events).toEqual([]); // a check is not a duel
    await q.run('paired', async () => {
      await new Promise((r) => setTimeout(r, 30));
      events.push('duel ends');
    }, 'duel');
    await waiting;
    expect(events).toEqual(['woke 1', 'duel ends']); // woken while the duel held its place
    expect(Date.now() - t0).toBeLessThan(4000);
    const t1 = Date.now();
    await q.nextPaired(60); // no duel: the timeout
    expect(Date.now() - t1).toBeGreaterThanOrEqual(55);
  });
});
