// Export a variant as a self-contained .cu file with a provenance header.
import fs from 'node:fs';
import path from 'node:path';
import { placementsInExecutors, type BuildFlags, type Config, type EvalResult, type VariantRecord } from '../base/types.js';
import { writeFileAtomic } from '../base/atomic.js';
import { timingSetSpread } from '../measure/stats.js';
import type { Session } from '../session/store.js';
import { confirmReport, type ConfirmedVariant } from '../session/confirm.js';

export interface ProvenanceInput {
  kernelduelVersion: string;
  sessionId: string;
  task: { name: string; dir?: string };
  gpu: { name: string; arch: string; uuid?: string } | null;
  variant: VariantRecord;
  /** The variant's last result, if any. */
  result?: EvalResult;
  /** ISO time of the export. */
  exportedAt: string;
  /** ISO time the result was recorded. */
  measuredAt?: string;
  /** The baseline timing to compare against (same size index when possible). */
  baseline?: { variantId: string; medianMs: number };
  /**
   * The variant's confirmation (`kernelduel confirm`: measured again with the precise timing), with
   * the baseline's confirmed median; null: the session has confirmations, none of this variant;
   * undefined: it has none.
   */
  confirmed?: { line: ConfirmedVariant; baselineMs: number | null } | null;
  /** The confirmation's ties of this variant (with the best, or the best's with others) and their duels, in words; undefined when none. */
  ties?: string | undefined;
}

