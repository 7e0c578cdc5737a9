// The journal's schema, the one definition of what a session records: session.json (SessionMeta)
// and every journal line (SessionEvent, and SessionEvent as stored: variants name their source by
// hash). The types are inferred from the schemas; nothing here is written twice. Results, variants
// and duels are checked for the fields the engine relies on and then taken as the engine's types
// (fields the schema does not name pass through, so newer results read in older code).
import { z } from 'zod';
import type { DuelResult, EvalResult, PytorchBaselines, VariantRecord } from '../base/types.js';
import { PytorchBaselinesSchema } from '../base/pytorch-baselines.js';

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** A kernel source's id in a session: a hex sha256 prefix. */
export const SOURCE_HASH = /^[0-9a-f]{16,64}$/;

export const SessionMetaSchema = z.object({
  /** Sortable: UTC date-time + random suffix, see newSessionId(). Also the folder name. */
  id: z.string().regex(SESSION_ID, 'use letters, digits, ., - and _'),
  task: z.object({ name: z.string(), dir: z.string(), manifestHash: z.string() }),
  gpu: z.object({ name: z.string(), uuid: z.string().optional(), arch: z.string() }).nullable(),
  settings: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  kernelduelVersion: z.string(),
});
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

const FailureSchema = z.looseObject({ kind: z.string(), reason: z.string() });

const VariantFields = z.looseObject({
  id: z.string().min(1),
  source: z.string(),
  config: z.record(z.string(), z.number()),
  flags: z.looseObject({}),
  transforms: z.array(z.string()).optional(),
  origin: z.string(),
  parents: z.array(z.string()),
  createdAt: z.string(),
});

const EvalResultSchema = z
  .looseObject({
    build: z.looseObject({ ok: z.boolean(), arch: z.string(), command: z.array(z.string()) }),
    check: z.looseObject({ ok: z.boolean() }).optional(),
    timing: z.array(z.looseObject({ size: z.number(), medianMs: z.number() })).optional(),
    failure: FailureSchema.optional(),
    source: z.looseObject({ kind: z.string() }),
    compileOnly: z.boolean().optional(),
  })
  .transform((r) => r as unknown as EvalResult);

const DuelResultSchema = z
  .looseObject({
    size: z.number(),
    aMs: z.array(z.number()),
    bMs: z.array(z.number()),
    ratio: z.number(),
    verdict: z.string(),
    pairs: z.number(),
  })
  .transform((d) => d as unknown as DuelResult);

/** A variant record as journaled: its source inline (older journals) or by hash (a source event before it). */
export type StoredVariantRecord = Omit<VariantRecord, 'source'> & { source?: string; sourceHash?: string };

const StoredVariantSchema = VariantFields.extend({
  source: z.string().optional(),
  sourceHash: z.string().regex(SOURCE_HASH, 'a hex sha256 prefix').optional(),
})
  .refine((v) => typeof v.source === 'string' || typeof v.sourceHash === 'string', {
    message: 'a variant needs source or sourceHash',
    path: ['source'],
  })
  .transform((v) => v as unknown as StoredVariantRecord);

/** A preference model's prediction for a duel's pair, recorded before the duel was measured. */
const PairPredictionSchema = z.object({ pAFaster: z.number().min(0).max(1), model: z.string() });
export type PairPredictionRecord = z.infer<typeof PairPredictionSchema>;

const SessionStatusSchema = z.enum(['running', 'paused', 'stopped', 'finished']);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

/** One journal line's record, as it is in the journal. */
export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('variant'), variant: StoredVariantSchema }),
  z.object({ type: z.literal('source'), hash: z.string().regex(SOURCE_HASH, 'a hex sha256 prefix'), source: z.string() }),
  z.object({ type: z.literal('result'), variantId: z.string().min(1), result: EvalResultSchema }),
  z.object({
    type: z.literal('duel'), a: z.string().min(1), b: z.string().min(1), result: DuelResultSchema,
    /** What the strategy's preference model predicted for the pair before the duel was measured. */
    prediction: PairPredictionSchema.optional(),
  }),
  z.object({ type: z.literal('note'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
  z.object({ type: z.literal('status'), status: SessionStatusSchema, budgetUsed: z.number().optional() }),
  /** A PyTorch-reference task's eager / torch.compile baselines, measured once per session (journals before them have none). */
  z.object({ type: z.literal('pytorch-baselines'), baselines: PytorchBaselinesSchema }),
  /**
   * A variant measured again for the session's final figure (`kernelduel confirm`: session/confirm.ts),
   * with the precise timing; the search's own result of the variant stays as it was.
   */
  z.object({
    type: z.literal('confirm'), variantId: z.string().min(1), timing: z.literal('precise'), result: EvalResultSchema,
    /** Which confirmation it belongs to (its start, ISO time): a report never mixes two. */
    run: z.string().optional(),
  }),
]);

/** Events as they are in the journal. */
export type StoredSessionEvent = z.infer<typeof SessionEventSchema>;

/** Events as callers see them: variants with their source; source records are not events. */
export type SessionEvent = Exclude<StoredSessionEvent, { type: 'variant' } | { type: 'source' }> | { type: 'variant'; variant: VariantRecord };

// Cheap structural checks, each a sufficient condition for SessionEventSchema to accept the event
// unchanged (a fast path for long journals; not a second definition: anything they do not accept
// goes through zod, which accepts it or gives the precise error).
type Obj = Record<string, unknown>;
export const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
export const isStr = (x: unknown): x is string => typeof x === 'string';
export const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
const isStrArr = (x: unknown): boolean => Array.isArray(x) && x.every(isStr);
const isNumArr = (x: unknown): boolean => Array.isArray(x) && x.every(isNum);
/** `o` has no own keys beyond `n` known ones (zod's plain objects drop unknown keys; the fast path keeps none). */
function keyCount(o: Obj): number {
  let n = 0;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) n++;
  return n;
}

