// Sessions as the workbench shows them: the list, one session's detail (rows, duels, notes, plots,
// cached by the journal's size and time) and one variant's detail, each read from a read-only
// snapshot of the journal (a run may be appending to it in a worker). The conversions themselves
// are pure (main/core/views.ts).
import fs from 'node:fs';
import path from 'node:path';
import { encodeSession, type LogLineDTO, type RunState, type SessionDetail, type SessionPayload, type SessionSummaryDTO, type VariantDetail, type FullVariantRow } from '../contract/api.js';
import { resourcesDir } from '../engine/base/paths.js';
import { loadTask, sizeLayout, type Task } from '../engine/task/manifest.js';
import { measuredLimits } from '../engine/platform/gpu/limits.js';
import { listSessions, type SessionSummary } from '../engine/session/list.js';
import { runState } from '../engine/session/running.js';
import { bestSummary, confirmedSummary } from '../engine/session/summary.js';
import { openSessionReadOnly, type Session } from '../engine/session/store.js';
import { pythonDeviceOf, replayRecordingOf } from '../engine/session/run-settings.js';
import { GUARANTEE_LEVELS, type EvalResult, type TimingResult } from '../engine/base/types.js';
import { timingSetSpread } from '../engine/measure/stats.js';
import { llmInfoOf } from '../engine/llm/variant-info.js';
import { effectiveSource } from '../engine/source/effective.js';
import { variantPerf } from './perf.js';
import { confirmReport } from '../engine/session/confirm.js';
import { journalLog } from './run/log.js';
import { CoreError, errMsg } from './errors.js';
import { baselineOf, confirmDTO, duels, pytorchBaselinesOf, sessionPlots, variantRow, variantRows, type RooflineInput, type SessionEventLike, type SessionFacts } from './views.js';

/** What the views need of a session. */
export function factsOf(s: Session): SessionFacts {
  return { variants: s.variants(), events: s.events() as unknown as SessionEventLike[], resultOf: (id) => s.resultOf(id) };
}

/** A Python-candidate session's device, guarantee level and PyTorch reference (null for CUDA sessions). */
function pythonSession(s: Session): SessionDetail['python'] {
  const device = pythonDeviceOf(s.meta.settings);
  if (!device) return null;
  let referenceFile: string;
  let reference: string;
  try {
    const t = loadTask(s.meta.task.dir);
    referenceFile = path.basename(t.referencePath);
    reference = t.referenceSource;
  } catch (e) {
    referenceFile = '';
    reference = `# the task folder ${s.meta.task.dir} does not load now: ${errMsg(e)}`;
  }
  const g = GUARANTEE_LEVELS['python-in-process'];
  return { device, guarantee: 'python-in-process', guaranteeTitle: g.title, holds: [...g.holds], doesNotHold: [...g.doesNotHold], referenceFile, reference };
}

/** The recording a session replayed: named by its results, else by its settings; null when it is not a replay. */
export function recordingOf(s: Session): string | null {
  const r = s.variants().map((v) => s.resultOf(v.id)).find((x) => x?.source.kind === 'replay');
  return r && r.source.kind === 'replay' ? r.source.recording : replayRecordingOf(s.meta.settings);
}

function taskAt(dir: string): Task | null {
  try {
    return loadTask(dir);
  } catch {
    return null;
  }
}

/** The GPU's measured copy bandwidth and SGEMM rate from bench/results/*-foundation.json (matched by GPU name). */
function limitsFor(gpuName: string | null) {
  return measuredLimits(path.join(path.dirname(resourcesDir()), 'bench', 'results'), gpuName);
}

