// The engine behind the API contract: every method of main/api/contract.ts implemented on the
// plain-Node engine (tasks, builds, the optimisation loop, sessions, export). Transport-free: the
// web server and the Electron main process both wrap it with the same dispatcher.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { EvalResult, VariantRecord } from '../common/types.js';
import type {
  ApiEvent, BuildOutcome, CompareResult, EnvDTO, ExportFile, ManifestIssueDTO, RunState, SessionDetail, SessionSummaryDTO,
  StrategyInfo, TaskDetail, TaskSummary, VariantDetail,
} from './contract.js';
import { ApiFailure, type Handlers } from './dispatch.js';
import { describeEnvironment } from '../host/info.js';
import { detectGpus, type GpuInfo } from '../gpu/detect.js';
import { findToolchain } from '../toolchain/nvcc.js';
import { builtinTaskNames } from '../task/resolve.js';
import { builtinTasksDir, kernelduelHome, resourcesDir, workRoot } from '../common/paths.js';
import { findManifest, loadTask, parseManifest, sizeLayout, TaskError, type Task } from '../task/manifest.js';
import { defaultConfig, enumerateSpace } from '../task/space.js';
import { entrySignature } from '../build/shim.js';
import { parseCompilerMessages } from '../build/compile.js';
import { Evaluator } from '../eval/evaluate.js';
import type { LoopEvent } from '../search/loop.js';
import type { RunOptions } from '../search/run.js';
import { isRunStrategyName, isLlmStrategyName, RUN_STRATEGY_NAMES } from '../search/strategies.js';
import { startOptimisation, startOptimisationInProcess, workerModuleFile, type OptimisationHandle } from '../search/worker.js';
import { listSessions, openSessionReadOnly, sessionsRoot, type Session, type SessionSummary } from '../session/store.js';
import { LlmProvider, parseLlmSettings, type LlmSettings } from '../llm/provider.js';
import { buildPrompt } from '../llm/prompt.js';
import { LlmStrategy, llmInfoOf, type CompletionSource } from '../search/llm.js';
import type { ConnectionReportDTO, LlmSettingsDTO, PromptPreviewDTO } from './contract.js';
import { exportVariant } from '../export/cu.js';
import { verdictOf } from '../eval/stats.js';
import { baselineOf, duels as duelsOf, modelNote, sessionPlots, variantRow, variantRows, type SessionEventLike, type SessionFacts } from './views.js';
import { renderReport } from './report.js';
import { measuredLimits, type MeasuredLimits } from './limits.js';
import type { BaselineCurvesDTO } from './contract.js';
import { loadSpace } from '../eval/replay.js';
import { isSpaceTask, resolveTaskOrSpace } from '../eval/space-task.js';
import { SpaceTasks, spaceTaskDetail, spaceTaskSummary } from './space-tasks.js';
import { replayStrategy, type StrategyName } from '../search/strategies.js';

/** Where the desktop app keeps the LLM API key: encrypted by the OS (Electron's safeStorage). */
export interface SecretStore {
  /** Whether keys can be stored encrypted here. */
  available(): boolean;
  save(key: string): void;
  load(): string | undefined;
  clear(): void;
}

export interface ServiceOptions {
  mode: 'electron' | 'browser';
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** The desktop app's keychain for the LLM API key; without one (browser mode) the key is read from the environment only. */
  secrets?: SecretStore;
  /** Run optimisations in a worker thread (default true, when this module's worker file exists). */
  worker?: boolean | { file: string };
}

type Listener = (e: ApiEvent) => void;

interface ActiveRun {
  state: RunState;
  handle: OptimisationHandle;
  started: number;
  done: Promise<void>;
}

const DESCRIPTIONS: Record<string, string> = {
  contrastive: 'Contrastive optimiser: learns a preference model from duels between variants and proposes the likely winners.',
  random: 'Random search over the action space (the baseline strategy).',
  anneal: 'Simulated annealing over the action space.',
  genetic: 'Genetic algorithm over the action space.',
  exhaustive: 'Every configuration, in order (small spaces).',
  llm: 'LLM policy (CUDA-L1 contrastive prompting): a language model sees earlier variants with their measured speedups, explains them and writes a faster kernel. Needs the LLM settings; not on a replay.',
  mixed: 'LLM policy alternating with tuning of the parameters of the LLM\'s best variant. Needs the LLM settings; not on a replay.',
};
const STRATEGIES: StrategyInfo[] = RUN_STRATEGY_NAMES.map((name) => ({ name, description: DESCRIPTIONS[name] ?? name, replay: false }));

