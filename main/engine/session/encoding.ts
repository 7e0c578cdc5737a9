// How events are written to a session's journal, and read back: a variant's source is stored once
// per session (a {type:'source', hash, source} record before the first variant using it; variants
// then carry `sourceHash`), and a timing's samplesMs, always a copy of its eventMs or wallMs, is
// stored as that array's name. Journals written before either (variants carrying `source`, results
// carrying all three arrays) read unchanged.
import { createHash } from 'node:crypto';
import type { EvalResult } from '../base/types.js';
import type { SessionEvent, StoredSessionEvent } from './events.js';

/** The id of a kernel source in a session: a sha256 prefix (16 hex digits). */
export function sourceHash(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex').slice(0, 16);
}

/** A timing's samplesMs is always its eventMs or its wallMs: journaled as that name instead of a third copy. */
const SAMPLE_REFS = ['eventMs', 'wallMs'] as const;

function sameNumbers(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] || typeof a[i] !== 'number') return false;
  return true;
}

function storedResult(r: EvalResult): EvalResult {
  if (!Array.isArray(r.timing)) return r;
  let changed = false;
  const timing = r.timing.map((t) => {
    const x = t as unknown as Record<string, unknown>;
    if (!x || typeof x !== 'object' || !Array.isArray(x.samplesMs)) return t;
    const order = x.timer === 'wall' ? (['wallMs', 'eventMs'] as const) : SAMPLE_REFS;
    const ref = order.find((k) => sameNumbers(x.samplesMs, x[k]));
    if (!ref) return t;
    changed = true;
    return { ...t, samplesMs: ref as unknown as number[] };
  });
  return changed ? { ...r, timing } : r;
}

/** Undoes storedResult in place: samplesMs given by name becomes that array again. */
export function resolveResult(r: EvalResult): void {
  if (!Array.isArray(r.timing)) return;
  for (const t of r.timing) {
    const x = t as unknown as Record<string, unknown>;
    if (x && (x.samplesMs === 'eventMs' || x.samplesMs === 'wallMs') && Array.isArray(x[x.samplesMs])) x.samplesMs = x[x.samplesMs];
  }
}

/**
 * The journal records for one event, as Session.append writes them: a variant's source goes into a
 * source event (unless `hasSource` says the session has it) and the variant names it by hash; a
 * result's (or a confirmation's) samplesMs names the timer's array it duplicates. Exported for tools writing journals in bulk.
 */
export function encodeSessionEvent(ev: SessionEvent, hasSource: (hash: string) => boolean): StoredSessionEvent[] {
  if (ev.type === 'variant' && ev.variant && typeof ev.variant.source === 'string') {
    const { source, ...rest } = ev.variant;
    const hash = sourceHash(source);
    const v: StoredSessionEvent = { type: 'variant', variant: { ...rest, sourceHash: hash } };
    return hasSource(hash) ? [v] : [{ type: 'source', hash, source }, v];
  }
  if ((ev.type === 'result' || ev.type === 'confirm') && ev.result) return [{ ...ev, result: storedResult(ev.result) }];
  return [ev];
}
