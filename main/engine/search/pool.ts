// The optimisation loop on a pool of GPUs (`optimize --gpus all|0,1,3`): one evaluation queue per
// GPU (a lane: its own GPU queue and lock, its own judge), fed from one queue of variants that the
// strategy proposes in batches and that are built ahead (one build cache, nvcc in parallel), so
// every GPU stays busy. One strategy sees every result as it arrives (the contrastive policy's one
// preference model, the LLM policy's several requests in flight). A duel's two sides are timed on
// the GPU that measured the new variant, in its one judge process. Only GPUs of one model are
// pooled (their results may be compared); every result names the GPU that measured it.
//
// Faults: a lane whose measurement throws, never answers (the hang watchdog), or fails with a
// runtime or timeout failure and then fails its health check is removed from the pool with a
// journaled message; the variant it was measuring is measured again on another GPU, once; the run
// continues on the rest. Every result is journaled the moment it exists, so nothing measured is
// lost, and a variant journaled but never measured is measured first on resume.
//
// The single-GPU loop (loop.ts) is unchanged; this shares its start (baseline, resume) and duels.
import type { Config, EvalResult, GpuActivity, VariantRecord } from '../base/types.js';
import type { Lane } from '../measure/lane.js';
import type { EvaluateOptions, MeasuredSpec, Measurer } from '../measure/measurer.js';
import { timedMedianMs } from '../measure/verdict.js';
import { markRunning } from '../session/running.js';
import { beginLoop, proposalKey, timingCutoffMs, type LoopOptions, type Proposal } from './loop.js';

export interface PoolLoopOptions extends Omit<LoopOptions, 'evaluator' | 'lookahead'> {
  lanes: Lane[];
  /** Variants built ahead per GPU (default 3 where there is something to build, else 1). */
  lookaheadPerLane?: number;
  /** A measurement that gives no answer for this long means a hung GPU (default 30 min: the judge's own deadlines come first). */
  hangMs?: number;
  /** Limit of a health check (default 5 min). */
  healthMs?: number;
}

export class PoolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoolError';
  }
}

/** Throws a PoolError naming the models when the lanes are not all one GPU model (their results must not be compared). */
export function checkOneModel(lanes: Lane[]): void {
  const models = [...new Set(lanes.map((l) => l.gpu.model))];
  if (models.length > 1) {
    throw new PoolError(
      `the GPUs of the pool are of different models (${lanes.map((l) => `${l.gpu.index}: ${l.gpu.name}`).join('; ')}): their times cannot be compared in one run; choose GPUs of one model with --gpus`,
    );
  }
}

const TIMEOUT = Symbol('timeout');

/** p, or TIMEOUT after ms (p keeps running; a late rejection of it is swallowed). */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  p.catch(() => undefined);
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMEOUT>((r) => {
    t = setTimeout(() => r(TIMEOUT), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(t));
}

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0];
const secs = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

interface LaneState {
  lane: Lane;
  /** The lane's measurer, timing how long it is busy. */
  measurer: Measurer;
  alive: boolean;
  variantId: string | null;
  evaluated: number;
  busyMs: number;
  /** Nesting depth of measurements in progress and when the outermost began. */
  depth: number;
  busySince: number;
  removedReason?: string;
}

interface Item {
  v: VariantRecord;
  build: Promise<unknown>;
  requeued: boolean;
  /** The lane that captures it ahead (beside its current check) and so measures it next, unless another lane is idle. */
  lane?: string;
}

export async function runPoolLoop(o: PoolLoopOptions): Promise<{ evaluated: number; gpus: GpuActivity[] }> {
  const unmark = markRunning(o.session.dir);
  try {
    return await poolLoop(o);
  } finally {
    unmark();
  }
}

function tracked(s: LaneState): Measurer {
  const m = s.lane.measurer;
  const busy = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (s.depth++ === 0) s.busySince = Date.now();
    try {
      return await fn();
    } finally {
      if (--s.depth === 0) s.busyMs += Date.now() - s.busySince;
    }
  };
  return {
    get task() {
      return m.task;
    },
    compileOnly: m.compileOnly,
    evaluate: (spec: MeasuredSpec, eo?: EvaluateOptions) => busy(() => m.evaluate(spec, eo)),
    duel: (a: MeasuredSpec, b: MeasuredSpec, signal?: AbortSignal) => busy(() => m.duel(a, b, signal)),
    ...(m.build ? { build: (spec: MeasuredSpec, signal?: AbortSignal) => m.build!(spec, signal) } : {}),
    ...(m.prepare ? { prepare: (spec: MeasuredSpec, signal?: AbortSignal) => m.prepare!(spec, signal) } : {}),
  };
}

