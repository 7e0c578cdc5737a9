// Nothing lost: `kernelduel optimize` (compile-only: no GPU here) is SIGKILLed at random moments,
// many times, and resumed with --resume each time. After every kill the journal reads without
// error and every result journaled before the kill is still there, unchanged; the session ends
// with exactly its budget. Then the hard cases: a full disk (a real, tiny tmpfs where mount works),
// a read-only session folder and a deleted work folder give clear errors and lose nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, newSessionId, openSession, openSessionReadOnly } from '../main/engine/session/store.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { CLI_ARGV } from './fixtures/cli.js';

const REPO = path.resolve(import.meta.dirname, '..');
const BUDGET = 4;
let home: string;

// The CLI as test/fixtures/cli.ts runs it (built once for the run: ~0.4 s to start instead of ~1.5 s
// under tsx, so many rounds fit).
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-kill-'));
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

function env(h = home): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, KERNELDUEL_HOME: h, KERNELDUEL_NVIDIA_SMI: '/nonexistent', KERNELDUEL_RESOURCES: path.join(REPO, 'resources') };
  delete e.KERNELDUEL_NO_GPU;
  return e;
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}
function optimize(extra: string[], killAfterMs: number | null, h = home): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGV, 'optimize', 'softmax', '--budget', String(BUDGET), '--strategy', 'random', '--tunables-only', ...extra], { cwd: REPO, env: env(h), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = killAfterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const safety = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      clearTimeout(safety);
      resolve({ code, signal, stderr });
    });
  });
}

const sessionsDir = (h = home): string => path.join(h, 'sessions');
function sessionIds(h = home): string[] {
  return fs.existsSync(sessionsDir(h)) ? fs.readdirSync(sessionsDir(h)).filter((d) => fs.existsSync(path.join(sessionsDir(h), d, 'session.json'))) : [];
}
function results(id: string, h = home): Map<string, string> {
  // Every line checked (a torn tail is allowed and dropped), nothing written: a read-only snapshot.
  const s = openSessionReadOnly(sessionsDir(h), id);
  const m = new Map<string, string>();
  for (const ev of s.events()) if (ev.type === 'result') m.set(ev.variantId, JSON.stringify(ev.result));
  return m;
}

/** A finished session: every result kept before is unchanged, exactly the budget measured, one baseline. */
function expectFinished(id: string, kept: Map<string, string>): void {
  const s = openSession(sessionsDir(), id);
  try {
    for (const [vid, r] of kept) expect(JSON.stringify(s.resultOf(vid))).toBe(r);
    const measured = s.variants().filter((v) => v.origin !== 'baseline' && s.resultOf(v.id));
    expect(measured.length).toBe(BUDGET);
    expect(s.status()).toMatchObject({ status: 'finished', budgetUsed: BUDGET });
    expect(s.variants().filter((v) => v.origin === 'baseline')).toHaveLength(1);
  } finally {
    s.close();
  }
}

/** Kills wanted; rounds go on (up to TIME_CAP_MS) until there were that many, however fast or slow the machine is. */
const KILLS = 10;
const TIME_CAP_MS = 150_000;

