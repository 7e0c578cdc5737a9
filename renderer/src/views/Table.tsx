// The variants as a table beside the tree: a column per fact (id, speedup, time, origin/stage,
// status, each tunable, flags, transforms, registers, shared memory, spills), click a header to
// sort (again: reverse), the tree's filter, virtualised rows (@tanstack/react-virtual) so 20,000
// variants scroll without a stall. ↑/↓ move, Enter opens, Space marks A/B.
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { VariantRow } from '../../../main/contract/api.js';
import { speedupColor } from '../store.js';
import { tableColumns, tableRows, type SortSpec } from '../table.js';
import { ROW_HEIGHT, StatusFilter, type TreeProps } from './Tree.js';

export function VariantTable(props: TreeProps) {
  const [q, setQ] = useState('');
  const [status, setStatus] = useState('all');
  const [sort, setSort] = useState<SortSpec | null>({ key: 'speedup', dir: 'desc' });
  const scrollRef = useRef<HTMLDivElement>(null);
  const cols = useMemo(() => tableColumns(props.rows), [props.rows]);
  const rows: VariantRow[] = useMemo(() => tableRows(props.rows, cols, sort, q, status), [props.rows, cols, sort, q, status]);
  const index = useMemo(() => new Map(rows.map((r, i) => [r.id, i])), [rows]);
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const width = cols.reduce((s, c) => s + c.width, 0);
  const sel = props.selected ? index.get(props.selected) : undefined;
  useEffect(() => {
    if (sel !== undefined) v.scrollToIndex(sel, { align: 'auto' });
  }, [sel, v]);
  const onKey = (e: KeyboardEvent<HTMLDivElement>): void => {
    if (!rows.length) return;
    const i = sel ?? -1;
    const go = (j: number): void => props.onSelect(rows[Math.max(0, Math.min(rows.length - 1, j))].id);
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(rows.length - 1);
    else if (e.key === 'Enter' && i >= 0) props.onOpen?.(rows[i].id);
    else if (e.key === ' ' && i >= 0) props.onMark?.(rows[i].id);
    else return;
    e.preventDefault();
  };
  const mark = (id: string): string | null => (props.marks?.a === id ? 'A' : props.marks?.b === id ? 'B' : null);
  return (
    <div className="tree">
      <div className="tree-tools">
        <input data-testid="table-search" placeholder="filter: id, config (BLOCK=256), origin, failure…" value={q} onChange={(e) => setQ(e.target.value)} />
        <StatusFilter value={status} onChange={setStatus} />
      </div>
      <div className="muted small tree-count" data-testid="table-count">{rows.length} of {props.rows.length} variants{sort ? ` · sorted by ${cols.find((c) => c.key === sort.key)?.label ?? sort.key} ${sort.dir === 'asc' ? '↑' : '↓'}` : ''}</div>
      <div className="table-scroll" ref={scrollRef} tabIndex={0} onKeyDown={onKey} data-testid="variant-table" role="grid" aria-rowcount={rows.length}>
        <div className="table-head" style={{ width }} role="row">
          {cols.map((c) => (
            <div
              key={c.key}
              role="columnheader"
              className={`th ${c.numeric ? 'num' : ''}`}
              style={{ width: c.width }}
              title={`${c.title} (click to sort)`}
              data-testid={`th-${c.key}`}
              aria-sort={sort?.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
              onClick={() => setSort((s) => (s?.key === c.key ? { key: c.key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key: c.key, dir: c.numeric && c.key !== 'id' ? 'desc' : 'asc' }))}
            >
              {c.label}{sort?.key === c.key ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}
            </div>
          ))}
        </div>
        <div style={{ height: v.getTotalSize(), width, position: 'relative' }}>
          {v.getVirtualItems().map((it) => {
            const r = rows[it.index];
            const m = mark(r.id);
            return (
              <div
                key={r.id}
                role="row"
                className={`table-row ${props.selected === r.id ? 'selected' : ''} ${r.status}`}
                style={{ top: it.start, height: ROW_HEIGHT, width }}
                onClick={() => {
                  props.onSelect(r.id);
                  scrollRef.current?.focus();
                }}
                onDoubleClick={() => props.onOpen?.(r.id)}
                data-testid="table-row"
                data-variant={r.id}
              >
                {cols.map((c) => (
                  <div key={c.key} role="gridcell" className={`td ${c.numeric ? 'num' : ''}`} style={{ width: c.width }} title={c.text(r)}>
                    {c.key === 'id' ? (
                      <>
                        <span className="swatch" style={{ background: speedupColor(r.speedup, r.status) }} /> {r.id}
                        {m && <span className={`mark mark-${m}`}>{m}</span>}
                        {props.bestId === r.id && <span className="best-tag">best</span>}
                      </>
                    ) : (
                      c.text(r)
                    )}
                  </div>
                ))}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
