import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis, Bar, BarChart, ZAxis } from 'recharts';
import { useApp } from '../store.js';

function Panel(props: { title: string; children: React.ReactNode; note?: string }) {
  return (
    <div className="plot">
      <h4>{props.title}</h4>
      {props.children}
      {props.note && <p className="muted small">{props.note}</p>}
    </div>
  );
}

export function PlotsView() {
  const session = useApp((s) => s.session);
  if (!session) return <p className="muted">Open a session first.</p>;
  const p = session.plots;
  const params = [...new Set(p.paramEffects.map((e) => e.param))];
  const timed = p.timeline.some((t) => t.speedup !== null);
  const roof = p.roofline;
  return (
    <div className="plots" data-testid="plots">
      {session.replay && <div className="replay-note">REPLAY: every point below comes from the recorded space {session.replay.recording}.</div>}
      {!timed && <div className="empty-state">No variant of this session was timed ({session.gpu ? 'all failed so far' : 'compile-only: no GPU'}): speed plots stay empty; parameter counts and failures still show.</div>}
      <div className="plot-grid">
        <Panel title="Best-so-far speedup vs evaluations">
          <ResponsiveContainer width="100%" height={240}>
            <LineChart data={p.timeline}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="index" type="number" domain={[0, 'dataMax']} />
              <YAxis domain={['auto', 'auto']} />
              <Tooltip />
              <Legend />
              <Line type="stepAfter" dataKey="bestSpeedup" name={session.summary.strategy} stroke="#2563eb" dot={false} isAnimationActive={false} connectNulls />
              <Line dataKey="speedup" name="each variant" stroke="#94a3b8" strokeWidth={0} dot={{ r: 2 }} isAnimationActive={false} />
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
        <Panel title="Roofline" note={roof ? (roof.limitsSource ? `limits measured: ${roof.limitsSource}` : 'no measured limits for this GPU (run npm run bench:foundation on it)') : 'the task declares no bytes/flops metrics'}>
          <ResponsiveContainer width="100%" height={240}>
            <ScatterChart>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="intensity" type="number" scale="log" domain={['auto', 'auto']} name="FLOP/byte" tickFormatter={(v: number) => Number(v).toPrecision(2)} label={{ value: 'FLOP/byte', position: 'insideBottomRight', offset: -4 }} />
              <YAxis dataKey="gflops" type="number" scale="log" domain={['auto', 'auto']} name="GFLOP/s" tickFormatter={(v: number) => Number(v).toPrecision(3)} label={{ value: 'GFLOP/s', angle: -90, position: 'insideLeft' }} />
              <ZAxis range={[30, 30]} />
              <Tooltip />
              {roof?.peakGflops ? <ReferenceLine y={roof.peakGflops} stroke="#dc2626" label="peak" /> : null}
              <Scatter data={roof?.points ?? []} fill="#2563eb" isAnimationActive={false} />
            </ScatterChart>
          </ResponsiveContainer>
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
