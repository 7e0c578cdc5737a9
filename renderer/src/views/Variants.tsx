// The variant history (tree or table) beside one variant's detail: its lineage from the baseline,
// facts (config, flags, transforms, time, resources), occupancy and achieved rates against the roof,
// the effective source (-D values in place), PTX and SASS, a diff against its parent, and what the
// LLM wrote when it proposed it.
import { useEffect, useMemo, useState } from 'react';
import { DiffEditor, Editor } from '../editor.js';
import { isHostBound, type KernelCodeDTO, type PythonSessionDTO, type VariantDetail } from '../../../main/contract/api.js';
import { useApp, fmtConfig, fmtMs, fmtPct, fmtRate, fmtX } from '../store.js';
import { vsPytorchText } from '../pytorch-baselines.js';
import { timeSpent } from '../analysis.js';
import { flagsText } from '../table.js';
import { lineage, pathTo } from '../tree.js';
import { Split } from '../layout.js';
import { VariantTree } from './Tree.js';
import { VariantTable } from './Table.js';
import { EmptyState } from './Empty.js';

type Tab = 'overview' | 'source' | 'diff' | 'ptx' | 'sass' | 'llm' | 'reference';

const RO = { readOnly: true, minimap: { enabled: false }, fontSize: 12, scrollBeyondLastLine: false, automaticLayout: true } as const;

function DeviceCode(props: { sessionId: string; id: string; which: 'ptx' | 'sass' }) {
  const api = useApp((s) => s.api);
  const [code, setCode] = useState<KernelCodeDTO | null>(null);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => {
    setCode(null);
    setErr(null);
  }, [props.id]);
  useEffect(() => {
    if (!api || code || busy || err) return;
    setBusy(true);
    api.call('variants.code', { sessionId: props.sessionId, variantId: props.id }).then(setCode, (e: unknown) => setErr(e instanceof Error ? e.message : String(e))).finally(() => setBusy(false));
  }, [api, props.sessionId, props.id, code, busy, err]);
  if (err) return <p className="fail" data-testid="code-error">{err}</p>;
  if (!code) return <p className="muted" data-testid="code-loading">Building {props.id} for its GPU architecture and disassembling it…</p>;
  const text = code[props.which];
  return (
    <div className="code-pane">
      <div className="muted small" data-testid={`code-notes-${props.which}`}>{code.arch}{code.cached ? ' · from the build cache' : ''} · {code.notes.join(' · ')}</div>
      {text ? (
        <div className="editor fill" data-testid={`code-${props.which}`}>
          <Editor language={props.which === 'ptx' ? 'ptx' : 'sass'} value={text} options={RO} />
        </div>
      ) : (
        <p className="empty-state" data-testid={`code-missing-${props.which}`}>No {props.which.toUpperCase()}: {code.notes.find((n) => n.toLowerCase().includes(props.which === 'ptx' ? 'ptx' : 'sass')) ?? 'not available'}.</p>
      )}
    </div>
  );
}

/** The variant's speedup vs the session's PyTorch baselines (PyTorch-reference tasks), CPU times said so. */
function VsPytorch({ ms }: { ms: number | null }) {
  const b = useApp((s) => s.session?.pytorchBaselines ?? null);
  if (!b) return null;
  return <><dt>vs PyTorch</dt><dd data-testid="vs-pytorch">{vsPytorchText(b, ms)}{b.device === 'cpu' ? <b className="cpu-inline"> CPU</b> : null}</dd></>;
}

