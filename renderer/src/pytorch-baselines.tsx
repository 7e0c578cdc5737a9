// A PyTorch-reference session's baselines (eager, torch.compile) where the session's plots and the
// variant detail show them: horizontal reference lines on the "speedup vs baseline" axes, labelled
// with their time (CPU times say CPU), a legend line saying why torch.compile has none where it was
// not run (never a line without a time), and a variant's speedup over each.
import { ReferenceLine } from 'recharts';
import { baselineFigureMs, isHostBound, speedupOf, type PytorchBaselinesDTO } from '../../main/contract/api.js';
import { fmtMs, fmtX } from './store.js';

const EAGER = '#ea580c';
const COMPILE = '#0891b2';

/** The reference lines of the baselines that have a time (none for a session without them). */
export function baselineLines(b: PytorchBaselinesDTO | null | undefined) {
  if (!b) return [];
  const cpu = b.device === 'cpu' ? ' [CPU]' : '';
  const lines: Array<{ key: string; y: number; label: string; colour: string }> = [];
  const per = b.figure === 'per-call' ? ' per call' : '';
  if (b.eager && b.eagerSpeedup) lines.push({ key: 'eager', y: b.eagerSpeedup, label: `PyTorch eager ${fmtMs(baselineFigureMs(b, b.eager))}${per}${cpu}`, colour: EAGER });
  if (b.compile && b.compileSpeedup) lines.push({ key: 'compile', y: b.compileSpeedup, label: `torch.compile ${fmtMs(baselineFigureMs(b, b.compile))}${per}${cpu}`, colour: COMPILE });
  return lines.map((l) => (
    <ReferenceLine key={l.key} y={l.y} stroke={l.colour} strokeDasharray="6 3" ifOverflow="extendDomain" label={{ value: l.label, position: 'insideTopLeft', fontSize: 10, fill: l.colour }} />
  ));
}

type BaselineTime = NonNullable<PytorchBaselinesDTO['eager']>;

/** A baseline's GPU time (samples behind a gate: Python's launch left out), where measured, and whether its one-call figure is mostly the host's. */
function gpuText(t: BaselineTime): string {
  if (t.gpuMs === undefined) return '';
  return `; GPU's own time ${fmtMs(t.gpuMs)}${isHostBound(t.gpuMs, t.medianMs) ? ' — host-bound: the rest is Python launching kernels' : ''}`;
}

/** The speedup over a baseline's GPU time too, where its one-call figure is host-bound (a per-call session compares per-call times already). */
function vsGpu(b: PytorchBaselinesDTO, t: BaselineTime, ms: number | null): string {
  return b.figure !== 'per-call' && t.gpuMs !== undefined && isHostBound(t.gpuMs, t.medianMs) ? ` (${fmtX(speedupOf(t.gpuMs, ms))} vs its GPU time ${fmtMs(t.gpuMs)})` : '';
}

/** A baseline's time in words: by the session's figure, with KernelBench's one-call figure beside a per-call one. */
function timeText(b: PytorchBaselinesDTO, t: BaselineTime): string {
  if (b.figure !== 'per-call') return fmtMs(t.medianMs);
  return t.perCallMs !== undefined ? `${fmtMs(t.perCallMs)} per call (one-call ${fmtMs(t.medianMs)})` : `one-call ${fmtMs(t.medianMs)}, no per-call time (recorded before 2026-12-02): no line`;
}

/** The baselines in words, under a plot: each one's time and where its line is, or why it has none. */
export function BaselinesLegend({ b }: { b: PytorchBaselinesDTO | null | undefined }) {
  if (!b) return null;
  const cpu = b.device === 'cpu' ? <b className="cpu-inline"> CPU</b> : null;
  return (
    <div className="muted small" data-testid="pytorch-baselines" title={`guarantee level ${b.guarantee}: ${b.guaranteeTitle}`}>
      {b.eager ? <><span style={{ color: EAGER }}>— —</span>{' '}</> : null}
      <span data-testid="pytorch-eager">{b.eager ? `PyTorch eager ${timeText(b, b.eager)} (${b.eager.timer}, ${b.eager.samples} samples${gpuText(b.eager)}; line at ${fmtX(b.eagerSpeedup)})` : `PyTorch eager: none (${b.failure ?? 'not measured'})`}</span>
      {' · '}{b.compile ? <><span style={{ color: COMPILE }}>— —</span>{' '}</> : null}
      <span data-testid="pytorch-compile">{b.compile ? `torch.compile ${timeText(b, b.compile)} (compiled in ${b.compile.compileS.toFixed(1)} s${gpuText(b.compile)}; line at ${fmtX(b.compileSpeedup)})` : `torch.compile: no line — ${b.compileNote ?? 'not run'}`}</span>
      {cpu}{b.device === 'cpu' ? ': CPU times, not a GPU\'s' : ` on ${b.deviceName}`} · {b.guarantee}
    </div>
  );
}

/** A variant's speedup over each baseline (its median over theirs), or why there is none. */
export function vsPytorchText(b: PytorchBaselinesDTO, ms: number | null): string {
  const eager = b.eager ? `${fmtX(speedupOf(baselineFigureMs(b, b.eager), ms))} vs PyTorch eager (${timeText(b, b.eager)})${vsGpu(b, b.eager, ms)}` : `PyTorch eager: none (${b.failure ?? 'not measured'})`;
  const compile = b.compile ? `${fmtX(speedupOf(baselineFigureMs(b, b.compile), ms))} vs torch.compile (${timeText(b, b.compile)})${vsGpu(b, b.compile, ms)}` : `torch.compile: none (${b.compileNote ?? 'not run'})`;
  return `${eager} · ${compile}`;
}
