// The LLM part of the API contract, through the same dispatcher the transports use: settings are
// validated, the connection test talks to a local OpenAI-compatible server, the API key is taken
// from the environment in browser mode and from the keychain in the desktop app, and never comes
// back or lands in a file in plain text; the prompt preview is the policy's real prompt.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService, type SecretStore } from '../main/core/service.js';
import { createDispatcher, type Dispatch } from '../main/core/dispatch.js';
import type { Envelope } from '../main/contract/api.js';
import { startFakeServer, type FakeServer } from './fixtures/llm/server.js';

const KEY = 'sk-api-SECRET-55555555';
let srv: FakeServer;
let home: string;

beforeAll(async () => {
  srv = await startFakeServer([{ type: 'ok', text: 'OK' }]);
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-llm-'));
});
afterAll(async () => {
  await srv.close();
  fs.rmSync(home, { recursive: true, force: true });
});

function service(mode: 'browser' | 'electron', sub: string, env: NodeJS.ProcessEnv = {}, secrets?: SecretStore): Dispatch {
  const s = new ApiService({ mode, env: { KERNELDUEL_HOME: path.join(home, sub), ...env }, secrets });
  return createDispatcher(s.handlers());
}

async function ok<T>(p: Promise<Envelope>): Promise<T> {
  const r = await p;
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.result as T;
}

/** A stand-in keychain: "encrypts" by reversing (the test checks that the clear key is never written). */
function fakeKeychain(dir: string): SecretStore & { file: string } {
  const file = path.join(dir, 'key.enc');
  return {
    file,
    available: () => true,
    save: (k) => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(file, Buffer.from([...k].reverse().join('')));
    },
    load: () => (fs.existsSync(file) ? [...fs.readFileSync(file, 'utf8')].reverse().join('') : undefined),
    clear: () => fs.rmSync(file, { force: true }),
  };
}

