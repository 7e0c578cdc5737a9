// The LLM policy's settings as every front door sees them: saved in $KERNELDUEL_HOME/llm-settings.json
// (never with a key), the key in the desktop app's keychain or in the environment variable the
// settings name (it never leaves the engine), connection tests, the prompt the policy would send
// next, and the dataset export (with the key scrubbed).
import fs from 'node:fs';
import path from 'node:path';
import type { ConnectionReportDTO, LlmSettingsDTO, PromptPreviewDTO } from '../contract/api.js';
import { kernelduelHome } from '../engine/base/paths.js';
import type { Task } from '../engine/task/manifest.js';
import type { Session } from '../engine/session/store.js';
import { DEFAULT_API_KEY_ENV, parseLlmSettings, type LlmSettings } from '../engine/llm/settings.js';
import { LlmProvider } from '../engine/llm/provider.js';
import { buildPrompt } from '../engine/llm/prompt.js';
import { writeDataset } from '../engine/llm/dataset.js';
import { ConnectionTestRefused, planConnectionTest, type ConnectionTestPlan } from '../engine/llm/connection-test.js';
import { LlmStrategy, type CompletionSource } from '../engine/search/llm.js';
import { pythonDeviceOf, pythonFigureOf } from '../engine/session/run-settings.js';
import { promptDevice, pythonCandidateTask } from './python-measurer.js';
import { CoreError } from './errors.js';

/** Where the desktop app keeps the LLM API key: encrypted by the OS (Electron's safeStorage). */
export interface SecretStore {
  /** Whether keys can be stored encrypted here. */
  available(): boolean;
  save(key: string): void;
  load(): string | undefined;
  clear(): void;
}

export class LlmSettingsStore {
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly mode: 'electron' | 'browser',
    private readonly secrets: SecretStore | undefined,
  ) {}

  private file(): string {
    return path.join(kernelduelHome(this.env), 'llm-settings.json');
  }

  /** The saved provider settings (defaults when none were saved or the file is damaged). */
  settings(): LlmSettings {
    try {
      return parseLlmSettings(JSON.parse(fs.readFileSync(this.file(), 'utf8')));
    } catch {
      return parseLlmSettings({});
    }
  }

  /** The key for runs: the keychain's (desktop app), else the environment variable the settings name. Never leaves the engine. */
  apiKey(): string | undefined {
    const fromStore = this.secrets?.available() ? this.secrets.load() : undefined;
    if (fromStore) return fromStore;
    const v = this.env[this.settings().apiKeyEnv];
    return v && v.trim() ? v.trim() : undefined;
  }

  dto(): LlmSettingsDTO {
    const settings = this.settings();
    const stored = this.secrets?.available() ? !!this.secrets.load() : false;
    const env = !!this.env[settings.apiKeyEnv]?.trim();
    return {
      settings, mode: this.mode,
      apiKey: { set: stored || env, source: stored ? 'keychain' : env ? 'env' : 'none', env: settings.apiKeyEnv, canStore: !!this.secrets?.available() },
    };
  }

  save(p: { settings: unknown; apiKey?: string; clearApiKey?: boolean }): LlmSettingsDTO {
    const settings = parseLlmSettings(p.settings);
    if (p.apiKey !== undefined || p.clearApiKey) {
      if (!this.secrets) throw new CoreError('forbidden', `in browser mode the API key is read from the server's environment variable ${settings.apiKeyEnv} only: set it where you start \`kernelduel serve\``);
      if (!this.secrets.available()) throw new CoreError('failed', 'the OS offers no encrypted storage here (safeStorage unavailable): set the key in the environment variable instead; it is never written in plain text');
      if (p.clearApiKey) this.secrets.clear();
      if (p.apiKey !== undefined) this.secrets.save(p.apiKey.trim());
    }
    fs.mkdirSync(path.dirname(this.file()), { recursive: true });
    fs.writeFileSync(this.file(), JSON.stringify(settings, null, 2) + '\n');
    return this.dto();
  }

  /** Tests the saved settings, or unsaved ones with only the key main/engine/llm/connection-test.ts lets go with them. */
  async testConnection(p: { settings?: unknown; apiKey?: string } | undefined): Promise<ConnectionReportDTO> {
    let plan: ConnectionTestPlan;
    try {
      plan = planConnectionTest(this.settings(), p?.settings ? parseLlmSettings(p.settings) : undefined, p?.apiKey, () => this.apiKey());
    } catch (e) {
      if (e instanceof ConnectionTestRefused) throw new CoreError('failed', e.message);
      throw e;
    }
    // The key is handed in; the provider reads no environment variable itself.
    const provider = new LlmProvider(plan.settings, { apiKey: plan.apiKey, env: {} });
    const r = await provider.testConnection();
    return { ...r, ...(plan.note ? { note: plan.note } : {}) };
  }

  /** The prompt the LLM policy would send next for a task: with a session, drawn from its measured variants. */
  previewPrompt(task: Task, session: Session | null): PromptPreviewDTO {
    // Python candidates: a Python session, or (no session) a PyTorch task whose kernel.cu is still the import's placeholder, as `optimize` would run it.
    const device = session ? pythonDeviceOf(session.meta.settings) : null;
    const isPython = !!device || (!session && !!task.pytorch && !!task.baselinePlaceholder);
    if (isPython) task = pythonCandidateTask(task);
    const python = isPython ? { candidates: 'python' as const, device: device && session ? promptDevice({ device, gpuName: session.meta.gpu?.name ?? 'cuda', figure: pythonFigureOf(session.meta.settings) ?? 'one-call' }) : null } : {};
    if (!session) {
      const b = buildPrompt({ task, exemplars: [], ...python });
      return { promptId: b.promptId, messages: b.messages, exemplars: [], note: 'No session: the first request of a new run shows only the baseline (nothing is measured yet).' };
    }
    const s = session;
    if (s.meta.task.name !== task.manifest.name) throw new CoreError('failed', `session ${s.id} is of task ${s.meta.task.name}, not ${task.manifest.name}`);
    const seed = typeof s.meta.settings.seed === 'number' ? s.meta.settings.seed : 1;
    const nothing: CompletionSource = { settings: this.settings(), complete: () => Promise.reject(new Error('preview only')) };
    const strat = new LlmStrategy({ task, session: s, provider: nothing, seed, gpu: s.meta.gpu?.name ?? null, ...python });
    const b = strat.previewPrompt();
    return {
      promptId: b.promptId, messages: b.messages, exemplars: b.exemplars,
      note: b.exemplars.length
        ? `Exemplars ${b.exemplars.join(', ')} drawn from the measured variants of session ${s.id} (speed buckets, seed ${seed}).`
        : `Session ${s.id} has no timed variants to show the model yet: the prompt shows the baseline only.`,
    };
  }
}

/**
 * Writes a session's (prompt, answer, reward) triples as JSONL; the key of the variable the
 * session's settings name (default KERNELDUEL_LLM_API_KEY) is scrubbed from everything written.
 */
export function exportDataset(session: Session, file: string, env: NodeJS.ProcessEnv = process.env): ReturnType<typeof writeDataset> {
  const llm = session.meta.settings.llm;
  const envKey = llm && typeof llm === 'object' ? (llm as { apiKeyEnv?: unknown }).apiKeyEnv : undefined;
  const key = env[typeof envKey === 'string' ? envKey : DEFAULT_API_KEY_ENV];
  return writeDataset(session, file, { secrets: key ? [key] : [] });
}
