// The session's plots, with optuna-dashboard as the bar: every axis titled with its unit, tooltips
// that name the variant with formatted values, a click on a point opens that variant, a live
// best-so-far with elapsed time and evaluations per minute during a run, parameter importance,
// parallel coordinates and slice plots over the tunables, the reward, the preference model's
// accuracy and the roofline against the GPU's measured limits.
import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis, Bar, BarChart, ZAxis, Cell } from 'recharts';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { BaselineCurvesDTO, VariantRow } from '../../../main/contract/api.js';
import { useApp, fmtMs, fmtRate, fmtX, speedupColor } from '../store.js';
import { roofsFor } from '../roofline.js';
import { axisTicks, fmtDuration, fmtTick, pace, paramImportance } from '../analysis.js';
import { NoSession } from './Variants.js';
import { BaselinesLegend, baselineLines } from '../pytorch-baselines.js';

function Panel(props: { title: string; children: ReactNode; note?: string; testid?: string; wide?: boolean }) {
  return (
    <div className={`plot ${props.wide ? 'wide' : ''}`} data-testid={props.testid}>
      <h4>{props.title}</h4>
      {props.children}
      {props.note && <p className="muted small">{props.note}</p>}
    </div>
  );
}

const BASELINE_COLOURS: Record<string, string> = { random: '#f97316', anneal: '#16a34a', genetic: '#db2777' };
const AXIS = { fontSize: 11, fill: '#334155' };

/** Opens a variant from a plot point: selected in the tree, shown in the Variants view. */
function useOpen(): (id: string) => void {
  const select = useApp((s) => s.select);
  const setView = useApp((s) => s.setView);
  return (id) => {
    select(id);
    setView('variants');
  };
}

/** A tooltip naming the variant under the pointer, with the given lines. */
function tip(lines: (p: Record<string, unknown>) => Array<string | null>) {
  return function Tip(props: { active?: boolean; payload?: ReadonlyArray<{ payload?: Record<string, unknown> }> }) {
    const p = props.active ? props.payload?.find((x) => x.payload && x.payload.variantId)?.payload : undefined;
    if (!p) return null;
    return (
      <div className="chart-tip" data-testid="chart-tip">
        <b>{String(p.variantId)}</b>
        {lines(p).filter(Boolean).map((l, i) => <div key={i}>{l}</div>)}
        <div className="muted small">click to open</div>
      </div>
    );
  };
}

const row = (rows: Map<string, VariantRow>, p: Record<string, unknown>) => rows.get(String(p.variantId));

function Dot(props: { cx?: number; cy?: number; payload?: { variantId?: string; speedup?: number | null }; onOpen: (id: string) => void; fill?: string; r?: number }) {
  const { cx, cy, payload } = props;
  if (cx === undefined || cy === undefined || !payload?.variantId || payload.speedup === null || payload.speedup === undefined) return <g />;
  return <circle cx={cx} cy={cy} r={props.r ?? 3} fill={props.fill ?? '#64748b'} stroke="#fff" strokeWidth={0.5} style={{ cursor: 'pointer' }} data-testid="plot-point" data-variant={payload.variantId} onClick={(e) => {
    // Handled here; the chart's own click (which opens the evaluation under the pointer) must not run too.
    e.stopPropagation();
    props.onOpen(payload.variantId!);
  }} />;
}

function LiveStats() {
  const session = useApp((s) => s.session);
  const [now, setNow] = useState(Date.now());
  const run = session?.run;
  const live = !!run && !['finished', 'stopped', 'failed'].includes(run.phase);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live]);
  if (!session) return null;
  const best = session.summary.best;
  const p = run ? pace(run.startedAt, run.evaluated, now) : null;
  return (
    <div className="live-stats" data-testid="live-stats">
      <div><span className="muted small">best so far</span><b data-testid="live-best">{best ? `${fmtX(best.speedup)} · ${fmtMs(best.medianMs)} · ${best.variantId}` : session.gpu || session.replay || session.python ? 'none timed yet' : 'not timed (compile-only)'}</b></div>
      <div><span className="muted small">evaluated</span><b>{run ? `${run.evaluated} / ${run.budget}` : `${session.summary.results} results`}</b></div>
      {p && <div><span className="muted small">elapsed</span><b data-testid="live-elapsed">{fmtDuration(p.elapsedS)}</b></div>}
      {p && <div><span className="muted small">pace</span><b data-testid="live-pace">{p.perMin === null ? '–' : `${p.perMin >= 100 ? p.perMin.toFixed(0) : p.perMin.toFixed(1)} evaluations/min`}</b></div>}
      <div><span className="muted small">status</span><b>{run ? run.phase : session.summary.status ?? 'idle'}</b></div>
    </div>
  );
}

