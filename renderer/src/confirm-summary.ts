// A session's confirmation (sessions.confirm: the baseline and the fastest variants measured again
// with the precise timing) as table rows and notes, for the Export view. No React, no DOM;
// unit-tested in test/renderer-confirm-summary.test.ts.
import { placementsInExecutors, type ConfirmDTO, type SessionDetail } from '../../main/contract/api.js';
import { tiedWords, tieDuelWords } from '../../main/contract/confirm-words.js';
import { fmtMs, fmtPct } from './store.js';
import { isFinalPhase } from './reducers.js';

export interface ConfirmRow {
  variantId: string;
  origin: string;
  search: string;
  precise: string;
  speedup: string;
  failed: boolean;
}

/** Rows, baseline first, then the confirmed variants fastest first (failed ones last, with their reason). */
export function confirmRows(c: ConfirmDTO): ConfirmRow[] {
  const rows = [...(c.baseline ? [c.baseline] : []), ...c.variants];
  return rows.map((l) => {
    const half = l.ms !== null && l.ciLowMs !== null && l.ciHighMs !== null ? (l.ciHighMs - l.ciLowMs) / 2 / l.ms : null;
    const isBase = l.variantId === c.baseline?.variantId;
    return {
      variantId: l.variantId,
      origin: l.origin,
      search: fmtMs(l.searchMs),
      precise: l.ms === null ? `FAILED: ${l.failure ?? 'not timed'}` : `${fmtMs(l.ms)} ±${fmtPct(half, 2)}${l.placementSd !== null ? ` · placements' sd ${fmtPct(l.placementSd, 2)}` : ''}`,
      speedup: isBase ? '1.000× (baseline)' : l.speedup !== null ? `${l.speedup.toFixed(3)}× (${l.speedupLow!.toFixed(3)}–${l.speedupHigh!.toFixed(3)})` : '-',
      failed: l.ms === null,
    };
  });
}

/** What the confirmation says beyond its rows: the confirmed best, a changed ranking, a failed baseline, how it was timed. */
export function confirmNotes(c: ConfirmDTO): string[] {
  const out: string[] = [];
  const best = c.variants.find((l) => l.variantId === c.bestId);
  if (c.baseline && c.baseline.ms === null) out.push(`The baseline's confirmation failed (${c.baseline.failure ?? 'not timed'}): no speedup is confirmed.`);
  if (best) out.push(`Confirmed best: ${best.variantId}${best.speedup !== null ? `, ${best.speedup.toFixed(3)}× the baseline` : ''} (precise timing${best.gpu ? ` on ${best.gpu}` : ''}, ${best.samples ?? '?'} samples over ${placementsInExecutors(best.bufferSets, best.contexts)}; ${best.at}).`);
  else out.push('No variant was confirmed with a time.');
  if (c.searchBestId && c.bestId) out.push(`The search ranked ${c.searchBestId} first; the precise timing ranks ${c.bestId} first, so "Best variant" exports ${c.bestId}.`);
  if (c.tiedWithBest.length && c.bestId) out.push(`${tiedWords(c.tiedWithBest, c.reproducibility, c.bestId)}${c.tieDuels.length ? '' : ' (a duel tells them apart)'}.`);
  for (const d of c.tieDuels) out.push(`Duel of ${c.bestId} against ${d.variantId} (${d.pairs} interleaved pairs in one process): ${tieDuelWords(d, c.bestId!)}.`);
  return out;
}

/** Why the session cannot be confirmed here (REPLAY, compile-only, Python candidates, a run in progress), or null. */
export function confirmBlocked(s: Pick<SessionDetail, 'replay' | 'gpu' | 'python' | 'run' | 'bestId'>): string | null {
  if (s.replay) return `a REPLAY session: its times come from ${s.replay.recording}, not from a GPU here`;
  if (!s.gpu) return 'a compile-only session: no GPU timed it';
  if (s.python) return 'Python candidates are timed by the Python runner, not the judge';
  if (s.run && !isFinalPhase(s.run.phase)) return 'its run is still going: confirm it once it has ended';
  if (!s.bestId) return 'no variant was checked correct and timed';
  return null;
}
