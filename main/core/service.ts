// The core behind the API contract: every method of main/contract/api.ts, as one handler each, on
// the pieces of the core (tasks, runs, sessions, LLM settings) and the engine. Transport-free: the
// web server and the Electron main process both wrap it with the same dispatcher; the CLI uses the
// same pieces directly (the GPU picker, the evaluator factory, the run lifecycle).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ApiEvent, ExportFile } from '../contract/api.js';
import { defaultConfig } from '../engine/task/space.js';
import { sessionsRoot } from '../engine/session/store.js';
import { exportVariant } from '../engine/export/cu.js';
import { isSpaceTask } from '../engine/measure/space-task.js';
import { defaultImportPath, importSpaceBytes, writeJsonFile } from '../engine/interop/files.js';
import { spaceTaskId } from './space-tasks.js';
import type { Handlers } from './dispatch.js';
import { CoreError, errMsg } from './errors.js';
import { EventHub } from './events.js';
import { describeMachine, environmentDTO } from './environment.js';
import { makeEvaluator } from './evaluators.js';
import { pickGpu } from './gpus.js';
import { TaskRegistry } from './tasks.js';
import { SessionViews, recordingOf, factsOf } from './sessions.js';
import { compareVariants } from './compare.js';
import { variantCode } from './code.js';
import { BaselineCurves } from './baselines.js';
import { LlmSettingsStore, type SecretStore } from './llm.js';
import { renderReport } from './report.js';
import { buildOutcome, confirmDTO } from './views.js';
import { confirmStoredSession } from './confirm.js';
import { Runs } from './run/runs.js';
import type { RunThread } from './run/worker.js';

export type { SecretStore };

export interface ServiceOptions {
  mode: 'electron' | 'browser';
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** The desktop app's keychain for the LLM API key; without one (browser mode) the key is read from the environment only. */
  secrets?: SecretStore;
  /** Run optimisations in a worker thread (default true, when this module's worker file exists), or a given worker file. */
  worker?: RunThread;
}

export class ApiService {
  readonly mode: 'electron' | 'browser';
  private readonly env: NodeJS.ProcessEnv;
  private readonly hub = new EventHub();
  private readonly tasks: TaskRegistry;
  private readonly runs: Runs;
  private readonly sessions: SessionViews;
  private readonly baselines = new BaselineCurves();
  private readonly llm: LlmSettingsStore;

  constructor(opts: ServiceOptions) {
    this.mode = opts.mode;
    this.env = opts.env ?? process.env;
    const root = sessionsRoot(this.env);
    this.tasks = new TaskRegistry(this.env);
    this.sessions = new SessionViews(root, (id) => this.runs.state(id));
    this.runs = new Runs(this.hub, { env: this.env, sessionsRoot: root, thread: opts.worker ?? true, onEnd: (id) => this.sessions.forget(id) });
    this.llm = new LlmSettingsStore(this.env, this.mode, opts.secrets);
  }

  /**
   * Starts finding the host's facts and the toolchain now (both remembered for the process), so
   * that the workbench's first env.describe does not wait for systeminformation and `nvcc
   * --version` (seconds on a busy machine). The GPUs and their clocks are still asked each time.
   */
  warm(): void {
    void describeMachine(this.env).catch(() => undefined);
  }

  /** Every event (runs, logs, the model's streamed answers); returns the unsubscribe function. */
  on(listener: (e: ApiEvent) => void): () => void {
    return this.hub.on(listener);
  }

  /** Stops every run (server shutdown); resolves when their journals are closed. */
  stopAll(): Promise<void> {
    return this.runs.stopAll();
  }

