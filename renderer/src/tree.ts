// The variant tree's pure parts (no React, no DOM): depth-first flattening under first parents and
// the filter. Unit-tested in test/renderer-store.test.ts.
import type { VariantRow } from '../../main/contract/api.js';
import { fmtConfig } from './store.js';

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

