// The variant history tree: each variant under the variant it was derived from (first parent; other
// parents shown as links), with collapse, depth guides and the path from the baseline to the best
// highlighted. Virtualised (@tanstack/react-virtual): only the rows in view are in the DOM.
// Keyboard like VS Code's explorer: ↑/↓ move, ←/→ collapse/expand (or go to parent/child), Home/End,
// Enter opens the variant, Space marks it A then B for Compare.
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { VariantRow } from '../../../main/contract/api.js';
import { fmtConfig, fmtMs, fmtX, speedupColor } from '../store.js';
import { lineage, matches, maxDepth, pathTo, visibleTree, type FlatNode } from '../tree.js';

export const ROW_HEIGHT = 24;
/** Indentation stops here (a long run's lineage is hundreds deep); deeper rows show their depth as a number. */
const MAX_INDENT = 12;

export interface TreeProps {
  rows: VariantRow[];
  selected: string | null;
  onSelect: (id: string) => void;
  /** Enter / double click. */
  onOpen?: (id: string) => void;
  bestId?: string | null;
  marks?: { a: string | null; b: string | null };
  onMark?: (id: string) => void;
}

export function StatusFilter(props: { value: string; onChange: (v: string) => void }) {
  return (
    <select data-testid="tree-status" value={props.value} onChange={(e) => props.onChange(e.target.value)} title="status filter">
      <option value="all">all</option>
      <option value="timed">timed</option>
      <option value="built">built (not timed)</option>
      <option value="failed">failed</option>
      <option value="pending">pending</option>
    </select>
  );
}