function confirmedLine(p: ProvenanceInput): string | null {
  const c = p.confirmed;
  if (c === undefined) return p.result?.source.kind === 'gpu' ? `no (kernelduel confirm ${p.sessionId} measures the fastest variants again with the precise timing)` : null;
  if (c === null) return 'no (the session\'s confirmation did not include this variant)';
  const l = c.line;
  if (l.ms === null) return `FAILED at ${l.at}: ${l.failure ?? 'not timed'}`;
  const t = l.result.timing![0];
  const half = l.ciLowMs !== null && l.ciHighMs !== null ? `, +/-${(((l.ciHighMs - l.ciLowMs) / 2 / l.ms) * 100).toFixed(2)}%` : '';
  const how = `precise timing: ${t.samplesMs?.length ?? '?'} samples over ${placementsInExecutors(t.bufferSets, t.contexts)}${half}`;
  const vs = p.baseline?.variantId === l.variantId ? '' : l.speedup !== null && c.baselineMs !== null ? `; ${l.speedup.toFixed(3)}x vs the baseline's confirmed ${formatMs(c.baselineMs)} (${l.speedupLow!.toFixed(3)}-${l.speedupHigh!.toFixed(3)}x)` : '; the baseline has no confirmed time';
  return `${formatMs(l.ms)} median (${how}) at ${l.at}${vs}`;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keeps a value from ending the comment or breaking a line. */
function clean(s: string): string {
  return s.replace(/\*\//g, '*\\/').replace(/[\r\n]+/g, ' ');
}

function shellQuote(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export function formatMs(ms: number): string {
  if (ms >= 1) return `${ms.toFixed(3)} ms`;
  return `${ms.toPrecision(4)} ms`;
}

function formatNumber(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`tunable value ${v} cannot be written as a #define`);
  return String(v);
}

function archFlag(arch: string): string {
  return /^(sm|compute)_/.test(arch) ? `-arch=${arch}` : `-arch=sm_${arch}`;
}

/** The nvcc command line that rebuilds the variant (tunables are in the file as #defines). */
export function nvccCommandLine(flags: BuildFlags, arch: string | undefined, file: string, config: Config = {}): string[] {
  const opt = flags.opt ?? 3;
  const cmd = ['nvcc', `-O${opt}`, '-Xptxas', `-O${opt}`];
  if (arch) cmd.push(archFlag(arch));
  if (flags.fastMath) cmd.push('--use_fast_math');
  if (flags.maxrregcount !== undefined) cmd.push(`-maxrregcount=${flags.maxrregcount}`);
  if (flags.dlcm) cmd.push('-Xptxas', `-dlcm=${flags.dlcm}`);
  if (flags.extra) cmd.push(...flags.extra);
  for (const [k, v] of Object.entries(config)) cmd.push(`-D${k}=${formatNumber(v)}`);
  cmd.push('-c', file);
  return cmd;
}

function speedupLine(p: ProvenanceInput, medianMs: number | null): string {
  if (medianMs === null) return 'n/a (not timed)';
  if (!p.baseline) return 'n/a (no timed baseline in this session)';
  if (p.baseline.variantId === p.variant.id) return '1.00x (this is the baseline)';
  return `${(p.baseline.medianMs / medianMs).toFixed(2)}x vs baseline ${p.baseline.variantId} (${formatMs(p.baseline.medianMs)})`;
}

/** The provenance comment block that heads an exported .cu file. Pure. */
export function renderProvenanceHeader(p: ProvenanceInput): string {
  const r = p.result;
  const arch = r?.build.arch || p.gpu?.arch;
  const timed = !!r && !r.failure && !!r.timing && r.timing.length > 0;
  const t0 = timed ? r!.timing![0] : undefined;
  const medianMs = t0 ? t0.medianMs : null;

  let measurement: string;
  if (t0) {
    const noise = Number.isFinite(t0.relNoise) ? `, +/-${(t0.relNoise * 100).toFixed(1)}%` : '';
    // The buffer sets' share, which that interval leaves out (measure/stats.ts setSpread); older results lack it.
    const setSd = timingSetSpread(t0)?.setRelSd;
    const sets = setSd !== undefined && Number.isFinite(setSd) ? `; over ${t0.bufferSets} buffer sets, their mean's sd ${(setSd * 100).toFixed(2)}%` : '';
    measurement = `${formatMs(t0.medianMs)} median (size #${t0.size}, ${t0.samplesMs?.length ?? '?'} samples, ${t0.timer} timer${noise}${sets})`;
  } else if (!r) {
    measurement = 'not measured';
  } else if (r.failure) {
    measurement = `not timed: FAILED ${r.failure.kind}: ${r.failure.reason}`;
  } else {
    measurement = 'not timed (compile-only)';
  }

  let measuredOn = 'n/a';
  if (r?.source.kind === 'gpu') measuredOn = `${r.source.gpu}${r.source.uuid ? ` (${r.source.uuid})` : ''}`;
  else if (r?.source.kind === 'replay') measuredOn = `REPLAYED from recording ${r.source.recording}, not measured live`;
  else if (r) measuredOn = 'no GPU (compile-only)';

  const tunables = Object.entries(p.variant.config);
  const lines: [string, string][] = [
    ['KernelDuel', p.kernelduelVersion],
    ['Task', p.task.dir ? `${p.task.name} (${p.task.dir})` : p.task.name],
    ['Session', p.sessionId],
    ['Variant', `${p.variant.id} (origin: ${p.variant.origin}${p.variant.parents.length ? `, parents: ${p.variant.parents.join(', ')}` : ''})`],
    ['GPU', p.gpu ? `${p.gpu.name} (${p.gpu.arch})` : 'none recorded'],
    ['Measured on', measuredOn],
    ['Measured at', p.measuredAt ?? 'n/a'],
    ['Exported at', p.exportedAt],
    ['Build', nvccCommandLine(p.variant.flags, arch, 'kernel.cu', p.variant.config).map(shellQuote).join(' ')],
  ];
  if (r?.build.command && r.build.command.length > 0) lines.push(['Built as', r.build.command.map(shellQuote).join(' ')]);
  if (p.variant.transforms && p.variant.transforms.length > 0) lines.push(['Transforms', p.variant.transforms.join(', ')]);
  lines.push(['Tunables', tunables.length ? tunables.map(([k, v]) => `${k}=${formatNumber(v)}`).join(', ') : '(none)']);
  lines.push(['Time', measurement]);
  lines.push(['Speedup', speedupLine(p, medianMs)]);
  const conf = confirmedLine(p);
  if (conf) lines.push(['Confirmed', conf]);
  if (p.ties) lines.push(['Tied', p.ties]);

  const w = Math.max(...lines.map(([k]) => k.length)) + 1;
  const body = lines.map(([k, v]) => ` * ${(k + ':').padEnd(w)} ${clean(v)}`);
  return ['/*', ' * Exported from KernelDuel. Provenance:', ' *', ...body, ' */', ''].join('\n');
}

/** `#ifndef NAME / #define NAME value / #endif` for every tunable, so the file builds without -D flags. */
export function renderDefines(config: Config): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(config)) {
    if (!IDENT.test(k)) throw new Error(`tunable name ${JSON.stringify(k)} is not a C identifier and cannot be written as a #define`);
    out.push(`#ifndef ${k}`, `#define ${k} ${formatNumber(v)}`, '#endif');
  }
  return out.length ? out.join('\n') + '\n' : '';
}