describe('llm.* over the dispatcher', () => {
  it('testConnection reaches the fake server with the key from the environment (browser mode)', async () => {
    const d = service('browser', 'b1', { MY_KEY: KEY });
    const settings = { baseURL: srv.url, model: 'test-model', apiKeyEnv: 'MY_KEY', requestTimeoutMs: 5000 };
    const saved = await ok<{ settings: { baseURL: string }; apiKey: { set: boolean; source: string; canStore: boolean } }>(d('llm.saveSettings', { settings }));
    expect(saved.settings.baseURL).toBe(srv.url);
    expect(saved.apiKey).toMatchObject({ set: true, source: 'env', canStore: false });
    expect(JSON.stringify(saved)).not.toContain(KEY);
    const before = srv.requests.length;
    const r = await ok<{ ok: boolean; reply?: string; models?: string[]; modelListed?: boolean }>(d('llm.testConnection', {}));
    expect(r).toMatchObject({ ok: true, reply: 'OK', modelListed: true });
    expect(r.models).toContain('test-model');
    const sent = srv.requests.slice(before);
    expect(sent.map((q) => q.url)).toEqual(['/v1/models', '/v1/chat/completions']);
    expect(sent[1].headers.authorization).toBe(`Bearer ${KEY}`);
    // An unreachable server is a clear failure, not an exception.
    const down = await ok<{ ok: boolean; error?: { kind: string; message: string } }>(d('llm.testConnection', { settings: { ...settings, baseURL: 'http://127.0.0.1:9/v1' } }));
    expect(down).toMatchObject({ ok: false, error: { kind: 'unreachable' } });
  });

  it('validates settings at the boundary: a bad base URL is refused with the field named', async () => {
    const d = service('browser', 'b2');
    const r = await d('llm.saveSettings', { settings: { baseURL: 'not a url' } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('bad_args');
      expect(r.error.issues?.map((i) => i.path)).toContain('settings.baseURL');
    }
    const r2 = await d('llm.saveSettings', { settings: { apiKey: KEY } });
    expect(r2.ok).toBe(false); // a key is never a setting
  });

  it('browser mode refuses to store a key; the desktop app stores it encrypted and never returns it', async () => {
    const b = await service('browser', 'b3')('llm.saveSettings', { settings: {}, apiKey: KEY });
    expect(b.ok).toBe(false);
    if (!b.ok) expect(b.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/environment variable/) });
    const chain = fakeKeychain(path.join(home, 'e1-keychain'));
    const d = service('electron', 'e1', {}, chain);
    const saved = await ok<{ apiKey: { set: boolean; source: string; canStore: boolean } }>(d('llm.saveSettings', { settings: { baseURL: srv.url, model: 'test-model' }, apiKey: KEY }));
    expect(saved.apiKey).toMatchObject({ set: true, source: 'keychain', canStore: true });
    expect(JSON.stringify(saved)).not.toContain(KEY);
    expect(JSON.stringify(await ok(d('llm.getSettings', {})))).not.toContain(KEY);
    // Nothing under the home holds the clear key; the keychain file holds it only "encrypted".
    const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    for (const f of [...walk(path.join(home, 'e1')), chain.file]) expect(fs.readFileSync(f, 'utf8')).not.toContain(KEY);
    // The stored key is used for the connection.
    const before = srv.requests.length;
    expect(await ok<{ ok: boolean }>(d('llm.testConnection', {}))).toMatchObject({ ok: true });
    expect(srv.requests[before + 1].headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('testConnection never sends the saved key, or another variable of the server, to a URL the client picks', async () => {
    const attacker = await startFakeServer([{ type: 'ok', text: 'OK' }]);
    try {
      const OTHER = 'aws-SECRET-77777777';
      const d = service('browser', 'b5', { MY_KEY: KEY, OTHER_SECRET: OTHER });
      const settings = { baseURL: srv.url, model: 'test-model', apiKeyEnv: 'MY_KEY', requestTimeoutMs: 5000 };
      await ok(d('llm.saveSettings', { settings }));
      const auth = (): string => JSON.stringify(attacker.requests.map((q) => q.headers.authorization ?? null));
      // Another base URL with the saved variable: tested without a key, and the report says why.
      const r = await ok<{ ok: boolean; note?: string }>(d('llm.testConnection', { settings: { ...settings, baseURL: attacker.url } }));
      expect(attacker.requests.length).toBeGreaterThan(0);
      expect(auth()).not.toContain(KEY);
      expect(r.note).toMatch(/saved key goes only to the saved base URL/);
      // Another variable: refused before anything is sent, to the attacker or to the saved URL.
      const before = attacker.requests.length;
      const srvBefore = srv.requests.length;
      for (const baseURL of [attacker.url, srv.url]) {
        const refused = await d('llm.testConnection', { settings: { ...settings, baseURL, apiKeyEnv: 'OTHER_SECRET' } });
        expect(refused.ok).toBe(false);
        if (!refused.ok) expect(refused.error.message).toMatch(/apiKeyEnv: .*saved settings' variable \(MY_KEY\)/);
      }
      expect(attacker.requests.length).toBe(before);
      expect(srv.requests.length).toBe(srvBefore);
      // A key given with the settings goes with them (the client's own key, to its own URL).
      await ok(d('llm.testConnection', { settings: { ...settings, baseURL: attacker.url }, apiKey: 'sk-mine-12345678' }));
      expect(attacker.requests.at(-1)?.headers.authorization).toBe('Bearer sk-mine-12345678');
      expect(auth()).not.toContain(OTHER);
      // The desktop app's keychain key likewise stays with the saved URL.
      const chain = fakeKeychain(path.join(home, 'e5-keychain'));
      const e = service('electron', 'e5', {}, chain);
      await ok(e('llm.saveSettings', { settings: { baseURL: srv.url, model: 'test-model' }, apiKey: KEY }));
      await ok(e('llm.testConnection', { settings: { baseURL: attacker.url, model: 'test-model' } }));
      expect(auth()).not.toContain(KEY);
      // The saved settings, edited but with the same URL and variable, keep the saved key.
      const s0 = srv.requests.length;
      await ok(e('llm.testConnection', { settings: { baseURL: srv.url, model: 'other-model' } }));
      expect(srv.requests[s0 + 1].headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await attacker.close();
    }
  });

  it('previewPrompt gives the contrastive prompt for a task (rules, reference, answer format)', async () => {
    const d = service('browser', 'b4');
    const p = await ok<{ promptId: string; messages: Array<{ role: string; content: string }>; exemplars: string[]; note: string }>(d('llm.previewPrompt', { taskId: 'softmax' }));
    expect(p.promptId).toMatch(/^[0-9a-f]{16}$/);
    expect(p.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(p.messages[1].content).toContain('void softmax(const float* x, float* y, int rows, int cols)');
    expect(p.messages[1].content).toContain('## Performance analysis');
    expect(p.exemplars).toEqual([]);
    const bad = await d('llm.previewPrompt', { taskId: '../etc' });
    expect(bad.ok).toBe(false);
  });
});
