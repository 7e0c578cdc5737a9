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
  /** Variants no root reaches along first parents (their first parents form a cycle: bad data), in row order. */
  unreachable: string[];
}

export function lineage(rows: VariantRow[]): Lineage {
  const byId = new Map<string, VariantRow>();
  for (const r of rows) byId.set(r.id, r);
  const children = new Map<string, string[]>();
  const parent = new Map<string, string>();
  const roots: string[] = [];
  for (const r of rows) {
    const p = r.parents.find((x) => x !== r.id && byId.has(x));
    if (p) {
      parent.set(r.id, p);
      const kids = children.get(p);
      if (kids) kids.push(r.id);
      else children.set(p, [r.id]);
    } else roots.push(r.id);
  }
  return { byId, children, roots, parent, unreachable: onCycles(byId, parent) };
}

/** Ids whose first-parent chain never ends at a root (it runs into a cycle). One pass: each chain is walked once. */
function onCycles(byId: Map<string, VariantRow>, parent: Map<string, string>): string[] {
  // 1: reaches a root; 2: does not; 3: on the chain being walked.
  const state = new Map<string, 1 | 2 | 3>();
  const chain: string[] = [];
  for (const id of byId.keys()) {
    if (state.has(id)) continue;
    chain.length = 0;
    let verdict: 1 | 2 = 1;
    for (let cur: string | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const known = state.get(cur);
      if (known !== undefined) {
        verdict = known === 3 ? 2 : known;
        break;
      }
      state.set(cur, 3);
      chain.push(cur);
    }
    for (const c of chain) state.set(c, verdict);
  }
  const out: string[] = [];
  for (const id of byId.keys()) if (state.get(id) === 2) out.push(id);
  return out;
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

const NO_LINKS: string[] = [];

/** Depth-first order under first parents, collapsed subtrees hidden; orphans become roots. Pure. */
export function visibleTree(l: Lineage, o: { collapsed?: Set<string>; bestId?: string | null } = {}): FlatNode[] {
  const best = new Set(pathTo(l, o.bestId ?? null));
  const out: FlatNode[] = [];
  const seen = new Set<string>();
  const ids: string[] = [];
  const depths: number[] = [];
  for (let i = l.roots.length - 1; i >= 0; i--) {
    ids.push(l.roots[i]);
    depths.push(0);
  }
  // Variants on a cycle of first parents (bad data) are reached from no root: they start trees of
  // their own at the end, so no variant ever disappears from the tree.
  const rest = l.unreachable.slice().reverse();
  while (ids.length || rest.length) {
    if (!ids.length) {
      const id = rest.pop()!;
      if (!seen.has(id)) {
        ids.push(id);
        depths.push(0);
      }
      continue;
    }
    const id = ids.pop()!;
    const depth = depths.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const row = l.byId.get(id)!;
    const kids = l.children.get(id);
    const n = kids ? kids.length : 0;
    const collapsed = n > 0 && !!o.collapsed?.has(id);
    // A second parent is a DAG link; with one parent there is none (it is the first, or not in the session).
    const extraParents = row.parents.length > 1 ? row.parents.filter((p) => p !== l.parent.get(id) && l.byId.has(p)) : NO_LINKS;
    out.push({ row, depth, children: n, collapsed, onBestPath: best.has(id), extraParents });
    if (collapsed || !kids) continue;
    for (let i = n - 1; i >= 0; i--) {
      ids.push(kids[i]);
      depths.push(depth + 1);
    }
  }
  return out;
}

/** Depth-first order under first parents (everything expanded). */
export function flattenTree(rows: VariantRow[]): FlatNode[] {
  return visibleTree(lineage(rows));
}

/** Deepest lineage in the session (the baseline is depth 0). */
export function maxDepth(l: Lineage): number {
  return deepest(visibleTree(l));
}

/** The deepest node of a tree laid out by visibleTree (everything expanded: the session's depth). */
export function deepest(nodes: readonly FlatNode[]): number {
  let m = 0;
  for (const n of nodes) if (n.depth > m) m = n.depth;
  return m;
}

export function matches(r: VariantRow, q: string, status: string): boolean {
  if (status !== 'all' && r.status !== status) return false;
  if (!q) return true;
  const hay = `${r.id} ${r.origin} ${fmtConfig(r.config)} ${r.transforms.join(' ')} ${r.failure?.kind ?? ''} ${r.failure?.reason ?? ''}`.toLowerCase();
  return q.toLowerCase().split(/\s+/).every((w) => hay.includes(w));
}
