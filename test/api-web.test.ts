import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startWebServer, type WebServer } from '../main/doors/web/server.js';
import { allowedHosts, hostAllowed } from '../main/doors/web/auth.js';
import { ApiService } from '../main/core/service.js';

let dir: string;
let srv: WebServer;

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/** Resolves with 'open' or the HTTP status the upgrade was refused with. */
function connect(url: string, headers: Record<string, string>): Promise<{ outcome: 'open' | number; ws: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => resolve({ outcome: 'open', ws }));
    ws.on('unexpected-response', (_req, res) => resolve({ outcome: res.statusCode ?? 0, ws }));
    ws.on('error', () => resolve({ outcome: -1, ws }));
  });
}

function call(ws: WebSocket, id: number, method: string, params: unknown): Promise<{ ok: boolean; error?: { code: string } }> {
  return new Promise((resolve) => {
    const h = (data: WebSocket.RawData): void => {
      const f = JSON.parse(data.toString()) as { id?: number; reply?: { ok: boolean; error?: { code: string } } };
      if (f.id === id && f.reply) {
        ws.off('message', h);
        resolve(f.reply);
      }
    };
    ws.on('message', h);
    ws.send(JSON.stringify({ id, method, params }));
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-web-'));
  fs.mkdirSync(path.join(dir, 'static'));
  fs.writeFileSync(path.join(dir, 'static', 'index.html'), '<!doctype html><title>KernelDuel</title>');
  const env = { ...process.env, KERNELDUEL_HOME: path.join(dir, 'home') };
  srv = await startWebServer({ port: 0, staticDir: path.join(dir, 'static'), service: new ApiService({ mode: 'browser', env }) });
});

afterAll(async () => {
  await srv?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('web server', () => {
  it('binds 127.0.0.1 by default and prints a URL carrying a long random token', () => {
    expect(srv.host).toBe('127.0.0.1');
    expect(srv.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${srv.port}/\\?token=[A-Za-z0-9_-]{32}$`));
  });

  it('refuses HTTP requests without the token or with a wrong one (401)', async () => {
    const base = `http://127.0.0.1:${srv.port}`;
    expect((await get(`${base}/`)).status).toBe(401);
    expect((await get(`${base}/index.html?token=nope`)).status).toBe(401);
    expect((await get(`${base}/`, { Cookie: `kernelduel_token_${srv.port}=wrong` })).status).toBe(401);
  });

  it('trades the URL token for an HttpOnly cookie, then serves files with a strict CSP', async () => {
    const first = await get(srv.url);
    expect(first.status).toBe(303);
    const cookie = String(first.headers['set-cookie']?.[0] ?? '');
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await get(`http://127.0.0.1:${srv.port}/`, { Cookie: cookie.split(';')[0] });
    expect(page.status).toBe(200);
    expect(page.body).toContain('KernelDuel');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers['x-frame-options']).toBe('DENY');
  });

  it('refuses a request whose Host header is not this server (DNS rebinding)', async () => {
    expect((await get(srv.url, { Host: `evil.example:${srv.port}` })).status).toBe(403);
  });

  it('refuses WebSocket connections without the token, with a wrong one, or from another origin', async () => {
    const origin = `http://127.0.0.1:${srv.port}`;
    const api = `ws://127.0.0.1:${srv.port}/api`;
    const none = await connect(api, { Origin: origin });
    expect(none.outcome).toBe(401);
    const wrong = await connect(`${api}?token=${'x'.repeat(32)}`, { Origin: origin });
    expect(wrong.outcome).toBe(401);
    const foreign = await connect(`${api}?token=${srv.token}`, { Origin: 'https://evil.example' });
    expect(foreign.outcome).toBe(403);
  });

  it('serves the contract over an authenticated WebSocket, validating every call', async () => {
    const { outcome, ws } = await connect(`ws://127.0.0.1:${srv.port}/api?token=${srv.token}`, { Origin: `http://127.0.0.1:${srv.port}` });
    expect(outcome).toBe('open');
    expect((await call(ws, 1, 'tasks.validateManifest', { text: 'name: Bad Name' })).ok).toBe(true);
    expect((await call(ws, 2, 'shell.exec', { cmd: 'id' })).error?.code).toBe('unknown_method');
    expect((await call(ws, 3, 'tasks.readFile', { taskId: 'axpy', file: '../../../etc/passwd' })).error?.code).toBe('bad_args');
    ws.close();
  });
});

/** A request with the path exactly as given (http.get would not send some of these unchanged). */
function rawGet(port: number, rawPath: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: rawPath, headers: { Cookie: cookie } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static files', () => {
  it('never serves a file outside the built renderer folder, however the path is spelled', async () => {
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'SECRET');
    const first = await get(srv.url);
    const cookie = String(first.headers['set-cookie']?.[0] ?? '').split(';')[0];
    expect(await rawGet(srv.port, '/', cookie)).toBe(200);
    expect(await rawGet(srv.port, '/index.html', cookie)).toBe(200);
    expect(await rawGet(srv.port, '/index.html?x=1', cookie)).toBe(200);
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/%2e%2e%2fsecret.txt', '/static/../../secret.txt', '/..\\secret.txt', '/%2e%2e%5csecret.txt', `/${'../'.repeat(8)}etc/passwd`, '/%00index.html', '/%E0%A4%A']) {
      expect(await rawGet(srv.port, p, cookie), p).toBe(404);
    }
  });

  it('refuses to serve a folder holding a link that leads out of it', async () => {
    const root = path.join(dir, 'static-linked');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>KernelDuel</title>');
    fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(root, 'link.txt'));
    await expect(startWebServer({ port: 0, staticDir: root, service: new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: path.join(dir, 'home-linked') } }) })).rejects.toThrow(/link\.txt links to a file outside/);
  });
});