describe.skipIf(NO_NVCC)('SIGKILL at random moments, then --resume', () => {
  it(`keeps every journaled result across ${KILLS} kills, never corrupts the journal and finishes each session with exactly its budget`, async () => {
    const started = Date.now();
    let id: string | null = null;
    let before = new Map<string, string>();
    let kills = 0;
    let rounds = 0;
    let finished = 0;
    // A session that finishes before its kill is checked and a new one (another seed: new builds,
    // so runs stay long enough to be killed) takes its place. Kill early (before and during the
    // first builds) and later.
    let seed = 3;
    while (kills < KILLS && Date.now() - started < TIME_CAP_MS) {
      rounds++;
      const delay = 300 + Math.floor(Math.random() * (kills < 3 ? 1500 : 4000));
      const known = new Set(sessionIds());
      const o = await optimize(id ? ['--resume', id] : ['--seed', String(seed)], delay);
      if (!id) {
        const made = sessionIds().filter((x) => !known.has(x));
        if (made.length > 1) throw new Error(`more than one new session: ${made.join(' ')}`);
        id = made[0] ?? null;
      }
      if (o.signal === 'SIGKILL') kills++;
      else expect(o.code, o.stderr).toBe(0);
      if (!id) continue; // killed before its session existed
      const now = results(id); // reads without error (a torn tail is allowed and dropped)
      for (const [vid, r] of before) expect(now.get(vid), `result of ${vid} lost after kill ${kills}`).toBe(r);
      before = now;
      if (o.signal !== 'SIGKILL') {
        // It finished before the kill.
        expectFinished(id, before);
        finished++;
        id = null;
        before = new Map();
        seed++;
      }
    }
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    if (id) {
      const last = await optimize(['--resume', id], null);
      expect(last.code, last.stderr).toBe(0);
      expectFinished(id, before);
      finished++;
    }
    expect(finished).toBeGreaterThanOrEqual(1);
    console.log(`kill-resume: ${kills} kills in ${rounds} rounds, ${finished} session(s) finished, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 240_000);

  it('a deleted work folder (the build cache) is rebuilt on resume; nothing measured is lost', async () => {
    const id = sessionIds()[0];
    const kept = results(id);
    fs.rmSync(path.join(home, 'work'), { recursive: true, force: true });
    const o = await optimize(['--resume', id], null);
    expect(o.code, o.stderr).toBe(0);
    const now = results(id);
    for (const [vid, r] of kept) expect(now.get(vid)).toBe(r);
  }, 120_000);
});

// A real tiny file system where this machine lets us mount one (root in CI); else skipped.
function mountTmpfs(dir: string, size: string): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}
const umount = (dir: string): void => void spawnSync('umount', ['-l', dir]);
const meta = (id: string) => ({ id, task: { name: 'softmax', dir: path.join(REPO, 'resources', 'tasks', 'softmax'), manifestHash: 'x' }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: 'test' });
const pad = 'p'.repeat(2000);

describe('disk full, read-only and deleted session folders', () => {
  it('disk full (real tmpfs): a clear error naming the journal; everything appended before is intact', (ctx) => {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-full-'));
    if (!mountTmpfs(mnt, '96k')) {
      fs.rmSync(mnt, { recursive: true, force: true });
      ctx.skip();
      return;
    }
    try {
      const s = createSession(mnt, meta(newSessionId()));
      let appended = 0;
      let err: Error | null = null;
      for (let i = 0; i < 1000 && !err; i++) {
        try {
          s.append({ type: 'note', level: 'info', message: `${i} ${pad}` });
          appended++;
        } catch (e) {
          err = e as Error;
        }
      }
      expect(err, 'the tmpfs never filled up').not.toBeNull();
      expect(err!.message).toMatch(/disk full/);
      expect(err!.message).toContain('journal.jsonl');
      expect(err!.message).toMatch(/already written to the journal is safe/);
      s.close();
      const back = openSession(s.dir);
      expect(back.events().filter((e) => e.type === 'note')).toHaveLength(appended);
      back.close();
    } finally {
      umount(mnt);
      fs.rmSync(mnt, { recursive: true, force: true });
    }
  });

  it.skipIf(NO_NVCC)('a read-only session folder: --resume fails with a clear message (no stack trace) and the journal is untouched', async (ctx) => {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-ro-'));
    if (!mountTmpfs(mnt, '4m')) {
      fs.rmSync(mnt, { recursive: true, force: true });
      ctx.skip();
      return;
    }
    try {
      // A finished session copied onto its own file system, then made read-only.
      const src = sessionIds()[0];
      fs.mkdirSync(path.join(mnt, 'sessions'), { recursive: true });
      fs.cpSync(path.join(sessionsDir(), src), path.join(mnt, 'sessions', src), { recursive: true });
      const journal = path.join(mnt, 'sessions', src, 'journal.jsonl');
      const bytes = fs.readFileSync(journal);
      expect(spawnSync('mount', ['-o', 'remount,ro', mnt]).status).toBe(0);
      const o = await optimize(['--resume', src], null, mnt);
      expect(o.code).not.toBe(0);
      expect(o.stderr).toMatch(/read-only/);
      expect(o.stderr).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/); // no stack trace
      expect(fs.readFileSync(journal).equals(bytes)).toBe(true);
    } finally {
      umount(mnt);
      fs.rmSync(mnt, { recursive: true, force: true });
    }
  }, 60_000);

  it('a session folder deleted while open: append fails clearly', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-del-'));
    const s = createSession(root, meta(newSessionId()));
    s.append({ type: 'note', level: 'info', message: 'one' });
    fs.rmSync(s.dir, { recursive: true, force: true });
    expect(() => s.append({ type: 'note', level: 'info', message: 'two' })).toThrow(/deleted while the session was open/);
    s.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
});
