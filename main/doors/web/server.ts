// Browser mode: serves the built renderer (out/renderer) and the API contract over a WebSocket, for
// engineers whose GPU sits in a headless server. Bound to 127.0.0.1 by default; every request
// needs the random token of the printed URL (then an HttpOnly cookie), a Host header naming this
// server, and (WebSocket) an Origin of this server.
//
// The files themselves are served by sirv (the small static server Vite's and Vitest's own servers
// use): content types, HEAD, ranges and paths that try to leave the folder are its job. It looks
// each file up when asked (a rebuilt renderer is served at once); a folder holding a link that
// leads out of it is refused when the server starts.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import sirv from 'sirv';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ApiEvent, ClientFrame, ServerFrame } from '../../contract/api.js';
import { createDispatcher, type Dispatch } from '../../core/dispatch.js';
import { ApiService } from '../../core/service.js';
import { allowedHosts, authenticate, cookieName, hostAllowed, machineNames, newToken, originAllowed } from './auth.js';
import { contentSecurityPolicy } from '../../core/csp.js';
import { resourcesDir } from '../../engine/base/paths.js';
import { spawn } from 'node:child_process';

export const API_PATH = '/api';
const MAX_FRAME_BYTES = 8 << 20;

export interface WebServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0: a free port. */
  port?: number;
  /** The built renderer (index.html and assets). */
  staticDir: string;
  /** Default: a fresh random token. */
  token?: string;
  service?: ApiService;
  env?: NodeJS.ProcessEnv;
  /** Host names besides this machine's that the Host header may carry (a DNS alias, a proxy's name). */
  allowHosts?: string[];
}

export interface WebServer {
  host: string;
  port: number;
  token: string;
  /** The URL to open (carries the token). */
  url: string;
  service: ApiService;
  close(): Promise<void>;
}

function securityHeaders(res: http.ServerResponse, connect: string[]): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy({ connect }));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

function refuse(res: http.ServerResponse, code: number, text: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(text + '\n');
}

/** Links under `root` whose target lies outside it (the built renderer holds none). */
export function linksLeadingOut(root: string): string[] {
  const real = fs.realpathSync(root);
  const out: string[] = [];
  for (const e of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isSymbolicLink()) continue;
    const p = path.join(e.parentPath, e.name);
    let target: string;
    try {
      target = fs.realpathSync(p);
    } catch {
      continue; // dangling: serves nothing
    }
    const r = path.relative(real, target);
    if (r === '' || r.startsWith('..') || path.isAbsolute(r)) out.push(p);
  }
  return out;
}

/** What to do when the port is taken: `--port 0` picks a free one (through npm: `npm start -- --port 0`). */
export function portInUseMessage(port: number, host: string): string {
  return `port ${port} on ${host} is in use (another KernelDuel, or another program): start with --port 0 to pick a free port (\`npm start -- --port 0\`, \`kernelduel serve --port 0\`), or --port N for a port of your choice`;
}

