// The variant history tree: every variant under its first parent, virtualised (only the rows in
// view are in the DOM), so 5,000 variants scroll smoothly.
import { useMemo, useRef, useState, type UIEvent } from 'react';
import type { VariantRow } from '../../../main/contract/api.js';
import { fmtConfig, fmtMs, fmtX, speedupColor } from '../store.js';
import { flattenTree, matches } from '../tree.js';

export const ROW_HEIGHT = 24;

export { flattenTree, matches, type FlatNode } from '../tree.js';

export function VariantTree(props: { rows: VariantRow[]; selected: string | null; onSelect: (id: string) => void; height?: number; bestId?: string | null }) {
  const [q, setQ] = useState('');
  const [status, setStatus] = useState('all');
  const [scrollTop, setScrollTop] = useState(0);
  const ref = useRef<HTMLDivElement>(null);
  const flat = useMemo(() => flattenTree(props.rows), [props.rows]);
  const shown = useMemo(() => flat.filter((n) => matches(n.row, q, status)), [flat, q, status]);
  const height = props.height ?? 520;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - 10);
  const last = Math.min(shown.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + 10);
  const failed = props.rows.filter((r) => r.status === 'failed').length;
  return (
    <div className="tree">
      <div className="tree-tools">
        <input data-testid="tree-search" placeholder="filter: id, config (BLOCK=256), origin, failure…" value={q} onChange={(e) => setQ(e.target.value)} />
        <select data-testid="tree-status" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="all">all</option>
          <option value="timed">timed</option>
          <option value="built">built (not timed)</option>
          <option value="failed">failed</option>
          <option value="pending">pending</option>
        </select>
        <span className="muted" data-testid="tree-count">{shown.length} of {props.rows.length} variants · {failed} failed</span>
      </div>
      <div className="tree-scroll" ref={ref} style={{ height }} onScroll={(e: UIEvent<HTMLDivElement>) => setScrollTop(e.currentTarget.scrollTop)} data-testid="variant-tree">
        <div style={{ height: shown.length * ROW_HEIGHT, position: 'relative' }}>
          {shown.slice(first, last).map((n, i) => {
            const r = n.row;
            return (
              <div
                key={r.id}
                className={`tree-row ${props.selected === r.id ? 'selected' : ''} ${r.status}`}
                style={{ top: (first + i) * ROW_HEIGHT, height: ROW_HEIGHT, paddingLeft: 6 + n.depth * 16 }}
                onClick={() => props.onSelect(r.id)}
                data-testid="tree-row"
                data-variant={r.id}
                title={r.failure ? `${r.failure.kind}: ${r.failure.reason}` : fmtConfig(r.config)}
              >
                <span className="swatch" style={{ background: speedupColor(r.speedup, r.status) }} />
                <span className="vid">{r.id}</span>
                {props.bestId === r.id && <span className="best-tag">best</span>}
                <span className="speed">{r.status === 'timed' ? fmtX(r.speedup) : r.status === 'failed' ? '✗' : r.status === 'built' ? 'built' : '…'}</span>
                <span className="ms">{r.status === 'timed' ? fmtMs(r.medianMs) : ''}</span>
                <span className="cfg">{r.status === 'failed' ? <span className="fail">{r.failure?.kind}: {r.failure?.reason}</span> : fmtConfig(r.config)}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
