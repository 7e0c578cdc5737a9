// scripts/device-batch.sh, the detached runner of the GPU batches, on this machine with a stand-in
// bundle (no GPU needed: the lanes run plain shell commands). On 2026-12-02 its log said "exit 0"
// for a command that had exited 2 ($? read after $(stamp) had replaced it), so a failed first step
// looked like a success.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = join(import.meta.dirname, '..');

/** A scratch repository holding the two scripts and a stand-in bundle (a launcher that prints a version, README.txt); returns its root and the bundle folder. */
function scratchRepo(built: string): { root: string; kd: string } {
  const root = mkdtempSync(join(tmpdir(), 'kd-batch-test-'));
  mkdirSync(join(root, 'scripts'));
  for (const f of ['device-batch.sh', 'lib-detached.sh']) copyFileSync(join(repo, 'scripts', f), join(root, 'scripts', f));
  const kd = join(root, 'dist-gpu', 'kernelduel');
  mkdirSync(kd, { recursive: true });
  writeFileSync(join(kd, 'kernelduel'), '#!/bin/sh\necho 0.0.0-test\n');
  chmodSync(join(kd, 'kernelduel'), 0o755);
  writeFileSync(join(kd, 'README.txt'), `Built ${built} by a test.\n`);
  return { root, kd };
}

/** The script's environment for a batch of `lane0` in `root` (session folder root/session, results archive root/out). */
function batchEnv(root: string, lane0: string): { session: string; env: NodeJS.ProcessEnv } {
  const session = join(root, 'session');
  return { session, env: { ...process.env, KD_SESSION_DIR: session, OUT: join(root, 'out'), KD_LANE0: lane0 } };
}

/** Waits (up to 10 s) for the batch in `session` to write its `done` file; true when it did. */
async function batchDone(session: string): Promise<boolean> {
  const done = join(session, 'done');
  for (let i = 0; i < 100 && !existsSync(done); i++) await new Promise((r) => setTimeout(r, 100));
  return existsSync(done);
}

describe('scripts/device-batch.sh', () => {
  it('logs the real exit status of each command of a lane, and runs the next one after a failure', async () => {
    const { root } = scratchRepo('2026-12-02T00:00:00Z');
    try {
      const { session, env } = batchEnv(root, 'echo one > $RES/one.txt; exit 3;;echo two > $RES/two.txt');
      execFileSync('bash', ['scripts/device-batch.sh', 'start'], { cwd: root, env, encoding: 'utf8' });
      expect(await batchDone(session)).toBe(true);
      const log = readFileSync(join(session, 'session.log'), 'utf8');
      expect(log).toMatch(/gpu0\.1 exit 3$/m);
      expect(log).toMatch(/gpu0\.2 exit 0$/m);
      expect(readFileSync(join(session, 'res', 'two.txt'), 'utf8')).toBe('two\n');
      const waited = execFileSync('bash', ['scripts/device-batch.sh', 'wait', '1'], { cwd: root, env, encoding: 'utf8' });
      expect(waited).toContain('ALL-DONE');
      expect(existsSync(join(root, 'out', 'batch.tgz'))).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('pack moves all of the bundle but its runtime into .kd-carry (the 64 MiB carry), start unpacks it, unpack puts it back', async () => {
    const { root, kd } = scratchRepo('2026-12-07T00:00:00Z');
    try {
      mkdirSync(join(kd, 'lib'));
      mkdirSync(join(kd, 'runtime'));
      writeFileSync(join(kd, 'lib', 'main.js'), 'the engine\n');
      writeFileSync(join(kd, 'runtime', 'node.xz'), 'a runtime\n');
      const { session, env } = batchEnv(root, 'cat $KD/lib/main.js > $RES/lib.txt');
      const packed = execFileSync('bash', ['scripts/device-batch.sh', 'pack'], { cwd: root, env, encoding: 'utf8' });
      expect(packed).toMatch(/packed 2 entries .*\.kd-carry\/bundle\.tar\.xz/);
      expect(existsSync(join(kd, 'lib'))).toBe(false);
      expect(existsSync(join(kd, 'kernelduel'))).toBe(false);
      expect(readFileSync(join(kd, 'runtime', 'node.xz'), 'utf8')).toBe('a runtime\n');
      expect(existsSync(join(root, '.kd-carry', 'bundle.tar.xz'))).toBe(true);
      execFileSync('bash', ['scripts/device-batch.sh', 'start'], { cwd: root, env, encoding: 'utf8' });
      expect(await batchDone(session)).toBe(true);
      expect(readFileSync(join(session, 'res', 'lib.txt'), 'utf8')).toBe('the engine\n');
      rmSync(join(kd, 'lib'), { recursive: true });
      execFileSync('bash', ['scripts/device-batch.sh', 'unpack'], { cwd: root, env, encoding: 'utf8' });
      expect(readFileSync(join(kd, 'lib', 'main.js'), 'utf8')).toBe('the engine\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('skip stops a command of a lane once it starts (by its pid, not by its words), and the lane goes on to the next', async () => {
    const { root } = scratchRepo('2026-12-07T18:00:00Z');
    try {
      const { session, env } = batchEnv(root, 'sleep 1;;sleep 60; echo not skipped > $RES/two.txt;;echo three > $RES/three.txt');
      execFileSync('bash', ['scripts/device-batch.sh', 'start'], { cwd: root, env, encoding: 'utf8' });
      const skipped = execFileSync('bash', ['scripts/device-batch.sh', 'skip', 'gpu0.2', '30'], { cwd: root, env, encoding: 'utf8' });
      expect(skipped).toMatch(/^stopped gpu0\.2 at /);
      expect(await batchDone(session)).toBe(true);
      const log = readFileSync(join(session, 'session.log'), 'utf8');
      expect(log).toMatch(/gpu0\.1 exit 0$/m);
      expect(log).toMatch(/gpu0\.2 exit 143$/m); // timeout passed the TERM on
      expect(log).toMatch(/gpu0\.3 exit 0$/m);
      expect(existsSync(join(session, 'res', 'two.txt'))).toBe(false);
      expect(readFileSync(join(session, 'res', 'three.txt'), 'utf8')).toBe('three\n');
      // Over: says so at once; a malformed name is refused.
      expect(execFileSync('bash', ['scripts/device-batch.sh', 'skip', 'gpu0.1', '5'], { cwd: root, env, encoding: 'utf8' })).toMatch(/gpu0\.1 is not running/);
      const bad = spawnSync('bash', ['scripts/device-batch.sh', 'skip', 'self-duels 100'], { cwd: root, env, encoding: 'utf8' });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/LANE\.N/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('wait on a machine where no batch was started (a lost lease: a new machine, /tmp empty) says so at once with exit 3', () => {
    const root = mkdtempSync(join(tmpdir(), 'kd-batch-test-'));
    try {
      mkdirSync(join(root, 'scripts'));
      for (const f of ['device-batch.sh', 'lib-detached.sh']) copyFileSync(join(repo, 'scripts', f), join(root, 'scripts', f));
      const env = { ...process.env, KD_SESSION_DIR: join(root, 'session'), OUT: join(root, 'out') };
      const t0 = Date.now();
      const r = spawnSync('bash', ['scripts/device-batch.sh', 'wait', '30'], { cwd: root, env, encoding: 'utf8' });
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(/no run here .*new machine/);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
