import { useEffect, useMemo, useState } from 'react';
import { DiffEditor } from '@monaco-editor/react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { CompareResult, VariantDetail } from '../../../main/contract/api.js';
import { useApp, fmtConfig, fmtMs } from '../store.js';

/** Both variants' samples binned on one axis (milliseconds). */
function histogram(a: number[], b: number[], bins = 24): Array<{ ms: string; A: number; B: number }> {
  const all = [...a, ...b];
  if (!all.length) return [];
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const w = (hi - lo) / bins || 1;
  const out = Array.from({ length: bins }, (_, i) => ({ ms: (lo + (i + 0.5) * w).toPrecision(4), A: 0, B: 0 }));
  for (const x of a) out[Math.min(bins - 1, Math.floor((x - lo) / w))].A++;
  for (const x of b) out[Math.min(bins - 1, Math.floor((x - lo) / w))].B++;
  return out;
}

function samples(d: VariantDetail): number[] {
  return d.result?.timing?.[0]?.samplesMs ?? [];
}

export function CompareView() {
  const api = useApp((s) => s.api);
  const session = useApp((s) => s.session);
  const sessionId = useApp((s) => s.sessionId);
  const pair = useApp((s) => s.compare);
  const setCompare = useApp((s) => s.setCompare);
  const setError = useApp((s) => s.setError);
  const [cmp, setCmp] = useState<CompareResult | null>(null);
  useEffect(() => {
    if (!session || pair.a || pair.b) return;
    // Default pair: the best against the last opponent it dueled (paired timing, and the preference
    // model's prediction when one was recorded), else against the baseline.
    const duel = session.duels.filter((d) => d.a === session.bestId || d.b === session.bestId).at(-1);
    if (session.bestId && duel) {
      setCompare('a', session.bestId);
      setCompare('b', duel.a === session.bestId ? duel.b : duel.a);
    } else if (session.bestId && session.baselineId && session.bestId !== session.baselineId) {
      setCompare('a', session.bestId);
      setCompare('b', session.baselineId);
    }
  }, [session, pair.a, pair.b, setCompare]);
  useEffect(() => {
    if (!api || !sessionId || !pair.a || !pair.b) return setCmp(null);
    void api.call('variants.compare', { sessionId, a: pair.a, b: pair.b }).then(setCmp, setError);
  }, [api, sessionId, pair.a, pair.b, setError]);
  const hist = useMemo(() => (cmp ? histogram(samples(cmp.a), samples(cmp.b)) : []), [cmp]);
  if (!session) return <p className="muted">Open a session first.</p>;
  const pick = (which: 'a' | 'b') => (
    <select data-testid={`compare-${which}`} value={pair[which] ?? ''} onChange={(e) => setCompare(which, e.target.value || null)}>
      <option value="">(choose)</option>
      {session.variants.map((v) => <option key={v.id} value={v.id}>{v.id} · {v.status}{v.speedup ? ` · ${v.speedup.toFixed(2)}×` : ''}</option>)}
    </select>
  );
  const res = (d: VariantDetail) => d.result?.build.resources ?? [];
  return (
    <div className="compare">
      <div className="compare-pick">A {pick('a')} against B {pick('b')}</div>
      {cmp && (
        <>
          <div className="verdict" data-testid="compare-verdict">
            {cmp.ratio ? (
              <>
                <span className={`v-${cmp.ratio.verdict}`}>A is {cmp.ratio.verdict}</span>: {cmp.ratio.value.toFixed(3)}× [{cmp.ratio.low.toFixed(3)}, {cmp.ratio.high.toFixed(3)}] 95% CI
                <small className="muted"> ({cmp.ratio.method === 'duel' ? 'interleaved duel' : 'separate measurements'})</small>
              </>
            ) : (
              <span>No speed ratio</span>
            )}
            <div className="muted">Preference model: {cmp.prediction ? `P(A faster) = ${(cmp.prediction.pAFaster * 100).toFixed(0)}% (${cmp.prediction.model})` : 'no prediction recorded for this pair'}</div>
            {cmp.notes.map((n, i) => <div key={i} className={n.startsWith('REPLAY') ? 'replay-inline' : 'muted'}>{n}</div>)}
          </div>
          <div className="compare-grid">
            <div>
              <h4>Timing distributions (size {cmp.a.result?.timing?.[0]?.size ?? '-'})</h4>
              {hist.length ? (
                <ResponsiveContainer width="100%" height={240}>
                  <BarChart data={hist}>
                    <CartesianGrid strokeDasharray="3 3" />
                    <XAxis dataKey="ms" label={{ value: 'ms', position: 'insideBottomRight', offset: -4 }} />
                    <YAxis allowDecimals={false} />
                    <Tooltip />
                    <Legend />
                    <Bar dataKey="A" fill="#2563eb" isAnimationActive={false} />
                    <Bar dataKey="B" fill="#f59e0b" isAnimationActive={false} />
                  </BarChart>
                </ResponsiveContainer>
              ) : (
                <p className="muted">No timing samples (compile-only or failed): nothing to plot.</p>
              )}
            </div>
            <table className="grid" data-testid="compare-table">
              <thead><tr><th></th><th>A: {cmp.a.variant.id}</th><th>B: {cmp.b.variant.id}</th></tr></thead>
              <tbody>
                <tr><td>config</td><td className="mono">{fmtConfig(cmp.a.variant.config)}</td><td className="mono">{fmtConfig(cmp.b.variant.config)}</td></tr>
                <tr><td>status</td><td>{cmp.a.row.status}{cmp.a.row.failure ? `: ${cmp.a.row.failure.kind}` : ''}</td><td>{cmp.b.row.status}{cmp.b.row.failure ? `: ${cmp.b.row.failure.kind}` : ''}</td></tr>
                <tr><td>median</td><td>{fmtMs(cmp.a.row.medianMs)}</td><td>{fmtMs(cmp.b.row.medianMs)}</td></tr>
                <tr><td>samples</td><td>{samples(cmp.a).length}</td><td>{samples(cmp.b).length}</td></tr>
                <tr><td>registers</td><td>{res(cmp.a).map((k) => k.registers).join(', ') || '-'}</td><td>{res(cmp.b).map((k) => k.registers).join(', ') || '-'}</td></tr>
                <tr><td>shared memory</td><td>{res(cmp.a).map((k) => `${k.sharedBytes} B`).join(', ') || '-'}</td><td>{res(cmp.b).map((k) => `${k.sharedBytes} B`).join(', ') || '-'}</td></tr>
                <tr><td>spills (store/load)</td><td>{res(cmp.a).map((k) => `${k.spillStoreBytes}/${k.spillLoadBytes}`).join(', ') || '-'}</td><td>{res(cmp.b).map((k) => `${k.spillStoreBytes}/${k.spillLoadBytes}`).join(', ') || '-'}</td></tr>
                <tr><td>occupancy</td><td colSpan={2} className="muted">not recorded by the engine yet (registers and shared memory above bound it)</td></tr>
              </tbody>
            </table>
          </div>
          <h4>Source diff (B left, A right)</h4>
          <div className="editor short">
            <DiffEditor keepCurrentOriginalModel keepCurrentModifiedModel language="cuda" original={cmp.b.variant.source} modified={cmp.a.variant.source} options={{ readOnly: true, fontSize: 12 }} />
          </div>
        </>
      )}
    </div>
  );
}
