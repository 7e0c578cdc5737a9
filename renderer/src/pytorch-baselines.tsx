// A PyTorch-reference session's baselines (eager, torch.compile) where the session's plots and the
// variant detail show them: horizontal reference lines on the "speedup vs baseline" axes, labelled
// with their time (CPU times say CPU), a legend line saying why torch.compile has none where it was
// not run (never a line without a time), and a variant's speedup over each.
import { ReferenceLine } from 'recharts';
import { isHostBound, speedupOf, type PytorchBaselinesDTO } from '../../main/contract/api.js';
import { fmtMs, fmtX } from './store.js';

const EAGER = '#ea580c';
const COMPILE = '#0891b2';

/** The reference lines of the baselines that have a time (none for a session without them). */
export function baselineLines(b: PytorchBaselinesDTO | null | undefined) {
  if (!b) return [];
  const cpu = b.device === 'cpu' ? ' [CPU]' : '';
  const lines: Array<{ key: string; y: number; label: string; colour: string }> = [];
  if (b.eager && b.eagerSpeedup) lines.push({ key: 'eager', y: b.eagerSpeedup, label: `PyTorch eager ${fmtMs(b.eager.medianMs)}${cpu}`, colour: EAGER });
  if (b.compile && b.compileSpeedup) lines.push({ key: 'compile', y: b.compileSpeedup, label: `torch.compile ${fmtMs(b.compile.medianMs)}${cpu}`, colour: COMPILE });
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

/** The speedup over a baseline's GPU time too, where its one-call figure is host-bound. */
function vsGpu(t: BaselineTime, ms: number | null): string {
  return t.gpuMs !== undefined && isHostBound(t.gpuMs, t.medianMs) ? ` (${fmtX(speedupOf(t.gpuMs, ms))} vs its GPU time ${fmtMs(t.gpuMs)})` : '';
}

/** The baselines in words, under a plot: each one's time and where its line is, or why it has none. */
export function BaselinesLegend({ b }: { b: PytorchBaselinesDTO | null | undefined }) {
  if (!b) return null;
  const cpu = b.device === 'cpu' ? <b className="cpu-inline"> CPU</b> : null;
  return (
    <div className="muted small" data-testid="pytorch-baselines" title={`guarantee level ${b.guarantee}: ${b.guaranteeTitle}`}>
      {b.eager ? <><span style={{ color: EAGER }}>— —</span>{' '}</> : null}
      <span data-testid="pytorch-eager">{b.eager ? `PyTorch eager ${fmtMs(b.eager.medianMs)} (${b.eager.timer}, ${b.eager.samples} samples${gpuText(b.eager)}; line at ${fmtX(b.eagerSpeedup)})` : `PyTorch eager: none (${b.failure ?? 'not measured'})`}</span>
      {' · '}{b.compile ? <><span style={{ color: COMPILE }}>— —</span>{' '}</> : null}
      <span data-testid="pytorch-compile">{b.compile ? `torch.compile ${fmtMs(b.compile.medianMs)} (compiled in ${b.compile.compileS.toFixed(1)} s${gpuText(b.compile)}; line at ${fmtX(b.compileSpeedup)})` : `torch.compile: no line — ${b.compileNote ?? 'not run'}`}</span>
      {cpu}{b.device === 'cpu' ? ': CPU times, not a GPU\'s' : ` on ${b.deviceName}`} · {b.guarantee}
    </div>
  );
}

/** A variant's speedup over each baseline (its median over theirs), or why there is none. */
export function vsPytorchText(b: PytorchBaselinesDTO, ms: number | null): string {
  const eager = b.eager ? `${fmtX(speedupOf(b.eager.medianMs, ms))} vs PyTorch eager (${fmtMs(b.eager.medianMs)})${vsGpu(b.eager, ms)}` : `PyTorch eager: none (${b.failure ?? 'not measured'})`;
  const compile = b.compile ? `${fmtX(speedupOf(b.compile.medianMs, ms))} vs torch.compile (${fmtMs(b.compile.medianMs)})${vsGpu(b.compile, ms)}` : `torch.compile: none (${b.compileNote ?? 'not run'})`;
  return `${eager} · ${compile}`;
}
