// The LLM provider's settings: a plain zod schema with no Node or client-library imports, so the
// API contract (and through it the renderer's settings form) validates exactly what the provider
// accepts. The API key is never a setting: only the name of the environment variable that holds it.
import { z } from 'zod';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';
export const DEFAULT_API_KEY_ENV = 'KERNELDUEL_LLM_API_KEY';

export const LlmSettingsSchema = z.strictObject({
  /** OpenAI-compatible base URL (…/v1). */
  baseURL: z.url({ protocol: /^https?$/ }).default(DEFAULT_BASE_URL),
  model: z.string().min(1).default('qwen2.5-coder:32b'),
  /** Name of the environment variable holding the API key (the key itself is never a setting). */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').default(DEFAULT_API_KEY_ENV),
  temperature: z.number().min(0).max(2).default(0.7),
  maxTokens: z.number().int().positive().max(1_000_000).default(8192),
  /** Whole request, first byte to last streamed token. */
  requestTimeoutMs: z.number().int().positive().default(300_000),
  /** Requests in flight at once. */
  concurrency: z.number().int().min(1).max(64).default(1),
  /** Retries after the first attempt (rate limits, 5xx, unreachable server, timeouts, cut streams). */
  retries: z.number().int().min(0).max(10).default(3),
  /** First backoff delay; doubles per retry (with jitter), Retry-After wins when larger. */
  retryBaseMs: z.number().int().min(0).default(1000),
  /** Upper bound on one wait between retries (also caps Retry-After). */
  maxRetryDelayMs: z.number().int().min(0).default(60_000),
  stream: z.boolean().default(true),
});
export type LlmSettings = z.infer<typeof LlmSettingsSchema>;
export type LlmSettingsInput = z.input<typeof LlmSettingsSchema>;

export class LlmSettingsError extends Error {
  constructor(readonly issues: Array<{ field: string; message: string }>) {
    super(`invalid LLM settings: ${issues.map((i) => `${i.field || '(settings)'}: ${i.message}`).join('; ')}`);
    this.name = 'LlmSettingsError';
  }
}

/** Validates settings (unknown fields, including any attempt to put an API key in them, are errors). */
export function parseLlmSettings(input: unknown): LlmSettings {
  const p = LlmSettingsSchema.safeParse(input ?? {});
  if (!p.success) throw new LlmSettingsError(p.error.issues.map((i) => ({ field: i.path.map(String).join('.'), message: i.message })));
  return p.data;
}