export function VariantTree(props: TreeProps) {
  const [q, setQ] = useState('');
  const [status, setStatus] = useState('all');
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const scrollRef = useRef<HTMLDivElement>(null);
  const lin = useMemo(() => lineage(props.rows), [props.rows]);
  const depth = useMemo(() => maxDepth(lin), [lin]);
  const filtering = q !== '' || status !== 'all';
  const shown: FlatNode[] = useMemo(() => {
    const all = visibleTree(lin, { collapsed: filtering ? undefined : collapsed, bestId: props.bestId });
    return filtering ? all.filter((n) => matches(n.row, q, status)) : all;
  }, [lin, collapsed, props.bestId, filtering, q, status]);
  const index = useMemo(() => new Map(shown.map((n, i) => [n.row.id, i])), [shown]);
  const v = useVirtualizer({ count: shown.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const failed = useMemo(() => props.rows.filter((r) => r.status === 'failed').length, [props.rows]);
  const sel = props.selected ? index.get(props.selected) : undefined;
  useEffect(() => {
    if (sel !== undefined) v.scrollToIndex(sel, { align: 'auto' });
  }, [sel, v]);
  const toggle = (id: string, open?: boolean): void =>
    setCollapsed((c) => {
      const n = new Set(c);
      if (open ?? n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const onKey = (e: KeyboardEvent<HTMLDivElement>): void => {
    if (!shown.length) return;
    const i = sel ?? -1;
    const go = (j: number): void => props.onSelect(shown[Math.max(0, Math.min(shown.length - 1, j))].row.id);
    const cur = i >= 0 ? shown[i] : null;
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1);
    switch (e.key) {
      case 'ArrowDown': go(i + 1); break;
      case 'ArrowUp': go(i < 0 ? 0 : i - 1); break;
      case 'PageDown': go(i + page); break;
      case 'PageUp': go(i - page); break;
      case 'Home': go(0); break;
      case 'End': go(shown.length - 1); break;
      case 'ArrowRight':
        if (cur && cur.children && cur.collapsed) toggle(cur.row.id, true);
        else if (cur && cur.children) go(i + 1);
        break;
      case 'ArrowLeft':
        if (cur && cur.children && !cur.collapsed && !filtering) toggle(cur.row.id, false);
        else if (cur) {
          const p = lin.parent.get(cur.row.id);
          if (p && index.has(p)) props.onSelect(p);
        }
        break;
      case 'Enter': if (cur) props.onOpen?.(cur.row.id); break;
      case ' ': if (cur) props.onMark?.(cur.row.id); break;
      default: return;
    }
    e.preventDefault();
  };
  const mark = (id: string): string | null => (props.marks?.a === id ? 'A' : props.marks?.b === id ? 'B' : null);
  return (
    <div className="tree">
      <div className="tree-tools">
        <input data-testid="tree-search" placeholder="filter: id, config (BLOCK=256), origin, failure…" value={q} onChange={(e) => setQ(e.target.value)} />
        <StatusFilter value={status} onChange={setStatus} />
        <button title="expand all" data-testid="tree-expand-all" onClick={() => setCollapsed(new Set())}>⊞</button>
        <button title="collapse all but the path to the best" data-testid="tree-collapse-all" onClick={() => {
          const keep = new Set(pathTo(lin, props.bestId ?? null));
          setCollapsed(new Set([...lin.children.keys()].filter((id) => !keep.has(id))));
        }}>⊟</button>
      </div>
      <div className="muted small tree-count" data-testid="tree-count">
        {shown.length} of {props.rows.length} variants · {failed} failed · depth {depth}{filtering ? ' · filtered (flat)' : ''}
      </div>
      <div className="tree-scroll" ref={scrollRef} tabIndex={0} onKeyDown={onKey} data-testid="variant-tree" role="tree" aria-label="variant history tree">
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((it) => {
            const n = shown[it.index];
            const r = n.row;
            const m = mark(r.id);
            return (
              <div
                key={r.id}
                role="treeitem"
                aria-selected={props.selected === r.id}
                aria-level={n.depth + 1}
                aria-expanded={n.children ? !n.collapsed : undefined}
                className={`tree-row ${props.selected === r.id ? 'selected' : ''} ${r.status} ${n.onBestPath ? 'best-path' : ''}`}
                style={{ top: it.start, height: ROW_HEIGHT }}
                onClick={() => {
                  props.onSelect(r.id);
                  scrollRef.current?.focus();
                }}
                onDoubleClick={() => props.onOpen?.(r.id)}
                data-testid="tree-row"
                data-variant={r.id}
                data-depth={n.depth}
                title={r.failure ? `${r.failure.kind}: ${r.failure.reason}` : `${fmtConfig(r.config)}${r.parents.length ? ` · from ${r.parents.join(', ')}` : ''}`}
              >
                <span className="guides" style={{ width: 4 + Math.min(n.depth, MAX_INDENT) * 14 }}>
                  {Array.from({ length: Math.min(n.depth, MAX_INDENT) }, (_, d) => <i key={d} style={{ left: 10 + d * 14 }} />)}
                </span>
                {n.depth > MAX_INDENT && <span className="deep muted small" title={`depth ${n.depth} in the lineage`}>↳{n.depth}</span>}
                <span
                  className="twisty"
                  data-testid={n.children ? 'tree-twisty' : undefined}
                  onClick={(e) => {
                    e.stopPropagation();
                    if (n.children) toggle(r.id);
                  }}
                >
                  {n.children ? (n.collapsed ? '▸' : '▾') : ''}
                </span>
                <span className="swatch" style={{ background: speedupColor(r.speedup, r.status) }} />
                <span className="vid">{r.id}</span>
                {m && <span className={`mark mark-${m}`} data-testid={`mark-${m}`}>{m}</span>}
                {props.bestId === r.id && <span className="best-tag" data-testid="best-tag">best</span>}
                <span className="speed">{r.status === 'timed' ? fmtX(r.speedup) : r.status === 'failed' ? '✗' : r.status === 'built' ? 'built' : '…'}</span>
                <span className="ms">{r.status === 'timed' ? fmtMs(r.medianMs) : ''}</span>
                {n.collapsed && <span className="muted small">+{n.children}</span>}
                {n.extraParents.length > 0 && <span className="extra-parents" title="also derived from">⤙ {n.extraParents.join(', ')}</span>}
                <span className="cfg">{r.status === 'failed' ? <span className="fail">{r.failure?.kind}: {r.failure?.reason}</span> : fmtConfig(r.config)}</span>
                <span className="origin muted small">{r.origin}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