/** The roofs and per-size work of a session's task on its GPU, or null when the task has no metrics. */
function roofline(taskDir: string, gpuName: string | null): RooflineInput | null {
  const task = taskAt(taskDir);
  if (!task) return null;
  if (task.manifest.metrics?.bytes === undefined || task.manifest.metrics?.flops === undefined) return null;
  const limits = limitsFor(gpuName);
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

/**
 * A session's listing entry from an open snapshot, as listSessions would give it (counts, last
 * status or the run mark's, best) without reading the journal again.
 */
function summaryOf(s: Session, variants: number, results: number, best: ReturnType<Session['best']>): SessionSummary {
  const st = s.status();
  const run = runState(s.dir);
  const status = run ?? st?.status ?? (variants > 0 ? 'interrupted' : undefined);
  const b = bestSummary(best);
  const c = confirmedSummary(confirmReport(s));
  return {
    id: s.id, dir: s.dir, meta: s.meta, variants, results,
    ...(status ? { status } : {}), ...(st?.budgetUsed !== undefined ? { budgetUsed: st.budgetUsed } : {}), ...(b ? { best: b } : {}), ...(c ? { confirmed: c } : {}), ...(s.recoveredFromCrash ? { tornTail: true } : {}),
  };
}

export class SessionViews {
  private readonly detailCache = new Map<string, { key: string; detail: Omit<SessionDetail<FullVariantRow>, 'run'>; payload?: Omit<SessionPayload, 'run'> }>();
  private readonly snapshots = new Map<string, { key: string; s: Session }>();
  private readonly rowCache = new WeakMap<Session, ReturnType<typeof variantRows>>();

  constructor(
    private readonly root: string,
    /** A live run's state, when one is appending to the session. */
    private readonly live: (id: string) => RunState | null,
  ) {}

  /** Reads a session from a snapshot of its journal; not_found when there is none. */
  withSession<T>(id: string, fn: (s: Session) => T): T {
    // A read-only snapshot is plain memory (close() writes nothing): the last two are kept while
    // their journal is unchanged, so clicking through a 20,000-variant session does not re-read
    // and re-index its journal for every variant (issue 16).
    const key = this.journalKey(id);
    const hit = this.snapshots.get(id);
    if (hit && key && hit.key === key) return fn(hit.s);
    // The journal grew (a live run appends): the snapshot reads only the new lines.
    if (hit && key) {
      let caught: ReturnType<Session['catchUp']> = 'replaced';
      try {
        caught = hit.s.catchUp();
      } catch {
        /* a damaged tail: a fresh read below says what is wrong */
      }
      if (caught !== 'replaced') {
        hit.key = key;
        this.rowCache.delete(hit.s);
        return fn(hit.s);
      }
    }
    let s: Session;
    try {
      s = openSessionReadOnly(this.root, id);
    } catch (e) {
      throw new CoreError('not_found', errMsg(e));
    }
    if (key) {
      this.snapshots.delete(id);
      this.snapshots.set(id, { key, s });
      while (this.snapshots.size > 2) this.snapshots.delete(this.snapshots.keys().next().value!);
    }
    try {
      return fn(s);
    } finally {
      s.close();
    }
  }

  /** The journal's size and mtime: a snapshot taken at this key is still the whole journal. */
  private journalKey(id: string): string {
    try {
      const st = fs.statSync(path.join(this.root, id, 'journal.jsonl'));
      return `${st.size}:${st.mtimeMs}`;
    } catch {
      return '';
    }
  }

  /** Every variant's row of a snapshot, computed once per snapshot. */
  private rowsOf(s: Session): ReturnType<typeof variantRows> {
    let rows = this.rowCache.get(s);
    if (!rows) this.rowCache.set(s, (rows = variantRows(factsOf(s))));
    return rows;
  }

  list(): SessionSummaryDTO[] {
    return listSessions(this.root).map((s) => this.summaryDTO(s));
  }

  /** Forgets a session's cached detail (its run ended). */
  forget(id: string): void {
    this.detailCache.delete(id);
  }

  summaryDTO(s: SessionSummary): SessionSummaryDTO {
    const settings = s.meta?.settings ?? {};
    return {
      id: s.id, task: s.meta?.task.name ?? '?', createdAt: s.meta?.createdAt ?? '', strategy: typeof settings.strategy === 'string' ? settings.strategy : '?',
      budget: typeof settings.budget === 'number' ? settings.budget : null, variants: s.variants, results: s.results, status: this.live(s.id) ? 'running' : (s.status ?? null),
      best: s.best ?? null, gpu: s.meta?.gpu?.name ?? null, replay: replayRecordingOf(settings) !== null, ...(s.confirmed ? { confirmed: s.confirmed } : {}), ...(s.error ? { error: s.error } : {}),
    };
  }

  /** A session with full rows (the report's input); cached while its journal is unchanged. */
  detail(id: string): SessionDetail<FullVariantRow> {
    return { ...this.cachedDetail(id).detail, run: this.live(id) };
  }

  /** What sessions.get sends: the session with its rows as columns (contract/session-payload.ts), encoded once per journal state. */
  payload(id: string): SessionPayload {
    const c = this.cachedDetail(id);
    c.payload ??= encodeSession({ ...c.detail, run: null });
    return { ...c.payload, run: this.live(id) };
  }

  private cachedDetail(id: string): { key: string; detail: Omit<SessionDetail<FullVariantRow>, 'run'>; payload?: Omit<SessionPayload, 'run'> } {
    const key = this.journalKey(id);
    const cached = this.detailCache.get(id);
    if (cached && key && cached.key === key) return cached;
    const detail = this.withSession(id, (s) => {
      const f = factsOf(s);
      const rows = this.rowsOf(s);
      const recording = recordingOf(s);
      const best = s.best();
      return {
        summary: this.summaryDTO(summaryOf(s, rows.length, rows.filter((r) => r.status !== 'pending').length, best)),
        task: { name: s.meta.task.name, dir: s.meta.task.dir },
        gpu: s.meta.gpu,
        settings: s.meta.settings,
        variants: rows,
        duels: duels(f),
        notes: s.events().flatMap((e) => (e.type === 'note' ? [{ level: e.level, message: e.message }] : [])),
        baselineId: baselineOf(f).id,
        bestId: best?.variant.id ?? null,
        replay: recording ? { recording } : null,
        python: pythonSession(s),
        pytorchBaselines: pytorchBaselinesOf(f),
        plots: sessionPlots(f, rows, roofline(s.meta.task.dir, s.meta.gpu?.name ?? null)),
        confirm: ((r) => (r ? confirmDTO(r) : null))(confirmReport(s)),
      };
    });
    const entry = { key, detail };
    if (key) this.detailCache.set(id, entry);
    return entry;
  }

  variantDetail(s: Session, id: string): VariantDetail {
    const v = s.variant(id);
    if (!v) throw new CoreError('not_found', `session ${s.id} has no variant ${id}`);
    const r = s.resultOf(id);
    const f = factsOf(s);
    const row = this.rowsOf(s).find((x) => x.id === id) ?? variantRow(v, r, baselineOf(f).ms, null);
    const info = llmInfoOf(v);
    const llm = info
      ? { model: info.model, promptId: info.promptId, answerId: info.answerId, analysis: info.analysis, design: info.design, code: v.source, exemplars: info.exemplars, ...(info.missing ? { missing: info.missing } : {}), ...(info.error ? { error: info.error.message } : {}) }
      : null;
    const limits = limitsFor(s.meta.gpu?.name ?? null);
    const perf = variantPerf({
      task: taskAt(s.meta.task.dir), variant: v, result: r, arch: s.meta.gpu?.arch ?? null,
      peakGbps: limits.peakGbps, peakGflops: limits.peakGflops, limitsSource: limits.limitsSource, limitsNote: limits.note ?? null,
    });
    return { variant: v, result: withSetSpread(r) ?? null, row, llm, effectiveSource: effectiveSource(v.source, v.config), perf };
  }

  /** A session's log as its run wrote it, rebuilt from the journal (the last `max` lines). */
  log(id: string, max = 2000): LogLineDTO[] {
    return this.withSession(id, (s) => journalLog(s.meta, s.entries(), max));
  }
}

/** Timings recorded before they carried their buffer sets' share (TimingResult.setRelSd): filled in from their own samples, as the evaluator does. */
function withSetSpread(r: EvalResult | undefined): EvalResult | undefined {
  const lacks = (t: TimingResult): boolean => (t.bufferSets ?? 1) > 1 && t.setRelSd === undefined;
  if (!r?.timing?.some(lacks)) return r;
  return { ...r, timing: r.timing.map((t) => (lacks(t) ? { ...t, ...(timingSetSpread(t) ?? {}) } : t)) };
}
