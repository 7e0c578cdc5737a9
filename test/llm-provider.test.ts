// The provider against a local OpenAI-compatible server: protocol, streaming, every error class,
// retries with Retry-After, connection test, settings validation and secret redaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { LlmProvider, redactSecrets, retryAfterMs, REDACTED } from '../main/engine/llm/provider.js';
import { parseLlmSettings, type LlmSettingsInput } from '../main/engine/llm/settings.js';
import { startFakeServer, type FakeServer } from './fixtures/llm/server.js';
import { GOOD_ANSWER } from './fixtures/llm/answers.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
let srv: FakeServer;
beforeAll(async () => {
  srv = await startFakeServer();
});
afterAll(() => srv.close());

function provider(extra: Partial<LlmSettingsInput> = {}, sleeps: number[] = []): LlmProvider {
  return new LlmProvider(
    { baseURL: srv.url, model: 'test-model', retries: 2, retryBaseMs: 10, requestTimeoutMs: 5000, ...extra },
    { env: { KERNELDUEL_LLM_API_KEY: KEY }, sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 },
  );
}
const msgs = [{ role: 'system' as const, content: 'sys' }, { role: 'user' as const, content: 'write a kernel' }];

describe('LlmProvider', () => {
  it('streams: sends model/messages/stream and the key, deltas arrive in order', async () => {
    srv.script = [{ type: 'ok', text: GOOD_ANSWER, chunk: 37 }];
    srv.handler = undefined;
    const before = srv.requests.length;
    const deltas: string[] = [];
    const r = await provider({ temperature: 0.3, maxTokens: 1234 }).complete(msgs, { onDelta: (d, attempt) => (expect(attempt).toBe(1), deltas.push(d)) });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.text).toBe(GOOD_ANSWER);
    expect(r.finishReason).toBe('stop');
    expect(deltas.length).toBe(Math.ceil(GOOD_ANSWER.length / 37));
    expect(deltas.join('')).toBe(GOOD_ANSWER);
    const req = srv.requests[before];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.body).toMatchObject({ model: 'test-model', messages: msgs, stream: true, temperature: 0.3, max_tokens: 1234 });
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('non-streaming answers work too', async () => {
    srv.script = [{ type: 'ok', text: 'hello there' }];
    const before = srv.requests.length;
    const r = await provider({ stream: false }).complete(msgs);
    expect(r).toMatchObject({ ok: true, text: 'hello there', attempts: 1 });
    expect(srv.requests[before].body).toMatchObject({ stream: false });
  });

  it('401: an auth error, not retried, with the key removed even when the server echoes it', async () => {
    srv.script = [{ type: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } } }];
    const before = srv.requests.length;
    const r = await provider().complete(msgs);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe('auth');
    expect(r.error.status).toBe(401);
    expect(r.attempts).toBe(1);
    expect(srv.requests.length - before).toBe(1);
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(r.error.message).toContain(REDACTED);
  });

  it('429 then success: retried after Retry-After', async () => {
    srv.script = [];
    let n = 0;
    srv.handler = () => (n++ === 0 ? { type: 'status', status: 429, headers: { 'retry-after': '2' } } : { type: 'ok', text: 'fine' });
    const sleeps: number[] = [];
    const retries: string[] = [];
    const r = await provider({}, sleeps).complete(msgs, { onRetry: (f) => retries.push(f.kind) });
    srv.handler = undefined;
    expect(r).toMatchObject({ ok: true, text: 'fine', attempts: 2 });
    expect(retries).toEqual(['rate_limit']);
    expect(sleeps).toEqual([2000]);
  });

  it('backoff grows and is capped', async () => {
    srv.script = [{ type: 'status', status: 503 }];
    const sleeps: number[] = [];
    const r = await provider({ retries: 3, retryBaseMs: 100, maxRetryDelayMs: 250 }, sleeps).complete(msgs);
    expect(r).toMatchObject({ ok: false, attempts: 4, error: { kind: 'server', status: 503 } });
    expect(sleeps).toEqual([75, 150, 250]);
  });

  it('500 then success: server errors are retried', async () => {
    srv.script = [];
    let n = 0;
    srv.handler = () => (n++ === 0 ? { type: 'status', status: 500 } : { type: 'ok', text: 'ok now' });
    const r = await provider().complete(msgs);
    srv.handler = undefined;
    expect(r).toMatchObject({ ok: true, text: 'ok now', attempts: 2 });
  });

  it('a stream cut off halfway is a truncated answer (retried, then reported with the partial text)', async () => {
    srv.script = [{ type: 'cut', text: GOOD_ANSWER, after: 300 }];
    const deltas: Array<[number, string]> = [];
    const r = await provider({ retries: 1 }).complete(msgs, { onDelta: (d, a) => deltas.push([a, d]) });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe('truncated');
    expect(r.attempts).toBe(2);
    expect(r.partial).toBe(GOOD_ANSWER.slice(0, 300));
    expect(deltas.filter(([a]) => a === 1).map(([, d]) => d).join('')).toBe(GOOD_ANSWER.slice(0, 300));
  });

  it("finish_reason 'length' is a truncated answer and is not retried", async () => {
    srv.script = [{ type: 'ok', text: 'half an ans', finish: 'length' }];
    const r = await provider().complete(msgs);
    expect(r).toMatchObject({ ok: false, attempts: 1, error: { kind: 'truncated', retryable: false }, partial: 'half an ans' });
    expect(!r.ok && r.error.message).toMatch(/token limit/);
  });

  it('a stream that ends without a finish reason is truncated', async () => {
    srv.script = [{ type: 'ok', text: 'abc', finish: null }];
    const r = await provider({ retries: 0 }).complete(msgs);
    expect(r).toMatchObject({ ok: false, error: { kind: 'truncated' } });
  });

  it('a slow server times out', async () => {
    srv.script = [{ type: 'slow', delayMs: 8000 }];
    const t0 = Date.now();
    const r = await provider({ requestTimeoutMs: 200, retries: 1 }).complete(msgs);
    expect(r).toMatchObject({ ok: false, attempts: 2, error: { kind: 'timeout' } });
    // Far less than the server's 8 s: the client gave up (wide margin for loaded CI machines).
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('an unreachable server is reported as such', async () => {
    const port = await new Promise<number>((res) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const p = new LlmProvider({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', retries: 1, retryBaseMs: 1 }, { env: {} });
    const r = await p.complete(msgs);
    expect(r).toMatchObject({ ok: false, attempts: 2, error: { kind: 'unreachable' } });
    expect(!r.ok && r.error.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+\/v1/);
    const c = await p.testConnection();
    expect(c).toMatchObject({ ok: false, error: { kind: 'unreachable' } });
  });

  it('a caller abort is reported as aborted', async () => {
    srv.script = [{ type: 'slow', delayMs: 1000 }];
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await provider().complete(msgs, { signal: ac.signal });
    expect(r).toMatchObject({ ok: false, error: { kind: 'aborted' } });
  });

  it('concurrency limits requests in flight', async () => {
    srv.script = [{ type: 'slow', delayMs: 100, then: { type: 'ok', text: 'x' } }];
    const p = provider({ concurrency: 2 });
    const t0 = Date.now();
    const rs = await Promise.all([1, 2, 3, 4].map(() => p.complete(msgs)));
    expect(rs.every((r) => r.ok)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('testConnection lists models and gets a reply', async () => {
    srv.script = [{ type: 'ok', text: 'OK' }];
    const r = await provider().testConnection();
    expect(r).toMatchObject({ ok: true, model: 'test-model', modelListed: true, reply: 'OK' });
    expect(r.models).toEqual(['test-model', 'other-model']);
    srv.script = [{ type: 'status', status: 404, body: { error: { message: "model 'test-model' not found" } } }];
    const bad = await provider().testConnection();
    expect(bad).toMatchObject({ ok: false, error: { kind: 'bad_request', status: 404 } });
  });
});

describe('settings and secrets', () => {
  it('defaults point at a local Ollama', () => {
    const s = parseLlmSettings({});
    expect(s.baseURL).toBe('http://127.0.0.1:11434/v1');
    expect(s.apiKeyEnv).toBe('KERNELDUEL_LLM_API_KEY');
    expect(s).toMatchObject({ concurrency: 1, retries: 3, stream: true });
  });
  it('rejects bad values and an API key placed in the settings, naming the field', () => {
    expect(() => parseLlmSettings({ baseURL: 'ftp://x' })).toThrow(/baseURL/);
    expect(() => parseLlmSettings({ temperature: 5 })).toThrow(/temperature/);
    expect(() => parseLlmSettings({ apiKey: KEY })).toThrow(/apiKey/);
    expect(() => parseLlmSettings({ apiKeyEnv: 'not a name' })).toThrow(/apiKeyEnv/);
  });
  it('the key is never in what is stored', () => {
    const p = provider();
    expect(p.hasApiKey).toBe(true);
    const d = p.describe();
    expect(JSON.stringify(d)).not.toContain(KEY);
    expect(d.apiKeySet).toBe(true);
  });
  it('redactSecrets scrubs strings, nested values, secret-named fields and bearer tokens', () => {
    const v = { a: `key=${KEY}!`, nested: [{ msg: `x ${KEY} y` }], apiKey: 'anything', headers: { Authorization: 'Bearer abcdefghijkl' }, note: 'Bearer zzzzzzzzzzzz', n: 3 };
    const r = redactSecrets(v, [KEY]);
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(r).toEqual({ a: `key=${REDACTED}!`, nested: [{ msg: `x ${REDACTED} y` }], apiKey: REDACTED, headers: { Authorization: REDACTED }, note: `Bearer ${REDACTED}`, n: 3 });
  });
  it('retryAfterMs reads seconds, dates and -ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }))).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '120' }))).toBe(120);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4000)).toBe(6000);
    expect(retryAfterMs(new Headers({}))).toBeNull();
  });
});