  handlers(): Handlers {
    const withDefaults = <T extends { config?: Record<string, number>; flags?: object }>(taskDefaults: Record<string, number>, p: T) => ({
      config: { ...taskDefaults, ...(p.config ?? {}) },
      flags: { opt: 3 as const, ...(p.flags ?? {}) },
    });
    return {
      'env.describe': () => environmentDTO(this.env, this.mode),
      'tasks.list': () => this.tasks.list(),
      'tasks.get': (p) => this.tasks.get(p.taskId),
      'tasks.open': (p) => this.tasks.open(p.dir),
      'tasks.validateManifest': (p) => this.tasks.validateManifest(p.text),
      'tasks.readFile': (p) => this.tasks.readFile(p.taskId, p.file),
      'tasks.saveFile': (p) => this.tasks.saveFile(p.taskId, p.file, p.text),
      'spaces.import': (p) => {
        const bytes = Buffer.from(p.contentBase64, 'base64');
        let r: ReturnType<typeof importSpaceBytes>;
        try {
          r = importSpaceBytes(bytes, p.fileName, { format: 'kernel-tuner', ...(p.name ? { name: p.name } : {}), ...(p.gpuName ? { gpuName: p.gpuName } : {}), command: `workbench import of ${p.fileName}${p.name ? ` as ${p.name}` : ''}` });
        } catch (e) {
          // The engine's messages name the CLI's option; here the field is the form's.
          throw new CoreError('failed', errMsg(e).replace(/^--name /, 'name '));
        }
        const s = r.space;
        const file = defaultImportPath(s, this.env);
        const replaced = fs.existsSync(file);
        if (replaced && !p.replace) throw new CoreError('failed', `a recorded space named ${s.task} already exists (${file}): give another name, or replace it`);
        writeJsonFile(file, s);
        return { taskId: spaceTaskId(file), name: s.task, path: file, format: r.format, gpu: s.gpu.name, configurations: s.entries.length, failed: s.entries.filter((e) => e.failure).length, tunables: Object.keys(s.tunables ?? {}).length, replaced, warnings: r.warnings };
      },
      'eval.build': async (p) => {
        const task = this.tasks.loadWithSource(p.taskId);
        const ev = await makeEvaluator(task, { gpu: null, env: this.env });
        return buildOutcome(await ev.build({ source: p.source, ...withDefaults(defaultConfig(task), p) }));
      },
      'eval.run': async (p) => {
        const task = this.tasks.loadWithSource(p.taskId);
        const gpu = await pickGpu({ index: p.gpu ?? null }, { env: this.env });
        const ev = await makeEvaluator(task, { gpu, env: this.env, ...(p.precise ? { precise: true } : {}) });
        try {
          const result = await ev.evaluate({ source: p.source, ...withDefaults(defaultConfig(task), p) });
          return { build: buildOutcome(result.build), result };
        } finally {
          ev.close(); // its judge and executors (CUDA contexts) end with the evaluation, not with the app
        }
      },
      'runs.list': () => this.runs.list(),
      'runs.start': (p) => {
        const task = this.tasks.load(p.task);
        if (isSpaceTask(task) && p.recording === undefined) throw new CoreError('failed', `${task.manifest.name} is a recorded space without kernel source: it can only be replayed (choose its REPLAY recording)`);
        return this.runs.start({
          task, strategy: p.strategy, budget: p.budget, gpu: p.gpu, ...(p.gpus !== undefined ? { gpus: p.gpus } : {}), ...(p.simulateGpus !== undefined ? { simulateGpus: p.simulateGpus } : {}), seed: p.seed, recording: p.recording, recordings: this.tasks.recordingsOf(task),
          ...(p.pytorchBaselines !== undefined ? { pytorchBaselines: p.pytorchBaselines } : {}),
          llm: { settings: this.llm.settings(), apiKey: this.llm.apiKey() },
        });
      },
      'runs.pause': (p) => this.runs.pause(p.sessionId),
      'runs.resume': (p) => this.runs.resume(p.sessionId),
      'runs.stop': (p) => this.runs.stop(p.sessionId),
      'sessions.list': () => this.sessions.list(),
      'sessions.get': (p) => this.sessions.payload(p.id),
      'sessions.baselines': async (p) => {
        const info = this.sessions.withSession(p.id, (s) => ({
          recording: recordingOf(s),
          evaluations: factsOf(s).variants.filter((v) => v.origin !== 'baseline' && s.resultOf(v.id)).length,
          taskDir: s.meta.task.dir,
          strategy: typeof s.meta.settings.strategy === 'string' ? s.meta.settings.strategy : '',
        }));
        return this.baselines.curves(info);
      },
      'sessions.log': (p) => this.sessions.log(p.id),
      'sessions.confirm': async (p) => {
        const { report } = await confirmStoredSession({ session: p.id, env: this.env, ...(p.top !== undefined ? { top: p.top } : {}), ...(p.gpu !== undefined ? { gpu: p.gpu } : {}) });
        return confirmDTO(report);
      },
      'variants.code': async (p) => {
        // Read the variant from a snapshot, then build outside it (a build can take a while).
        const req = this.sessions.withSession(p.sessionId, (s) => {
          const variant = s.variant(p.variantId);
          if (!variant) throw new CoreError('not_found', `session ${s.id} has no variant ${p.variantId}`);
          return { variant, task: s.meta.task, arch: s.meta.gpu?.arch || s.resultOf(p.variantId)?.build.arch || 'sm_90' };
        });
        return variantCode(req, this.env);
      },
      'variants.get': (p) => this.sessions.withSession(p.sessionId, (s) => this.sessions.variantDetail(s, p.variantId)),
      'variants.compare': (p) =>
        this.sessions.withSession(p.sessionId, (s) => compareVariants(p.sessionId, this.sessions.variantDetail(s, p.a), this.sessions.variantDetail(s, p.b), s.events())),
      'export.variant': (p) =>
        this.sessions.withSession(p.sessionId, (s): ExportFile => {
          const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-export-'));
          try {
            const r = exportVariant(s, p.variantId, tmp);
            return { fileName: path.basename(r.path), content: fs.readFileSync(r.path, 'utf8'), mimeType: 'text/x-cuda' };
          } catch (e) {
            throw new CoreError('failed', errMsg(e));
          } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
          }
        }),
      'export.report': (p) => renderReport(this.sessions.detail(p.sessionId), p.format),
      'llm.getSettings': () => this.llm.dto(),
      'llm.saveSettings': (p) => this.llm.save(p),
      'llm.testConnection': (p) => this.llm.testConnection(p),
      'llm.previewPrompt': (p) => {
        const task = this.tasks.loadWithSource(p.taskId);
        if (!p.sessionId) return this.llm.previewPrompt(task, null);
        return this.sessions.withSession(p.sessionId, (s) => this.llm.previewPrompt(task, s));
      },
    };
  }
}
