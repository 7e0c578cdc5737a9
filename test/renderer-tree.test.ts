// The variant history's pure parts (issue 16): lineage as a tree under first parents (other parents
// kept as DAG links), collapse, depth, the path from the baseline to the best, the session's best
// following every result, and the table's columns, sort and filter at 20,000 rows.
import { describe, expect, it } from 'vitest';
import type { SessionDetail, VariantRow } from '../main/contract/api.js';
import { lineage, maxDepth, pathTo, visibleTree } from '../renderer/src/tree.js';
import { tableColumns, tableRows } from '../renderer/src/table.js';
import { applyToSession, bestRow } from '../renderer/src/reducers.js';

const row = (id: string, parents: string[] = [], o: Partial<VariantRow> = {}): VariantRow => ({
  id, parents, origin: 'contrastive', config: { BLOCK: 128 }, flags: { opt: 3 }, transforms: [], createdAt: '2026-01-01T00:00:00Z', status: 'timed', failure: null,
  medianMs: 1, ciLowMs: null, ciHighMs: null, speedup: 1, registers: null, sharedBytes: null, spillBytes: null, source: 'replay', evalIndex: null, ...o,
});

// v1 ─ v2 ─ v4 ─ v6
//    │    └ v5 (also from v3)
//    └ v3
const rows = [row('v1'), row('v2', ['v1']), row('v3', ['v1']), row('v4', ['v2']), row('v5', ['v2', 'v3']), row('v6', ['v4'])];

describe('variant lineage tree', () => {
  it('orders depth-first under first parents, with depth and extra parents as links', () => {
    const t = visibleTree(lineage(rows));
    expect(t.map((n) => `${n.row.id}@${n.depth}`)).toEqual(['v1@0', 'v2@1', 'v4@2', 'v6@3', 'v5@2', 'v3@1']);
    expect(t.find((n) => n.row.id === 'v5')!.extraParents).toEqual(['v3']);
    expect(maxDepth(lineage(rows))).toBe(3);
  });

  it('a collapsed node hides its subtree and counts its children', () => {
    const t = visibleTree(lineage(rows), { collapsed: new Set(['v2']) });
    expect(t.map((n) => n.row.id)).toEqual(['v1', 'v2', 'v3']);
    expect(t[1]).toMatchObject({ collapsed: true, children: 2 });
  });

  it('marks the path from the baseline to the best', () => {
    const l = lineage(rows);
    expect(pathTo(l, 'v6')).toEqual(['v1', 'v2', 'v4', 'v6']);
    expect(visibleTree(l, { bestId: 'v6' }).filter((n) => n.onBestPath).map((n) => n.row.id)).toEqual(['v1', 'v2', 'v4', 'v6']);
  });

  it('parents missing from the session and cycles do not lose variants', () => {
    const odd = [row('v1'), row('v2', ['v9']), row('v3', ['v4']), row('v4', ['v3'])];
    const t = visibleTree(lineage(odd));
    // v2's parent is not in the session: a root. v3 and v4 point at each other: still both shown.
    expect(t.map((n) => `${n.row.id}@${n.depth}`)).toEqual(['v1@0', 'v2@0', 'v3@0', 'v4@1']);
    expect(pathTo(lineage(odd), 'v3')).toEqual(['v4', 'v3']);
  });
});

describe('variant table', () => {
  const many = Array.from({ length: 20_000 }, (_, i) =>
    row(`v${i + 1}`, i ? [`v${i}`] : [], {
      config: { BLOCK: 32 << (i % 6), VEC: 1 << (i % 3) },
      speedup: i % 17 === 0 ? null : 1 + ((i * 7919) % 1000) / 500,
      status: i % 17 === 0 ? 'failed' : 'timed',
      registers: i % 5 === 0 ? null : 16 + (i % 48),
    }),
  );
  const cols = tableColumns(many);

  it('has a column per fact and one per tunable', () => {
    expect(cols.map((c) => c.key)).toEqual(['id', 'speedup', 'time', 'origin', 'status', 'cfg:BLOCK', 'cfg:VEC', 'flags', 'transforms', 'registers', 'smem', 'spills']);
  });

  it('sorts 20,000 rows by speedup (empty values last either way) and by id numerically', () => {
    const desc = tableRows(many, cols, { key: 'speedup', dir: 'desc' }, '', 'all');
    expect(desc).toHaveLength(20_000);
    const timed = desc.filter((r) => r.speedup !== null);
    expect(timed.findIndex((r, i) => i > 0 && timed[i - 1].speedup! < r.speedup!)).toBe(-1);
    expect(desc.at(-1)!.speedup).toBeNull();
    const asc = tableRows(many, cols, { key: 'speedup', dir: 'asc' }, '', 'all');
    expect(asc[0].speedup).toBe(Math.min(...timed.map((r) => r.speedup!)));
    expect(asc.at(-1)!.speedup).toBeNull();
    expect(tableRows(many, cols, { key: 'id', dir: 'desc' }, '', 'all')[0].id).toBe('v20000');
  });

  it('filters like the tree: config words and status', () => {
    const f = tableRows(many, cols, null, 'BLOCK=1024 VEC=4', 'timed');
    expect(f.length).toBeGreaterThan(0);
    expect(f.filter((r) => r.config.BLOCK !== 1024 || r.config.VEC !== 4)).toEqual([]);
    expect(tableRows(many, cols, null, '', 'failed').every((r) => r.status === 'failed')).toBe(true);
  });
});

describe('the best follows each result', () => {
  it('bestRow is the lowest timed median; a result event moves the best tag and the summary at once', () => {
    expect(bestRow([row('v1', [], { medianMs: 2 }), row('v2', [], { medianMs: 1, status: 'failed' }), row('v3', [], { medianMs: 1.5 })])!.id).toBe('v3');
    const s = {
      summary: { id: 's', task: 't', createdAt: '', strategy: 'random', budget: 10, variants: 1, results: 1, status: 'running', best: { variantId: 'v1', medianMs: 2, speedup: 1 }, gpu: null, replay: true },
      task: { name: 't', dir: '/x' }, gpu: null, settings: {}, variants: [row('v1', [], { medianMs: 2 })], duels: [], notes: [], baselineId: 'v1', bestId: 'v1', replay: { recording: 'r.json' },
      plots: { timeline: [], baselines: [], paramEffects: [], modelAccuracy: [], roofline: null, rewardLabel: '' }, run: null,
    } as SessionDetail;
    const next = applyToSession(s, 's', { type: 'run.result', sessionId: 's', index: 1, row: row('v2', ['v1'], { medianMs: 0.5, speedup: 4 }), budget: 10, bestSpeedup: 4, bestMs: 0.5 })!;
    expect(next.bestId).toBe('v2');
    expect(next.summary.best).toEqual({ variantId: 'v2', medianMs: 0.5, speedup: 4 });
    expect(next.summary.results).toBe(2);
  });
});
