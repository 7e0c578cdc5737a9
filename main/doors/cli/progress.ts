// What `kernelduel optimize` prints while it runs (not with --json). In a terminal: a progress bar,
// with a line above it for every failed variant (id, outcome, the first line of its message) and,
// compile-only, for every built variant; elsewhere: one line per result. A built variant's line
// shows its configuration, flags and registers. The ETA is '-' until there is a rate to go by.
import cliProgress from 'cli-progress';
import type { EvalResult, GpuActivity, VariantRecord } from '../../engine/base/types.js';
import type { LoopEvent } from '../../engine/search/loop.js';
import { fmtMs } from './format.js';

/** `1m05s`-style time left at the rate so far, '-' before the first result. */
export function etaText(elapsedMs: number, done: number, total: number): string {
  if (done <= 0 || !(elapsedMs >= 0)) return '-';
  const s = Math.max(0, Math.round(((elapsedMs / done) * Math.max(0, total - done)) / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** A variant's configuration and non-default flags, e.g. `BLOCK=256 VEC=4 --use_fast_math`. */
export function describeVariant(v: Pick<VariantRecord, 'config' | 'flags' | 'transforms'> | undefined): string {
  if (!v) return '';
  const parts = Object.entries(v.config).map(([k, x]) => `${k}=${x}`);
  const f = v.flags;
  if (f.opt !== undefined && f.opt !== 3) parts.push(`-O${f.opt}`);
  if (f.fastMath) parts.push('--use_fast_math');
  if (f.maxrregcount) parts.push(`-maxrregcount=${f.maxrregcount}`);
  if (f.dlcm) parts.push(`-dlcm=${f.dlcm}`);
  if (f.extra?.length) parts.push(...f.extra);
  if (v.transforms?.length) parts.push(...v.transforms);
  return parts.join(' ');
}

/** Registers per kernel of a build (`31 regs`, or `k1 31 regs, k2 40 regs`). */
export function describeRegisters(r: EvalResult): string {
  const ks = r.build.resources;
  if (!ks.length) return '';
  if (ks.length === 1) return `${ks[0].registers} regs${ks[0].spillStoreBytes ? `, spills ${ks[0].spillStoreBytes} B` : ''}`;
  return ks.map((k) => `${k.name.replace(/^.*::/, '')} ${k.registers} regs`).join(', ');
}

/** One line for a failed variant: id, outcome, the first line of its message, its configuration. */
export function failureLine(id: string, r: EvalResult, v: VariantRecord | undefined): string {
  const f = r.failure!;
  const first = f.reason.split('\n')[0].slice(0, 160);
  const what = describeVariant(v);
  return `${id} FAILED [${f.kind}] ${first}${what ? ` (${what})` : ''}`;
}

/** One line for a built, compile-only variant: its configuration, flags and registers. */
export function builtLine(id: string, r: EvalResult, v: VariantRecord | undefined): string {
  const regs = describeRegisters(r);
  return `${id} built (compile-only): ${describeVariant(v) || 'baseline configuration'}${regs ? `; ${regs}` : ''}`;
}

/** One GPU of a pool at the end of a run: results, evaluations per minute, busy share (and why it was removed). */
export function gpuLine(g: GpuActivity): string {
  const rate = g.evalsPerMinute === null ? '-' : g.evalsPerMinute.toFixed(1);
  const busy = g.busyFraction === null ? '-' : `${Math.round(g.busyFraction * 100)}%`;
  return `  ${g.id} ${g.name}${g.simulated ? ' [SIMULATED]' : ''}: ${g.evaluated} results, ${rate} evaluations/min, busy ${busy}${g.state === 'removed' ? `, removed: ${g.removedReason ?? ''}` : ''}`;
}

export interface ProgressOptions {
  budget: number;
  /** A terminal: draw a bar. */
  tty: boolean;
  /** Tag for REPLAY runs (' [REPLAY]'). */
  tag: string;
  write: (line: string) => void;
  now?: () => number;
}

/** Prints loop events as lines, or as a bar with lines above it. */
export class OptimizeProgress {
  private readonly variants = new Map<string, VariantRecord>();
  private readonly started: number;
  private readonly now: () => number;
  private readonly multi: cliProgress.MultiBar | null;
  private readonly bar: cliProgress.SingleBar | null;

  constructor(private readonly o: ProgressOptions) {
    this.now = o.now ?? Date.now;
    this.started = this.now();
    if (o.tty) {
      this.multi = new cliProgress.MultiBar({ format: ' {bar} {value}/{total} | ETA {left} | best {best}', stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
      this.bar = this.multi.create(o.budget, 0, { best: '-', left: '-' });
    } else {
      this.multi = null;
      this.bar = null;
    }
  }

  /** A line for the user: above the bar in a terminal. */
  line(s: string): void {
    if (this.multi) this.multi.log(s + '\n');
    else this.o.write(s);
  }

  event(e: LoopEvent): void {
    const tag = this.o.tag;
    if (e.type === 'variant') this.variants.set(e.variant.id, e.variant);
    else if (e.type === 'model' && !this.bar) {
      this.line(`  model: ${e.stats.trainedOn} decided comparisons, held-out accuracy ${e.stats.heldOutAccuracy === null ? '-' : `${(e.stats.heldOutAccuracy * 100).toFixed(1)}% (${e.stats.heldOutPairs} pairs)`}`);
    } else if (e.type === 'duel' && !this.bar) {
      this.line(`  duel ${e.a} vs ${e.b}: ${e.result.verdict} ${e.result.ratio.toFixed(3)}× [${e.result.ratioLow.toFixed(3)}, ${e.result.ratioHigh.toFixed(3)}]${tag}`);
    } else if (e.type === 'gpus') {
      // A GPU left the pool: said at once, above the bar.
      if (e.message) this.line(`warning: ${e.message}`);
    } else if (e.type === 'done' && e.gpus) {
      for (const g of e.gpus) this.line(gpuLine(g));
    } else if (e.type === 'result') {
      const v = this.variants.get(e.variantId);
      const best = e.bestSpeedup ? `${e.bestSpeedup.toFixed(2)}× (${fmtMs(e.bestMs)})${tag}` : '-';
      const eta = etaText(this.now() - this.started, e.index, e.budget);
      const r = e.result;
      if (this.bar) {
        if (r.failure) this.line(failureLine(e.variantId, r, v));
        else if (r.compileOnly) this.line(builtLine(e.variantId, r, v));
        this.bar.update(e.index, { best, left: eta });
        return;
      }
      const what = r.failure ? failureLine(e.variantId, r, v) : r.compileOnly ? builtLine(e.variantId, r, v) : `${e.variantId} ${fmtMs(r.timing?.[0]?.medianMs ?? null)}${e.speedup ? ` ${e.speedup.toFixed(2)}×` : ''}${r.python ? ` ${r.python.label}` : ''}`;
      this.line(`[${e.index}/${e.budget}]${tag} ${what} | best ${best} | ETA ${eta}`);
    }
  }

  stop(): void {
    if (!this.multi) return;
    this.multi.update(); // lines logged since the last redraw
    this.multi.stop();
  }
}
