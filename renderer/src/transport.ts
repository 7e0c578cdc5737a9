// The contract over either transport: Electron IPC (through the preload's bridge) or a WebSocket
// to `kernelduel serve`. No page globals here (page.ts picks the transport for this page), so
// the transports are tested in Node too.
import ReconnectingWebSocket from 'partysocket/ws';
import pTimeout from 'p-timeout';
import { ApiCallError, type ApiEvent, type Envelope, type MethodName, type Params, type Result, type ServerFrame, type Transport } from '../../main/contract/api.js';

export interface DesktopBridge {
  call(method: string, params?: unknown): Promise<unknown>;
  subscribe(listener: (event: unknown) => void): () => void;
  saveAs(fileName: string, content: string): Promise<{ saved: boolean; path?: string }>;
  pickFolder(): Promise<string | null>;
}

function unwrap<M extends MethodName>(method: M, env: Envelope): Result<M> {
  if (env.ok) return env.result as Result<M>;
  throw new ApiCallError(method, env.error);
}

export function electronTransport(bridge: DesktopBridge): Transport {
  return {
    kind: 'electron',
    async call(method, params) {
      return unwrap(method, (await bridge.call(method, params)) as Envelope);
    },
    subscribe(listener) {
      return bridge.subscribe((e) => listener(e as ApiEvent));
    },
  };
}

/**
 * How long a call may wait for its answer before it fails. Most methods answer at once; a build,
 * a check and timing, a run's start (its session and action space) and a model's connection test
 * take longer. A call made while the connection is down waits for it within the same time.
 */
const CALL_TIMEOUT_MS: Partial<Record<MethodName, number>> = {
  'eval.build': 10 * 60_000,
  'variants.code': 10 * 60_000,
  'eval.run': 30 * 60_000,
  'sessions.confirm': 30 * 60_000,
  'runs.start': 5 * 60_000,
  'sessions.baselines': 5 * 60_000,
  'llm.testConnection': 5 * 60_000,
};
const DEFAULT_CALL_TIMEOUT_MS = 60_000;

export function callTimeoutMs(method: MethodName): number {
  return CALL_TIMEOUT_MS[method] ?? DEFAULT_CALL_TIMEOUT_MS;
}

export interface BrowserTransportOptions {
  onStatus?: (s: 'open' | 'closed') => void;
  /** A WebSocket class other than the browser's (tests in Node). */
  WebSocket?: unknown;
  /** Overrides callTimeoutMs (tests). */
  timeoutMs?: (method: MethodName) => number;
  /** Reconnection delays: the first after 0.5 s, growing 1.5x per failed attempt, at most 10 s. */
  reconnect?: { minDelayMs?: number; maxDelayMs?: number; growFactor?: number };
}

/**
 * The contract over a WebSocket to `kernelduel serve`: reconnects with exponential backoff
 * (partysocket) so events keep flowing after a server restart, and calls fail after their timeout
 * (p-timeout) instead of waiting forever. Calls in flight when the connection drops fail at once
 * (their answers are lost); calls made while it is down are sent when it is back.
 */
export function browserTransport(url: string, o: BrowserTransportOptions = {}): Transport {
  let nextId = 1;
  const pending = new Map<number, { resolve: (e: Envelope) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(e: ApiEvent) => void>();
  const ws = new ReconnectingWebSocket(url, [], {
    ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}),
    minReconnectionDelay: o.reconnect?.minDelayMs ?? 500,
    maxReconnectionDelay: o.reconnect?.maxDelayMs ?? 10_000,
    reconnectionDelayGrowFactor: o.reconnect?.growFactor ?? 1.5,
  });
  ws.addEventListener('open', () => o.onStatus?.('open'));
  ws.addEventListener('close', () => {
    o.onStatus?.('closed');
    for (const p of pending.values()) p.reject(new Error('connection to the KernelDuel server closed'));
    pending.clear();
  });
  ws.addEventListener('message', (m) => {
    const f = JSON.parse(String(m.data)) as ServerFrame;
    if ('event' in f) listeners.forEach((l) => l(f.event));
    else {
      const p = pending.get(f.id);
      pending.delete(f.id);
      p?.resolve(f.reply);
    }
  });
  return {
    kind: 'browser',
    async call<M extends MethodName>(method: M, params: Params<M>): Promise<Result<M>> {
      const id = nextId++;
      const answer = new Promise<Envelope>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
      const ms = (o.timeoutMs ?? callTimeoutMs)(method);
      try {
        return unwrap(method, await pTimeout(answer, { milliseconds: ms, message: `${method}: no answer from the KernelDuel server within ${Math.round(ms / 1000)} s (is \`kernelduel serve\` still running?)` }));
      } finally {
        pending.delete(id);
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