describe('Host check', () => {
  const machine = { hostnames: ['gpu-box'], addresses: ['127.0.0.1', '10.1.2.3', 'fe80::1'] };

  it('a server bound to every address still accepts only the machine\'s names and addresses', () => {
    const a = allowedHosts('0.0.0.0', 5317, machine);
    expect(a).toEqual(expect.arrayContaining(['127.0.0.1:5317', 'localhost:5317', '[::1]:5317', 'gpu-box:5317', '10.1.2.3:5317', '[fe80::1]:5317']));
    expect(a).not.toContain('0.0.0.0:5317');
    expect(hostAllowed('evil.example:5317', a)).toBe(false);
    expect(hostAllowed('GPU-BOX:5317', a)).toBe(true);
    expect(hostAllowed('gpu-box:5318', a)).toBe(false);
    expect(allowedHosts('::', 5317, machine, ['alias.example'])).toEqual(expect.arrayContaining(['[fe80::1]:5317', 'alias.example:5317']));
    // Loopback binds: loopback names only.
    expect(allowedHosts('127.0.0.1', 5317, machine).sort()).toEqual(['127.0.0.1:5317', '[::1]:5317', 'localhost:5317']);
  });

  it('bound to 0.0.0.0: a foreign Host header is refused (403), the machine\'s own name is let in', async () => {
    const env = { ...process.env, KERNELDUEL_HOME: path.join(dir, 'home-any') };
    const any = await startWebServer({ host: '0.0.0.0', port: 0, staticDir: path.join(dir, 'static'), service: new ApiService({ mode: 'browser', env }) });
    try {
      const url = `http://127.0.0.1:${any.port}/?token=${any.token}`;
      const evil = await get(url, { Host: `evil.example:${any.port}` });
      expect(evil.status).toBe(403);
      expect(evil.body).toContain('--allow-host');
      expect((await get(url, { Host: `${os.hostname()}:${any.port}` })).status).toBe(303);
      expect((await get(url)).status).toBe(303);
      const ws = await connect(`ws://127.0.0.1:${any.port}/api?token=${any.token}`, { Host: `evil.example:${any.port}`, Origin: `http://evil.example:${any.port}` });
      expect(ws.outcome).toBe(403);
    } finally {
      await any.close();
    }
  });
});