/** A Python candidate's facts: whose kernels did the work, correctness at both tolerances, where it ran, its guarantee level. */
function PythonFacts({ d }: { d: VariantDetail }) {
  const py = d.result?.python;
  if (!py) return null;
  return (
    <dl className="facts" data-testid="python-facts">
      <dt>candidate</dt>
      <dd>Python (ModelNew) · label <b data-testid="python-label">{py.label}</b>{py.customShare !== null ? ` · ${fmtPct(py.customShare, 1)} of device time in its own kernels` : ' · custom share not recorded'}{py.ownKernels.length ? ` · defines ${py.ownKernels.join(', ')}` : ' · defines no kernel'}</dd>
      <dt>status</dt><dd>{d.row.status}{d.row.failure ? <span className="fail"> — {d.row.failure.kind}: {d.row.failure.reason}</span> : null}</dd>
      <dt>time</dt>
      <dd>{fmtMs(d.row.medianMs)} [{fmtMs(d.row.ciLowMs)}, {fmtMs(d.row.ciHighMs)}] 95% CI · {fmtX(d.row.speedup)} vs the eager baseline{py.device === 'cpu' && d.row.medianMs !== null ? <b className="cpu-inline"> CPU</b> : null}</dd>
      {py.figure && py.device !== 'cpu' && <><dt>figure</dt><dd data-testid="python-figure">{py.figure === 'per-call'
        ? <>per call: the larger of the GPU's own time and the host's time to issue the call, per gated sample (what the run ranks and duels by){py.oneCallMs !== undefined ? <> · KernelBench's one-call figure {fmtMs(py.oneCallMs)}</> : null}</>
        : "one call (KernelBench's): after a synchronise, Python's launch of every kernel inside"}</dd></>}
      <VsPytorch ms={d.row.medianMs} />
      {py.gpuMs !== undefined && <><dt>GPU's own time</dt><dd data-testid="python-gpu-time">{fmtMs(py.gpuMs)}{py.hostCallMs !== undefined ? ` · the host issues the call in ${fmtMs(py.hostCallMs)}` : ''}{isHostBound(py.gpuMs, d.row.medianMs) ? ' · HOST-BOUND: the time above is mostly Python launching kernels, and moves from process to process' : ''}</dd></>}
      {py.firstUseMs !== undefined && <><dt>first-seen inputs</dt><dd>{fmtMs(py.firstUseMs)} (its fastest call on inputs it had never seen: no cache can lower it){py.device === 'cpu' ? <b className="cpu-inline"> CPU</b> : null}</dd></>}
      {py.referenceConstant && <><dt>reference</dt><dd className="fail">the same outputs for every input: a constant passes every check, so this time says nothing about a kernel</dd></>}
      <dt>guarantee</dt><dd data-testid="python-guarantee">{py.guarantee}: not ranked beside isolated (CUDA harness) results</dd>
      <dt>correct</dt><dd>{py.correct === null ? 'not reached' : `${py.correct ? 'yes' : 'NO'} at KernelBench's tolerance, ${py.correct1e2 ? 'yes' : 'NO'} at 1e-2`}</dd>
      <dt>ran on</dt><dd data-testid="python-device">{py.device === 'cpu' ? <><b className="cpu-inline">CPU</b> (torch {py.torch ?? '?'}): CPU times, not a GPU's</> : `${py.device} (torch ${py.torch ?? '?'})`}{py.sandboxed ? ' · sandboxed' : ` · NOT sandboxed${py.sandboxProblem ? ` (${py.sandboxProblem})` : ''}`}</dd>
      {py.failedBuilds.length > 0 && <><dt>failed builds</dt><dd className="fail">{py.failedBuilds.join('; ')}</dd></>}
      {py.flagsChanged.length > 0 && <><dt>changed at import</dt><dd>{py.flagsChanged.join(', ')}</dd></>}
      {py.topKernels.length > 0 && <><dt>kernels</dt><dd className="mono small">{py.topKernels.map((k) => `[${k.source}] ${k.name.slice(0, 60)} ${k.us.toFixed(1)} us`).join(' · ')}</dd></>}
    </dl>
  );
}

/** The banner of a Python-candidate session: the guarantee level of every result, and CPU times said so. */
export function PythonBanner({ py }: { py: PythonSessionDTO }) {
  return (
    <div className="py-banner small" data-testid="python-banner">
      Python candidates (ModelNew) · guarantee level <b>{py.guarantee.toUpperCase()}</b>: {py.guaranteeTitle}
      {py.device === 'cpu' ? <> · <b className="cpu-inline">CPU</b>: every time is a CPU time, not a GPU's</> : null}
    </div>
  );
}

/** The timed calls' buffer sets: each set's median and their share of the median's uncertainty (measure/stats.ts setSpread). */
function BufferSets({ d }: { d: VariantDetail }) {
  const t = d.result?.timing?.[0];
  if (!t?.perSetMedianMs || t.setRelSd === undefined) return null;
  return (
    <>
      <dt>buffer sets</dt>
      <dd data-testid="variant-sets">
        {t.perSetMedianMs.map((m) => fmtMs(m)).join(' · ')}{' '}
        <span className="muted small">their mean's sd is {fmtPct(t.setRelSd, 2)} of the median: placement, which the interval above leaves out and more samples do not shrink</span>
      </dd>
    </>
  );
}

/** Where the evaluation's wall time went (analysis.ts timeSpent): what makes a search slow, not the kernel's time. */
function TimeSpent({ d }: { d: VariantDetail }) {
  const t = d.result ? timeSpent(d.result) : null;
  if (!t) return null;
  const ms = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
  return (
    <>
      <dt>its evaluation</dt>
      <dd data-testid="variant-time-spent">
        {t.parts.map((p) => `${p.label} ${ms(p.ms)}`).join(' · ')}
        {t.check.length ? <div className="muted small" data-testid="variant-check-parts">check: {t.check.map((p) => `${p.label} ${ms(p.ms)}`).join(' · ')}</div> : null}
        {t.timing.length ? <div className="muted small" data-testid="variant-timing-parts">timing: {t.timing.map((p) => `${p.label} ${ms(p.ms)}`).join(' · ')}</div> : null}
        {t.capture.length ? (
          <div className="muted small">
            capture process{t.captureAhead ? ' (ran ahead, beside other variants\' work)' : ''}: {t.capture.filter((p) => p.ms >= 1).map((p) => `${p.label} ${ms(p.ms)}`).join(' · ')}
          </div>
        ) : null}
      </dd>
    </>
  );
}

function Facts({ d }: { d: VariantDetail }) {
  const r = d.result;
  const p = d.perf;
  const o = p.occupancy;
  if (r?.python) return <PythonFacts d={d} />;
  return (
    <div className="facts-grid">
      <dl className="facts" data-testid="variant-facts">
        <dt>config</dt><dd className="mono">{fmtConfig(d.variant.config)}</dd>
        <dt>flags</dt><dd className="mono">{flagsText(d.variant.flags)}</dd>
        <dt>transforms</dt><dd className="mono">{d.variant.transforms?.length ? d.variant.transforms.join(', ') : 'none'}</dd>
        <dt>status</dt><dd>{d.row.status}{d.row.failure ? <span className="fail"> — {d.row.failure.kind}: {d.row.failure.reason}</span> : null}</dd>
        <dt>time</dt>
        <dd>
          {r?.compileOnly ? 'compile-only: built, not checked or timed' : <>{fmtMs(d.row.medianMs)} [{fmtMs(d.row.ciLowMs)}, {fmtMs(d.row.ciHighMs)}] 95% CI · {fmtX(d.row.speedup)} vs baseline</>}
          {r?.source.kind === 'replay' ? <b className="replay-inline"> REPLAY</b> : null}
          {r?.timing?.[0]?.cutoffMs !== undefined ? (
            <span className="muted small" data-testid="variant-cutoff">
              {' '}· timing stopped early at the cutoff {fmtMs(r.timing[0].cutoffMs)} ({r.timing[0].samplesMs.length} samples): decidedly slower than the best, so no precise time
            </span>
          ) : null}
        </dd>
        <VsPytorch ms={d.row.medianMs} />
        <BufferSets d={d} />
        <TimeSpent d={d} />
        <dt>achieved</dt>
        <dd data-testid="variant-achieved">
          {p.achievedGbps !== null ? `${fmtRate(p.achievedGbps, 'B/s')}` : '-'}
          {p.achievedGflops !== null ? ` · ${fmtRate(p.achievedGflops, 'FLOP/s')}` : ''}
          {p.intensity !== null ? ` · ${p.intensity.toPrecision(3)} FLOP/B` : ''}
        </dd>
        <dt>of the roof</dt>
        <dd data-testid="variant-roof">{p.pctOfRoof !== null ? `${fmtPct(p.pctOfRoof, 1)} of the ${p.bound} roof${p.roofGflops ? ` (${fmtRate(p.roofGflops, 'FLOP/s')} attainable)` : ''}` : '-'} <span className="muted small">{p.roofNote}</span></dd>
        <dt>occupancy</dt>
        <dd data-testid="variant-occupancy">
          {o ? <><b>{fmtPct(o.value)}</b> · {o.warpsPerSm}/{o.maxWarpsPerSm} warps · limited by <b>{o.limiter}</b> </> : null}
          <span className="muted small">{p.occupancyNote}</span>
        </dd>
      </dl>
      <table className="grid small" data-testid="variant-resources">
        <thead><tr><th>kernel</th><th>registers</th><th>shared</th><th>stack</th><th>spill st/ld</th>{o ? <th title="blocks per SM each resource allows">blocks/SM by regs · smem · warps</th> : null}</tr></thead>
        <tbody>
          {(r?.build.resources ?? []).map((k, i) => (
            <tr key={k.name}>
              <td className="mono">{k.name}</td><td>{k.registers}</td><td>{k.sharedBytes} B</td><td>{k.stackBytes} B</td>
              <td className={k.spillStoreBytes + k.spillLoadBytes ? 'fail' : ''}>{k.spillStoreBytes}/{k.spillLoadBytes} B</td>
              {o ? <td>{i === 0 ? `${o.limits.registers} · ${o.limits['shared memory']} · ${o.limits.warps}` : ''}</td> : null}
            </tr>
          ))}
          {!r?.build.resources?.length && <tr><td colSpan={6} className="muted">no resources recorded (not built, or a replay without them)</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

export function VariantPanel({ id }: { id: string }) {
  const variant = useApp((s) => s.variant);
  const session = useApp((s) => s.session);
  const setCompare = useApp((s) => s.setCompare);
  const setView = useApp((s) => s.setView);
  const select = useApp((s) => s.select);
  const [d, setD] = useState<VariantDetail | null>(null);
  const [other, setOther] = useState<VariantDetail | null>(null);
  const [tab, setTab] = useState<Tab>('overview');
  const [against, setAgainst] = useState<string>('');
  const row = session?.variants.find((v) => v.id === id);
  const lin = useMemo(() => lineage(session?.variants ?? []), [session?.variants]);
  const path = useMemo(() => pathTo(lin, id), [lin, id]);
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
  if (!d || !session) return <p className="muted">Loading {id}…</p>;
  const sameSource = other ? other.variant.source === d.variant.source : false;
  const py = session.python ?? null;
  const lang = py ? 'python' : 'cuda';
  // A Python candidate has no PTX/SASS of its own build here; its session shows the PyTorch reference instead.
  const tabs: Array<[Tab, string]> = [['overview', 'Overview'], ['source', py ? 'Source' : 'Effective source'], ['diff', 'Diff'], ...(py ? [['reference', `Reference (${py.referenceFile})`] as [Tab, string]] : [['ptx', 'PTX'], ['sass', 'SASS']] as Array<[Tab, string]>), ...(d.llm ? [['llm', 'LLM answer'] as [Tab, string]] : [])];
  return (
    <div className="variant-panel" data-testid="variant-panel">
      <div className="variant-head">
        <h3>{d.variant.id} <small className="muted">{d.variant.origin}</small></h3>
        <div className="lineage-path small" data-testid="lineage-path" title="from the baseline to this variant, along first parents">
          {path.map((p, i) => (
            <span key={p}>
              {i > 0 && ' → '}
              <a href="#" onClick={(e) => { e.preventDefault(); select(p); }} className={p === id ? 'here' : ''}>{p}</a>
            </span>
          ))}
          {d.variant.parents.length > 1 && <span className="muted"> (also from {d.variant.parents.slice(1).join(', ')})</span>}
        </div>
        <span className="spacer" />
        <button data-testid="compare-as-a" onClick={() => { setCompare('a', id); setView('compare'); }}>Compare as A</button>
        <button data-testid="compare-as-b" onClick={() => { setCompare('b', id); setView('compare'); }}>Compare as B</button>
      </div>
      <div className="tabs">
        {tabs.map(([t, label]) => <button key={t} data-testid={`vtab-${t}`} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>{label}</button>)}
        {tab === 'diff' && (
          <select data-testid="diff-against" value={against} onChange={(e) => setAgainst(e.target.value)}>
            <option value="">(choose)</option>
            {session.variants.filter((v) => v.id !== id).map((v) => <option key={v.id} value={v.id}>{v.id}{d.variant.parents.includes(v.id) ? ' (parent)' : ''}</option>)}
          </select>
        )}
      </div>
      <div className="variant-body">
        {tab === 'overview' && <Facts d={d} />}
        {tab === 'source' && (
          <div className="editor fill" data-testid="effective-source">
            <Editor language={lang} value={d.effectiveSource} options={RO} />
          </div>
        )}
        {tab === 'reference' && py && (
          <div className="editor fill" data-testid="python-reference">
            <Editor language="python" value={py.reference} options={RO} />
          </div>
        )}
        {tab === 'diff' && (!other ? (
          <EmptyState title="Diff against another variant" actions={d.variant.parents[0] ? [{ label: `Diff against its parent ${d.variant.parents[0]}`, run: () => setAgainst(d.variant.parents[0]) }] : []}>Choose a variant above.</EmptyState>
        ) : sameSource ? (
          <div className="empty-state" data-testid="same-source">
            <b>Same source text as {other.variant.id}.</b> They differ only in what nvcc was told:
            <table className="grid small">
              <tbody>
                <tr><th></th><th>{other.variant.id}</th><th>{d.variant.id}</th></tr>
                {[...new Set([...Object.keys(other.variant.config), ...Object.keys(d.variant.config)])].map((k) => (
                  <tr key={k} className={other.variant.config[k] !== d.variant.config[k] ? 'differs' : ''}><td className="mono">-D{k}</td><td>{other.variant.config[k] ?? '-'}</td><td>{d.variant.config[k] ?? '-'}</td></tr>
                ))}
                <tr className={flagsText(other.variant.flags) !== flagsText(d.variant.flags) ? 'differs' : ''}><td>flags</td><td className="mono">{flagsText(other.variant.flags)}</td><td className="mono">{flagsText(d.variant.flags)}</td></tr>
              </tbody>
            </table>
            <p className="muted small">The effective sources (with these values in place) differ only in those #define lines.</p>
          </div>
        ) : (
          <div className="editor fill" data-testid="source-diff">
            <DiffEditor keepCurrentOriginalModel keepCurrentModifiedModel language={lang} original={other.effectiveSource} modified={d.effectiveSource} options={{ ...RO, renderSideBySide: true }} />
          </div>
        ))}
        {(tab === 'ptx' || tab === 'sass') && <DeviceCode sessionId={session.summary.id} id={id} which={tab} />}
        {tab === 'llm' && d.llm && (
          <aside className="llm-parts" data-testid="llm-parts">
            <div className="muted small">written by {d.llm.model} · prompt {d.llm.promptId} · exemplars {d.llm.exemplars.map((e) => `${e.id} (${e.speedup.toFixed(2)}×)`).join(', ') || 'baseline only'}</div>
            {d.llm.error && <p className="fail">request failed: {d.llm.error}</p>}
            <h4>Performance analysis</h4>
            <p data-testid="llm-analysis">{d.llm.analysis || <span className="muted">(none)</span>}</p>
            <h4>Algorithm design</h4>
            <p data-testid="llm-design">{d.llm.design || <span className="muted">(none)</span>}</p>
            <h4>Code</h4>
            <p className="muted small" data-testid="llm-code">{d.llm.code ? `${d.llm.code.split('\n').length} lines: see Effective source` : '(no code: the answer was rejected before building)'}{d.llm.missing?.length ? ` · unlabelled parts: ${d.llm.missing.join(', ')}` : ''}</p>
          </aside>
        )}
      </div>
    </div>
  );
}

export function VariantsView() {
  const session = useApp((s) => s.session);
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  const marks = useApp((s) => s.compare);
  const mark = useApp((s) => s.mark);
  const [mode, setMode] = useState<'tree' | 'table'>(() => (localStorage.getItem('kd-variants-mode') === 'table' ? 'table' : 'tree'));
  useEffect(() => localStorage.setItem('kd-variants-mode', mode), [mode]);
  if (!session) return <NoSession />;
  const props = { rows: session.variants, selected, onSelect: select, onOpen: select, bestId: session.bestId, marks, onMark: mark };
  return (
    <Split id="variants" dir="horizontal" panes={[{ id: 'variants-list', size: 42, min: 300 }, { id: 'variants-detail', size: 58, min: 360 }]}>
      <div className="pane-col">
        {session.python && <PythonBanner py={session.python} />}
        <div className="tabs">
          <button data-testid="mode-tree" className={mode === 'tree' ? 'active' : ''} onClick={() => setMode('tree')}>Tree</button>
          <button data-testid="mode-table" className={mode === 'table' ? 'active' : ''} onClick={() => setMode('table')}>Table</button>
          <span className="muted small">↑↓ move · ←→ fold · Enter open · Space mark A/B</span>
        </div>
        {mode === 'tree' ? <VariantTree {...props} /> : <VariantTable {...props} />}
      </div>
      <div className="pane-col detail">
        {selected ? <VariantPanel id={selected} /> : (
          <EmptyState title="Select a variant" actions={session.bestId ? [{ label: `Open the best (${session.bestId})`, run: () => select(session.bestId!) }] : []}>
            Click a variant, or focus the list and use the arrow keys, to see its source, PTX/SASS, resources and occupancy.
          </EmptyState>
        )}
      </div>
    </Split>
  );
}

/** No session open: what to do next. */
export function NoSession() {
  const sessions = useApp((s) => s.sessions);
  const openSession = useApp((s) => s.openSession);
  const setView = useApp((s) => s.setView);
  const tasks = useApp((s) => s.tasks);
  const rec = tasks.find((t) => t.recordings.length);
  return (
    <EmptyState
      title="No session open"
      testid="no-session"
      actions={[
        { label: 'Start a run', run: () => setView('run') },
        ...(rec ? [{ label: `Open a recorded space (REPLAY ${rec.name})`, run: () => { useApp.setState({ runPreset: { task: rec.id, backend: `rec:${rec.recordings[0]}`, strategy: 'contrastive' } }); setView('run'); } }] : []),
        ...(sessions[0] ? [{ label: `Open the latest session (${sessions[0].task}, ${sessions[0].strategy})`, run: () => void openSession(sessions[0].id) }] : []),
      ]}
    >
      Sessions hold every variant a run proposed, built and measured.
    </EmptyState>
  );
}
