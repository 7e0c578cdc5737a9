// A newcomer's first minutes, as CI's machine sees them: a fresh clone of this repository's HEAD
// (committed files only), the README's quick-start commands exactly as written, and an environment
// with nothing of ours in it (no ELECTRON_*, npm_config_*, KERNELDUEL_* variables; PATH without this
// checkout's node_modules/.bin). `npm install` must succeed whether or not Electron's binary can be
// downloaded here; `npm start -- --port 0` must print its URL; the URL's token must let a request in
// and its absence keep one out; a second `npm start` on the same port must say how to pick another;
// and SIGTERM to npm must stop the server, not leave it running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { kernelduelHome, workRoot } from '../main/engine/base/paths.js';
import { sessionsRoot } from '../main/engine/session/store.js';
import { gpuLockPath } from '../main/engine/platform/gpu/lock.js';

const REPO = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

/** The commands of the README's "Quick start" block, comments removed. */
function quickStartCommands(): string[] {
  const section = README.slice(README.indexOf('## Quick start'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean);
}

/** Only what any shell has: no variables of ours or of the npm run that started this test. */
function newcomerEnv(): NodeJS.ProcessEnv {
  const keep = ['HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'SHELL', 'TZ'];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  env.PATH = (process.env.PATH ?? '').split(path.delimiter).filter((p) => !p.includes(`node_modules${path.sep}.bin`)).join(path.delimiter);
  return env;
}

interface Done {
  code: number | null;
  out: string;
}
function run(cmd: string, cwd: string, timeoutMs: number): Promise<Done> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', cmd], { cwd, env: newcomerEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

/** `npm start ...` in its own process group; resolves with the URL it prints (or its output when it exits first). */
function start(cmd: string, cwd: string, timeoutMs: number): Promise<{ child: ChildProcess; url: string | null; out: () => string; exited: Promise<number | null> }> {
  const child = spawn('sh', ['-c', `exec ${cmd}`], { cwd, env: newcomerEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve({ child, url: null, out: () => out, exited }), timeoutMs);
    const look = (d: Buffer): void => {
      out += d.toString();
      const m = /KernelDuel workbench: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve({ child, url: m[1], out: () => out, exited });
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    void exited.then(() => {
      clearTimeout(t);
      resolve({ child, url: null, out: () => out, exited });
    });
  });
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on('error', reject);
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** Processes of a process group still alive (`ps` lists them). */
function groupMembers(pgid: number): string[] {
  const r = spawnSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' });
  return r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
}

let clone = '';
let inGit = true;
beforeAll(() => {
  try {
    execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { stdio: 'pipe' });
  } catch {
    inGit = false;
    return;
  }
  clone = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-newcomer-'));
  // The commit this checkout is at, whether or not a branch names it.
  execFileSync('git', ['clone', '--quiet', '--no-checkout', REPO, clone], { stdio: 'pipe' });
  execFileSync('git', ['-C', clone, 'fetch', '--quiet', REPO, 'HEAD'], { stdio: 'pipe' });
  execFileSync('git', ['-C', clone, 'checkout', '--quiet', '--detach', 'FETCH_HEAD'], { stdio: 'pipe' });
});
afterAll(() => {
  if (clone) fs.rmSync(clone, { recursive: true, force: true });
});

describe('a newcomer following the README on a fresh clone', () => {
  it('the quick start is npm install, npm start, npm test, and CI runs it with no variables of its own', () => {
    const cmds = quickStartCommands();
    expect(cmds).toEqual(['npm install', 'npm start', 'npm test']);
    const ci = fs.readFileSync(path.join(REPO, '.ci', 'run'), 'utf8');
    const ciCmds = ci.split('\n').map((l) => l.trim()).filter((l) => /^npm /.test(l));
    expect(ciCmds).toEqual(['npm install', 'npm test']);
    expect(ci).not.toMatch(/ELECTRON_|npm_config_/);
    expect(fs.readFileSync(path.join(REPO, '.npmrc'), 'utf8')).not.toMatch(/electron/);
  });

  it('the README\'s KERNELDUEL_HOME paragraph names the folders the code uses, and an empty value means unset', () => {
    const para = README.slice(README.indexOf('KernelDuel keeps its files in'));
    const env = { KERNELDUEL_HOME: '/data/kd' };
    const before = process.env.KERNELDUEL_HOME;
    process.env.KERNELDUEL_HOME = env.KERNELDUEL_HOME;
    let locks: string;
    try {
      locks = path.dirname(gpuLockPath('x'));
    } finally {
      if (before === undefined) delete process.env.KERNELDUEL_HOME;
      else process.env.KERNELDUEL_HOME = before;
    }
    const docs: Array<[string, string]> = [
      ['`sessions/<id>/`', sessionsRoot(env)],
      ['`work/`', workRoot(env)],
      ['`locks/`', locks],
    ];
    for (const [said, where] of docs) {
      expect(para).toContain(said);
      expect(where.startsWith('/data/kd/')).toBe(true);
      expect(where).toContain(said.replace(/`|<id>\//g, '').replace(/\/$/, ''));
    }
    expect(para).toMatch(/^KernelDuel keeps its files in `~\/\.kernelduel`, or in the folder `KERNELDUEL_HOME` names/);
    for (const blank of ['', ' ']) {
      expect(kernelduelHome({ KERNELDUEL_HOME: blank })).toBe(path.join(os.homedir(), '.kernelduel'));
      expect(sessionsRoot({ KERNELDUEL_HOME: blank })).toBe(path.join(os.homedir(), '.kernelduel', 'sessions'));
    }
  });

  it('npm install, npm start -- --port 0, the token, a taken port, and SIGTERM to npm', async (ctx) => {
    if (!inGit) ctx.skip();
    const [install] = quickStartCommands();
    const inst = await run(install, clone, 400_000);
    expect(inst.code, inst.out).toBe(0);
    expect(inst.out).not.toMatch(/Unknown (project|user) config/);
    expect(inst.out).not.toMatch(/npm error/);
    const electronOk = fs.existsSync(path.join(clone, 'node_modules', 'electron', 'path.txt'));
    if (!electronOk) expect(inst.out).toMatch(/Electron's binary could not be downloaded .*browser mode/);

    // README: `npm start -- --port 0` picks a free port.
    expect(README).toContain('npm start -- --port 0');
    const s = await start('npm start -- --port 0', clone, 300_000);
    try {
      expect(s.url, s.out()).toBeTruthy();
      const url = new URL(s.url!);
      const port = Number(url.port);
      const withToken = await get(url.href);
      expect(withToken.status).toBe(303); // the token becomes a cookie
      const cookie = String(withToken.headers['set-cookie']?.[0] ?? '').split(';')[0];
      expect(cookie).toMatch(/^kernelduel_token_\d+=/);
      const page = await get(`http://127.0.0.1:${port}/`, { cookie });
      expect(page.status).toBe(200);
      expect(page.body).toMatch(/<html/i);
      const without = await get(`http://127.0.0.1:${port}/`);
      expect(without.status).toBe(401);

      // The same port again: refused, saying how to pick another.
      const again = await start(`npm start -- --port ${port}`, clone, 120_000);
      const code = await again.exited;
      expect(again.url).toBeNull();
      expect(code, again.out()).not.toBe(0);
      expect(again.out()).toMatch(new RegExp(`port ${port} .*in use.*--port 0`));

      // Stopping npm stops the server: the port closes and nothing of the group is left.
      process.kill(s.child.pid!, 'SIGTERM');
      let open = true;
      for (let i = 0; i < 100 && (open || groupMembers(s.child.pid!).length); i++) {
        await new Promise((r) => setTimeout(r, 100));
        open = await portOpen(port);
      }
      expect(open).toBe(false);
      expect(groupMembers(s.child.pid!)).toEqual([]);
    } finally {
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }, 600_000);
});
