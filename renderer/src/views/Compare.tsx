// Two variants side by side, as Nsight Compute's baseline comparison: the measured verdict (ratio
// with its 95% interval; how it was measured) beside the preference model's prediction, both timing
// distributions, a delta for every metric, configuration / flags / transforms with differences
// marked, and the source diff only when the sources differ.
import { useEffect, useMemo, useState } from 'react';
import { DiffEditor } from '../editor.js';
import type { CompareResult, VariantDetail } from '../../../main/contract/api.js';
import { oneSetWords, placementsWords } from '../../../main/contract/confirm-words.js';
import { useApp, fmtMs, fmtPct, fmtRate, fmtX } from '../store.js';
import { flagsText, pickerRows } from '../table.js';
import { Distributions } from './Distributions.js';
import { EmptyState } from './Empty.js';
import { NoSession } from './Variants.js';

const samples = (d: VariantDetail): number[] => d.result?.timing?.[0]?.samplesMs ?? [];

const METHOD: Record<NonNullable<CompareResult['ratio']>['method'], string> = {
  duel: 'interleaved duel on the GPU',
  'replay-duel': 'REPLAY: duel resampled from the recorded space',
  independent: 'separate measurements (no duel between these two)',
};

interface Metric {
  key: string;
  label: string;
  get: (d: VariantDetail) => number | null;
  fmt: (v: number | null) => string;
  /** Which direction is better for A. */
  better: 'lower' | 'higher' | null;
}

const res = (d: VariantDetail) => d.result?.build.resources?.[0];
export const METRICS: Metric[] = [
  { key: 'time', label: 'median time', get: (d) => d.row.medianMs, fmt: fmtMs, better: 'lower' },
  { key: 'speedup', label: 'speedup vs baseline', get: (d) => d.row.speedup, fmt: fmtX, better: 'higher' },
  { key: 'bandwidth', label: 'achieved bandwidth', get: (d) => d.perf.achievedGbps, fmt: (v) => fmtRate(v, 'B/s'), better: 'higher' },
  { key: 'flops', label: 'achieved FLOP/s', get: (d) => d.perf.achievedGflops, fmt: (v) => fmtRate(v, 'FLOP/s'), better: 'higher' },
  { key: 'roof', label: '% of roof', get: (d) => d.perf.pctOfRoof, fmt: (v) => fmtPct(v, 1), better: 'higher' },
  { key: 'registers', label: 'registers / thread', get: (d) => res(d)?.registers ?? null, fmt: (v) => (v === null ? '-' : String(v)), better: null },
  { key: 'smem', label: 'shared memory / block', get: (d) => res(d)?.sharedBytes ?? null, fmt: (v) => (v === null ? '-' : `${v} B`), better: null },
  { key: 'spills', label: 'spills (st+ld)', get: (d) => d.row.spillBytes, fmt: (v) => (v === null ? '-' : `${v} B`), better: 'lower' },
  { key: 'occupancy', label: 'occupancy', get: (d) => d.perf.occupancy?.value ?? null, fmt: (v) => fmtPct(v), better: null },
  { key: 'samples', label: 'samples', get: (d) => samples(d).length || null, fmt: (v) => (v === null ? '-' : String(v)), better: null },
];

function delta(m: Metric, a: number | null, b: number | null): { text: string; cls: string } {
  if (a === null || b === null) return { text: '-', cls: '' };
  const d = a - b;
  const rel = b !== 0 ? d / Math.abs(b) : null;
  const sign = d > 0 ? '+' : d < 0 ? '−' : '±';
  const abs = m.key === 'roof' || m.key === 'occupancy' ? `${(Math.abs(d) * 100).toFixed(1)} pts` : m.fmt(Math.abs(d));
  const good = m.better && d !== 0 ? ((m.better === 'lower') === d < 0 ? 'better' : 'worse') : '';
  return { text: `${sign}${abs}${rel !== null && m.key !== 'roof' && m.key !== 'occupancy' ? ` (${sign}${Math.abs(rel * 100).toFixed(1)}%)` : ''}`, cls: good };
}