async function poolLoop(o: PoolLoopOptions): Promise<{ evaluated: number; gpus: GpuActivity[] }> {
  const { session, strategy } = o;
  if (!o.lanes.length) throw new PoolError('the GPU pool is empty');
  checkOneModel(o.lanes);
  const ids = new Set(o.lanes.map((l) => l.id));
  if (ids.size !== o.lanes.length) throw new PoolError(`a GPU is named twice in the pool (${o.lanes.map((l) => l.id).join(', ')})`);
  const hangMs = o.hangMs ?? 30 * 60_000;
  const healthMs = o.healthMs ?? 5 * 60_000;
  const hangOf = (s: LaneState): number => o.hangMs ?? s.lane.hangMs ?? hangMs;
  const aborted = (): boolean => !!o.signal?.aborted;
  const lanes: LaneState[] = o.lanes.map((lane) => {
    const s: LaneState = { lane, measurer: lane.measurer, alive: true, variantId: null, evaluated: 0, busyMs: 0, depth: 0, busySince: 0 };
    s.measurer = tracked(s);
    return s;
  });
  const alive = (): LaneState[] => lanes.filter((s) => s.alive);
  let t0 = Date.now();
  const activity = (): GpuActivity[] => {
    const now = Date.now();
    const elapsed = now - t0;
    return lanes.map((s) => {
      const busyMs = s.busyMs + (s.depth > 0 ? now - s.busySince : 0);
      return {
        id: s.lane.id, index: s.lane.gpu.index, uuid: s.lane.gpu.uuid, name: s.lane.gpu.name,
        state: !s.alive ? 'removed' : s.depth > 0 || s.variantId !== null ? 'busy' : 'idle', variantId: s.alive ? s.variantId : null, evaluated: s.evaluated,
        evalsPerMinute: elapsed > 0 ? s.evaluated / (elapsed / 60_000) : null, busyFraction: elapsed > 0 ? Math.min(1, busyMs / elapsed) : null,
        ...(s.removedReason ? { removedReason: s.removedReason } : {}), ...(s.lane.gpu.simulated ? { simulated: true } : {}),
      };
    });
  };
  const gpusEvent = (message?: string): void => o.onEvent?.({ type: 'gpus', gpus: activity(), ...(message ? { message } : {}) });
  const laneName = (s: LaneState): string => `GPU ${s.lane.gpu.index} (${s.lane.gpu.name}${s.lane.gpu.uuid ? `, ${s.lane.gpu.uuid}` : ''})`;

  // Wake-ups for lanes waiting for work: every change of the queue, of a measurement or of the pool.
  let waiters: Array<() => void> = [];
  const notify = (): void => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const changed = (): Promise<void> => new Promise((r) => waiters.push(r));
  o.signal?.addEventListener('abort', notify, { once: true });

  let evaluated = 0;
  const ready: Item[] = [];
  let inMeasure = 0;

  /** Records a result; returns nothing: the caller duels and streams. */
  const journal = (v: VariantRecord, result: EvalResult, s: LaneState | null): void => {
    session.append({ type: 'result', variantId: v.id, result });
    evaluated++;
    if (s) s.evaluated++;
    strategy.observe?.(v, result);
    const ms = timedMedianMs(result);
    const best = session.best();
    o.onEvent?.({ type: 'result', variantId: v.id, result, index: evaluated, budget: o.budget, speedup: ms && baseMs ? baseMs / ms : null, bestSpeedup: best?.speedup ?? null, bestMs: best?.medianMs ?? null });
  };

  const removeLane = (s: LaneState, reason: string, item: Item | null, first: EvalResult | null): void => {
    if (!s.alive) return;
    s.alive = false;
    s.removedReason = reason;
    s.variantId = null;
    try {
      s.lane.abandon?.();
    } catch {
      /* it is out of the pool either way */
    }
    const left = alive().length;
    let what = '';
    if (item) {
      if (!item.requeued && left > 0) {
        item.requeued = true;
        item.lane = undefined;
        ready.unshift(item);
        what = `; ${item.v.id} is measured again on another GPU (once)`;
      } else {
        const why = `${item.requeued ? 'the second GPU that measured it' : 'the last GPU of the pool'} failed while measuring it: ${reason}`;
        const failure = { kind: 'runtime' as const, reason: why };
        const result: EvalResult = first
          ? { ...first, failure }
          : { build: { ok: true, arch: '', command: [], resources: [], log: '', durationMs: 0 }, failure, source: { kind: 'none' } };
        journal(item.v, result, null);
        what = `; ${item.v.id} is recorded as failed (${item.requeued ? 'it was already measured again once' : 'no GPU is left to measure it'})`;
      }
    }
    const msg = `${laneName(s)} removed from the pool: ${reason}${what}; ${left} GPU${left === 1 ? '' : 's'} left`;
    session.append({ type: 'note', level: 'warn', message: msg });
    gpusEvent(msg);
    notify();
  };

  // Warm every GPU at once (probe, reference, judge); one that cannot measure leaves the pool now.
  const warm = await Promise.all(lanes.map((s) => (s.lane.warm ? s.lane.warm(o.signal).then(() => null, (e: unknown) => errText(e)) : Promise.resolve(null))));
  warm.forEach((why, i) => {
    if (why && !aborted()) removeLane(lanes[i], `it could not start measuring: ${why}`, null, null);
  });
  if (!alive().length) {
    if (!aborted()) session.append({ type: 'status', status: 'stopped', budgetUsed: session.variants().filter((v) => v.origin !== 'baseline' && session.resultOf(v.id)).length });
    throw new PoolError(`no GPU of the pool can measure: ${lanes.map((s) => `${laneName(s)}: ${s.removedReason}`).join('; ')}`);
  }
  t0 = Date.now();
  const firstLane = alive()[0];
  const hadBaseline = session.variants().some((v) => v.origin === 'baseline' && session.resultOf(v.id));
  firstLane.variantId = 'baseline';
  const start = await beginLoop({ ...o, evaluator: firstLane.measurer });
  firstLane.variantId = null;
  if (!hadBaseline && session.resultOf(start.baselineId)) firstLane.evaluated++;
  const { baseMs, seen, pending, baselineId } = start;
  evaluated = start.evaluated;
  gpusEvent();

  const lookahead = o.lookaheadPerLane ?? (firstLane.lane.measurer.build ? 3 : 1);
  const queued: Proposal[] = [];
  let exhausted = false;
  let filling: Promise<void> | null = null;
  const claimed = (): number => evaluated + inMeasure + ready.length;

  const fillOnce = async (): Promise<void> => {
    while (!aborted()) {
      const want = alive().length * lookahead;
      if (ready.length >= want || claimed() >= o.budget) break;
      let v = pending.shift();
      if (!v) {
        if (!queued.length) {
          if (exhausted) break;
          const room = Math.max(1, Math.min(want - ready.length, o.budget - claimed()));
          // A batch: the contrastive policy ranks its candidates once for several GPUs; the LLM policy sends `room` requests at once.
          const got = strategy.proposeAsync ? await strategy.proposeAsync(room) : strategy.propose(room);
          if (aborted()) break;
          if (!got.length) {
            exhausted = true;
            break;
          }
          queued.push(...got);
        }
        const p = queued.shift()!;
        const { failure, origin, parents, ...spec } = p;
        if (!failure) {
          const key = proposalKey(p);
          if (seen.has(key)) continue;
          seen.add(key);
        }
        if (claimed() >= o.budget) break;
        v = { ...spec, id: session.newVariantId(), config: p.config as Config, origin: origin ?? strategy.name, parents: parents ?? [baselineId], createdAt: new Date().toISOString() };
        session.append({ type: 'variant', variant: v });
        o.onEvent?.({ type: 'variant', variant: v });
        if (failure) {
          // Rejected before building: journaled and counted like any failed variant.
          journal(v, { build: { ok: false, arch: '', command: [], resources: [], log: '', durationMs: 0, failure }, failure, source: { kind: 'none' } }, null);
          continue;
        }
      }
      // Built ahead by any GPU's evaluator: one build cache, nvcc in parallel up to the core count.
      const builder = (alive()[0] ?? firstLane).measurer;
      const vv = v;
      ready.push({ v: vv, build: builder.build ? builder.build(vv, o.signal).catch(() => undefined) : Promise.resolve(), requeued: false });
      notify();
    }
  };
  const fill = (): Promise<void> => {
    filling ??= fillOnce()
      .catch((e: unknown) => {
        fillError ??= e instanceof Error ? e : new Error(String(e));
      })
      .finally(() => {
        filling = null;
        notify();
      });
    return filling;
  };
  let fillError: Error | null = null;

  const measureOne = async (s: LaneState, item: Item): Promise<void> => {
    const v = item.v;
    s.variantId = v.id;
    gpusEvent();
    let first: EvalResult | null = null;
    let fault: string | null = null;
    try {
      const cutoffMs = timingCutoffMs(session.best(), o.timeCutoff);
      const r = await withDeadline(s.measurer.evaluate(v, { signal: o.signal, onStage: (stage) => o.onEvent?.({ type: 'stage', variantId: v.id, stage }), ...(cutoffMs ? { cutoffMs } : {}) }), hangOf(s));
      if (r === TIMEOUT) fault = `no answer within ${secs(hangOf(s))} while it measured ${v.id}: the GPU is taken as hung`;
      else {
        first = r;
        const f = r.failure;
        if (f && (f.kind === 'runtime' || f.kind === 'timeout') && s.lane.health && !aborted()) {
          const h = await withDeadline(s.lane.health(o.signal).catch((e: unknown) => `its health check failed: ${errText(e)}`), healthMs);
          const why = h === TIMEOUT ? `its health check gave no answer within ${secs(healthMs)}` : h;
          if (why && !aborted()) fault = `${v.id} failed [${f.kind}: ${f.reason.split('\n')[0]}], then ${why}`;
        }
      }
    } catch (e) {
      if (!aborted()) fault = `measuring ${v.id} failed: ${errText(e)}`;
    }
    if (aborted()) return; // journaled without a result: a resume measures it
    if (fault) return removeLane(s, fault, item, first);
    const result = strategy.verify ? await strategy.verify(v, first!, { measurer: s.measurer, baselineMs: baseMs, bestMs: session.best()?.medianMs ?? null, signal: o.signal }) : first!;
    if (aborted()) return;
    journal(v, result, s);
    exhausted = false; // a result may give the strategy new proposals
    const d = await withDeadline(start.duelFor(v, result, s.measurer), hangOf(s));
    if (d === TIMEOUT && !aborted()) return removeLane(s, `no answer within ${secs(hangOf(s))} while it timed a duel of ${v.id}: the GPU is taken as hung (${v.id}'s result is kept)`, null, null);
    start.modelEvent();
    start.saveState(evaluated);
  };

  const laneAlive = (id: string | undefined): boolean => !!id && lanes.some((x) => x.lane.id === id && x.alive);
  /** The next variant for lane s: one it captured ahead, else one nobody did, else (so no GPU idles) another lane's. */
  const take = (s: LaneState): Item | undefined => {
    let i = ready.findIndex((it) => it.lane === s.lane.id);
    if (i < 0) i = ready.findIndex((it) => !laneAlive(it.lane));
    if (i < 0 && ready.length) i = 0;
    return i < 0 ? undefined : ready.splice(i, 1)[0];
  };
  /** Lane s captures the next free variant ahead, beside its own check (the evaluator says whether it may). */
  const reserveNext = (s: LaneState): void => {
    const m = s.measurer;
    if (!m.prepare || ready.some((it) => it.lane === s.lane.id)) return;
    const next = ready.find((it) => !laneAlive(it.lane));
    if (!next) return;
    next.lane = s.lane.id;
    void next.build.then(() => m.prepare!(next.v, o.signal));
  };

  const worker = async (s: LaneState): Promise<void> => {
    for (;;) {
      if (aborted() || !s.alive || fillError) return;
      const item = take(s);
      if (!item) {
        const more = claimed() < o.budget && !exhausted;
        if (!more && !filling && inMeasure === 0) return;
        if (more && !filling) void fill();
        await changed();
        continue;
      }
      inMeasure++;
      void fill().then(() => s.alive && reserveNext(s));
      reserveNext(s);
      try {
        await item.build;
        if (o.gate) await o.gate();
        if (aborted()) return;
        await measureOne(s, item);
      } finally {
        inMeasure--;
        s.variantId = null;
        if (s.alive) gpusEvent();
        notify();
      }
    }
  };

  await fill();
  await Promise.all(lanes.filter((s) => s.alive).map((s) => worker(s)));
  if (fillError) throw fillError;
  const gpus = activity();
  session.append({
    type: 'note', level: 'info',
    message: `GPU pool: ${gpus.map((g) => `${g.id} ${g.name}${g.simulated ? ' [simulated]' : ''} ${g.evaluated} results, busy ${g.busyFraction === null ? '-' : `${Math.round(g.busyFraction * 100)}%`}${g.state === 'removed' ? ' (removed)' : ''}`).join('; ')}`,
  });
  if (!alive().length && !aborted()) {
    session.append({ type: 'status', status: 'stopped', budgetUsed: evaluated });
    throw new PoolError(`every GPU of the pool failed (${lanes.map((s) => `${laneName(s)}: ${s.removedReason}`).join('; ')}); session ${session.meta.id} keeps everything measured: resume it with --resume once a GPU works`);
  }
  const best = session.best();
  session.append({ type: 'status', status: aborted() ? 'stopped' : 'finished', budgetUsed: evaluated });
  o.onEvent?.({ type: 'done', evaluated, bestId: best?.variant.id ?? null, bestMs: best?.medianMs ?? null, bestSpeedup: best?.speedup ?? null, gpus });
  return { evaluated, gpus };
}
