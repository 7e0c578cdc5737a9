// The variant history tree's pure parts (no React, no DOM): the lineage as a tree under first
// parents (other parents are kept as extra links: the lineage is a DAG), depth, collapsed subtrees,
// the path from the baseline to the best, and the filter. Unit-tested in test/renderer-tree.test.ts.
import type { VariantRow } from '../../main/contract/api.js';
import { fmtConfig } from './store.js';

export interface FlatNode {
  row: VariantRow;
  depth: number;
  /** Children under this node (in the tree of first parents). */
  children: number;
  collapsed: boolean;
  /** On the path from the baseline to the best variant. */
  onBestPath: boolean;
  /** Parents besides the first (genetic crossovers, LLM exemplars): links of the DAG. */
  extraParents: string[];
}

export interface Lineage {
  byId: Map<string, VariantRow>;
  children: Map<string, string[]>;
  roots: string[];
  /** First parent present in the session, per variant. */
  parent: Map<string, string>;
}

export function lineage(rows: VariantRow[]): Lineage {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const children = new Map<string, string[]>();
  const parent = new Map<string, string>();
  const roots: string[] = [];
  for (const r of rows) {
    const p = r.parents.find((x) => byId.has(x) && x !== r.id);
    if (p) {
      parent.set(r.id, p);
      (children.get(p) ?? children.set(p, []).get(p)!).push(r.id);
    } else roots.push(r.id);
  }
  return { byId, children, roots, parent };
}

/** Ids from the root down to `id` along first parents (cycles cut). */
export function pathTo(l: Lineage, id: string | null): string[] {
  if (!id || !l.byId.has(id)) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (let cur: string | undefined = id; cur && !seen.has(cur); cur = l.parent.get(cur)) {
    seen.add(cur);
    out.push(cur);
  }
  return out.reverse();
}

/** Depth-first order under first parents, collapsed subtrees hidden; orphans become roots. Pure. */
export function visibleTree(l: Lineage, o: { collapsed?: Set<string>; bestId?: string | null } = {}): FlatNode[] {
  const best = new Set(pathTo(l, o.bestId ?? null));
  const out: FlatNode[] = [];
  const seen = new Set<string>();
  const stack: Array<{ id: string; depth: number }> = l.roots.slice().reverse().map((id) => ({ id, depth: 0 }));
  // Variants on a cycle of first parents (bad data) are reached from no root: they start trees of
  // their own at the end, so no variant ever disappears from the tree.
  const rest = unreachable(l).reverse();
  while (stack.length || rest.length) {
    if (!stack.length) {
      const id = rest.pop()!;
      if (!seen.has(id)) stack.push({ id, depth: 0 });
      continue;
    }
    const n = stack.pop()!;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    const row = l.byId.get(n.id)!;
    const kids = l.children.get(n.id) ?? [];
    const collapsed = !!o.collapsed?.has(n.id) && kids.length > 0;
    const first = l.parent.get(n.id);
    out.push({ row, depth: n.depth, children: kids.length, collapsed, onBestPath: best.has(n.id), extraParents: row.parents.filter((p) => p !== first && l.byId.has(p)) });
    if (collapsed) continue;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ id: kids[i], depth: n.depth + 1 });
  }
  return out;
}

/** Variants that no root reaches along first parents (a cycle of parents). */
function unreachable(l: Lineage): string[] {
  const seen = new Set<string>();
  const stack = [...l.roots];
  while (stack.length) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(l.children.get(id) ?? []));
  }
  return seen.size === l.byId.size ? [] : [...l.byId.keys()].filter((id) => !seen.has(id));
}

/** Depth-first order under first parents (everything expanded). */
export function flattenTree(rows: VariantRow[]): FlatNode[] {
  return visibleTree(lineage(rows));
}

/** Deepest lineage in the session (the baseline is depth 0). */
export function maxDepth(l: Lineage): number {
  return visibleTree(l).reduce((m, n) => Math.max(m, n.depth), 0);
}

export function matches(r: VariantRow, q: string, status: string): boolean {
  if (status !== 'all' && r.status !== status) return false;
  if (!q) return true;
  const hay = `${r.id} ${r.origin} ${fmtConfig(r.config)} ${r.transforms.join(' ')} ${r.failure?.kind ?? ''} ${r.failure?.reason ?? ''}`.toLowerCase();
  return q.toLowerCase().split(/\s+/).every((w) => hay.includes(w));
}
