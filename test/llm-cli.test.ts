// `kernelduel optimize --strategy llm|mixed` end to end, as a child process, compile-only (no GPU:
// KERNELDUEL_NVIDIA_SMI=/nonexistent) against the local fake OpenAI-compatible server: the model's
// three parts are kept on the variant, the provider's settings (never the key) on the session, and
// the analysis is printed as it streams in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeServer, type FakeServer } from './fixtures/llm/server.js';
import { GOOD_ANSWER, GOOD_CODE, MALFORMED_ANSWER } from './fixtures/llm/answers.js';
import { openSession, sessionsRoot } from '../main/engine/session/store.js';
import { llmInfoOf } from '../main/engine/llm/variant-info.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { spawnCli } from './fixtures/cli.js';

const KEY = 'sk-cli-SECRET-123456789';
let srv: FakeServer;
let home: string;

beforeAll(async () => {
  srv = await startFakeServer();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-llm-cli-'));
});
afterAll(async () => {
  await srv.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** The CLI with the key's variable set (asynchronous: the fake server lives in this process, so it must keep answering). */
const cli = (args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawnCli> => spawnCli(home, args, { MY_LLM_KEY: KEY, ...env });

describe('kernelduel optimize --strategy llm', () => {
  it.skipIf(NO_NVCC)('streams the analysis, records the three parts and the provider settings without the key', async () => {
    let n = 0;
    srv.handler = () => ({ type: 'ok', text: [GOOD_ANSWER, MALFORMED_ANSWER][n++ % 2], chunk: 40 });
    const r = await cli(['optimize', 'softmax', '--strategy', 'llm', '--budget', '2', '--llm-base-url', srv.url, '--llm-model', 'test-model', '--llm-key-env', 'MY_LLM_KEY', '--llm-temperature', '0.2', '--llm-max-tokens', '4000', '--llm-timeout-ms', '20000']);
    expect(r.stderr).toContain('compile-only');
    expect(r.code, r.stderr).toBe(0);
    // The analysis was printed as it arrived (in pieces of 40 characters, reassembled on stderr).
    expect(r.stderr).toMatch(/asking the model: prompt [0-9a-f]{16}/);
    expect(r.stderr).toContain('loads are uncoalesced and most of the GPU idles');
    expect(r.stderr).toContain('One warp per row, shuffle reductions');
    expect(r.stderr).not.toContain(KEY);
    const id = /session (\S+) \(/.exec(r.stderr)![1];
    const s = openSession(sessionsRoot({ KERNELDUEL_HOME: home }), id);
    try {
      expect(s.meta.settings.strategy).toBe('llm');
      expect(s.meta.settings.llm).toMatchObject({ baseURL: srv.url, model: 'test-model', apiKeyEnv: 'MY_LLM_KEY', temperature: 0.2, maxTokens: 4000, requestTimeoutMs: 20000, apiKeySet: true });
      const llm = s.variants().filter((v) => v.origin === 'llm');
      expect(llm).toHaveLength(2);
      const good = llm.find((v) => v.source.trim() === GOOD_CODE.trim())!;
      const info = llmInfoOf(good)!;
      expect(info.analysis).toMatch(/uncoalesced/);
      expect(info.design).toMatch(/One warp per row/);
      expect(info.model).toBe('test-model');
      expect(s.resultOf(good.id)).toMatchObject({ compileOnly: true, build: { ok: true } });
      const bad = llm.find((v) => v !== good)!;
      expect(s.resultOf(bad.id)!.failure).toMatchObject({ kind: 'rejected' });
    } finally {
      s.close();
    }
    const files = fs.readdirSync(path.join(home, 'sessions', id)).map((f) => fs.readFileSync(path.join(home, 'sessions', id, f), 'utf8'));
    for (const f of files) expect(f).not.toContain(KEY);
    // The key went to the server as the bearer token.
    const chat = srv.requests.filter((q) => q.url.endsWith('/chat/completions'));
    expect(chat.length).toBeGreaterThanOrEqual(1);
    expect(chat[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(chat[0].body).toMatchObject({ model: 'test-model', temperature: 0.2, max_tokens: 4000, stream: true });
  }, 180_000);

  it('refuses a bad --llm-base-url with the flag named, and llm flags on other strategies', async () => {
    const r = await cli(['optimize', 'softmax', '--strategy', 'mixed', '--budget', '1', '--llm-base-url', 'ftp://x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--llm-base-url: /);
    const r2 = await cli(['optimize', 'softmax', '--strategy', 'random', '--budget', '1', '--llm-model', 'x']);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/apply to --strategy llm or mixed/);
  }, 60_000);
});