export interface ExportResult {
  path: string;
  variantId: string;
  medianMs: number | null;
  speedup: number | null;
  /** The variant's confirmed (precise) speedup, when the session confirmed it and its baseline. */
  confirmedSpeedup: number | null;
  /** How `best` was chosen: the fastest confirmed variant, or the search's fastest (no confirmation with a time). */
  chosenBy?: 'confirmed' | 'search';
}

/**
 * Writes the variant's source (or the session's best variant's) to `outPath` atomically, headed by its
 * provenance and `#define`s for its tunables. An existing folder as `outPath` gets `<task>-<variant>.cu` in it.
 */
export function exportVariant(session: Session, which: string | 'best', outPath: string, opts: { now?: Date } = {}): ExportResult {
  const sid = session.meta.id;
  let variant: VariantRecord | undefined;
  const confirmed = confirmReport(session);
  let chosenBy: ExportResult['chosenBy'];
  if (which === 'best') {
    // The fastest by the precise timing when the session was confirmed: the search's ranking of close variants is the less certain one.
    const b = session.best();
    if (!b) {
      throw new Error(
        `session ${sid} has no successful timed variant: run \`kernelduel optimize\` first (or export a specific variant by its id)`,
      );
    }
    variant = (confirmed?.bestId ? session.variant(confirmed.bestId) : undefined) ?? b.variant;
    chosenBy = confirmed?.bestId && variant.id === confirmed.bestId ? 'confirmed' : 'search';
  } else {
    variant = session.variant(which);
    if (!variant) {
      const ids = session.variants().map((v) => v.id);
      const known = ids.length === 0 ? 'it has no variants yet' : `it has ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}`;
      throw new Error(`session ${sid} has no variant ${which} (${known})`);
    }
  }
  if (variant.source === '') {
    throw new Error(`variant ${variant.id} of session ${sid} has no kernel source (the session replayed a recorded space without source, e.g. one imported from Kernel Tuner): its configuration is ${JSON.stringify(variant.config)}`);
  }
  const result = session.resultOf(variant.id);
  if (result?.python || (session.meta.settings.backend as { kind?: unknown } | undefined)?.kind === 'python') {
    throw new Error(`variant ${variant.id} of session ${sid} is a Python candidate (ModelNew, guarantee level python-in-process): export writes CUDA variants (.cu) only; its source is kept in the session (the workbench shows it)`);
  }

  // Baseline: the first 'baseline' variant with a clean timing, at the same size index when possible.
  let baseline: ProvenanceInput['baseline'];
  const size = result?.timing?.[0]?.size;
  for (const v of session.variants()) {
    if (v.origin !== 'baseline') continue;
    const br = session.resultOf(v.id);
    if (!br || br.failure || !br.timing || br.timing.length === 0) continue;
    const t = br.timing.find((x) => x.size === size) ?? br.timing[0];
    if (t.medianMs > 0) {
      baseline = { variantId: v.id, medianMs: t.medianMs };
      break;
    }
  }

  let target = outPath;
  try {
    if (fs.statSync(outPath).isDirectory()) target = path.join(outPath, `${session.meta.task.name}-${variant.id}.cu`);
  } catch {
    // Does not exist yet: a file path.
  }

  let header: string;
  let defines: string;
  try {
    header = renderProvenanceHeader({
      kernelduelVersion: session.meta.kernelduelVersion,
      sessionId: sid,
      task: { name: session.meta.task.name, dir: session.meta.task.dir },
      gpu: session.meta.gpu,
      variant,
      result,
      exportedAt: (opts.now ?? new Date()).toISOString(),
      measuredAt: session.measuredAt(variant.id),
      baseline,
      confirmed: confirmedOf(confirmed, variant.id),
      ties: tiesOf(confirmed, variant.id),
    });
    defines = renderDefines(variant.config);
  } catch (e) {
    throw new Error(`cannot export variant ${variant.id} of session ${sid}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const source = variant.source.endsWith('\n') ? variant.source : variant.source + '\n';
  const text = header + (defines ? '\n' + defines : '') + '\n' + source;
  try {
    writeFileAtomic(target, text);
  } catch (e) {
    throw new Error(`cannot export variant ${variant.id} of session ${sid}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const t0 = result && !result.failure ? result.timing?.[0] : undefined;
  const line = confirmed?.variants.find((l) => l.variantId === variant.id);
  return {
    path: target,
    variantId: variant.id,
    medianMs: t0 ? t0.medianMs : null,
    speedup: t0 && baseline ? baseline.medianMs / t0.medianMs : null,
    confirmedSpeedup: line?.speedup ?? null,
    ...(chosenBy ? { chosenBy } : {}),
  };
}

/**
 * The confirmation's ties as the export's header says them (ASCII): for the confirmed best, which
 * variants are within the confirmation's reproducibility of it and what each duel against it found (from the
 * duel's interval); for a tied variant, the same of its own duel with the best.
 */
function tiesOf(r: ReturnType<typeof confirmReport>, id: string): string | undefined {
  if (!r?.bestId) return undefined;
  const within = `within ${(r.reproducibility * 100).toFixed(2)}% by separate precise timings`;
  const duelOf = (other: string): string => {
    const d = r.tieDuels.find((x) => x.variantId === other);
    if (!d) return `${other} not duelled`;
    const who = d.ratioLow > 1 ? `${r.bestId} faster by ${((d.ratio - 1) * 100).toFixed(2)}%` : d.ratioHigh < 1 ? `${other} faster by ${((1 / d.ratio - 1) * 100).toFixed(2)}%` : 'not told apart';
    return `duel ${r.bestId} vs ${other}: ${who} (speed ratio ${d.ratio.toFixed(4)}x, 95% ${d.ratioLow.toFixed(4)}-${d.ratioHigh.toFixed(4)} over pairs and placements, ${d.pairs} interleaved pairs)`;
  };
  if (id === r.bestId) return r.tiedWithBest.length ? `${r.tiedWithBest.join(', ')} ${within}; ${r.tiedWithBest.map(duelOf).join('; ')}` : undefined;
  return r.tiedWithBest.includes(id) ? `with the confirmed best ${r.bestId}, ${within}; ${duelOf(id)}` : undefined;
}

function confirmedOf(r: ReturnType<typeof confirmReport>, id: string): ProvenanceInput['confirmed'] {
  if (!r) return undefined;
  const line = r.baseline?.variantId === id ? r.baseline : r.variants.find((l) => l.variantId === id);
  return line ? { line, baselineMs: r.baseline?.ms ?? null } : null;
}
