import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis, Bar, BarChart, ZAxis } from 'recharts';
import { useEffect, useState } from 'react';
import type { BaselineCurvesDTO } from '../../../main/contract/api.js';
import { useApp } from '../store.js';
import { fmtRate, roofsFor } from '../roofline.js';

function Panel(props: { title: string; children: React.ReactNode; note?: string }) {
  return (
    <div className="plot">
      <h4>{props.title}</h4>
      {props.children}
      {props.note && <p className="muted small">{props.note}</p>}
    </div>
  );
}

const BASELINE_COLOURS: Record<string, string> = { random: '#f97316', anneal: '#16a34a', genetic: '#db2777' };

export function PlotsView() {
  const session = useApp((s) => s.session);
  const api = useApp((s) => s.api);
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
    api.call('sessions.baselines', { id: sessionId }).then((b) => live && setBaselines(b), () => live && setBaselines(null));
    return () => {
      live = false;
    };
  }, [api, sessionId, replayOf, finished, evaluated]);
  if (!session) return <p className="muted">Open a session first.</p>;
  const p = session.plots;
  const params = [...new Set(p.paramEffects.map((e) => e.param))];
  const timed = p.timeline.some((t) => t.speedup !== null);
  const roof = p.roofline;
  const roofs = roof && (roof.peakGbps || roof.peakGflops) ? roofsFor(roof.peakGbps, roof.peakGflops, roof.points.map((x) => x.intensity), roof.points.map((x) => x.gflops)) : null;
  return (
    <div className="plots" data-testid="plots">
      {session.replay && <div className="replay-note">REPLAY: every point below comes from the recorded space {session.replay.recording}.</div>}
      {!timed && <div className="empty-state">No variant of this session was timed ({session.gpu ? 'all failed so far' : 'compile-only: no GPU'}): speed plots stay empty; parameter counts and failures still show.</div>}
      <div className="plot-grid">
        <Panel title="Best-so-far speedup vs evaluations" note={baselines?.curves.length ? baselines.note : session.replay ? (finished ? 'replaying the baseline strategies on the same recorded space…' : 'the baseline strategies are replayed on the same space once the run has finished') : undefined}>
          <ResponsiveContainer width="100%" height={240}>
            <LineChart data={p.timeline}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" type="number" domain={[0, 'dataMax']} />
              <YAxis domain={['auto', 'auto']} />
              <Tooltip />
              <Legend />
              <Line type="stepAfter" dataKey="bestSpeedup" name={session.summary.strategy} stroke="#2563eb" dot={false} isAnimationActive={false} connectNulls />
              <Line dataKey="speedup" name="each variant" stroke="#64748b" strokeWidth={0} dot={{ r: 2.5, fill: '#64748b', stroke: '#64748b', strokeWidth: 1 }} activeDot={{ r: 4 }} isAnimationActive={false} />
              {(baselines?.curves ?? []).map((c) => (
                <Line key={c.name} data={c.points} type="stepAfter" dataKey="bestSpeedup" name={`${c.name} (REPLAY, median of ${baselines!.seeds})`} stroke={BASELINE_COLOURS[c.name] ?? '#64748b'} strokeDasharray="5 3" dot={false} isAnimationActive={false} />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </Panel>
        <Panel title="Reward per evaluation" note={p.rewardLabel}>
          <ResponsiveContainer width="100%" height={240}>
            <BarChart data={p.timeline.filter((t) => t.index > 0)}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" />
              <YAxis />
              <Tooltip />
              <ReferenceLine y={0} stroke="#444" />
              <Bar dataKey="reward" fill="#10b981" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </Panel>
        <Panel title="Preference-model accuracy" note={p.modelAccuracy.length ? 'held-out pairwise accuracy' : 'this strategy records no preference model (random search has none)'}>
          <ResponsiveContainer width="100%" height={240}>
            <LineChart data={p.modelAccuracy}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" type="number" domain={[0, 'dataMax']} />
              <YAxis domain={[0, 1]} />
              <Tooltip />
              <ReferenceLine y={0.5} stroke="#aaa" strokeDasharray="4 4" />
              <Line dataKey="accuracy" stroke="#7c3aed" isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </Panel>
        <Panel title="Roofline (attained FLOP/s vs arithmetic intensity)" note={roof ? (roof.limitsSource ? `roofs measured on this GPU: ${roof.peakGbps ? `copy ${(roof.peakGbps / 1000).toFixed(2)} TB/s` : 'no copy bandwidth'}, ${roof.peakGflops ? `FP32 SGEMM ${(roof.peakGflops / 1000).toFixed(1)} TFLOP/s` : 'no SGEMM rate'} (${roof.limitsSource})` : (roof.limitsNote ?? 'no measured limits for this GPU')) : 'the task declares no bytes/flops metrics'}>
          <div data-testid="roofline" data-limits={roof?.limitsSource ?? 'none'}>
            <ResponsiveContainer width="100%" height={240}>
              <ScatterChart>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="intensity" type="number" scale="log" domain={roofs ? roofs.domain : ['auto', 'auto']} allowDataOverflow name="FLOP/byte" tickFormatter={(v: number) => Number(v).toPrecision(2)} label={{ value: 'FLOP/byte', position: 'insideBottomRight', offset: -4 }} />
                <YAxis dataKey="gflops" type="number" scale="log" domain={roofs ? roofs.yDomain : ['auto', 'auto']} allowDataOverflow name="FLOP/s" width={52} tickFormatter={(v: number) => fmtRate(Number(v))} label={{ value: 'FLOP/s', angle: -90, position: 'insideLeft', offset: -2 }} />
                <ZAxis range={[30, 30]} />
                <Tooltip />
                <Legend />
                {roofs && roofs.memory.length ? <Scatter name={`memory roof ${(roof!.peakGbps! / 1000).toFixed(2)} TB/s`} data={roofs.memory} line={{ stroke: '#dc2626', strokeWidth: 2 }} shape={() => <g />} fill="#dc2626" legendType="line" isAnimationActive={false} /> : null}
                {roofs && roofs.compute.length ? <Scatter name={`compute roof ${(roof!.peakGflops! / 1000).toFixed(1)} TFLOP/s`} data={roofs.compute} line={{ stroke: '#f59e0b', strokeWidth: 2 }} shape={() => <g />} fill="#f59e0b" legendType="line" isAnimationActive={false} /> : null}
                <Scatter name="variants" data={roof?.points ?? []} fill="#2563eb" isAnimationActive={false} />
              </ScatterChart>
            </ResponsiveContainer>
          </div>
        </Panel>
      </div>
      <h4>Effect of each parameter value (mean speedup of timed variants; bars: count)</h4>
      <div className="plot-grid">
        {params.map((name) => (
          <Panel key={name} title={name}>
            <ResponsiveContainer width="100%" height={180}>
              <BarChart data={p.paramEffects.filter((e) => e.param === name)}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="value" />
                <YAxis />
                <Tooltip />
                <Legend />
                {timed ? <Bar dataKey="meanSpeedup" name="mean speedup" fill="#2563eb" isAnimationActive={false} /> : <Bar dataKey="count" name="variants" fill="#64748b" isAnimationActive={false} />}
                <Bar dataKey="failures" name="failures" fill="#dc2626" isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          </Panel>
        ))}
      </div>
    </div>
  );
}
