// What sessions.get sends: a session with its rows as columns (each row's config, flags, transforms,
// origin and failure interned; parents as row indices) and the plot series that follow from the
// rows left out (the timeline, the roofline's points, each row's speedup), rebuilt by decodeSession
// with the very functions the core computes them with. A 20,000-variant session is ~1.5 MB instead
// of 13.5 MB of row objects (issue 16). Lossless: a value that does not follow from the rows (a
// recorded reward, a speedup over another baseline) is sent as it is, and encodeSession checks that
// decoding gives back exactly what it was given, else sends that part whole.
// Pure: the core encodes, the renderer decodes (both transports carry it as is); the PyTorch
// baselines are checked with zod as they are decoded (contract/pytorch-baselines.ts).
import type { BuildFlags, CandidateLabel, Config, FailureKind, MeasurementSource } from '../engine/base/types.js';
import { parsePytorchBaselines } from './pytorch-baselines.js';
import type { PlotPoint, RooflinePoint, SessionDetail, SessionPlots, VariantRow, SizeWork, VariantStatus } from './api.js';

const STATUSES: readonly VariantStatus[] = ['pending', 'timed', 'built', 'failed'];

/** A session's rows as columns: every column has one entry per row; `*Sets` and the like are tables a column indexes. */
export interface VariantColumns {
  id: string[];
  /** Each row's parents: the index of a row of this session, or the id itself when no row has it. */
  parents: Array<Array<number | string>>;
  origins: string[];
  origin: number[];
  configs: Config[];
  config: number[];
  flagSets: BuildFlags[];
  flags: number[];
  transformSets: string[][];
  transforms: number[];
  /** Index into pending, timed, built, failed. */
  status: number[];
  failures: Array<{ kind: FailureKind; reason: string }>;
  /** Index into failures, -1 for none. */
  failure: number[];
  medianMs: Array<number | null>;
  /** Each row's speedup is speedupOf(speedupBase, medianMs)… */
  speedupBase: number | null;
  /** …unless this column is sent (some row's speedup is not that). */
  speedup?: Array<number | null>;
  registers: Array<number | null>;
  sharedBytes: Array<number | null>;
  spillBytes: Array<number | null>;
  evalIndex: Array<number | null>;
  /** What measured each row: index into sourceKinds, -1 before a result. */
  sourceKinds: Array<MeasurementSource['kind']>;
  source: number[];
  /** Python candidates' labels, sent only when some row has one. */
  label?: Array<CandidateLabel | null>;
}

/** The plots without what follows from the rows. */
export interface PlotsPayload extends Omit<SessionPlots, 'timeline' | 'roofline'> {
  /** Rewards that are not the proxy ln(speedup) (recorded by the strategy): row index and value. */
  rewards: { row: number[]; value: number[] };
  /** Sent only when timelineOf(rows, rewards) does not give it back. */
  timeline?: PlotPoint[];
  roofline:
    | (Omit<NonNullable<SessionPlots['roofline']>, 'points'> & {
        /** Points rebuilt with rooflinePoint from the row's median and its size's work; whole when that does not give them back. */
        points: { row: number[]; size: number[] } | RooflinePoint[];
      })
    | null;
}

export interface SessionPayload extends Omit<SessionDetail, 'variants' | 'plots'> {
  variants: VariantColumns;
  plots: PlotsPayload;
}

// ---------------------------------------------------------------------------------------------- shared derivations

/** Baseline median / this median (null without either). */
export function speedupOf(baselineMs: number | null, ms: number | null): number | null {
  return ms !== null && baselineMs ? baselineMs / ms : null;
}

/**
 * The best-so-far timeline: rows in the order their first result was recorded (the baseline at 0),
 * each with the best speedup so far and its reward (recorded, else ln(speedup)).
 */
export function timelineOf(rows: readonly VariantRow[], recorded: ReadonlyMap<string, number>): PlotPoint[] {
  const ordered = rows.filter((r) => r.evalIndex !== null).sort((a, b) => a.evalIndex! - b.evalIndex!);
  const out: PlotPoint[] = [];
  let best: number | null = null;
  let index = 0;
  for (const row of ordered) {
    if (row.speedup !== null) best = best === null ? row.speedup : Math.max(best, row.speedup);
    const reward = recorded.get(row.id) ?? (row.speedup !== null ? Math.log(row.speedup) : null);
    out.push({ index: row.origin === 'baseline' ? 0 : ++index, variantId: row.id, speedup: row.speedup, bestSpeedup: best, reward });
  }
  return out;
}

/** A roofline point: a median timed at a size with that work per call. */
export function rooflinePoint(variantId: string, w: SizeWork, ms: number, speedup: number | null): RooflinePoint {
  const s = ms / 1000;
  return { variantId, size: w.size, intensity: w.flops / w.bytes, gflops: w.flops / s / 1e9, gbps: w.bytes / s / 1e9, speedup };
}

