// `kernelduel confirm <session>`: the session's baseline and fastest variants measured again with the
// precise timing, for the figure one reports (main/core/confirm.ts). Also run by `optimize --confirm`.
// This file only parses arguments and prints.
import type { Command } from 'commander';
import { confirmStoredSession } from '../../core/confirm.js';
import type { ConfirmReport, ConfirmedVariant } from '../../engine/session/confirm.js';
import { tiedWords, tieDuelWords } from '../../contract/confirm-words.js';
import { fmtMs } from './format.js';

export interface ConfirmFlags {
  top?: number;
  gpu?: number;
  json?: boolean;
}

const pct = (x: number): string => `${(x * 100).toFixed(2)}%`;

function timeOf(l: ConfirmedVariant): string {
  if (l.ms === null) return `FAILED (${l.failure ?? 'not timed'})`;
  const half = l.ciLowMs !== null && l.ciHighMs !== null ? (l.ciHighMs - l.ciLowMs) / 2 / l.ms : null;
  return `${fmtMs(l.ms)}${half !== null ? ` ±${pct(half)}` : ''}${l.placementSd !== null ? `, placements' sd ${pct(l.placementSd)}` : ''}`;
}

/** The report as lines: one per variant (baseline first), then what to export. */
export function describeConfirmReport(r: ConfirmReport, sessionId: string): string[] {
  const rows = [...(r.baseline ? [r.baseline] : []), ...r.variants];
  const out = ['variant  origin        search       precise (95% interval of the median; placements\' sd)   speedup vs the precise baseline'];
  for (const l of rows) {
    const sp = l.variantId === r.baseline?.variantId ? '1.00× (the baseline)' : l.speedup !== null ? `${l.speedup.toFixed(3)}× (${l.speedupLow!.toFixed(3)}–${l.speedupHigh!.toFixed(3)})` : '–';
    out.push(`${l.variantId.padEnd(8)} ${l.origin.slice(0, 12).padEnd(13)} ${(l.searchMs !== null ? fmtMs(l.searchMs) : '–').padEnd(12)} ${timeOf(l).padEnd(56)} ${sp}`);
  }
  if (r.baseline && r.baseline.ms === null) out.push(`the baseline's confirmation failed (${r.baseline.failure}): no speedup can be confirmed`);
  if (r.bestId) {
    const best = r.variants.find((l) => l.variantId === r.bestId)!;
    out.push(`confirmed best: ${best.variantId}${best.speedup !== null ? `, ${best.speedup.toFixed(3)}× the baseline (precise timing)` : ''}`);
    if (r.searchBestId) out.push(`the search ranked ${r.searchBestId} first; the precise timing ranks ${r.bestId} first, and export --best now takes ${r.bestId}`);
    if (r.tiedWithBest.length) out.push(tiedWords(r.tiedWithBest, r.reproducibility, r.bestId));
    for (const d of r.tieDuels) out.push(`  duel ${r.bestId} against ${d.variantId} (${d.pairs} interleaved pairs in one process): ${tieDuelWords(d, r.bestId)}${d.ratioHigh < 1 ? `; export --best takes ${r.bestId}, the faster by separate precise timings: kernelduel export ${sessionId} --variant ${d.variantId} -o <file>.cu if that fraction matters` : ''}`);
    const unduelled = r.tiedWithBest.filter((id) => !r.tieDuels.some((d) => d.variantId === id));
    if (unduelled.length) out.push(`  not duelled: ${unduelled.join(', ')} (a duel tells them apart: export both, then kernelduel eval <task> one.cu --duel other.cu)`);
    out.push(`export it with: kernelduel export ${sessionId} --best -o <file>.cu (its header carries the confirmed figure)`);
  } else out.push('no variant was confirmed with a time');
  return out;
}

/** The report without the results' samples (for --json). */
export function reportJson(r: ConfirmReport): unknown {
  const strip = (l: ConfirmedVariant | null): unknown => (l ? { ...l, result: undefined } : null);
  return { ...r, baseline: strip(r.baseline), variants: r.variants.map(strip) };
}

/** Confirms a session and prints as it goes; resolves to the report (throws a CoreError naming why it cannot). */
export async function runConfirm(sessionId: string, o: ConfirmFlags, log: (s: string) => void): Promise<ConfirmReport> {
  const t0 = Date.now();
  // Ctrl-C: stop after the variant being measured; the session keeps the confirmations made so far.
  const ac = new AbortController();
  const stop = (): void => {
    log('\nstopping after the current variant (Ctrl-C again to kill; the confirmations so far are journaled)');
    ac.abort();
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', stop);
  let done: Awaited<ReturnType<typeof confirmStoredSession>>;
  try {
    done = await confirmStoredSession({
      session: sessionId, signal: ac.signal, ...(o.top !== undefined ? { top: o.top } : {}), ...(o.gpu !== undefined ? { gpu: o.gpu } : {}),
      onNote: (s) => log(`note: ${s}`),
      onStart: (s) => {
        if (!o.json) log(`confirming session ${s.sessionId} on GPU ${s.gpu.index} (${s.gpu.name}${s.gpu.uuid ? `, ${s.gpu.uuid}` : ''}): ${s.variants} variants with the precise timing (at least 2.5 s of calls each over 4 executors; every variant checked again)`);
      },
      onVariant: (v, i, n) => {
        if (!o.json) log(`  [${i}/${n}] ${v.id} (${v.origin}) ...`);
      },
      onResult: (v, r) => {
        if (o.json) process.stdout.write(JSON.stringify({ type: 'confirm', variantId: v.id, failure: r.failure ?? null, medianMs: r.timing?.[0]?.medianMs ?? null, ciLowMs: r.timing?.[0]?.ciLowMs ?? null, ciHighMs: r.timing?.[0]?.ciHighMs ?? null }) + '\n');
      },
      onTieDuel: (best, tied, i, n) => {
        if (!o.json) log(`  [tie ${i}/${n}] duel ${best.id} against ${tied.id} (tied with it) ...`);
      },
      onTieDuelDone: (best, tied, failure) => {
        if (failure) log(`  the duel of ${best.id} against ${tied.id} failed: ${failure}`);
      },
    });
  } finally {
    process.removeListener('SIGINT', stop);
  }
  const { report, sessionId: sid } = done;
  if (o.json) process.stdout.write(JSON.stringify({ type: 'report', sessionId: sid, report: reportJson(report) }) + '\n');
  else {
    for (const l of describeConfirmReport(report, sid)) log(l);
    log(`(${((Date.now() - t0) / 1000).toFixed(0)} s; journaled in session ${sid}: kernelduel confirm ${sid} again measures again)`);
  }
  return report;
}

export function registerConfirm(program: Command): void {
  program
    .command('confirm')
    .description('measure a session\'s baseline and fastest variants again with the precise timing (on its GPU model; each checked again), for the figure one reports')
    .argument('<session>', 'session id or folder')
    .option('--top <n>', 'how many of the search\'s fastest variants (default 3)', (v) => Number(v))
    .option('--gpu <index>', 'GPU index (default: the session\'s GPU, else the first of its model)', (v) => Number(v))
    .option('--json', 'machine-readable output (one JSON object per variant, then the report)')
    .action(async (sid: string, o: ConfirmFlags) => {
      await runConfirm(sid, o, (s) => void process.stderr.write(s + '\n'));
    });
}
