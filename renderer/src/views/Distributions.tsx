// Two timing distributions that can be read: box plots (median, quartiles, range, every sample as a
// dot) and ECDFs on one time axis, logarithmic when the two ranges are far apart (on a linear axis
// they read as two spikes). Plain SVG: axis titles with units, 1-2-5 ticks, a hover readout.
import { useState } from 'react';
import { axisTicks, boxStats, ecdf, fmtTick, wantsLogAxis } from '../analysis.js';
import { fmtMs } from '../store.js';

const COLORS = { A: '#2563eb', B: '#f59e0b' };

export function Distributions(props: { a: { id: string; samples: number[] }; b: { id: string; samples: number[] }; width?: number }) {
  const [hover, setHover] = useState<string | null>(null);
  const all = [...props.a.samples, ...props.b.samples].filter((x) => Number.isFinite(x) && x > 0);
  if (!all.length) return <p className="muted">No raw timing samples recorded for {props.a.id} or {props.b.id} (compile-only, failed, or a result kept without its samples): nothing to plot.</p>;
  const log = wantsLogAxis([Math.min(...props.a.samples), Math.max(...props.a.samples), Math.min(...props.b.samples), Math.max(...props.b.samples)].filter(Number.isFinite), 2);
  const lo0 = Math.min(...all);
  const hi0 = Math.max(...all);
  const pad = log ? 1.15 : (hi0 - lo0) * 0.08 || lo0 * 0.05;
  const lo = log ? lo0 / pad : lo0 - pad;
  const hi = log ? hi0 * pad : hi0 + pad;
  const W = props.width ?? 520;
  const L = 56;
  const R = 16;
  const x = (v: number): number => L + ((log ? Math.log(v / lo) / Math.log(hi / lo) : (v - lo) / (hi - lo)) * (W - L - R));
  const ticks = axisTicks(lo, hi, log);
  const unit = hi0 < 1 ? 'µs' : 'ms';
  const tickLabel = (t: number): string => fmtTick(unit === 'µs' ? t * 1000 : t);
  const series = [{ key: 'A' as const, ...props.a }, { key: 'B' as const, ...props.b }];
  // Box plots: rows at y 20 and 50; ECDF below: y from 90 (p=1) to 250 (p=0).
  const yE = (p: number): number => 250 - p * 160;
  return (
    <div className="dist" data-testid="distributions" data-log={log ? 'log' : 'linear'}>
      <svg width={W} height={300} role="img" aria-label="timing distributions of A and B">
        {ticks.map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={8} y2={250} stroke="#e2e8f0" />
            <text x={x(t)} y={264} fontSize={10} textAnchor="middle" fill="#475569">{tickLabel(t)}</text>
          </g>
        ))}
        <text x={(L + W - R) / 2} y={290} fontSize={11} textAnchor="middle" fill="#334155" data-testid="dist-x-title">time per call ({unit}{log ? ', log scale' : ''})</text>
        <text x={12} y={170} fontSize={11} textAnchor="middle" fill="#334155" transform="rotate(-90 12 170)">fraction of samples ≤ t</text>
        {[0, 0.5, 1].map((p) => <text key={p} x={L - 6} y={yE(p) + 3} fontSize={10} textAnchor="end" fill="#475569">{p}</text>)}
        {series.map((s, k) => {
          const b = boxStats(s.samples);
          if (!b) return null;
          const y = 22 + k * 30;
          const c = COLORS[s.key];
          return (
            <g key={s.key} data-testid={`box-${s.key}`} onMouseEnter={() => setHover(`${s.key} ${s.id}: median ${fmtMs(b.median)}, IQR ${fmtMs(b.q1)}–${fmtMs(b.q3)}, range ${fmtMs(b.min)}–${fmtMs(b.max)}, ${b.n} samples`)} onMouseLeave={() => setHover(null)}>
              <text x={L - 6} y={y + 4} fontSize={11} textAnchor="end" fill={c} fontWeight={700}>{s.key}</text>
              <line x1={x(b.min)} x2={x(b.max)} y1={y} y2={y} stroke={c} />
              <rect x={x(b.q1)} y={y - 8} width={Math.max(1, x(b.q3) - x(b.q1))} height={16} fill={c} fillOpacity={0.2} stroke={c} />
              <line x1={x(b.median)} x2={x(b.median)} y1={y - 9} y2={y + 9} stroke={c} strokeWidth={2.5} />
              {s.samples.map((v, i) => <circle key={i} cx={x(v)} cy={y + ((i * 7) % 11) - 5} r={1.4} fill={c} fillOpacity={0.6} />)}
            </g>
          );
        })}
        {series.map((s) => {
          const pts = ecdf(s.samples);
          if (!pts.length) return null;
          let d = `M ${x(pts[0].x)} ${yE(0)}`;
          let prev = 0;
          for (const p of pts) {
            d += ` L ${x(p.x)} ${yE(prev)} L ${x(p.x)} ${yE(p.p)}`;
            prev = p.p;
          }
          return <path key={s.key} d={d} fill="none" stroke={COLORS[s.key]} strokeWidth={1.8} data-testid={`ecdf-${s.key}`} />;
        })}
        <line x1={L} x2={W - R} y1={250} y2={250} stroke="#94a3b8" />
      </svg>
      <div className="muted small" data-testid="dist-readout">{hover ?? `A ${props.a.id} (blue), B ${props.b.id} (orange): box = quartiles, line = range, dots = samples; below, the ECDFs.`}</div>
    </div>
  );
}