/** Parallel coordinates over the tunables and the speedup: one line per timed variant, coloured by speedup; click a line to open it. */
function ParallelCoordinates(props: { rows: VariantRow[]; onOpen: (id: string) => void }) {
  const [hover, setHover] = useState<VariantRow | null>(null);
  const timed = props.rows.filter((r) => r.speedup !== null).slice(-2000);
  const params = [...new Set(timed.flatMap((r) => Object.keys(r.config)))];
  if (!timed.length || !params.length) return <p className="muted">No timed variants with tunables yet.</p>;
  const axes = [...params.map((p) => ({ key: p, values: [...new Set(timed.map((r) => r.config[p]).filter((v) => v !== undefined))].sort((a, b) => a - b) })), { key: 'speedup', values: [] as number[] }];
  // Drawn at most at its own size (a wide pane must not blow the labels up).
  const W = Math.max(520, 110 * axes.length);
  const H = 260;
  const top = 18;
  const bot = H - 26;
  const xs = (i: number): number => 44 + (i * (W - 110)) / (axes.length - 1);
  const sp = timed.map((r) => Math.log(r.speedup!));
  const [slo, shi] = [Math.min(...sp), Math.max(...sp)];
  const y = (axis: number, r: VariantRow): number => {
    const a = axes[axis];
    if (a.key === 'speedup') return bot - ((Math.log(r.speedup!) - slo) / (shi - slo || 1)) * (bot - top);
    const k = a.values.indexOf(r.config[a.key]);
    return bot - (a.values.length > 1 ? k / (a.values.length - 1) : 0.5) * (bot - top);
  };
  return (
    <div data-testid="parallel-coordinates">
      <svg width="100%" viewBox={`0 0 ${W} ${H}`} style={{ maxWidth: W, display: 'block' }} role="img" aria-label="parallel coordinates">
        {timed.map((r) => (
          <polyline
            key={r.id}
            points={axes.map((_, i) => `${xs(i)},${y(i, r)}`).join(' ')}
            fill="none"
            stroke={speedupColor(r.speedup, r.status)}
            strokeOpacity={hover && hover.id !== r.id ? 0.15 : 0.55}
            strokeWidth={hover?.id === r.id ? 2.5 : 1}
            style={{ cursor: 'pointer' }}
            data-testid="pc-line"
            data-variant={r.id}
            onMouseEnter={() => setHover(r)}
            onMouseLeave={() => setHover(null)}
            onClick={() => props.onOpen(r.id)}
          />
        ))}
        {axes.map((a, i) => (
          <g key={a.key}>
            <line x1={xs(i)} x2={xs(i)} y1={top} y2={bot} stroke="#334155" />
            <text x={xs(i)} y={H - 8} fontSize={11} textAnchor="middle" fill="#0f172a" fontWeight={600}>{a.key === 'speedup' ? 'speedup (×, log)' : a.key}</text>
            {a.key === 'speedup'
              ? [slo, (slo + shi) / 2, shi].map((v, k) => <text key={k} x={xs(i) + 4} y={bot - ((v - slo) / (shi - slo || 1)) * (bot - top) + 3} fontSize={9} fill="#475569">{Math.exp(v).toFixed(2)}</text>)
              : a.values.map((v, k) => <text key={v} x={xs(i) - 4} y={bot - (a.values.length > 1 ? k / (a.values.length - 1) : 0.5) * (bot - top) + 3} fontSize={9} textAnchor="end" fill="#475569">{v}</text>)}
          </g>
        ))}
      </svg>
      <div className="muted small">{hover ? `${hover.id}: ${fmtX(hover.speedup)} · ${Object.entries(hover.config).map(([k, v]) => `${k}=${v}`).join(' ')} (click to open)` : `${timed.length} timed variants; one line each, coloured by speedup. Hover to read one, click to open it.`}</div>
    </div>
  );
}

