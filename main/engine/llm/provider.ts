// The language-model provider: any OpenAI-compatible chat-completions endpoint (Ollama, vLLM,
// llama.cpp's server, OpenAI, ...) through the official `openai` client. Defaults point at a local
// Ollama so tuning stays offline. Every failure comes back as a typed LlmFailure: nothing here
// throws past `complete()` or `testConnection()`.
//
// The API key is read from an environment variable named in the settings (or handed in by the app
// from the OS keychain); it is never part of the settings, and `redactSecrets` scrubs it from any
// text or object before that is journaled or logged.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import PQueue from 'p-queue';
import type { ConnectionReport } from '../base/types.js';

import { parseLlmSettings, type LlmSettings, type LlmSettingsInput } from './settings.js';

// ---------------------------------------------------------------------------------------------- secrets

export const REDACTED = '[REDACTED]';
const SECRET_FIELD = /^(api[-_]?key|apikey|authorization|x-api-key|token|secret|password)$/i;

/** Replaces every occurrence of the secrets in strings, and every value of a secret-looking field, anywhere in a value. */
export function redactSecrets<T>(value: T, secrets: ReadonlyArray<string | undefined | null>): T {
  const list = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4).sort((a, b) => b.length - a.length);
  const scrub = (s: string): string => {
    let out = s;
    for (const k of list) out = out.split(k).join(REDACTED);
    return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1${REDACTED}`);
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (depth > 32 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = SECRET_FIELD.test(k) && x !== undefined && x !== null && x !== '' ? REDACTED : walk(x, depth + 1);
    return o;
  };
  return walk(value, 0) as T;
}

// ---------------------------------------------------------------------------------------------- errors

export type LlmErrorKind =
  | 'unreachable' // connection refused, DNS, reset before a response
  | 'auth' // 401 / 403
  | 'rate_limit' // 429
  | 'server' // 5xx
  | 'timeout' // requestTimeoutMs passed
  | 'truncated' // finish_reason 'length', or the stream was cut off
  | 'bad_request' // other 4xx (unknown model, context too long, ...)
  | 'empty' // a well-formed answer without content
  | 'aborted' // the caller cancelled
  | 'protocol'; // the server did not speak the protocol

export interface LlmFailure {
  kind: LlmErrorKind;
  /** One line, secrets removed. */
  message: string;
  status?: number;
  retryable: boolean;
}

export class LlmError extends Error {
  constructor(readonly failure: LlmFailure) {
    super(failure.message);
    this.name = 'LlmError';
  }
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionOk {
  ok: true;
  text: string;
  finishReason: string;
  model: string;
  usage?: { promptTokens?: number; completionTokens?: number };
  attempts: number;
  durationMs: number;
}

export interface CompletionFailed {
  ok: false;
  error: LlmFailure;
  /** What arrived before the failure (the last attempt). */
  partial: string;
  attempts: number;
  durationMs: number;
}

export type Completion = CompletionOk | CompletionFailed;

export interface CompleteOptions {
  /** Each streamed piece of text, in order; `attempt` starts at 1 and grows on a retry (the UI restarts its view). */
  onDelta?: (delta: string, attempt: number) => void;
  /** Told before each wait between attempts. */
  onRetry?: (failure: LlmFailure, attempt: number, delayMs: number) => void;
  signal?: AbortSignal;
  /** Overrides for this request. */
  temperature?: number;
  maxTokens?: number;
}


function headerOf(h: unknown, name: string): string | null {
  if (h && typeof (h as Headers).get === 'function') return (h as Headers).get(name);
  return null;
}

/** Retry-After (seconds or HTTP date) or retry-after-ms, in milliseconds. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | null {
  const ms = headerOf(headers, 'retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headerOf(headers, 'retry-after');
  if (!ra) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Number(ra) * 1000);
  const t = Date.parse(ra);
  return Number.isFinite(t) ? Math.max(0, t - now) : null;
}

const oneLine = (s: string, max = 300): string => s.replace(/\s+/g, ' ').trim().slice(0, max);

function causeText(e: unknown): string {
  let c: unknown = (e as { cause?: unknown })?.cause;
  const parts: string[] = [];
  for (let i = 0; c && i < 4; i++) {
    const code = (c as { code?: string }).code;
    const msg = (c as Error).message;
    if (code || msg) parts.push(code ? `${code}${msg && !msg.includes(code) ? ` ${msg}` : ''}` : msg);
    c = (c as { cause?: unknown }).cause;
  }
  return parts.join(': ');
}

function classify(e: unknown, ctx: { timedOut: boolean; aborted: boolean; received: boolean; baseURL: string; model: string; timeoutMs: number }): LlmFailure & { retryAfterMs?: number | null } {
  if (e instanceof LlmError) return e.failure;
  if (ctx.aborted) return { kind: 'aborted', message: 'the request was cancelled', retryable: false };
  if (ctx.timedOut || e instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', message: `no complete answer from ${ctx.baseURL} within ${ctx.timeoutMs} ms${ctx.received ? ' (it was still writing)' : ''}`, retryable: true };
  }
  if (e instanceof APIUserAbortError) return { kind: 'aborted', message: 'the request was cancelled', retryable: false };
  if (e instanceof APIConnectionError) {
    if (ctx.received) return { kind: 'truncated', message: `the answer stream was cut off (${oneLine(causeText(e) || e.message)})`, retryable: true };
    return { kind: 'unreachable', message: `cannot reach ${ctx.baseURL} (${oneLine(causeText(e) || e.message)}); is the server running?`, retryable: true };
  }
  if (e instanceof APIError && typeof e.status === 'number') {
    const s = e.status;
    const detail = oneLine(e.message);
    if (s === 401 || s === 403) return { kind: 'auth', status: s, message: `${s}: the server refused the API key (${detail}); set it in the environment variable named by apiKeyEnv`, retryable: false };
    if (s === 429) return { kind: 'rate_limit', status: s, message: `429: rate limited (${detail})`, retryable: true, retryAfterMs: retryAfterMs(e.headers) };
    if (s >= 500) return { kind: 'server', status: s, message: `${s}: server error (${detail})`, retryable: true, retryAfterMs: retryAfterMs(e.headers) };
    if (s === 408) return { kind: 'timeout', status: s, message: `408: the server timed out (${detail})`, retryable: true };
    if (s === 404) return { kind: 'bad_request', status: s, message: `404: ${detail} (is the model "${ctx.model}" available at ${ctx.baseURL}?)`, retryable: false };
    return { kind: 'bad_request', status: s, message: `${s}: ${detail}`, retryable: false };
  }
  const msg = oneLine(`${(e as Error)?.message ?? String(e)}${causeText(e) ? ` (${causeText(e)})` : ''}`);
  if (ctx.received) return { kind: 'truncated', message: `the answer stream was cut off (${msg})`, retryable: true };
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|fetch failed/i.test(msg)) return { kind: 'unreachable', message: `cannot reach ${ctx.baseURL} (${msg})`, retryable: true };
  return { kind: 'protocol', message: `unexpected answer from ${ctx.baseURL}: ${msg}`, retryable: false };
}

/** A failure as a connection report tells it (its kind, message and HTTP status). */
function reportedFailure(f: LlmFailure): NonNullable<ConnectionReport['error']> {
  return { kind: f.kind, message: f.message, ...(f.status !== undefined ? { status: f.status } : {}) };
}

export interface LlmProviderOptions {
  /** The key itself (e.g. from the OS keychain); else read from process.env[settings.apiKeyEnv]. */
  apiKey?: string;
  env?: NodeJS.ProcessEnv;
  /** Injected for tests: a deterministic sleep. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0,1). */
  random?: () => number;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((res) => {
    if (signal?.aborted) return res();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      res();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class LlmProvider {
  readonly settings: LlmSettings;
  private readonly client: OpenAI;
  private readonly apiKey: string | undefined;
  private readonly queue: PQueue;
  private readonly sleep: NonNullable<LlmProviderOptions['sleep']>;
  private readonly random: () => number;

  constructor(settings: LlmSettingsInput | LlmSettings, opts: LlmProviderOptions = {}) {
    this.settings = parseLlmSettings(settings);
    const env = opts.env ?? process.env;
    const key = opts.apiKey ?? env[this.settings.apiKeyEnv];
    this.apiKey = key && key.trim() !== '' ? key.trim() : undefined;
    // Local servers need no key; the client insists on one, so a placeholder is sent.
    this.client = new OpenAI({ baseURL: this.settings.baseURL, apiKey: this.apiKey ?? 'no-key', maxRetries: 0, timeout: this.settings.requestTimeoutMs });
    this.queue = new PQueue({ concurrency: this.settings.concurrency });
    this.sleep = opts.sleep ?? defaultSleep;
    this.random = opts.random ?? Math.random;
  }

  /** Whether a key was found (the key itself is never exposed). */
  get hasApiKey(): boolean {
    return this.apiKey !== undefined;
  }

  /** Removes the API key from any text or object. Use before journaling or logging anything that came from the server. */
  redact<T>(value: T): T {
    return redactSecrets(value, [this.apiKey]);
  }

  /** Settings safe to store in a session (they never hold the key; this also says whether one was set). */
  describe(): LlmSettings & { apiKeySet: boolean } {
    return this.redact({ ...this.settings, apiKeySet: this.hasApiKey });
  }

  /** One chat completion with retries. Never throws. */
  complete(messages: ChatMessage[], o: CompleteOptions = {}): Promise<Completion> {
    return this.queue.add(() => this.completeNow(messages, o)) as Promise<Completion>;
  }

  private backoff(attempt: number, retryAfter: number | null | undefined): number {
    const s = this.settings;
    const exp = s.retryBaseMs * 2 ** (attempt - 1) * (0.5 + 0.5 * this.random());
    return Math.min(s.maxRetryDelayMs, Math.max(exp, retryAfter ?? 0));
  }

  private async completeNow(messages: ChatMessage[], o: CompleteOptions): Promise<Completion> {
    const t0 = Date.now();
    let attempt = 0;
    let partial: string;
    for (;;) {
      attempt++;
      const r = await this.attempt(messages, o, attempt);
      if (r.ok) return { ...r, attempts: attempt, durationMs: Date.now() - t0 };
      partial = r.partial;
      const f = r.failure;
      if (!f.retryable || attempt > this.settings.retries || o.signal?.aborted) {
        const { retryAfterMs: _drop, ...error } = f as LlmFailure & { retryAfterMs?: number | null };
        void _drop;
        return { ok: false, error: this.redact({ ...error, message: attempt > 1 ? `${error.message} (after ${attempt} attempts)` : error.message }), partial: this.redact(partial), attempts: attempt, durationMs: Date.now() - t0 };
      }
      const delay = this.backoff(attempt, (f as { retryAfterMs?: number | null }).retryAfterMs);
      o.onRetry?.(this.redact({ kind: f.kind, message: f.message, status: f.status, retryable: f.retryable }), attempt, delay);
      await this.sleep(delay, o.signal);
    }
  }

  private async attempt(
    messages: ChatMessage[],
    o: CompleteOptions,
    attempt: number,
  ): Promise<{ ok: true; text: string; finishReason: string; model: string; usage?: CompletionOk['usage'] } | { ok: false; failure: LlmFailure & { retryAfterMs?: number | null }; partial: string }> {
    const s = this.settings;
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, s.requestTimeoutMs);
    const onAbort = (): void => ac.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let text = '';
    let received = false;
    const body = { model: s.model, messages, temperature: o.temperature ?? s.temperature, max_tokens: o.maxTokens ?? s.maxTokens };
    try {
      if (o.signal?.aborted) throw new APIUserAbortError();
      if (s.stream) {
        const stream = await this.client.chat.completions.create({ ...body, stream: true }, { signal: ac.signal, timeout: s.requestTimeoutMs });
        let finish: string | null = null;
        let model = s.model;
        let usage: CompletionOk['usage'];
        for await (const chunk of stream) {
          received = true;
          if (chunk.model) model = chunk.model;
          if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
          const ch = chunk.choices?.[0];
          const d = ch?.delta?.content;
          if (typeof d === 'string' && d.length) {
            text += d;
            o.onDelta?.(d, attempt);
          }
          if (ch?.finish_reason) finish = ch.finish_reason;
        }
        if (timedOut || o.signal?.aborted) throw new APIUserAbortError();
        return this.finish(text, finish, model, usage);
      }
      const r = await this.client.chat.completions.create({ ...body, stream: false }, { signal: ac.signal, timeout: s.requestTimeoutMs });
      const ch = r.choices?.[0];
      if (!ch) throw new LlmError({ kind: 'protocol', message: `the answer from ${s.baseURL} has no choices`, retryable: false });
      text = ch.message?.content ?? '';
      if (text) o.onDelta?.(text, attempt);
      return this.finish(text, ch.finish_reason ?? null, r.model || s.model, r.usage ? { promptTokens: r.usage.prompt_tokens, completionTokens: r.usage.completion_tokens } : undefined);
    } catch (e) {
      const failure = classify(e, { timedOut, aborted: !!o.signal?.aborted && !timedOut, received: received && text.length > 0, baseURL: s.baseURL, model: s.model, timeoutMs: s.requestTimeoutMs });
      return { ok: false, failure, partial: text };
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  private finish(text: string, finish: string | null, model: string, usage: CompletionOk['usage']): { ok: true; text: string; finishReason: string; model: string; usage?: CompletionOk['usage'] } {
    if (finish === 'length') throw new LlmError({ kind: 'truncated', message: `the answer hit the token limit (max_tokens ${this.settings.maxTokens}) before it was complete; raise maxTokens`, retryable: false });
    if (finish === null) throw new LlmError({ kind: 'truncated', message: `the answer stream ended without a finish reason after ${text.length} characters (cut off)`, retryable: true });
    if (finish === 'content_filter') throw new LlmError({ kind: 'bad_request', message: 'the server filtered the answer (finish_reason content_filter)', retryable: false });
    if (!text.trim()) throw new LlmError({ kind: 'empty', message: 'the model answered with no text', retryable: true });
    return { ok: true, text, finishReason: finish, model, usage };
  }

  /** Lists the server's models and asks for a one-word reply. Never throws. */
  async testConnection(o: { signal?: AbortSignal } = {}): Promise<ConnectionReport> {
    const t0 = Date.now();
    const s = this.settings;
    const rep: ConnectionReport = { ok: false, baseURL: s.baseURL, model: s.model, latencyMs: 0 };
    try {
      const list = await this.client.models.list({ signal: o.signal, timeout: Math.min(s.requestTimeoutMs, 15_000) });
      rep.models = list.data.map((m) => m.id);
      rep.modelListed = rep.models.includes(s.model);
    } catch (e) {
      const f = classify(e, { timedOut: false, aborted: !!o.signal?.aborted, received: false, baseURL: s.baseURL, model: s.model, timeoutMs: s.requestTimeoutMs });
      // Some servers do not list models (404): the completion below still tests the rest.
      if (f.kind === 'unreachable' || f.kind === 'auth' || f.kind === 'aborted') {
        rep.error = this.redact(reportedFailure(f));
        rep.latencyMs = Date.now() - t0;
        return rep;
      }
    }
    const c = await this.attempt([{ role: 'user', content: 'Reply with the single word OK.' }], { signal: o.signal, maxTokens: 16, temperature: 0 }, 1);
    rep.latencyMs = Date.now() - t0;
    if (c.ok) {
      rep.ok = true;
      rep.reply = oneLine(c.text, 80);
    } else if (c.failure.kind === 'truncated' && c.partial) {
      rep.ok = true; // it answered; 16 tokens were simply not enough for this model's chatter
      rep.reply = oneLine(c.partial, 80);
    } else {
      rep.error = this.redact(reportedFailure(c.failure));
    }
    return rep;
  }
}
