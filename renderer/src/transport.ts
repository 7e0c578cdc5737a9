// The contract over whichever transport this renderer runs on: Electron IPC (through the preload's
// `window.kernelduel`) or, in the browser, a WebSocket to `kernelduel serve`.
import { ApiCallError, type ApiEvent, type Envelope, type MethodName, type Params, type Result, type ServerFrame, type Transport } from '../../main/contract/api.js';

export interface DesktopBridge {
  call(method: string, params?: unknown): Promise<unknown>;
  subscribe(listener: (event: unknown) => void): () => void;
  saveAs(fileName: string, content: string): Promise<{ saved: boolean; path?: string }>;
  pickFolder(): Promise<string | null>;
}

declare global {
  interface Window {
    kernelduel?: DesktopBridge;
  }
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

export function browserTransport(url: string, onStatus?: (s: 'open' | 'closed') => void): Transport {
  let ws: WebSocket | null = null;
  let nextId = 1;
  const pending = new Map<number, { method: MethodName; resolve: (e: Envelope) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(e: ApiEvent) => void>();
  let opening: Promise<WebSocket> | null = null;
  const connect = (): Promise<WebSocket> => {
    if (ws && ws.readyState === WebSocket.OPEN) return Promise.resolve(ws);
    opening ??= new Promise<WebSocket>((resolve, reject) => {
      const s = new WebSocket(url);
      s.onopen = () => {
        ws = s;
        opening = null;
        onStatus?.('open');
        resolve(s);
      };
      s.onerror = () => {
        opening = null;
        reject(new Error('cannot reach the KernelDuel server (is `kernelduel serve` still running?)'));
      };
      s.onclose = () => {
        ws = null;
        onStatus?.('closed');
        for (const p of pending.values()) p.reject(new Error('connection to the KernelDuel server closed'));
        pending.clear();
        // Reconnect so that events keep flowing after a server restart.
        setTimeout(() => void connect().catch(() => undefined), 2000);
      };
      s.onmessage = (m) => {
        const f = JSON.parse(String(m.data)) as ServerFrame;
        if ('event' in f) listeners.forEach((l) => l(f.event));
        else {
          const p = pending.get(f.id);
          pending.delete(f.id);
          p?.resolve(f.reply);
        }
      };
    });
    return opening;
  };
  void connect().catch(() => undefined);
  return {
    kind: 'browser',
    async call<M extends MethodName>(method: M, params: Params<M>): Promise<Result<M>> {
      const s = await connect();
      const id = nextId++;
      const env = await new Promise<Envelope>((resolve, reject) => {
        pending.set(id, { method, resolve, reject });
        s.send(JSON.stringify({ id, method, params }));
      });
      return unwrap(method, env);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

export function createTransport(): Transport {
  if (window.kernelduel) return electronTransport(window.kernelduel);
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return browserTransport(`${proto}//${location.host}/api`);
}

/** Saves a file: a save dialog in Electron, a download in the browser. */
export async function saveFile(fileName: string, content: string, mimeType: string): Promise<string> {
  if (window.kernelduel) {
    const r = await window.kernelduel.saveAs(fileName, content);
    return r.saved ? `saved ${r.path}` : 'not saved';
  }
  const url = URL.createObjectURL(new Blob([content], { type: mimeType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return `downloaded ${fileName}`;
}
