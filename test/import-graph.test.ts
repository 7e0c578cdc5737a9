// scripts/import-graph.mjs fails on what the layers forbid: shown on small trees of its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations
import { importGraph } from '../scripts/import-graph.mjs';

interface Graph {
  edges: Array<{ from: string; to: string; count: number; typeOnly: boolean }>;
  cycles: string[][];
  problems: string[];
}
const graph = importGraph as (root?: string) => Graph;

const roots: string[] = [];
afterAll(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

/** A tree of files (path -> contents) in a temporary folder. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-graph-'));
  roots.push(root);
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), text);
  }
  return root;
}

describe('import graph', () => {
  it('this repository: no cycle, only allowed downward edges', () => {
    const g = graph();
    expect(g.problems).toEqual([]);
    expect(g.edges.some((e) => e.from === 'core' && e.to === 'engine/search')).toBe(true);
  });

  it('a downward edge the table allows is fine', () => {
    const g = graph(tree({ 'main/engine/task/t.ts': "import { x } from '../base/b.js';\nexport const t = x;\n", 'main/engine/base/b.ts': 'export const x = 1;\n' }));
    expect(g.problems).toEqual([]);
    expect(g.edges).toEqual([expect.objectContaining({ from: 'engine/task', to: 'engine/base', count: 1 })]);
  });

  it('fails on an upward edge and on the cycle it closes', () => {
    const g = graph(tree({
      'main/engine/task/t.ts': "import { x } from '../base/b.js';\nexport const t = x;\n",
      'main/engine/base/b.ts': "import { t } from '../task/t.js';\nexport const x = 1;\nexport const y = t;\n",
    }));
    expect(g.problems).toContain('upward edge engine/base -> engine/task (main/engine/base/b.ts imports main/engine/task/t.ts)');
    expect(g.cycles).toEqual([expect.arrayContaining(['engine/base', 'engine/task'])]);
  });

  it('fails on a value import where only types are allowed, and on a file in no layer', () => {
    const g = graph(tree({
      'main/doors/cli/c.ts': "import { runLoop } from '../../engine/search/loop.js';\nimport type { L } from '../../engine/search/loop.js';\nexport const c: L = runLoop;\n",
      'main/engine/search/loop.ts': 'export type L = number;\nexport const runLoop = 1;\n',
      'main/stray/s.ts': 'export const s = 1;\n',
    }));
    expect(g.problems).toContain('doors/cli may not import values from engine/search: main/doors/cli/c.ts imports main/engine/search/loop.ts');
    expect(g.problems.filter((p) => p.startsWith('doors/cli'))).toHaveLength(1);
    expect(g.problems).toContain('main/stray/s.ts is in no layer: give its folder a row in scripts/layers.mjs');
  });
});