export function startWebServer(o: WebServerOptions): Promise<WebServer> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? newToken();
  const staticDir = path.resolve(o.staticDir);
  if (!fs.existsSync(path.join(staticDir, 'index.html'))) {
    return Promise.reject(new Error(`no built workbench in ${staticDir} (index.html missing): run \`npm run build\` first`));
  }
  const links = linksLeadingOut(staticDir);
  if (links.length) return Promise.reject(new Error(`${links[0]} links to a file outside ${staticDir}: the workbench serves only its own files; remove the link (or rebuild with \`npm run build\`)`));
  const files = sirv(staticDir, {
    dev: true,
    dotfiles: false,
    setHeaders: (res, pathname) => res.setHeader('Cache-Control', pathname === '/' || pathname.endsWith('.html') ? 'no-store' : 'private, max-age=3600'),
  });
  const service = o.service ?? new ApiService({ mode: 'browser', env: o.env });
  service.warm();
  const dispatch: Dispatch = createDispatcher(service.handlers());
  let port = 0;
  let allowed: string[] = [];

  const server = http.createServer((req, res) => {
    const connect = allowed.filter((h) => !h.startsWith('[')).map((h) => `ws://${h}`);
    securityHeaders(res, connect);
    if (!hostAllowed(req.headers.host, allowed)) return refuse(res, 403, `unexpected Host header ${JSON.stringify(req.headers.host ?? '')}: use this machine's name or address (or start kernelduel serve with --allow-host NAME)`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'method not allowed');
    const how = authenticate({ url: req.url ?? '/', cookie: req.headers.cookie }, token, port);
    if (!how) return refuse(res, 401, 'KernelDuel: open the URL with the access token that `kernelduel serve` printed');
    const url = new URL(req.url ?? '/', 'http://x');
    if (how === 'query') {
      // Trade the token in the URL for a cookie, and drop it from the address bar (and from history).
      res.setHeader('Set-Cookie', `${cookieName(port)}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`);
      url.searchParams.delete('token');
      res.statusCode = 303;
      res.setHeader('Location', url.pathname + (url.search || ''));
      res.setHeader('Cache-Control', 'no-store');
      return res.end();
    }
    files(req, res, () => refuse(res, 404, 'not found'));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const sockets = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => {
    const deny = (code: number, text: string): void => {
      socket.end(`HTTP/1.1 ${code} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== API_PATH) return deny(404, 'Not Found');
    if (!hostAllowed(req.headers.host, allowed)) return deny(403, 'Forbidden');
    if (!originAllowed(req.headers.origin, req.headers.host)) return deny(403, 'Forbidden');
    if (!authenticate({ url: req.url ?? '/', cookie: req.headers.cookie }, token, port)) return deny(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  wss.on('connection', (ws: WebSocket) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return ws.close(1003, 'text frames only');
      let frame: ClientFrame;
      try {
        frame = JSON.parse(data.toString()) as ClientFrame;
      } catch {
        return ws.close(1007, 'not JSON');
      }
      if (!frame || typeof frame !== 'object' || typeof frame.id !== 'number') return ws.close(1007, 'a call needs a numeric id');
      void dispatch(frame.method, frame.params).then((reply) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ id: frame.id, reply } satisfies ServerFrame));
      });
    });
  });

  const unsubscribe = service.on((event: ApiEvent) => {
    const msg = JSON.stringify({ event } satisfies ServerFrame);
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(msg);
  });

  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'EADDRINUSE' ? new Error(portInUseMessage(o.port ?? 0, host)) : e);
    });
    server.listen(o.port ?? 0, host, () => {
      const addr = server.address();
      port = typeof addr === 'object' && addr ? addr.port : (o.port ?? 0);
      allowed = allowedHosts(host, port, machineNames(), o.allowHosts ?? []);
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
      resolve({
        host, port, token, service,
        url: `http://${shownHost}:${port}/?token=${token}`,
        close: async () => {
          unsubscribe();
          for (const ws of sockets) ws.close(1001, 'server shutting down');
          await service.stopAll();
          await new Promise<void>((r) => wss.close(() => r()));
          const closed = new Promise<void>((r) => server.close(() => r()));
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}

/** out/renderer next to the resources folder (the checkout's or the bundle's). */
export function defaultStaticDir(): string {
  return path.join(path.dirname(resourcesDir()), 'out', 'renderer');
}

/** Whether a browser could be shown here: macOS and Windows always; elsewhere only with a display. */
export function canOpenBrowser(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return !!(env.DISPLAY || env.WAYLAND_DISPLAY || env.BROWSER);
}

/**
 * Best effort: the platform's opener, detached (never waited for). Calls `onFail` with the reason
 * when there is no display or no opener; the URL is printed anyway, so nothing else happens.
 */
export function openInBrowser(url: string, onFail?: (why: string) => void): void {
  if (!canOpenBrowser()) {
    onFail?.('no display to open a browser on');
    return;
  }
  const cmd = process.env.BROWSER || (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open');
  const args = process.platform === 'win32' && !process.env.BROWSER ? ['/c', 'start', '', url] : [url];
  try {
    spawn(cmd, args, { stdio: 'ignore', detached: true })
      .on('error', (e: NodeJS.ErrnoException) => onFail?.(`cannot run ${cmd} (${e.code ?? e.message})`))
      .unref();
  } catch (e) {
    onFail?.(`cannot run ${cmd} (${(e as Error).message})`);
  }
}
