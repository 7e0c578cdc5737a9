// The variant history tree: every variant under its first parent, virtualised (only the rows in
// view are in the DOM), so 5,000 variants scroll smoothly.
import { useMemo, useRef, useState, type UIEvent } from 'react';
import type { VariantRow } from '../../../main/api/contract.js';
import { fmtConfig, fmtMs, fmtX, speedupColor } from '../store.js';

export const ROW_HEIGHT = 24;

export interface FlatNode {
  row: VariantRow;
  depth: number;
}

/** Depth-first order under first parents; orphans (parent unknown) become roots. Pure. */
export function flattenTree(rows: VariantRow[]): FlatNode[] {
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map<string, VariantRow[]>();
  const roots: VariantRow[] = [];
  for (const r of rows) {
    const p = r.parents.find((x) => ids.has(x) && x !== r.id);
    if (p) (children.get(p) ?? children.set(p, []).get(p)!).push(r);
    else roots.push(r);
  }
  const out: FlatNode[] = [];
  const seen = new Set<string>();
  const stack: FlatNode[] = roots.slice().reverse().map((row) => ({ row, depth: 0 }));
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n.row.id)) continue;
    seen.add(n.row.id);
    out.push(n);
    const kids = children.get(n.row.id) ?? [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ row: kids[i], depth: n.depth + 1 });
  }
  return out;
}

export function matches(r: VariantRow, q: string, status: string): boolean {
  if (status !== 'all' && r.status !== status) return false;
  if (!q) return true;
  const hay = `${r.id} ${r.origin} ${fmtConfig(r.config)} ${r.transforms.join(' ')} ${r.failure?.kind ?? ''} ${r.failure?.reason ?? ''}`.toLowerCase();
  return q.toLowerCase().split(/\s+/).every((w) => hay.includes(w));
}

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
