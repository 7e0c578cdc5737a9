// The hostile-variant corpus (test/hostile/) without a GPU: every listed case file exists, the
// `rejected` ones are rejected by the screen with a reason, every other one passes the screen,
// the `compile` ones fail to build with nvcc and all others build. What happens when they run is
// the GPU suite's business (test/gpu/hostile.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveTask } from '../main/engine/task/resolve.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { buildVariant, type BuildEnv } from '../main/engine/build/compile.js';
import { screenVariant } from '../main/engine/measure/evaluate.js';
import type { BuildResult } from '../main/engine/base/types.js';

const dir = path.dirname(fileURLToPath(import.meta.url));
const hostileDir = path.join(dir, 'hostile');

interface Case {
  /** The task the case is written for (default: the corpus's). */
  task?: string;
  case: string;
  file: string;
  expected: string;
  reason: string;
}
const manifest = JSON.parse(fs.readFileSync(path.join(hostileDir, 'cases.json'), 'utf8')) as { task: string; outcomes: Record<string, string>; cases: Case[] };
const taskOf = (c: Case) => resolveTask(c.task ?? manifest.task);
const src = (c: Case): string => fs.readFileSync(path.join(hostileDir, c.file), 'utf8');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-hostile-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const ISSUE_CASES = [
  'syntax_error', 'link_error', 'illegal_memory_access', 'oob_write_neighbour', 'kernel_infinite_loop', 'host_infinite_loop', 'huge_device_alloc',
  'huge_host_alloc', 'stdout_flood', 'crash_abort', 'crash_segfault', 'wrong_result', 'nan_output', 'half_output', 'stale_after_first_call',
  'cache_by_address', 'cache_by_content', 'shrink_problem', 'second_stream', 'host_thread', 'timer_override', 'read_reference', 'device_reset',
  'system_call', 'network_connect', 'spawn_processes',
];

describe('hostile corpus (no GPU)', () => {
  it('lists at least 25 cases, every one a file, with an outcome from the vocabulary and a reason', () => {
    expect(manifest.cases.length).toBeGreaterThanOrEqual(25);
    const names = new Set(manifest.cases.map((c) => c.case));
    expect(names.size).toBe(manifest.cases.length);
    for (const n of ISSUE_CASES) expect(names.has(n), `case ${n} (from the issue) is missing`).toBe(true);
    for (const c of manifest.cases) {
      expect(fs.existsSync(path.join(hostileDir, c.file)), c.file).toBe(true);
      expect(Object.keys(manifest.outcomes)).toContain(c.expected);
      expect(c.reason.length).toBeGreaterThan(20);
    }
    // Every .cu in the folder is listed.
    const files = fs.readdirSync(hostileDir).filter((f) => f.endsWith('.cu'));
    expect(files.sort()).toEqual(manifest.cases.map((c) => c.file).sort());
  });

  it('the `rejected` cases are rejected by the screen, naming why; every other case passes it', () => {
    for (const c of manifest.cases) {
      const f = screenVariant(taskOf(c), src(c));
      if (c.expected === 'rejected') {
        expect(f, `${c.case} should be rejected`).not.toBeNull();
        expect(f!.kind).toBe('rejected');
        expect(f!.reason).toMatch(/^screening: line \d+: .+ is not allowed/);
      } else {
        expect(f, `${c.case} should pass the screen: ${f?.reason}`).toBeNull();
      }
    }
  });

  it.skipIf(NO_NVCC)('the `compile` cases fail to build with nvcc; all other screened-in cases build', async () => {
    const env: BuildEnv = { nvcc: NVCC!.nvcc, nvccVersion: NVCC!.version, arch: 'sm_90', libDir: NVCC!.libDir, workRoot: root, timeoutMs: 120_000 };
    const toBuild = manifest.cases.filter((c) => c.expected !== 'rejected');
    const results = await Promise.all(toBuild.map(async (c) => [c, await buildVariant(taskOf(c), { source: src(c), config: {}, flags: { opt: 3 } }, env)] as [Case, BuildResult]));
    const wrong: string[] = [];
    for (const [c, r] of results) {
      if (c.expected === 'compile') {
        if (r.ok || r.failure?.kind !== 'compile') wrong.push(`${c.case}: expected a compile failure, got ${r.ok ? 'a library' : `${r.failure?.kind}: ${r.failure?.reason}`}`);
      } else if (!r.ok) wrong.push(`${c.case}: expected to build, got ${r.failure?.kind}: ${r.failure?.reason}\n${r.failure?.log?.slice(-1500) ?? ''}`);
    }
    expect(wrong, wrong.join('\n\n')).toEqual([]);
    const link = results.find(([c]) => c.case === 'link_error')![1];
    expect(link.failure?.log ?? link.log).toMatch(/missing_helper_function/);
  }, 170_000);
});
