// The browser's transport (renderer/src/transport.ts) against a WebSocket server in this process:
// answers and events arrive, a call the server never answers fails after its timeout naming the
// method, a call in flight when the connection drops fails at once, and after the server comes
// back on the same port the transport reconnects by itself and calls work again.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { browserTransport, callTimeoutMs } from '../renderer/src/transport.js';
import type { ClientFrame, ServerFrame } from '../main/contract/api.js';

interface Fake {
  port: number;
  calls: ClientFrame[];
  /** Answer a call (default: echo its method), or leave it unanswered (null). */
  answer: (f: ClientFrame) => unknown | null;
  push(frame: ServerFrame): void;
  close(): Promise<void>;
}

const servers: Fake[] = [];

function fakeServer(port = 0): Promise<Fake> {
  const srv = http.createServer();
  const wss = new WebSocketServer({ server: srv });
  const fake: Fake = {
    port: 0,
    calls: [],
    answer: (f) => ({ echoed: f.method }),
    push: (frame) => wss.clients.forEach((c) => c.send(JSON.stringify(frame))),
    close: () =>
      new Promise((r) => {
        wss.clients.forEach((c) => c.terminate());
        wss.close(() => srv.close(() => r()));
      }),
  };
  wss.on('connection', (ws) =>
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as ClientFrame;
      fake.calls.push(f);
      const result = fake.answer(f);
      if (result !== null) ws.send(JSON.stringify({ id: f.id, reply: { ok: true, result } } satisfies ServerFrame));
    }),
  );
  servers.push(fake);
  return new Promise((resolve) =>
    srv.listen(port, '127.0.0.1', () => {
      fake.port = (srv.address() as AddressInfo).port;
      resolve(fake);
    }),
  );
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const fast = { WebSocket, reconnect: { minDelayMs: 50, maxDelayMs: 200 } };

describe('browser transport', () => {
  it('gives each call its answer and every event to its subscribers', async () => {
    const srv = await fakeServer();
    const t = browserTransport(`ws://127.0.0.1:${srv.port}/api`, fast);
    const events: unknown[] = [];
    t.subscribe((e) => events.push(e));
    expect(await t.call('tasks.list', {})).toEqual({ echoed: 'tasks.list' });
    srv.push({ event: { type: 'log', sessionId: null, level: 'info', message: 'hello', at: 'now' } });
    await expect.poll(() => events.length).toBe(1);
  });

  it('fails a call the server never answers after its timeout, naming the method', async () => {
    const srv = await fakeServer();
    srv.answer = () => null;
    const t = browserTransport(`ws://127.0.0.1:${srv.port}/api`, { ...fast, timeoutMs: () => 300 });
    await expect(t.call('sessions.list', {})).rejects.toThrow(/sessions\.list: no answer from the KernelDuel server within 0 s/);
    expect(srv.calls.map((c) => c.method)).toEqual(['sessions.list']);
  });

  it('gives long methods longer than the rest', () => {
    expect(callTimeoutMs('eval.run')).toBeGreaterThan(callTimeoutMs('tasks.get'));
    expect(callTimeoutMs('tasks.get')).toBeGreaterThanOrEqual(30_000);
  });

  it('fails calls in flight when the connection drops, reconnects by itself and works again', async () => {
    const srv = await fakeServer();
    const port = srv.port;
    srv.answer = () => null;
    const status: string[] = [];
    const t = browserTransport(`ws://127.0.0.1:${port}/api`, { ...fast, onStatus: (s) => status.push(s) });
    const inFlight = t.call('sessions.list', {});
    const failed = expect(inFlight).rejects.toThrow(/connection to the KernelDuel server closed/);
    await expect.poll(() => srv.calls.length).toBe(1);
    await srv.close();
    await failed;
    const back = await fakeServer(port);
    expect(await t.call('tasks.list', {})).toEqual({ echoed: 'tasks.list' });
    expect(back.calls.map((c) => c.method)).toEqual(['tasks.list']);
    expect(status).toEqual(['open', 'closed', 'open']);
  });
});
