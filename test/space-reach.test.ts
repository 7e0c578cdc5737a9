// Islands of a task's space: configurations no one-tunable step reaches from the baseline's
// (main/engine/task/reach.ts), in the engine, the CLI's task list and the workbench's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { enumerateSpace } from '../main/engine/task/space.js';
import { describeReach, spaceReach } from '../main/engine/task/reach.js';
import { TaskRegistry } from '../main/core/tasks.js';
import { runCli, showRun } from './fixtures/cli.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kd-reach-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of built-in softmax with its tunables, restrictions and defaults replaced. */
function softmaxWith(name: string, tunablesAndRestrictions: string): string {
  const dir = join(root, name);
  cpSync(join(builtinTasksDir(), 'softmax'), dir, { recursive: true });
  const yaml = readFileSync(join(dir, 'task.yaml'), 'utf8');
  const a = yaml.indexOf('tunables:');
  const b = yaml.indexOf('\n', yaml.indexOf('defaults:')) + 1;
  writeFileSync(join(dir, 'task.yaml'), yaml.slice(0, a) + tunablesAndRestrictions + yaml.slice(b));
  return dir;
}

// softmax's space until 2026-12-04 (c5bc91c): CACHE counted vectors per thread.
const OLD_SOFTMAX = `tunables:
  BLOCK: [32, 64, 128, 256, 512, 1024]
  TPR: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
  VEC: [1, 2, 4]
  ONLINE: [0, 1]
  CACHE: [0, 1, 2, 4, 8, 16]
restrictions:
  - TPR <= BLOCK
  - CACHE * VEC <= 64
  - CACHE == 0 || CACHE * TPR * VEC >= cols
  - CACHE <= 1 || CACHE * TPR * VEC < 2 * cols
  - CACHE == 0 || ONLINE == 0
defaults: {BLOCK: 128, TPR: 1, VEC: 1, ONLINE: 0, CACHE: 0}
`;

describe('space reach', () => {
  it('joins configurations one tunable step apart and reports the rest as islands', () => {
    // Valid: (1,1) (1,2) (1,3) (2,2) (3,3). (2,2) is one step of A from (1,2); (3,3) has no valid
    // neighbour: (2,3) and (3,2) are excluded.
    const t = loadTask(softmaxWith('ab', 'tunables:\n  A: [1, 2, 3]\n  B: [1, 2, 3]\nrestrictions:\n  - A == B || A == 1\ndefaults: {A: 1, B: 1}\n'));
    const r = spaceReach(t);
    expect(r).toEqual({ configs: 5, components: 2, reached: 4, islands: [{ size: 1, values: { A: [3], B: [3] } }] });
    expect(describeReach(t, r)).toMatch(/^1 of 5 configurations \(A=3 B=3\) lie in 1 island that no step of one tunable/);
    // From the other side: with the baseline on the island, the four others are the island.
    t.manifest.defaults = { A: 3, B: 3 };
    expect(spaceReach(t)).toMatchObject({ reached: 1, islands: [{ size: 4 }] });
  });

  it("softmax's old CACHE values were 9 islands of 19 configurations; its space and layernorm's are one piece now", () => {
    const old = loadTask(softmaxWith('old-softmax', OLD_SOFTMAX));
    const r = spaceReach(old);
    expect(r.configs).toBe(325);
    expect(r.components).toBe(10);
    expect(r.configs - r.reached).toBe(19);
    expect(r.islands.every((i) => i.values.CACHE.every((c) => c >= 2))).toBe(true);
    expect(describeReach(old, r)).toContain('(BLOCK=128/256/512/1024 TPR=128/256/512/1024 ONLINE=0 CACHE=2/4/8/16)');
    for (const name of ['softmax', 'layernorm', 'reduce_sum']) {
      const t = resolveTask(name);
      const now = spaceReach(t, enumerateSpace(t));
      expect(now.components, `${name}: ${describeReach(t, now)}`).toBe(1);
      expect(describeReach(t, now)).toBeNull();
    }
  });

  it("names transpose's REG4 island in the task list the workbench reads", () => {
    const svc = new TaskRegistry({ KERNELDUEL_HOME: join(root, 'home') });
    const list = svc.list();
    const tr = list.find((t) => t.name === 'transpose');
    expect(tr?.spaceNote).toMatch(/^116 of 924 configurations \(.*REG4=1\) lie in 1 island/);
    expect(list.find((t) => t.name === 'softmax')?.spaceNote).toBeUndefined();
  });

  it('the CLI lists the islands with the task, and a run warns of small ones (transpose) but not of large ones (matmul)', async () => {
    const home = join(root, 'cli-home');
    const tasks = await runCli(home, ['tasks', '--json']);
    expect(tasks.code, showRun(tasks)).toBe(0);
    const list = JSON.parse(tasks.stdout) as Array<{ name: string; note?: string }>;
    expect(list.find((t) => t.name === 'matmul')?.note).toMatch(/^470 of 1049 configurations \(TILED=2 .*\) lie in 10 islands/);
    expect(list.find((t) => t.name === 'layernorm')?.note).toBeUndefined();
    const tr = await runCli(home, ['optimize', 'transpose', '--budget', '1']);
    expect(tr.code, showRun(tr)).toBe(0);
    expect(tr.stderr).toMatch(/warning: task transpose: 116 of 924 configurations .* lie in 1 island/);
    const mm = await runCli(home, ['optimize', 'matmul', '--budget', '1']);
    expect(mm.code, showRun(mm)).toBe(0);
    expect(mm.stderr).not.toMatch(/island/);
  }, 120_000);
});
