// Access control of the browser mode, as pure functions: a random token (in the URL the server
// prints, then in an HttpOnly cookie), a Host-header check against DNS rebinding, and an Origin
// check on the WebSocket upgrade against cross-site pages.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import os from 'node:os';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export function tokenMatches(expected: string, given: string | null | undefined): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Cookies are not isolated by port, so the cookie's name carries the port. */
export function cookieName(port: number): string {
  return `kernelduel_token_${port}`;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

export interface AuthInput {
  /** Request URL (path and query). */
  url: string;
  cookie?: string;
}

/** Where the request's token came from, or null when it has none that matches. */
export function authenticate(req: AuthInput, token: string, port: number): 'query' | 'cookie' | null {
  let q: string | null;
  try {
    q = new URL(req.url, 'http://x').searchParams.get('token');
  } catch {
    q = null;
  }
  if (tokenMatches(token, q)) return 'query';
  if (tokenMatches(token, parseCookies(req.cookie)[cookieName(port)])) return 'cookie';
  return null;
}

/** The Host header names this server (not a rebinding DNS name pointing at 127.0.0.1). */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  if (!hostHeader) return false;
  return allowed.includes(hostHeader.toLowerCase());
}

/** This machine's names and interface addresses (what a browser elsewhere may put in Host). */
export interface MachineNames {
  hostnames: string[];
  addresses: string[];
}

export function machineNames(): MachineNames {
  const addresses: string[] = [];
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) addresses.push(a.address.replace(/%.*$/, ''));
  const h = os.hostname().toLowerCase();
  return { hostnames: [h, ...(h.includes('.') ? [h.split('.')[0]] : [])], addresses };
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/**
 * `host:port` values a browser may send in Host to reach a server bound to `bindHost` on `port`
 * (anything else is refused, against DNS rebinding). Loopback names for a loopback bind; for any
 * other bind the machine's host names too, and for a wildcard bind (0.0.0.0, ::) every address of
 * the machine; `extra` adds names (e.g. a DNS alias; --allow-host).
 */
export function allowedHosts(bindHost: string, port: number, machine: MachineNames = { hostnames: [], addresses: [] }, extra: readonly string[] = []): string[] {
  const names = new Set<string>([bindHost, ...LOOPBACK]);
  const wildcard = bindHost === '0.0.0.0' || bindHost === '::';
  if (wildcard) names.delete(bindHost);
  if (!LOOPBACK.includes(bindHost)) machine.hostnames.forEach((h) => names.add(h));
  if (wildcard) machine.addresses.forEach((a) => names.add(a));
  extra.forEach((h) => names.add(h));
  return [...names].map((h) => `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`.toLowerCase());
}

/** A WebSocket's Origin must be this server's own (a page elsewhere cannot drive the engine). */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (!origin || !hostHeader) return false;
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host.toLowerCase() === hostHeader.toLowerCase();
  } catch {
    return false;
  }
}