export function PlotsView() {
  const session = useApp((s) => s.session);
  const api = useApp((s) => s.api);
  const open = useOpen();
  const [baselines, setBaselines] = useState<BaselineCurvesDTO | null>(null);
  const replayOf = session?.replay?.recording ?? null;
  const sessionId = session?.summary.id ?? null;
  const evaluated = session ? session.plots.timeline.length : 0;
  const finished = !session?.run || ['finished', 'stopped', 'failed'].includes(session.run.phase);
  useEffect(() => {
    setBaselines(null);
    if (!api || !sessionId || !replayOf || !finished) return;
    let live = true;
    // On a replay, the baseline strategies on the same recorded space (computed by the backend).
    api.call('sessions.baselines', { id: sessionId }).then(
      (b) => live && setBaselines(b),
      (e: unknown) => live && setBaselines({ recording: replayOf, evaluations: 0, seeds: 0, curves: [], note: `no baseline strategies replayed: ${e instanceof Error ? e.message : String(e)}` }),
    );
    return () => {
      live = false;
    };
  }, [api, sessionId, replayOf, finished, evaluated]);
  const rows = useMemo(() => new Map((session?.variants ?? []).map((r) => [r.id, r])), [session?.variants]);
  const importance = useMemo(() => paramImportance(session?.variants ?? []), [session?.variants]);
  if (!session) return <NoSession />;
  const p = session.plots;
  const params = [...new Set(p.paramEffects.map((e) => e.param))];
  const timed = p.timeline.some((t) => t.speedup !== null);
  const roof = p.roofline;
  const roofs = roof && (roof.peakGbps || roof.peakGflops) ? roofsFor(roof.peakGbps, roof.peakGflops, roof.points.map((x) => x.intensity), roof.points.map((x) => x.gflops)) : null;
  const evalTip = tip((q) => {
    const r = row(rows, q);
    return [`evaluation #${String(q.index)}`, q.speedup !== null && q.speedup !== undefined ? `speedup ${fmtX(Number(q.speedup))} · ${fmtMs(r?.medianMs)}` : r ? `${r.status}${r.failure ? `: ${r.failure.kind}` : ''}` : null, q.bestSpeedup ? `best so far ${fmtX(Number(q.bestSpeedup))}` : null, r ? Object.entries(r.config).map(([k, v]) => `${k}=${v}`).join(' ') : null];
  });
  const roofTip = tip((q) => [
    `${Number(q.intensity).toPrecision(3)} FLOP/B`,
    `${fmtRate(Number(q.gflops), 'FLOP/s')} · ${fmtRate(Number(q.gbps), 'B/s')}`,
    q.speedup ? `speedup ${fmtX(Number(q.speedup))}` : null,
  ]);
  const xTicks = roofs ? axisTicks(roofs.domain[0], roofs.domain[1], true) : undefined;
  const yTicks = roofs ? axisTicks(roofs.yDomain[0], roofs.yDomain[1], true) : undefined;
  return (
    <div className="plots" data-testid="plots">
      {session.replay && <div className="replay-note">REPLAY: every point below comes from the recorded space {session.replay.recording}.</div>}
      <LiveStats />
      {!timed && <div className="empty-state">No variant of this session was timed ({session.gpu || session.replay || session.python ? 'all failed so far' : 'compile-only: no GPU'}): speed plots stay empty; parameter counts and failures still show.</div>}
      <div className="plot-grid">
        <Panel title="Best-so-far speedup vs evaluations" testid="plot-history" note={baselines ? baselines.note : session.replay ? (finished ? 'replaying the baseline strategies on the same recorded space…' : 'the baseline strategies are replayed on the same space once the run has finished') : 'dots: each variant; click one to open it'}>
          <ResponsiveContainer width="100%" height={250}>
            {/* A click anywhere in the chart opens the evaluation the tooltip names (its x): the hovered point's
                active dot is drawn over it, and a press and release that land on different elements
                (the dot re-drawn between them) reach only the chart, never the dot. */}
            <LineChart data={p.timeline} margin={{ left: 8, right: 12, bottom: 18, top: 4 }} onClick={(st) => {
              const x = Number(st.activeLabel);
              const at = Number.isFinite(x) ? p.timeline.find((t) => t.index === x) : undefined;
              if (at?.variantId) open(at.variantId);
            }}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" type="number" domain={[0, 'dataMax']} allowDecimals={false} tick={{ fontSize: 11 }} label={{ value: 'evaluation #', position: 'insideBottom', offset: -12, style: AXIS }} />
              <YAxis domain={['auto', 'auto']} width={56} tick={{ fontSize: 11 }} tickFormatter={(v: number) => `${fmtTick(v)}×`} label={{ value: 'speedup vs baseline (×)', angle: -90, position: 'insideLeft', offset: 4, dy: 70, style: AXIS }} />
              <Tooltip content={evalTip} />
              <Legend verticalAlign="top" wrapperStyle={{ fontSize: 11, paddingBottom: 4 }} />
              <Line type="stepAfter" dataKey="bestSpeedup" name={`best so far (${session.summary.strategy})`} stroke="#2563eb" dot={false} activeDot={false} isAnimationActive={false} connectNulls />
              <Line dataKey="speedup" name="each variant" stroke="#64748b" strokeWidth={0} dot={(d: object) => <Dot key={(d as { index: number }).index} {...(d as object)} onOpen={open} />} activeDot={(d: object) => <Dot key="active" {...(d as object)} r={5} fill="#1e3a8a" onOpen={open} />} isAnimationActive={false} />
              {baselineLines(session.pytorchBaselines)}
              {(baselines?.curves ?? []).map((c) => (
                <Line key={c.name} data={c.points} type="stepAfter" dataKey="bestSpeedup" name={`${c.name} (REPLAY, median of ${baselines!.seeds})`} stroke={BASELINE_COLOURS[c.name] ?? '#64748b'} strokeDasharray="5 3" dot={false} activeDot={false} isAnimationActive={false} />
              ))}
            </LineChart>
          </ResponsiveContainer>
          <BaselinesLegend b={session.pytorchBaselines} />
        </Panel>
        <Panel title="Parameter importance" testid="plot-importance" note="share of the variance of ln(speedup) each tunable explains on its own (one-way ANOVA η², the first-order term of fANOVA), over timed variants">
          {importance.length ? (
            <ResponsiveContainer width="100%" height={Math.max(120, 34 * importance.length + 40)}>
              <BarChart data={importance} layout="vertical" margin={{ left: 8, right: 16, bottom: 16 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis type="number" domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} tick={{ fontSize: 11 }} label={{ value: 'importance (% of explained variance)', position: 'insideBottom', offset: -10, style: AXIS }} />
                <YAxis type="category" dataKey="param" width={90} tick={{ fontSize: 11 }} />
                <Tooltip formatter={(v) => [`${(Number(v) * 100).toFixed(1)}%`, 'importance']} />
                <Bar dataKey="importance" fill="#7c3aed" isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          ) : <p className="muted">Needs at least three timed variants.</p>}
        </Panel>
        <Panel title="Parallel coordinates" testid="plot-parallel" wide>
          <ParallelCoordinates rows={session.variants} onOpen={open} />
        </Panel>
        <Panel title="Reward per evaluation" note={p.rewardLabel}>
          <ResponsiveContainer width="100%" height={240}>
            <BarChart data={p.timeline.filter((t) => t.index > 0)} margin={{ left: 8, right: 12, bottom: 18 }}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" tick={{ fontSize: 11 }} label={{ value: 'evaluation #', position: 'insideBottom', offset: -12, style: AXIS }} />
              <YAxis width={56} tick={{ fontSize: 11 }} tickFormatter={fmtTick} label={{ value: 'reward', angle: -90, position: 'insideLeft', offset: 4, style: AXIS }} />
              <Tooltip content={tip((q) => [`evaluation #${String(q.index)}`, q.reward !== null ? `reward ${Number(q.reward).toFixed(3)}` : 'no reward'])} />
              <ReferenceLine y={0} stroke="#444" />
              <Bar dataKey="reward" fill="#10b981" isAnimationActive={false} onClick={(d: { payload?: { variantId?: string } }) => d.payload?.variantId && open(d.payload.variantId)} />
            </BarChart>
          </ResponsiveContainer>
        </Panel>
        <Panel title="Preference-model accuracy" note={p.modelAccuracy.length ? 'held-out pairwise accuracy; 50% is chance' : 'this strategy records no preference model (random search has none)'}>
          <ResponsiveContainer width="100%" height={240}>
            <LineChart data={p.modelAccuracy} margin={{ left: 8, right: 12, bottom: 18 }}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" type="number" domain={[0, 'dataMax']} tick={{ fontSize: 11 }} label={{ value: 'evaluation #', position: 'insideBottom', offset: -12, style: AXIS }} />
              <YAxis domain={[0, 1]} width={56} tick={{ fontSize: 11 }} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} label={{ value: 'held-out accuracy', angle: -90, position: 'insideLeft', offset: 4, dy: 50, style: AXIS }} />
              <Tooltip formatter={(v) => [`${(Number(v) * 100).toFixed(1)}%`, 'accuracy']} labelFormatter={(l) => `after evaluation #${String(l)}`} />
              <ReferenceLine y={0.5} stroke="#aaa" strokeDasharray="4 4" />
              <Line dataKey="accuracy" stroke="#7c3aed" isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </Panel>
        <Panel title="Roofline (attained FLOP/s vs arithmetic intensity)" note={roof ? (roof.limitsSource ? `roofs measured on this GPU: ${roof.peakGbps ? `copy ${(roof.peakGbps / 1000).toFixed(2)} TB/s` : 'no copy bandwidth'}, ${roof.peakGflops ? `FP32 SGEMM ${(roof.peakGflops / 1000).toFixed(1)} TFLOP/s` : 'no SGEMM rate'} (${roof.limitsSource})` : (roof.limitsNote ?? 'no measured limits for this GPU')) : 'the task declares no bytes/flops metrics'}>
          <div data-testid="roofline" data-limits={roof?.limitsSource ?? 'none'}>
            <ResponsiveContainer width="100%" height={260}>
              <ScatterChart margin={{ left: 12, right: 12, bottom: 18, top: 4 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="intensity" type="number" scale="log" domain={roofs ? roofs.domain : ['auto', 'auto']} ticks={xTicks} allowDataOverflow name="intensity" tick={{ fontSize: 11 }} tickFormatter={(v: number) => fmtTick(Number(v))} label={{ value: 'arithmetic intensity (FLOP/byte, log)', position: 'insideBottom', offset: -12, style: AXIS }} />
                <YAxis dataKey="gflops" type="number" scale="log" domain={roofs ? roofs.yDomain : ['auto', 'auto']} ticks={yTicks} allowDataOverflow name="attained" width={64} tick={{ fontSize: 11 }} tickFormatter={(v: number) => fmtRate(Number(v), 'FLOP/s').replace('FLOP/s', '')} label={{ value: 'attained FLOP/s (log)', angle: -90, position: 'insideLeft', offset: -4, dy: 60, style: AXIS }} />
                <ZAxis range={[36, 36]} />
                <Tooltip content={roofTip} />
                <Legend verticalAlign="top" wrapperStyle={{ fontSize: 11, paddingBottom: 4 }} />
                {roofs && roofs.memory.length ? <Scatter name={`memory roof ${(roof!.peakGbps! / 1000).toFixed(2)} TB/s`} data={roofs.memory} line={{ stroke: '#dc2626', strokeWidth: 2 }} shape={() => <g />} fill="#dc2626" legendType="line" isAnimationActive={false} /> : null}
                {roofs && roofs.compute.length ? <Scatter name={`compute roof ${(roof!.peakGflops! / 1000).toFixed(1)} TFLOP/s`} data={roofs.compute} line={{ stroke: '#f59e0b', strokeWidth: 2 }} shape={() => <g />} fill="#f59e0b" legendType="line" isAnimationActive={false} /> : null}
                <Scatter name="variants" data={roof?.points ?? []} fill="#2563eb" isAnimationActive={false} shape={(d: object) => <Dot {...(d as object)} fill="#2563eb" r={4} onOpen={open} />} />
              </ScatterChart>
            </ResponsiveContainer>
          </div>
        </Panel>
      </div>
      <h4>Slice plots: speedup of every timed variant against each tunable (click a point to open it)</h4>
      <div className="plot-grid" data-testid="slice-plots">
        {params.map((name) => {
          const pts = session.variants.filter((r) => r.speedup !== null && r.config[name] !== undefined).map((r) => ({ variantId: r.id, x: r.config[name], speedup: r.speedup }));
          const values = [...new Set(pts.map((q) => q.x))].sort((a, b) => a - b);
          const eff = p.paramEffects.filter((e) => e.param === name);
          const failures = eff.reduce((a, e) => a + e.failures, 0);
          return (
            <Panel key={name} title={name} testid={`slice-${name}`} note={`${pts.length} timed${failures ? ` · ${failures} failed (${eff.filter((e) => e.failures).map((e) => `${e.failures} at ${e.value}`).join(', ')})` : ''}`}>
              <ResponsiveContainer width="100%" height={190}>
                <ScatterChart margin={{ left: 8, right: 12, bottom: 18, top: 4 }}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="x" type="number" domain={values.length > 1 ? [values[0], values[values.length - 1]] : ['auto', 'auto']} scale={values.length > 2 && values[0] > 0 && values[values.length - 1] / values[0] > 8 ? 'log' : 'auto'} ticks={values} tick={{ fontSize: 10 }} label={{ value: `${name} (value)`, position: 'insideBottom', offset: -12, style: AXIS }} />
                  <YAxis dataKey="speedup" type="number" width={52} tick={{ fontSize: 10 }} tickFormatter={(v: number) => `${fmtTick(v)}×`} label={{ value: 'speedup (×)', angle: -90, position: 'insideLeft', offset: 4, dy: 36, style: AXIS }} />
                  <Tooltip content={tip((q) => [`${name} = ${String(q.x)}`, `speedup ${fmtX(Number(q.speedup))}`])} />
                  {baselineLines(session.pytorchBaselines)}
                  <Scatter data={pts} isAnimationActive={false} shape={(d: object) => <Dot {...(d as object)} fill="#2563eb" onOpen={open} />}>
                    {pts.map((q) => <Cell key={q.variantId} />)}
                  </Scatter>
                </ScatterChart>
              </ResponsiveContainer>
            </Panel>
          );
        })}
      </div>
      <h4>Effect of each parameter value: mean speedup of the timed variants with that value{timed ? '' : ' (no timed variants: counts of built variants)'}</h4>
      <div className="plot-grid">
        {params.map((name) => {
          const eff = p.paramEffects.filter((e) => e.param === name);
          const anyFail = eff.some((e) => e.failures > 0);
          return (
            <Panel key={name} title={name}>
              <ResponsiveContainer width="100%" height={180}>
                <BarChart data={eff} margin={{ left: 8, right: 12, bottom: 18 }}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="value" tick={{ fontSize: 10 }} label={{ value: `${name} (value)`, position: 'insideBottom', offset: -12, style: AXIS }} />
                  <YAxis width={52} tick={{ fontSize: 10 }} tickFormatter={(v: number) => (timed ? `${fmtTick(v)}×` : fmtTick(v))} label={{ value: timed ? 'mean speedup (×)' : 'variants', angle: -90, position: 'insideLeft', offset: 4, dy: 40, style: AXIS }} />
                  <Tooltip formatter={(v, n) => [n === 'mean speedup' ? fmtX(Number(v)) : String(v), String(n)]} labelFormatter={(l) => `${name} = ${String(l)}`} />
                  {anyFail && <Legend verticalAlign="top" wrapperStyle={{ fontSize: 11 }} />}
                  {timed ? <Bar dataKey="meanSpeedup" name="mean speedup" fill="#2563eb" isAnimationActive={false} /> : <Bar dataKey="count" name="variants" fill="#64748b" isAnimationActive={false} />}
                  {anyFail && <Bar dataKey="failures" name="failures (count)" fill="#dc2626" isAnimationActive={false} />}
                </BarChart>
              </ResponsiveContainer>
            </Panel>
          );
        })}
      </div>
    </div>
  );
}