function quickVariant(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (!(isStr(v.id) && v.id.length > 0 && isStr(v.origin) && isStr(v.createdAt) && isStrArr(v.parents) && isObj(v.flags))) return false;
  if (v.source !== undefined && !isStr(v.source)) return false;
  if (v.sourceHash !== undefined && !(isStr(v.sourceHash) && SOURCE_HASH.test(v.sourceHash))) return false;
  if (v.source === undefined && v.sourceHash === undefined) return false;
  if (v.transforms !== undefined && !isStrArr(v.transforms)) return false;
  const c = v.config;
  if (!isObj(c)) return false;
  for (const k in c) if (!isNum(c[k])) return false;
  return true;
}

function quickResult(r: unknown): boolean {
  if (!isObj(r)) return false;
  const b = r.build;
  if (!(isObj(b) && isBool(b.ok) && isStr(b.arch) && isStrArr(b.command))) return false;
  if (r.check !== undefined && !(isObj(r.check) && isBool(r.check.ok))) return false;
  if (r.timing !== undefined) {
    if (!Array.isArray(r.timing)) return false;
    for (const t of r.timing) if (!(isObj(t) && isNum(t.size) && isNum(t.medianMs))) return false;
  }
  if (r.failure !== undefined && !(isObj(r.failure) && isStr(r.failure.kind) && isStr(r.failure.reason))) return false;
  if (!(isObj(r.source) && isStr(r.source.kind))) return false;
  if (r.compileOnly !== undefined && !isBool(r.compileOnly)) return false;
  return true;
}

function quickEvent(x: unknown): boolean {
  if (!isObj(x)) return false;
  switch (x.type) {
    case 'variant':
      return keyCount(x) === 2 && quickVariant(x.variant);
    case 'result':
      return keyCount(x) === 3 && isStr(x.variantId) && x.variantId.length > 0 && quickResult(x.result);
    case 'source':
      return keyCount(x) === 3 && isStr(x.hash) && SOURCE_HASH.test(x.hash) && isStr(x.source);
    case 'duel': {
      const r = x.result;
      return (
        (keyCount(x) === 4 || (keyCount(x) === 5 && isObj(x.prediction) && isNum(x.prediction.pAFaster) && x.prediction.pAFaster >= 0 && x.prediction.pAFaster <= 1 && isStr(x.prediction.model))) &&
        isStr(x.a) && x.a.length > 0 && isStr(x.b) && x.b.length > 0 && isObj(r) &&
        isNum(r.size) && isNumArr(r.aMs) && isNumArr(r.bMs) && isNum(r.ratio) && isStr(r.verdict) && isNum(r.pairs)
      );
    }
    case 'note':
      return keyCount(x) === 3 && (x.level === 'info' || x.level === 'warn' || x.level === 'error') && isStr(x.message);
    case 'status':
      return (
        keyCount(x) === (x.budgetUsed === undefined ? ('budgetUsed' in x ? 3 : 2) : 3) &&
        (x.status === 'running' || x.status === 'paused' || x.status === 'stopped' || x.status === 'finished') &&
        (x.budgetUsed === undefined || isNum(x.budgetUsed))
      );
    default:
      return false;
  }
}

/**
 * Validates one journal record: a cheap structural check, and zod for anything that does not pass it
 * (which then either accepts it or throws a zod error naming the field).
 */
export function parseSessionEvent(x: unknown): StoredSessionEvent {
  if (quickEvent(x)) return x as StoredSessionEvent;
  return SessionEventSchema.parse(x);
}

/** A session's PyTorch baselines: its last pytorch-baselines event's, or null (sessions before them, other tasks). */
export function pytorchBaselinesIn(events: readonly SessionEvent[]): PytorchBaselines | null {
  let b: PytorchBaselines | null = null;
  for (const e of events) if (e.type === 'pytorch-baselines') b = e.baselines;
  return b;
}