/** The fields of a row the session's views use (a run's event rows carry more). */
export function compactRow(r: VariantRow): VariantRow {
  return {
    id: r.id, parents: r.parents, origin: r.origin, config: r.config, flags: r.flags, transforms: r.transforms, status: r.status, failure: r.failure,
    medianMs: r.medianMs, speedup: r.speedup, registers: r.registers, sharedBytes: r.sharedBytes, spillBytes: r.spillBytes, evalIndex: r.evalIndex, source: r.source,
    label: r.label,
  };
}

// ---------------------------------------------------------------------------------------------- encode

class Interner<T> {
  readonly values: T[] = [];
  private readonly at = new Map<string, number>();
  constructor(private readonly key: (v: T) => string) {}
  of(v: T): number {
    const k = this.key(v);
    let i = this.at.get(k);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(v);
      this.at.set(k, i);
    }
    return i;
  }
}


function sameNumber(a: number | null, b: number | null): boolean {
  return a === b || (a !== null && b !== null && Number.isNaN(a) && Number.isNaN(b));
}

function samePoint(a: PlotPoint, b: PlotPoint): boolean {
  return a.index === b.index && a.variantId === b.variantId && sameNumber(a.speedup, b.speedup) && sameNumber(a.bestSpeedup, b.bestSpeedup) && sameNumber(a.reward, b.reward);
}

function sameRoof(a: RooflinePoint, b: RooflinePoint): boolean {
  return a.variantId === b.variantId && a.size === b.size && sameNumber(a.intensity, b.intensity) && sameNumber(a.gflops, b.gflops) && sameNumber(a.gbps, b.gbps) && sameNumber(a.speedup, b.speedup);
}

/** A session for the wire (sessions.get). decodeSession(encodeSession(d)) gives d's VariantRows and plots exactly. */
export function encodeSession(d: SessionDetail): SessionPayload {
  const rows = d.variants;
  const rowOf = new Map<string, number>();
  rows.forEach((r, i) => rowOf.set(r.id, i));
  const origins = new Interner<string>((x) => x);
  const configs = new Interner<Config>((x) => JSON.stringify(x));
  const flagSets = new Interner<BuildFlags>((x) => JSON.stringify(x));
  const transformSets = new Interner<string[]>((x) => JSON.stringify(x));
  const failures = new Interner<{ kind: FailureKind; reason: string }>((x) => JSON.stringify([x.kind, x.reason]));
  const sourceKinds = new Interner<MeasurementSource['kind']>((x) => x);
  const base = d.baselineId !== null ? (rows[rowOf.get(d.baselineId) ?? -1]?.medianMs ?? null) : null;
  const speedupsFollow = rows.every((r) => sameNumber(r.speedup, speedupOf(base, r.medianMs)));
  const variants: VariantColumns = {
    id: rows.map((r) => r.id),
    parents: rows.map((r) => r.parents.map((p) => rowOf.get(p) ?? p)),
    origins: origins.values,
    origin: rows.map((r) => origins.of(r.origin)),
    configs: configs.values,
    config: rows.map((r) => configs.of(r.config)),
    flagSets: flagSets.values,
    flags: rows.map((r) => flagSets.of(r.flags)),
    transformSets: transformSets.values,
    transforms: rows.map((r) => transformSets.of(r.transforms)),
    status: rows.map((r) => STATUSES.indexOf(r.status)),
    failures: failures.values,
    failure: rows.map((r) => (r.failure ? failures.of({ kind: r.failure.kind, reason: r.failure.reason }) : -1)),
    medianMs: rows.map((r) => r.medianMs),
    speedupBase: base,
    ...(speedupsFollow ? {} : { speedup: rows.map((r) => r.speedup) }),
    registers: rows.map((r) => r.registers),
    sharedBytes: rows.map((r) => r.sharedBytes),
    spillBytes: rows.map((r) => r.spillBytes),
    evalIndex: rows.map((r) => r.evalIndex),
    source: rows.map((r) => (r.source === null ? -1 : sourceKinds.of(r.source))),
    sourceKinds: sourceKinds.values,
    ...(rows.some((r) => r.label !== null) ? { label: rows.map((r) => r.label) } : {}),
  };
  // Rewards that are not the proxy, then the timeline as decoding would rebuild it.
  const { timeline, roofline, ...rest } = d.plots;
  const rewards: PlotsPayload['rewards'] = { row: [], value: [] };
  const recorded = new Map<string, number>();
  for (const p of timeline) {
    const row = rowOf.get(p.variantId);
    if (row === undefined || p.reward === null) continue;
    const proxy = p.speedup !== null ? Math.log(p.speedup) : null;
    if (sameNumber(p.reward, proxy)) continue;
    rewards.row.push(row);
    rewards.value.push(p.reward);
    recorded.set(p.variantId, p.reward);
  }
  const rebuilt = timelineOf(rows, recorded);
  const timelineFollows = rebuilt.length === timeline.length && rebuilt.every((p, i) => samePoint(p, timeline[i]));
  let roof: PlotsPayload['roofline'] = null;
  if (roofline) {
    const { points, ...limits } = roofline;
    const work = new Map(roofline.work.map((w) => [w.size, w]));
    const ref = { row: [] as number[], size: [] as number[] };
    const follows = points.every((p) => {
      const i = rowOf.get(p.variantId);
      const w = work.get(p.size);
      const ms = i === undefined ? null : rows[i].medianMs;
      if (i === undefined || !w || ms === null || !sameRoof(rooflinePoint(p.variantId, w, ms, rows[i].speedup), p)) return false;
      ref.row.push(i);
      ref.size.push(p.size);
      return true;
    });
    roof = { ...limits, points: follows ? ref : points };
  }
  return { ...d, variants, plots: { ...rest, rewards, ...(timelineFollows ? {} : { timeline }), roofline: roof } };
}