function SideBySide({ a, b }: { a: VariantDetail; b: VariantDetail }) {
  const keys = [...new Set([...Object.keys(a.variant.config), ...Object.keys(b.variant.config)])];
  const rows: Array<[string, string, string]> = [
    ...keys.map((k): [string, string, string] => [`-D${k}`, String(a.variant.config[k] ?? '-'), String(b.variant.config[k] ?? '-')]),
    ['flags', flagsText(a.variant.flags), flagsText(b.variant.flags)],
    ['transforms', a.variant.transforms?.join(', ') || 'none', b.variant.transforms?.join(', ') || 'none'],
    ['origin', a.variant.origin, b.variant.origin],
    ['parents', a.variant.parents.join(', ') || '-', b.variant.parents.join(', ') || '-'],
  ];
  return (
    <table className="grid small" data-testid="compare-config">
      <thead><tr><th>configuration</th><th>A: {a.variant.id}</th><th>B: {b.variant.id}</th></tr></thead>
      <tbody>
        {rows.map(([k, x, y]) => (
          <tr key={k} className={x !== y && k !== 'origin' && k !== 'parents' ? 'differs' : ''} data-testid={x !== y && k !== 'origin' && k !== 'parents' ? 'config-differs' : undefined}>
            <td className="mono">{k}</td><td className="mono">{x}</td><td className="mono">{y}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
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
  const listed = useMemo(() => pickerRows(session?.variants ?? [], [pair.a, pair.b, session?.baselineId ?? null, session?.bestId ?? null]), [session?.variants, session?.baselineId, session?.bestId, pair.a, pair.b]);
  if (!session) return <NoSession />;
  const pick = (which: 'a' | 'b') => (
    <select data-testid={`compare-${which}`} value={pair[which] ?? ''} onChange={(e) => setCompare(which, e.target.value || null)}>
      <option value="">(choose)</option>
      {listed.rows.map((v) => <option key={v.id} value={v.id}>{v.id} · {v.status}{v.speedup ? ` · ${v.speedup.toFixed(2)}×` : ''}</option>)}
      {listed.more > 0 && <option disabled value="-">… {listed.more} more: the fastest are listed; open any other in the Variant tree, then Compare as A/B</option>}
    </select>
  );
  const missing = !pair.a ? 'a' : !pair.b ? 'b' : null;
  const other = missing === 'b' ? pair.a : pair.b;
  const otherRow = session.variants.find((v) => v.id === other);
  const suggestions = missing
    ? [
        ...(session.baselineId && session.baselineId !== other ? [{ label: `the baseline (${session.baselineId})`, id: session.baselineId }] : []),
        ...(session.bestId && session.bestId !== other ? [{ label: `the best (${session.bestId})`, id: session.bestId }] : []),
        ...(otherRow?.parents[0] && otherRow.parents[0] !== session.baselineId ? [{ label: `its parent (${otherRow.parents[0]})`, id: otherRow.parents[0] }] : []),
      ]
    : [];
  return (
    <div className="compare">
      <div className="compare-pick">
        A {pick('a')} against B {pick('b')}
        <button title="swap A and B" data-testid="compare-swap" disabled={!pair.a && !pair.b} onClick={() => { const { a, b } = pair; setCompare('a', b); setCompare('b', a); }}>⇄ swap</button>
        <span className="muted small">tip: in the tree, Space marks A then B</span>
      </div>
      {missing && (
        <EmptyState
          title={`Pick ${missing.toUpperCase()}`}
          testid="compare-pick-hint"
          actions={suggestions.map((s) => ({ label: `${missing.toUpperCase()} = ${s.label}`, run: () => setCompare(missing, s.id) }))}
        >
          {other ? `${missing === 'b' ? 'A' : 'B'} is ${other}. Choose what to compare it with: ` : 'Choose two variants: '}a suggestion below, the selector above, or mark one with Space in the variant tree.
        </EmptyState>
      )}
      {cmp && (
        <>
          <div className="verdict-row">
            <div className="verdict" data-testid="compare-verdict">
              <div className="muted small">measured</div>
              {cmp.ratio ? (
                <>
                  <span className={`v-${cmp.ratio.verdict}`}>A is {cmp.ratio.verdict}</span>: {cmp.ratio.value.toFixed(3)}× [{cmp.ratio.low.toFixed(3)}, {cmp.ratio.high.toFixed(3)}] 95% CI
                  <div className={cmp.ratio.method === 'replay-duel' ? 'replay-inline small' : 'muted small'} data-testid="compare-method">({METHOD[cmp.ratio.method]})</div>
                  {cmp.ratio.placements && <div className="muted small" data-testid="compare-placements">{placementsWords(cmp.ratio.verdict, cmp.ratio.placements)}</div>}
                  {cmp.ratio.oneSet && <div className="muted small" data-testid="compare-one-set">{oneSetWords(cmp.ratio.verdict)}</div>}
                </>
              ) : (
                <span>No speed ratio</span>
              )}
            </div>
            <div className="verdict" data-testid="compare-prediction">
              <div className="muted small">preference model, before measuring</div>
              {cmp.prediction ? (
                <>
                  Preference model: P(A faster) = {(cmp.prediction.pAFaster * 100).toFixed(0)}% ({cmp.prediction.model})
                  {cmp.ratio && (cmp.ratio.verdict === 'faster' || cmp.ratio.verdict === 'slower') && (
                    <div className="small" data-testid="prediction-agrees">
                      {(cmp.prediction.pAFaster > 0.5) === (cmp.ratio.verdict === 'faster') ? '✓ agrees with the measurement' : '✗ the measurement disagrees'}
                    </div>
                  )}
                </>
              ) : (
                <span className="muted">no prediction recorded for this pair</span>
              )}
            </div>
          </div>
          {cmp.notes.map((n, i) => <div key={i} className={n.startsWith('REPLAY') ? 'replay-inline' : 'muted'}>{n}</div>)}
          <div className="compare-grid">
            <div>
              <h4>Timing distributions{cmp.a.result?.timing?.[0] ? ` at the timed size (sizes[${cmp.a.result.timing[0].size}] of task.yaml)` : ''}</h4>
              <Distributions a={{ id: cmp.a.variant.id, samples: samples(cmp.a) }} b={{ id: cmp.b.variant.id, samples: samples(cmp.b) }} />
            </div>
            <div>
              <h4>Metrics</h4>
              <table className="grid small" data-testid="compare-table">
                <thead><tr><th></th><th>A: {cmp.a.variant.id}</th><th>B: {cmp.b.variant.id}</th><th title="A − B (relative to B)">Δ A−B</th></tr></thead>
                <tbody>
                  {METRICS.map((m) => {
                    const a = m.get(cmp.a);
                    const b = m.get(cmp.b);
                    const d = delta(m, a, b);
                    return (
                      <tr key={m.key}>
                        <td>{m.label}</td><td>{m.fmt(a)}</td><td>{m.fmt(b)}</td>
                        <td className={`delta ${d.cls}`} data-testid={`delta-${m.key}`}>{d.text}</td>
                      </tr>
                    );
                  })}
                  <tr><td>status</td><td>{cmp.a.row.status}{cmp.a.row.failure ? `: ${cmp.a.row.failure.kind}` : ''}</td><td>{cmp.b.row.status}{cmp.b.row.failure ? `: ${cmp.b.row.failure.kind}` : ''}</td><td /></tr>
                  <tr><td>occupancy limiter</td><td>{cmp.a.perf.occupancy?.limiter ?? '-'}</td><td>{cmp.b.perf.occupancy?.limiter ?? '-'}</td><td /></tr>
                </tbody>
              </table>
              <SideBySide a={cmp.a} b={cmp.b} />
            </div>
          </div>
          {cmp.a.variant.source === cmp.b.variant.source ? (
            <p className="muted" data-testid="compare-same-source">Same source text: A and B differ only in the -D values, flags and transforms marked above (no source diff to show).</p>
          ) : (
            <>
              <h4>Source diff (B left, A right; -D values in place)</h4>
              <div className="editor short" data-testid="compare-diff">
                <DiffEditor keepCurrentOriginalModel keepCurrentModifiedModel language="cuda" original={cmp.b.effectiveSource} modified={cmp.a.effectiveSource} options={{ readOnly: true, fontSize: 12, automaticLayout: true }} />
              </div>
            </>
          )}
        </>
      )}
    </div>
  );
}
