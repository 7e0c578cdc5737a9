import { useEffect, useState } from 'react';
import Editor, { DiffEditor } from '@monaco-editor/react';
import type { VariantDetail } from '../../../main/contract/api.js';
import { useApp, fmtConfig, fmtMs, fmtX } from '../store.js';
import { VariantTree } from './Tree.js';

export function VariantPanel({ id }: { id: string }) {
  const variant = useApp((s) => s.variant);
  const session = useApp((s) => s.session);
  const setCompare = useApp((s) => s.setCompare);
  const setView = useApp((s) => s.setView);
  const [d, setD] = useState<VariantDetail | null>(null);
  const [other, setOther] = useState<VariantDetail | null>(null);
  const [mode, setMode] = useState<'source' | 'diff'>('source');
  const [against, setAgainst] = useState<string>('');
  const row = session?.variants.find((v) => v.id === id);
  useEffect(() => {
    let live = true;
    void variant(id).then((x) => {
      if (!live) return;
      setD(x);
      setAgainst(x.variant.parents[0] ?? '');
    }, () => undefined);
    return () => void (live = false);
  }, [id, row?.status, variant]);
  useEffect(() => {
    if (!against) return setOther(null);
    void variant(against).then(setOther, () => setOther(null));
  }, [against, variant]);
  if (!d) return <p className="muted">Loading {id}…</p>;
  const r = d.result;
  return (
    <div className="variant-panel" data-testid="variant-panel">
      <h3>{d.variant.id} <small className="muted">origin {d.variant.origin}{d.variant.parents.length ? `, parents ${d.variant.parents.join(', ')}` : ''}</small></h3>
      <dl className="facts">
        <dt>config</dt><dd className="mono">{fmtConfig(d.variant.config)}</dd>
        <dt>flags</dt><dd className="mono">{JSON.stringify(d.variant.flags)}{d.variant.transforms?.length ? ` · transforms ${d.variant.transforms.join(', ')}` : ''}</dd>
        <dt>status</dt><dd>{d.row.status}{d.row.failure ? <span className="fail"> — {d.row.failure.kind}: {d.row.failure.reason}</span> : null}</dd>
        <dt>time</dt><dd>{fmtMs(d.row.medianMs)} [{fmtMs(d.row.ciLowMs)}, {fmtMs(d.row.ciHighMs)}] · {fmtX(d.row.speedup)} vs baseline {r?.source.kind === 'replay' ? <b className="replay-inline">REPLAY</b> : null}{r?.compileOnly ? ' (compile-only: not timed)' : ''}</dd>
        <dt>resources</dt><dd className="mono">{r?.build.resources.map((k) => `${k.name}: ${k.registers} regs, ${k.sharedBytes} B smem, spills ${k.spillStoreBytes}/${k.spillLoadBytes}`).join(' · ') || '-'}</dd>
      </dl>
      <div className="tabs">
        <button className={mode === 'source' ? 'active' : ''} onClick={() => setMode('source')}>Source</button>
        <button data-testid="diff-tab" className={mode === 'diff' ? 'active' : ''} onClick={() => setMode('diff')}>Diff against</button>
        <select data-testid="diff-against" value={against} onChange={(e) => { setAgainst(e.target.value); setMode('diff'); }}>
          <option value="">(choose)</option>
          {session?.variants.filter((v) => v.id !== id).map((v) => <option key={v.id} value={v.id}>{v.id}{d.variant.parents.includes(v.id) ? ' (parent)' : ''}</option>)}
        </select>
        <span className="spacer" />
        <button data-testid="compare-as-a" onClick={() => { setCompare('a', id); }}>Compare as A</button>
        <button data-testid="compare-as-b" onClick={() => { setCompare('b', id); setView('compare'); }}>Compare as B</button>
      </div>
      <div className={d.llm ? 'variant-body with-llm' : 'variant-body'}>
        <div className="editor">
          {mode === 'source' || !other ? (
            <Editor language="cuda" value={d.variant.source} options={{ readOnly: true, minimap: { enabled: false }, fontSize: 12, scrollBeyondLastLine: false }} />
          ) : (
            <DiffEditor keepCurrentOriginalModel keepCurrentModifiedModel language="cuda" original={other.variant.source} modified={d.variant.source} options={{ readOnly: true, renderSideBySide: true, fontSize: 12 }} />
          )}
        </div>
        {d.llm && (
          <aside className="llm-parts" data-testid="llm-parts">
            <div className="muted small">written by {d.llm.model} · prompt {d.llm.promptId} · exemplars {d.llm.exemplars.map((e) => `${e.id} (${e.speedup.toFixed(2)}×)`).join(', ') || 'baseline only'}</div>
            {d.llm.error && <p className="fail">request failed: {d.llm.error}</p>}
            <h4>Performance analysis</h4>
            <p data-testid="llm-analysis">{d.llm.analysis || <span className="muted">(none)</span>}</p>
            <h4>Algorithm design</h4>
            <p data-testid="llm-design">{d.llm.design || <span className="muted">(none)</span>}</p>
            <h4>Code</h4>
            <p className="muted small" data-testid="llm-code">{d.llm.code ? `${d.llm.code.split('\n').length} lines: the source shown on the left` : '(no code: the answer was rejected before building)'}{d.llm.missing?.length ? ` · unlabelled parts: ${d.llm.missing.join(', ')}` : ''}</p>
          </aside>
        )}
      </div>
      {mode === 'diff' && other && <p className="muted">Left: {other.variant.id} ({fmtConfig(other.variant.config)}). Right: {d.variant.id} ({fmtConfig(d.variant.config)}). Tunables are #defines, so two variants of one source differ in config, not in text.</p>}
    </div>
  );
}

export function VariantsView() {
  const session = useApp((s) => s.session);
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  if (!session) return <p className="muted">Open a session (picker above) or start a run.</p>;
  return (
    <div className="variants">
      <VariantTree rows={session.variants} selected={selected} bestId={session.bestId} onSelect={select} height={640} />
      <div className="detail">{selected ? <VariantPanel id={selected} /> : <p className="muted">Select a variant to see its source, flags and results.</p>}</div>
    </div>
  );
}
