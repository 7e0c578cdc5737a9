// What a connection test may send, and where: the one place that decides which API key goes with
// a test of settings a client hands in (llm.testConnection). A client must not be able to make the
// engine send the saved key, or any environment variable of the server, to a URL of its choice:
// the saved key goes only to the saved base URL, a key is read only from the variable the saved
// settings name, and settings for another URL are tested with the key given with them, or none.
// Pure: the caller passes the saved settings and a way to read the saved key.
import type { LlmSettings } from './settings.js';

export interface ConnectionTestPlan {
  settings: LlmSettings;
  apiKey: string | undefined;
  /** Said with the report when no key is sent although one is saved. */
  note?: string;
}

export class ConnectionTestRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionTestRefused';
  }
}

function endpoint(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host.toLowerCase()}${u.pathname.replace(/\/+$/, '')}`;
}

/**
 * The settings and key for a test: `given` unsaved settings (default: the saved ones), `givenKey`
 * a key the client typed for them; `savedKey` reads the saved key (keychain, or the saved
 * settings' variable).
 */
export function planConnectionTest(saved: LlmSettings, given: LlmSettings | undefined, givenKey: string | undefined, savedKey: () => string | undefined): ConnectionTestPlan {
  const key = givenKey?.trim() || undefined;
  if (!given) return { settings: saved, apiKey: key ?? savedKey() };
  if (key) return { settings: given, apiKey: key };
  if (given.apiKeyEnv !== saved.apiKeyEnv) {
    throw new ConnectionTestRefused(
      `apiKeyEnv: a connection test reads a key only from the saved settings' variable (${saved.apiKeyEnv}); save the settings to test with $${given.apiKeyEnv}, or enter the key for this test`,
    );
  }
  if (endpoint(given.baseURL) === endpoint(saved.baseURL)) return { settings: given, apiKey: savedKey() };
  const k = savedKey();
  return {
    settings: given,
    apiKey: undefined,
    ...(k ? { note: `tested without a key: the saved key goes only to the saved base URL (${saved.baseURL}); save these settings first, or enter a key for ${given.baseURL}` } : {}),
  };
}