// ---------------------------------------------------------------------------------------------- decode

function malformed(what: string): Error {
  return new Error(`sessions.get: the session's payload is malformed (${what})`);
}

/** Indices that must point into a table of `size` entries (-1 allowed where `none`). */
function checkIndices(name: string, col: readonly number[], size: number, none = false): void {
  for (const i of col) if (!Number.isInteger(i) || i >= size || i < (none ? -1 : 0)) throw malformed(`${name}: index ${i} outside 0..${size - 1}`);
}

/** The session as the views use it, from sessions.get's payload; throws when the payload does not hold together. */
export function decodeSession(p: SessionPayload): SessionDetail {
  const c = p.variants;
  const n = c.id.length;
  const columns: Array<[string, unknown[] | undefined]> = [
    ['parents', c.parents], ['origin', c.origin], ['config', c.config], ['flags', c.flags], ['transforms', c.transforms], ['status', c.status], ['failure', c.failure],
    ['medianMs', c.medianMs], ['speedup', c.speedup], ['registers', c.registers], ['sharedBytes', c.sharedBytes], ['spillBytes', c.spillBytes], ['evalIndex', c.evalIndex],
    ['source', c.source], ['label', c.label],
  ];
  for (const [name, col] of columns) if (col !== undefined && (!Array.isArray(col) || col.length !== n)) throw malformed(`column ${name} has ${Array.isArray(col) ? col.length : 'no'} entries for ${n} rows`);
  checkIndices('origin', c.origin, c.origins.length);
  checkIndices('config', c.config, c.configs.length);
  checkIndices('flags', c.flags, c.flagSets.length);
  checkIndices('transforms', c.transforms, c.transformSets.length);
  checkIndices('status', c.status, STATUSES.length);
  checkIndices('failure', c.failure, c.failures.length, true);
  checkIndices('source', c.source, c.sourceKinds.length, true);
  const rows: VariantRow[] = new Array<VariantRow>(n);
  for (let i = 0; i < n; i++) {
    const parents = c.parents[i].map((x) => {
      if (typeof x === 'string') return x;
      if (!Number.isInteger(x) || x < 0 || x >= n) throw malformed(`parent index ${x} of row ${i}`);
      return c.id[x];
    });
    const medianMs = c.medianMs[i];
    const f = c.failure[i];
    rows[i] = {
      id: c.id[i], parents, origin: c.origins[c.origin[i]], config: c.configs[c.config[i]], flags: c.flagSets[c.flags[i]], transforms: c.transformSets[c.transforms[i]],
      status: STATUSES[c.status[i]], failure: f < 0 ? null : c.failures[f], medianMs, speedup: c.speedup ? c.speedup[i] : speedupOf(c.speedupBase, medianMs),
      registers: c.registers[i], sharedBytes: c.sharedBytes[i], spillBytes: c.spillBytes[i], evalIndex: c.evalIndex[i],
      source: c.source[i] < 0 ? null : c.sourceKinds[c.source[i]],
      label: c.label ? c.label[i] : null,
    };
  }
  const { rewards, timeline, roofline, ...rest } = p.plots;
  if (rewards.row.length !== rewards.value.length) throw malformed('rewards');
  checkIndices('rewards', rewards.row, n);
  const recorded = new Map(rewards.row.map((r, k) => [c.id[r], rewards.value[k]]));
  let roof: SessionPlots['roofline'] = null;
  if (roofline) {
    const { points, ...limits } = roofline;
    let pts: RooflinePoint[];
    if (Array.isArray(points)) pts = points;
    else {
      if (points.row.length !== points.size.length) throw malformed('roofline points');
      checkIndices('roofline', points.row, n);
      const work = new Map(limits.work.map((w) => [w.size, w]));
      pts = points.row.map((i, k) => {
        const w = work.get(points.size[k]);
        const ms = rows[i].medianMs;
        if (!w || ms === null) throw malformed(`roofline point of row ${i}`);
        return rooflinePoint(rows[i].id, w, ms, rows[i].speedup);
      });
    }
    roof = { points: pts, ...limits };
  }
  return { ...p, ...(p.pytorchBaselines !== undefined ? { pytorchBaselines: parsePytorchBaselines(p.pytorchBaselines) } : {}), variants: rows, plots: { timeline: timeline ?? timelineOf(rows, recorded), ...rest, roofline: roof } };
}