/** Path `p` lies inside folder `dir` (after resolving symbolic links of both). */
export function isInside(dir: string, p: string): boolean {
  const real = (x: string): string => {
    try {
      return fs.realpathSync(x);
    } catch {
      return path.resolve(x);
    }
  };
  const rel = path.relative(real(dir), real(p));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The recording a session replays, from its settings (`backend: {kind: 'replay', recording}`). */
function replayRecording(settings: Record<string, unknown>): string | null {
  const b = settings.backend as { kind?: unknown; recording?: unknown } | undefined;
  return b && b.kind === 'replay' && typeof b.recording === 'string' ? b.recording : null;
}

function folderTaskId(dir: string): string {
  return `folder:${createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 12)}`;
}

function issuesOf(e: unknown): ManifestIssueDTO[] | undefined {
  return e instanceof TaskError ? e.issues.map((i) => ({ field: i.field, message: i.message, line: i.line })) : undefined;
}

function errMsg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class ApiService {
  readonly mode: 'electron' | 'browser';
  private readonly env: NodeJS.ProcessEnv;
  private readonly listeners = new Set<Listener>();
  private readonly runs = new Map<string, ActiveRun>();
  private readonly opened = new Map<string, string>();
  private readonly detailCache = new Map<string, { key: string; detail: Omit<SessionDetail, 'run'> }>();
  /** Recorded spaces without kernel source, listed as REPLAY-only tasks. */
  private readonly spaceTasks = new SpaceTasks(() => this.recordingRoots());

  private readonly secrets: SecretStore | undefined;
  private readonly workerChoice: ServiceOptions['worker'];

  constructor(opts: ServiceOptions) {
    this.mode = opts.mode;
    this.env = opts.env ?? process.env;
    this.secrets = opts.secrets;
    this.workerChoice = opts.worker ?? true;
    for (const dir of this.readOpened()) this.opened.set(folderTaskId(dir), dir);
  }

  // ------------------------------------------------------------------------------------------ events

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private emit(e: ApiEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // A broken listener (closed socket) must not stop a run.
      }
    }
  }

  private log(sessionId: string | null, level: 'info' | 'warn' | 'error', message: string): void {
    this.emit({ type: 'log', sessionId, level, message, at: new Date().toISOString() });
  }

  // ------------------------------------------------------------------------------------------ tasks

  private openedFile(): string {
    return path.join(kernelduelHome(this.env), 'opened-tasks.json');
  }

  private readOpened(): string[] {
    try {
      const x: unknown = JSON.parse(fs.readFileSync(this.openedFile(), 'utf8'));
      return Array.isArray(x) ? x.filter((d): d is string => typeof d === 'string' && fs.existsSync(d)) : [];
    } catch {
      return [];
    }
  }

  private rememberOpened(): void {
    try {
      fs.mkdirSync(path.dirname(this.openedFile()), { recursive: true });
      fs.writeFileSync(this.openedFile(), JSON.stringify([...this.opened.values()], null, 2));
    } catch {
      // Remembering opened folders is a convenience; failing to is not an error of the call.
    }
  }

  /** The folder of a task id; throws not_found for ids this service never issued. */
  private taskDir(taskId: string): { dir: string; builtin: boolean } {
    if (taskId.startsWith('space:')) throw new ApiFailure('forbidden', `${taskId} is a recorded space without kernel source: it has no task files to read or edit, only a recording to replay`);
    if (taskId.startsWith('folder:')) {
      const dir = this.opened.get(taskId);
      if (!dir) throw new ApiFailure('not_found', `no opened task ${taskId}: open its folder first`);
      return { dir, builtin: false };
    }
    if (!builtinTaskNames().includes(taskId)) throw new ApiFailure('not_found', `no built-in task "${taskId}" (built-in: ${builtinTaskNames().join(', ')})`);
    return { dir: path.join(builtinTasksDir(), taskId), builtin: true };
  }

  private loadTaskById(taskId: string): Task {
    if (taskId.startsWith('space:')) {
      const e = this.spaceTasks.get(taskId);
      if (!e) throw new ApiFailure('not_found', `no recorded space ${taskId} (import one with: kernelduel import kernel-tuner <cache.json>)`);
      return e.task;
    }
    return loadTask(this.taskDir(taskId).dir);
  }

  /** A task with kernel source, for what builds or asks a model; a recorded space's own task is refused. */
  private sourceTaskById(taskId: string): Task {
    const t = this.loadTaskById(taskId);
    if (isSpaceTask(t)) throw new ApiFailure('failed', `${t.manifest.name} is a recorded space without kernel source: it can only be replayed (choose its REPLAY recording)`);
    return t;
  }

  private summary(id: string, dir: string, builtin: boolean): TaskSummary {
    try {
      const t = loadTask(dir);
      let spaceSize: number | null = null;
      try {
        spaceSize = enumerateSpace(t).length;
      } catch {
        spaceSize = null;
      }
      return { id, name: t.manifest.name, description: t.manifest.description ?? '', dir, builtin, spaceSize, tunables: t.manifest.tunables ?? {}, recordings: this.recordingsFor(t.manifest.name) };
    } catch (e) {
      return { id, name: path.basename(dir), description: '', dir, builtin, spaceSize: null, tunables: {}, recordings: [], error: errMsg(e), issues: issuesOf(e) };
    }
  }

  /** A task file's path, checked to lie inside the task folder. */
  private taskFile(taskId: string, file: 'kernel' | 'reference' | 'manifest'): { path: string; builtin: boolean; dir: string } {
    const { dir, builtin } = this.taskDir(taskId);
    const manifestPath = findManifest(dir) ?? path.join(dir, 'task.yaml');
    let p = manifestPath;
    if (file !== 'manifest') {
      let files: { reference?: string; baseline?: string } | undefined;
      try {
        files = parseManifest(fs.readFileSync(manifestPath, 'utf8')).manifest?.files;
      } catch {
        files = undefined;
      }
      p = path.join(dir, file === 'kernel' ? (files?.baseline ?? 'kernel.cu') : (files?.reference ?? 'reference.cu'));
    }
    if (!isInside(dir, p)) throw new ApiFailure('forbidden', `${p} is outside the task folder ${dir}: KernelDuel only reads and writes a task's own files`);
    return { path: p, builtin, dir };
  }

  private detail(id: string, dir: string, builtin: boolean): TaskDetail {
    const s = this.summary(id, dir, builtin);
    const read = (f: 'kernel' | 'reference' | 'manifest'): { name: string; text: string } => {
      const p = this.taskFile(id, f).path;
      let text = '';
      try {
        text = fs.readFileSync(p, 'utf8');
      } catch {
        text = '';
      }
      return { name: path.basename(p), text };
    };
    const m = read('manifest');
    const k = read('kernel');
    const r = read('reference');
    let sig: string | null = null;
    let defaults = {};
    let sizes: Array<Record<string, number>> = [];
    try {
      const t = loadTask(dir);
      sig = entrySignature(t);
      defaults = defaultConfig(t);
      sizes = t.manifest.sizes;
    } catch {
      sig = null;
    }
    const issues = parseManifest(m.text, m.name).issues.map((i) => ({ field: i.field, message: i.message, line: i.line }));
    return {
      ...s, issues: issues.length ? issues : s.issues, readOnly: builtin, files: { manifest: m.name, kernel: k.name, reference: r.name },
      manifestText: m.text, kernel: k.text, reference: r.text, entrySignature: sig, defaults, sizes,
    };
  }

  // ------------------------------------------------------------------------------------------ engine helpers

  private async pickGpu(index: number | null | undefined): Promise<GpuInfo | null> {
    if (index === null || index === undefined || this.env.KERNELDUEL_NO_GPU === '1') return null;
    const det = await detectGpus();
    const g = det.gpus.find((x) => x.index === index && x.arch);
    if (!g) throw new ApiFailure('not_found', `no usable GPU ${index} (${det.gpus.length ? det.gpus.map((x) => `${x.index}: ${x.name}`).join('; ') : 'no GPUs found'}); choose "none (compile-only)"`);
    return g;
  }

  private async evaluator(task: Task, gpu: GpuInfo | null): Promise<Evaluator> {
    const tc = await findToolchain(this.env);
    if (!tc.nvcc) throw new ApiFailure('failed', tc.problems.join(' ') || 'nvcc not found: install the CUDA toolkit to build variants');
    return new Evaluator({ task, toolchain: tc, gpu, workRoot: workRoot(this.env) });
  }

  private buildOutcome(r: EvalResult['build']): BuildOutcome {
    return {
      ok: r.ok, arch: r.arch, command: r.command, messages: parseCompilerMessages(r.log ?? '', 'variant.cu'), resources: r.resources, log: r.log ?? '',
      durationMs: r.durationMs, cached: !!r.cached, failure: r.failure ? { kind: r.failure.kind, reason: r.failure.reason } : undefined,
    };
  }

  /** Where recorded spaces are: bench/spaces in the checkout and $KERNELDUEL_HOME/spaces. */
  private recordingRoots(): string[] {
    return [path.join(path.dirname(resourcesDir()), 'bench', 'spaces'), path.join(kernelduelHome(this.env), 'spaces')];
  }

  /** Recorded spaces for a task: bench/spaces/<gpu>/<task>.json in the checkout and $KERNELDUEL_HOME/spaces. */
  recordingsFor(taskName: string): string[] {
    const roots = this.recordingRoots();
    const out: string[] = [];
    for (const r of roots) {
      let gpus: fs.Dirent[] = [];
      try {
        gpus = fs.readdirSync(r, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const g of gpus) {
        const f = g.isDirectory() ? path.join(r, g.name, `${taskName}.json`) : g.name === `${taskName}.json` ? path.join(r, g.name) : '';
        if (f && fs.existsSync(f)) out.push(f);
      }
    }
    return out;
  }

  // ------------------------------------------------------------------------------------------ runs

  private publish(run: ActiveRun): RunState {
    const s = run.state;
    const elapsed = (Date.now() - run.started) / 1000;
    s.etaSeconds = s.evaluated > 0 && s.phase === 'running' ? Math.max(0, (elapsed / s.evaluated) * (s.budget - s.evaluated)) : s.phase === 'finished' ? 0 : s.etaSeconds;
    const copy = { ...s };
    this.emit({ type: 'run.state', state: copy });
    return copy;
  }

  /** How a run starts: a worker thread when its file exists (tsx, the GPU bundle, the Electron build's worker entry), else in this thread. */
  private startHandle(opts: RunOptions): OptimisationHandle {
    const choice = this.workerChoice;
    if (choice === false) return startOptimisationInProcess(opts);
    const file = typeof choice === 'object' ? choice.file : workerModuleFile();
    return file ? startOptimisation(opts, { workerFile: file }) : startOptimisationInProcess(opts);
  }

  private async startRun(p: { task: string; strategy: string; budget: number; gpu: number | null; seed?: number; recording?: string }): Promise<RunState> {
    const task = this.loadTaskById(p.task);
    const seed = p.seed ?? 1;
    if (!isRunStrategyName(p.strategy)) throw new ApiFailure('not_found', `no strategy "${p.strategy}" (have: ${RUN_STRATEGY_NAMES.join(', ')})`);
    let recording: string | undefined;
    if (isSpaceTask(task) && p.recording === undefined) throw new ApiFailure('failed', `${task.manifest.name} is a recorded space without kernel source: it can only be replayed (choose its REPLAY recording)`);
    if (p.recording !== undefined) {
      const known = isSpaceTask(task) ? [task.dir] : this.recordingsFor(task.manifest.name);
      const want = path.resolve(p.recording);
      if (!known.includes(want)) throw new ApiFailure('not_found', `no recorded space ${p.recording} for task ${task.manifest.name} (have: ${known.join(', ') || 'none'})`);
      recording = want;
    } else if (p.gpu !== null) {
      await this.pickGpu(p.gpu);
    }
    const llm = isLlmStrategyName(p.strategy);
    if (llm && recording) throw new ApiFailure('failed', `the ${p.strategy} policy writes new code, which a recorded space cannot answer: choose a GPU or "no GPU (compile-only)"`);
    // The same preparation as the CLI, in a worker thread: task, backend, session, action space, strategy.
    const opts: RunOptions = {
      task: task.dir, strategy: p.strategy, budget: p.budget, seed, sessionsRoot: sessionsRoot(this.env),
      backend: recording ? { kind: 'replay', recording, seed } : p.gpu === null ? { kind: 'gpu', noGpu: true } : { kind: 'gpu', gpu: p.gpu },
      ...(llm ? { llm: this.llmSettings(), apiKey: this.apiKey() } : {}),
    };
    const handle = this.startHandle(opts);
    const it = handle.events[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.type !== 'started') {
      handle.stop();
      const why = !first.done && first.value.type === 'error' ? first.value.message : 'the run ended before it started';
      throw new ApiFailure('failed', why);
    }
    const started = first.value;
    const sid = started.sessionId;
    for (const w of started.warnings) this.log(sid, 'warn', w);
    const run: ActiveRun = {
      state: {
        sessionId: sid, task: task.manifest.name, strategy: p.strategy, budget: p.budget, evaluated: 0, phase: 'running', startedAt: new Date().toISOString(),
        etaSeconds: null, bestSpeedup: null, bestMs: null, replay: !!recording, compileOnly: !recording && /compile-only/.test(started.label),
      },
      handle, started: Date.now(), done: Promise.resolve(),
    };
    this.runs.set(sid, run);
    // Rows are built from the worker's events (the worker owns the journal).
    const variants = new Map<string, VariantRecord>();
    const results = new Map<string, EvalResult>();
    let baselineMs: number | null = null;
    const rowOf = (v: VariantRecord): ReturnType<typeof variantRow> => variantRow(v, results.get(v.id), baselineMs, null);
    const onEvent = (e: LoopEvent): void => {
      if (e.type === 'variant') {
        variants.set(e.variant.id, e.variant);
        this.emit({ type: 'run.variant', sessionId: sid, row: rowOf(e.variant) });
      } else if (e.type === 'stage') {
        this.log(sid, 'info', `${e.variantId}: ${e.stage === 'build' ? 'building' : e.stage === 'check' ? 'checking against the reference' : 'timing'}`);
      } else if (e.type === 'result') {
        const v = variants.get(e.variantId);
        if (!v) return;
        results.set(v.id, e.result);
        if (v.origin === 'baseline' && baselineMs === null) baselineMs = variantRow(v, e.result, null, null).medianMs;
        const row = rowOf(v);
        run.state.evaluated = e.index;
        run.state.bestSpeedup = e.bestSpeedup;
        run.state.bestMs = e.bestMs;
        const what = e.result.failure
          ? `FAILED ${e.result.failure.kind}: ${e.result.failure.reason}`
          : e.result.compileOnly ? 'built (compile-only: not checked or timed)' : row.medianMs !== null ? `${row.medianMs.toPrecision(4)} ms${row.speedup ? `, ${row.speedup.toFixed(2)}x the baseline` : ''}${e.result.source.kind === 'replay' ? ' (REPLAY)' : ''}` : 'done';
        this.log(sid, e.result.failure ? 'warn' : 'info', `[${e.index}/${e.budget}] ${e.variantId} ${what}`);
        this.emit({ type: 'run.result', sessionId: sid, row, index: e.index, budget: e.budget, bestSpeedup: e.bestSpeedup, bestMs: e.bestMs });
        this.publish(run);
      } else if (e.type === 'duel') {
        this.log(sid, 'info', `duel ${e.a} vs ${e.b}: ${e.result.verdict}, ${e.result.ratio.toFixed(3)}x [${e.result.ratioLow.toFixed(3)}, ${e.result.ratioHigh.toFixed(3)}]`);
      } else if (e.type === 'model') {
        if (e.stats.heldOutAccuracy !== null) this.log(sid, 'info', `preference model v${e.stats.version}: held-out accuracy ${(e.stats.heldOutAccuracy * 100).toFixed(0)}% on ${e.stats.heldOutPairs} pairs`);
      } else if (e.type === 'done') {
        this.log(sid, 'info', `done: ${e.evaluated} evaluated${e.bestSpeedup ? `, best ${e.bestId} ${e.bestSpeedup.toFixed(2)}x` : ''}`);
      }
    };
    this.log(sid, 'info', `session ${sid}: ${task.manifest.name}, ${p.strategy}, budget ${p.budget}, ${started.label}`);
    this.publish(run);
    let stopping = false;
    run.done = (async () => {
      let failed: string | null = null;
      for (;;) {
        const n = await it.next();
        if (n.done) break;
        const m = n.value;
        if (m.type === 'event') onEvent(m.event);
        else if (m.type === 'llm') {
          if (m.event.type === 'llm.delta') this.emit({ ...m.event, sessionId: sid });
          else {
            this.emit({ ...m.event, sessionId: sid });
            this.log(sid, 'info', `asking the model (prompt ${m.event.promptId}, ${m.event.chars} characters) for ${m.event.answerIds.length} answer(s)`);
          }
        } else if (m.type === 'paused' || m.type === 'resumed') {
          // The phase was set when the command was sent.
        } else if (m.type === 'error') failed = m.message;
      }
      stopping = run.state.phase === 'stopping';
      if (failed !== null) {
        run.state.phase = 'failed';
        run.state.error = failed.split('\n')[0];
        this.log(sid, 'error', `run failed: ${run.state.error}`);
      } else run.state.phase = stopping ? 'stopped' : 'finished';
    })()
      .catch((e: unknown) => {
        run.state.phase = 'failed';
        run.state.error = errMsg(e);
        this.log(sid, 'error', `run failed: ${errMsg(e)}`);
      })
      .finally(() => {
        this.publish(run);
        this.runs.delete(sid);
        this.detailCache.delete(sid);
      });
    return { ...run.state };
  }

  private activeRun(sessionId: string): ActiveRun {
    const r = this.runs.get(sessionId);
    if (!r) throw new ApiFailure('not_found', `session ${sessionId} has no run in progress`);
    return r;
  }

  /** Stops every run (server shutdown); resolves when their journals are closed. */
  async stopAll(): Promise<void> {
    const all = [...this.runs.values()];
    for (const r of all) {
      r.state.phase = 'stopping';
      r.handle.stop();
    }
    await Promise.all(all.map((r) => r.done));
  }

  // ------------------------------------------------------------------------------------------ sessions

  private facts(s: Session): SessionFacts {
    return { variants: s.variants(), events: s.events() as unknown as SessionEventLike[], resultOf: (id) => s.resultOf(id) };
  }

  private summaryDTO(s: SessionSummary): SessionSummaryDTO {
    const settings = s.meta?.settings ?? {};
    return {
      id: s.id, task: s.meta?.task.name ?? '?', createdAt: s.meta?.createdAt ?? '', strategy: typeof settings.strategy === 'string' ? settings.strategy : '?',
      budget: typeof settings.budget === 'number' ? settings.budget : null, variants: s.variants, results: s.results, status: this.runs.has(s.id) ? 'running' : (s.status ?? null),
      best: s.best ?? null, gpu: s.meta?.gpu?.name ?? null, replay: replayRecording(settings) !== null, ...(s.error ? { error: s.error } : {}),
    };
  }

  private roofline(taskDir: string, gpuName: string | null): Parameters<typeof sessionPlots>[2] {
    let task: Task;
    try {
      task = loadTask(taskDir);
    } catch {
      return null;
    }
    if (task.manifest.metrics?.bytes === undefined || task.manifest.metrics?.flops === undefined) return null;
    const limits = this.measuredLimits(gpuName);
    return {
      workOf: (i) => {
        try {
          const l = sizeLayout(task, i);
          return { bytes: l.bytes, flops: l.flops };
        } catch {
          return null;
        }
      },
      peakGbps: limits.peakGbps,
      peakGflops: limits.peakGflops,
      limitsSource: limits.limitsSource,
      limitsNote: limits.note ?? null,
    };
  }

  /** The GPU's measured copy bandwidth and SGEMM rate from bench/results/*-foundation.json (matched by GPU name). */
  private measuredLimits(gpuName: string | null): MeasuredLimits {
    return measuredLimits(path.join(path.dirname(resourcesDir()), 'bench', 'results'), gpuName);
  }

  /** Reads a session from a snapshot of its journal (a run may be appending to it in a worker). */
  private withSession<T>(id: string, fn: (s: Session) => T): T {
    let s: Session;
    try {
      s = openSessionReadOnly(sessionsRoot(this.env), id);
    } catch (e) {
      throw new ApiFailure('not_found', errMsg(e));
    }
    try {
      return fn(s);
    } finally {
      s.close();
    }
  }

  private sessionDetail(id: string): SessionDetail {
    const live = this.runs.get(id);
    const journal = path.join(sessionsRoot(this.env), id, 'journal.jsonl');
    let key = '';
    try {
      const st = fs.statSync(journal);
      key = `${st.size}:${st.mtimeMs}`;
    } catch {
      key = '';
    }
    const cached = this.detailCache.get(id);
    if (cached && key && cached.key === key) return { ...cached.detail, run: live ? { ...live.state } : null };
    const detail = this.withSession(id, (s) => {
      const f = this.facts(s);
      const rows = variantRows(f);
      const base = baselineOf(f);
      const best = s.best();
      const replayResult = f.variants.map((v) => s.resultOf(v.id)).find((r) => r?.source.kind === 'replay');
      const recording = replayResult && replayResult.source.kind === 'replay' ? replayResult.source.recording : replayRecording(s.meta.settings);
      const sum = listSessions(sessionsRoot(this.env)).find((x) => x.id === id) ?? { id, dir: s.dir, meta: s.meta, variants: rows.length, results: 0 };
      return {
        summary: this.summaryDTO(sum),
        task: { name: s.meta.task.name, dir: s.meta.task.dir },
        gpu: s.meta.gpu,
        settings: s.meta.settings,
        variants: rows,
        duels: duelsOf(f),
        notes: s.events().flatMap((e) => (e.type === 'note' ? [{ level: e.level, message: e.message }] : [])),
        baselineId: base.id,
        bestId: best?.variant.id ?? null,
        replay: recording ? { recording } : null,
        plots: sessionPlots(f, rows, this.roofline(s.meta.task.dir, s.meta.gpu?.name ?? null)),
      };
    });
    if (key) this.detailCache.set(id, { key, detail });
    return { ...detail, run: live ? { ...live.state } : null };
  }

  private baselineCache = new Map<string, Promise<BaselineCurvesDTO>>();
  /**
   * The baseline strategies (random search, simulated annealing, the genetic algorithm) replayed on
   * the recording a REPLAY session used, for as many evaluations as the session ran: the median
   * best-so-far speedup over 5 seeds, for the session's best-so-far plot. Cached per recording and
   * evaluation count.
   */
  private async baselineCurves(id: string): Promise<BaselineCurvesDTO> {
    const info = this.withSession(id, (s) => {
      const f = this.facts(s);
      const replayResult = f.variants.map((v) => s.resultOf(v.id)).find((r) => r?.source.kind === 'replay');
      const recording = replayResult && replayResult.source.kind === 'replay' ? replayResult.source.recording : replayRecording(s.meta.settings);
      const evaluations = f.variants.filter((v) => v.origin !== 'baseline' && s.resultOf(v.id)).length;
      return { recording, evaluations, taskDir: s.meta.task.dir, strategy: typeof s.meta.settings.strategy === 'string' ? s.meta.settings.strategy : '' };
    });
    const SEEDS = 5;
    const evaluations = Math.min(1000, info.evaluations);
    if (!info.recording) return { recording: null, evaluations: 0, seeds: 0, curves: [], note: 'not a replay session: baseline strategies are compared on recorded spaces only' };
    let stamp = '';
    try {
      stamp = String(fs.statSync(info.recording).mtimeMs);
    } catch {
      throw new ApiFailure('not_found', `the recording this session replayed is gone: ${info.recording}`);
    }
    const key = `${info.recording}|${stamp}|${evaluations}|${info.taskDir}`;
    let p = this.baselineCache.get(key);
    if (!p) {
      p = (async (): Promise<BaselineCurvesDTO> => {
        const task = resolveTaskOrSpace(info.taskDir);
        const rec = loadSpace(info.recording!);
        const names: StrategyName[] = (['random', 'anneal', 'genetic'] as const).filter((n) => n !== info.strategy);
        const curves: BaselineCurvesDTO['curves'] = [];
        for (const name of names) {
          const perSeed: number[][] = [];
          for (let seed = 1; seed <= SEEDS; seed++) {
            // Replays answer at once: yield often, this runs on the app's main thread / the server's.
            const { result: r } = await replayStrategy(name, task, rec, seed, evaluations, { yieldEvery: 1 });
            if (r.baselineMs === null) continue;
            perSeed.push(r.steps.map((st) => (st.bestMs ? r.baselineMs! / st.bestMs : 1)));
          }
          const points: Array<{ index: number; bestSpeedup: number }> = [];
          for (let i = 0; i < evaluations; i++) {
            const xs = perSeed.map((v) => v[Math.min(i, v.length - 1)]).filter((x) => x !== undefined).sort((a, b) => a - b);
            if (xs.length) points.push({ index: i + 1, bestSpeedup: xs[xs.length >> 1] });
          }
          curves.push({ name, points });
        }
        return { recording: info.recording, evaluations, seeds: SEEDS, curves, note: `REPLAY: each curve is the median best-so-far speedup of ${SEEDS} seeded runs of that strategy on the same recorded space (${path.basename(info.recording!)})` };
      })();
      p.catch(() => this.baselineCache.delete(key));
      this.baselineCache.set(key, p);
    }
    return p;
  }

  private variantDetail(s: Session, id: string): VariantDetail {
    const v = s.variant(id);
    if (!v) throw new ApiFailure('not_found', `session ${s.id} has no variant ${id}`);
    const r = s.resultOf(id);
    const base = baselineOf(this.facts(s));
    const row = variantRows(this.facts(s)).find((x) => x.id === id) ?? variantRow(v, r, base.ms, null);
    const info = llmInfoOf(v);
    const llm = info
      ? { model: info.model, promptId: info.promptId, answerId: info.answerId, analysis: info.analysis, design: info.design, code: v.source, exemplars: info.exemplars, ...(info.missing ? { missing: info.missing } : {}), ...(info.error ? { error: info.error.message } : {}) }
      : null;
    return { variant: v, result: r ?? null, row, llm };
  }

  private compare(sessionId: string, a: string, b: string): CompareResult {
    return this.withSession(sessionId, (s) => {
      const da = this.variantDetail(s, a);
      const db = this.variantDetail(s, b);
      const notes: string[] = [];
      // A recorded duel between the two (either direction) is the best evidence: paired, interleaved.
      let duel = null as CompareResult['duel'];
      let ratio: CompareResult['ratio'] = null;
      let prediction: CompareResult['prediction'] = null;
      for (const e of s.events()) {
        if (e.type !== 'duel') continue;
        const p = e.prediction;
        if (e.a === a && e.b === b) {
          duel = e.result;
          if (p) prediction = { pAFaster: p.pAFaster, model: `${p.model}, before the duel` };
        } else if (e.a === b && e.b === a) {
          duel = { ...e.result, aMs: e.result.bMs, bMs: e.result.aMs, ratio: 1 / e.result.ratio, ratioLow: 1 / e.result.ratioHigh, ratioHigh: 1 / e.result.ratioLow, verdict: e.result.verdict === 'faster' ? 'slower' : e.result.verdict === 'slower' ? 'faster' : e.result.verdict };
          if (p) prediction = { pAFaster: 1 - p.pAFaster, model: `${p.model}, before the duel` };
        }
      }
      if (duel) {
        ratio = { value: duel.ratio, low: duel.ratioLow, high: duel.ratioHigh, verdict: duel.verdict, method: 'duel' };
      } else if (da.row.medianMs !== null && db.row.medianMs !== null) {
        // Independent measurements: the ratio of medians with the interval from the two medians' CIs.
        const low = (db.row.ciLowMs ?? db.row.medianMs) / (da.row.ciHighMs ?? da.row.medianMs);
        const high = (db.row.ciHighMs ?? db.row.medianMs) / (da.row.ciLowMs ?? da.row.medianMs);
        ratio = { value: db.row.medianMs / da.row.medianMs, low, high, verdict: verdictOf(low, high), method: 'independent' };
        notes.push('No duel between these two was recorded: the ratio comes from their separate measurements (wider interval than an interleaved duel).');
      } else {
        notes.push('At least one of the two was not timed (compile-only, failed or pending): no speed ratio.');
      }
      if (da.result?.source.kind === 'replay' || db.result?.source.kind === 'replay') notes.push('REPLAY: these timings come from a recorded space, not a live measurement.');
      if (!prediction && duel) notes.push('The preference model made no prediction for this duel (it was not trained yet, or the strategy has none).');
      return { sessionId, a: da, b: db, ratio, duel, prediction, notes };
    });
  }

  // ------------------------------------------------------------------------------------------ LLM settings

  private llmSettingsFile(): string {
    return path.join(kernelduelHome(this.env), 'llm-settings.json');
  }

  /** The saved provider settings (defaults when none were saved or the file is damaged). */
  private llmSettings(): LlmSettings {
    try {
      return parseLlmSettings(JSON.parse(fs.readFileSync(this.llmSettingsFile(), 'utf8')));
    } catch {
      return parseLlmSettings({});
    }
  }

  /** The key for runs: the keychain's (desktop app), else the environment variable the settings name. Never leaves the engine. */
  private apiKey(): string | undefined {
    const fromStore = this.secrets?.available() ? this.secrets.load() : undefined;
    if (fromStore) return fromStore;
    const v = this.env[this.llmSettings().apiKeyEnv];
    return v && v.trim() ? v.trim() : undefined;
  }

  private llmSettingsDTO(): LlmSettingsDTO {
    const settings = this.llmSettings();
    const stored = this.secrets?.available() ? !!this.secrets.load() : false;
    const env = !!this.env[settings.apiKeyEnv]?.trim();
    return {
      settings, mode: this.mode,
      apiKey: { set: stored || env, source: stored ? 'keychain' : env ? 'env' : 'none', env: settings.apiKeyEnv, canStore: !!this.secrets?.available() },
    };
  }

  private previewPrompt(taskId: string, sessionId: string | undefined): PromptPreviewDTO {
    const task = this.sourceTaskById(taskId);
    if (!sessionId) {
      const b = buildPrompt({ task, exemplars: [] });
      return { promptId: b.promptId, messages: b.messages, exemplars: [], note: 'No session: the first request of a new run shows only the baseline (nothing is measured yet).' };
    }
    return this.withSession(sessionId, (s) => {
      if (s.meta.task.name !== task.manifest.name) throw new ApiFailure('failed', `session ${sessionId} is of task ${s.meta.task.name}, not ${task.manifest.name}`);
      const seed = typeof s.meta.settings.seed === 'number' ? s.meta.settings.seed : 1;
      const nothing: CompletionSource = { settings: this.llmSettings(), complete: () => Promise.reject(new Error('preview only')) };
      const strat = new LlmStrategy({ task, session: s, provider: nothing, seed, gpu: s.meta.gpu?.name ?? null });
      const b = strat.previewPrompt();
      return {
        promptId: b.promptId, messages: b.messages, exemplars: b.exemplars,
        note: b.exemplars.length
          ? `Exemplars ${b.exemplars.join(', ')} drawn from the measured variants of session ${sessionId} (speed buckets, seed ${seed}).`
          : `Session ${sessionId} has no timed variants to show the model yet: the prompt shows the baseline only.`,
      };
    });
  }

  // ------------------------------------------------------------------------------------------ handlers

  handlers(): Handlers {
    return {
      'env.describe': async () => {
        const d = await describeEnvironment({ env: this.env });
        const noGpu = this.env.KERNELDUEL_NO_GPU === '1';
        return {
          host: d.host, gpus: noGpu ? [] : d.gpu.gpus, gpuSource: d.gpu.source, driverVersion: d.gpu.driverVersion,
          toolchain: { nvcc: d.toolchain.nvcc, version: d.toolchain.version, targets: d.toolchain.targets, cudaHome: d.toolchain.cudaHome },
          canCompile: d.canCompile, canRun: d.canRun && !noGpu, messages: d.messages, strategies: STRATEGIES, mode: this.mode,
        } satisfies EnvDTO;
      },
      'tasks.list': () => {
        const out: TaskSummary[] = builtinTaskNames().map((n) => this.summary(n, path.join(builtinTasksDir(), n), true));
        for (const [id, dir] of this.opened) out.push(this.summary(id, dir, false));
        for (const e of this.spaceTasks.list()) out.push(spaceTaskSummary(e));
        return out;
      },
      'tasks.get': (p) => {
        if (p!.taskId.startsWith('space:')) {
          const e = this.spaceTasks.get(p!.taskId);
          if (!e) throw new ApiFailure('not_found', `no recorded space ${p!.taskId}`);
          return spaceTaskDetail(e);
        }
        const { dir, builtin } = this.taskDir(p!.taskId);
        return this.detail(p!.taskId, dir, builtin);
      },
      'tasks.open': (p) => {
        const dir = path.resolve(p!.dir.replace(/^~(?=$|\/)/, os.homedir()));
        if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ApiFailure('not_found', `${dir} is not a folder (a task is a folder holding task.yaml, reference.cu and kernel.cu)`);
        if (!findManifest(dir)) throw new ApiFailure('not_found', `${dir} has no task.yaml: it is not a task folder (see docs/TASK-FORMAT.md)`);
        const builtinName = builtinTaskNames().find((n) => path.join(builtinTasksDir(), n) === dir);
        if (builtinName) return this.detail(builtinName, dir, true);
        const id = folderTaskId(dir);
        this.opened.set(id, dir);
        this.rememberOpened();
        return this.detail(id, dir, false);
      },
      'tasks.validateManifest': (p) => {
        const { issues } = parseManifest(p!.text);
        return { ok: issues.length === 0, issues: issues.map((i) => ({ field: i.field, message: i.message, line: i.line })) };
      },
      'tasks.readFile': (p) => {
        const f = this.taskFile(p!.taskId, p!.file);
        try {
          return { path: f.path, text: fs.readFileSync(f.path, 'utf8') };
        } catch (e) {
          throw new ApiFailure('not_found', `cannot read ${f.path} (${(e as NodeJS.ErrnoException).code ?? errMsg(e)})`);
        }
      },
      'tasks.saveFile': (p) => {
        const f = this.taskFile(p!.taskId, p!.file);
        if (f.builtin) throw new ApiFailure('forbidden', `built-in tasks are read-only: copy ${f.dir} to a folder of your own and open that`);
        fs.writeFileSync(f.path, p!.text);
        const issues = p!.file === 'manifest' ? parseManifest(p!.text, path.basename(f.path)).issues : [];
        return { path: f.path, issues: issues.map((i) => ({ field: i.field, message: i.message, line: i.line })) };
      },
      'eval.build': async (p) => {
        const task = this.sourceTaskById(p!.taskId);
        const ev = await this.evaluator(task, null);
        const r = await ev.build({ source: p!.source, config: { ...defaultConfig(task), ...(p!.config ?? {}) }, flags: { opt: 3, ...(p!.flags ?? {}) } });
        return this.buildOutcome(r);
      },
      'eval.run': async (p) => {
        const task = this.sourceTaskById(p!.taskId);
        const gpu = await this.pickGpu(p!.gpu);
        const ev = await this.evaluator(task, gpu);
        const result = await ev.evaluate({ source: p!.source, config: { ...defaultConfig(task), ...(p!.config ?? {}) }, flags: { opt: 3, ...(p!.flags ?? {}) } });
        return { build: this.buildOutcome(result.build), result };
      },
      'runs.list': () => [...this.runs.values()].map((r) => ({ ...r.state })),
      'runs.start': (p) => this.startRun({ task: p!.task, strategy: p!.strategy, budget: p!.budget, gpu: p!.gpu, seed: p!.seed, recording: p!.recording }),
      'runs.pause': (p) => {
        const r = this.activeRun(p!.sessionId);
        if (r.state.phase === 'running') {
          r.handle.pause();
          r.state.phase = 'paused';
          this.log(r.state.sessionId, 'info', 'paused: the variant being measured finishes, then the run waits');
        }
        return this.publish(r);
      },
      'runs.resume': (p) => {
        const r = this.activeRun(p!.sessionId);
        if (r.state.phase === 'paused') {
          r.handle.resume();
          r.state.phase = 'running';
          this.log(r.state.sessionId, 'info', 'resumed');
        }
        return this.publish(r);
      },
      'runs.stop': (p) => {
        const r = this.activeRun(p!.sessionId);
        r.state.phase = 'stopping';
        r.handle.stop();
        this.log(r.state.sessionId, 'info', 'stopping: everything measured so far is kept in the session');
        return this.publish(r);
      },
      'sessions.list': () => listSessions(sessionsRoot(this.env)).map((s) => this.summaryDTO(s)),
      'sessions.get': (p) => this.sessionDetail(p!.id),
      'sessions.baselines': (p) => this.baselineCurves(p!.id),
      'variants.get': (p) => this.withSession(p!.sessionId, (s) => this.variantDetail(s, p!.variantId)),
      'variants.compare': (p) => this.compare(p!.sessionId, p!.a, p!.b),
      'export.variant': (p) =>
        this.withSession(p!.sessionId, (s): ExportFile => {
          const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-export-'));
          try {
            const r = exportVariant(s, p!.variantId, tmp);
            return { fileName: path.basename(r.path), content: fs.readFileSync(r.path, 'utf8'), mimeType: 'text/x-cuda' };
          } catch (e) {
            throw new ApiFailure('failed', errMsg(e));
          } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
          }
        }),
      'export.report': (p) => {
        const d = this.sessionDetail(p!.sessionId);
        return renderReport(d, p!.format);
      },
      'llm.getSettings': () => this.llmSettingsDTO(),
      'llm.saveSettings': (p) => {
        const settings = parseLlmSettings(p!.settings);
        if (p!.apiKey !== undefined || p!.clearApiKey) {
          if (!this.secrets) throw new ApiFailure('forbidden', `in browser mode the API key is read from the server's environment variable ${settings.apiKeyEnv} only: set it where you start \`kernelduel serve\``);
          if (!this.secrets.available()) throw new ApiFailure('failed', 'the OS offers no encrypted storage here (safeStorage unavailable): set the key in the environment variable instead; it is never written in plain text');
          if (p!.clearApiKey) this.secrets.clear();
          if (p!.apiKey !== undefined) this.secrets.save(p!.apiKey.trim());
        }
        fs.mkdirSync(path.dirname(this.llmSettingsFile()), { recursive: true });
        fs.writeFileSync(this.llmSettingsFile(), JSON.stringify(settings, null, 2) + '\n');
        return this.llmSettingsDTO();
      },
      'llm.testConnection': async (p) => {
        const settings = p?.settings ? parseLlmSettings(p.settings) : this.llmSettings();
        const provider = new LlmProvider(settings, { apiKey: this.apiKey(), env: this.env });
        const r = await provider.testConnection();
        return { ...r, ...(r.error ? { error: { kind: r.error.kind, message: r.error.message, ...(r.error.status !== undefined ? { status: r.error.status } : {}) } } : {}) } satisfies ConnectionReportDTO;
      },
      'llm.previewPrompt': (p) => this.previewPrompt(p!.taskId, p!.sessionId),
    };
  }
}
