// The command line without a GPU: run as a child process with a private KERNELDUEL_HOME and an
// nvidia-smi that does not exist, so every command takes its compile-only path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession } from '../main/engine/session/store.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { runCli, showRun, SOURCE_BIN, type CliRun } from './fixtures/cli.js';

let home: string;
let work: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'kd-cli-home-'));
  work = mkdtempSync(join(tmpdir(), 'kd-cli-work-'));
});
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** The CLI as test/fixtures/cli.ts runs it (the build of this run's sources), its files in `home`. */
const cli = (...args: string[]): Promise<CliRun> => runCli(home, args);
const show = showRun;

describe('kernelduel without a GPU', () => {
  it.skipIf(NO_NVCC)('gpus --json parses and reports no GPU with the compile-only message', async () => {
    const r = await cli('gpus', '--json');
    expect(r.code, show(r)).toBe(0);
    const env = JSON.parse(r.stdout) as { gpu: { gpus: unknown[]; problems: string[] }; toolchain: { nvcc: string | null }; canCompile: boolean; canRun: boolean; messages: string[] };
    expect(env.gpu.gpus).toEqual([]);
    expect(env.canRun).toBe(false);
    expect(env.canCompile).toBe(true);
    expect(env.toolchain.nvcc).toBeTruthy();
    expect(env.gpu.problems.join('\n')).toContain('/nonexistent');
    expect(env.messages.join('\n')).toMatch(/compile-only/i);
  });

  it('tasks lists the built-in tasks with their space sizes', async () => {
    const r = await cli('tasks');
    expect(r.code, show(r)).toBe(0);
    for (const n of ['softmax', 'reduce_sum', 'matmul']) expect(r.stdout).toMatch(new RegExp(`^${n}\\s+\\d+ configs`, 'm'));
    expect(r.stdout).not.toContain('ERROR');
    const json = await cli('tasks', '--json');
    const list = JSON.parse(json.stdout) as Array<{ name: string; space: number }>;
    expect(list.find((t) => t.name === 'softmax')?.space).toBeGreaterThanOrEqual(200);
  });

  it("the checkout's launcher (bin/kernelduel.mjs) runs the sources through tsx and says the same", async () => {
    // The other tests run the CLI built for this test run (test/global-setup.ts); this one the path a
    // developer's checkout takes, from another folder (the launcher finds its own tsx).
    const args = ['tasks', '--json'];
    const [fromSources, built] = await Promise.all([runCli(home, args, { cwd: work, bin: SOURCE_BIN }), runCli(home, args, { cwd: work })]);
    expect(fromSources.code, show(fromSources)).toBe(0);
    expect(JSON.parse(fromSources.stdout)).toEqual(JSON.parse(built.stdout));
  });

  it.skipIf(NO_NVCC)('eval softmax builds the baseline and says it is compile-only (exit 0)', async () => {
    const r = await cli('eval', 'softmax');
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/build: ok/);
    expect(r.stdout).toMatch(/softmax_kernel(<\d+>)?: \d+ regs/);
    expect(r.stdout).toMatch(/compile-only/);
    expect(r.stderr).toMatch(/compile-only/);
    expect(existsSync(join(home, 'work'))).toBe(true);
  });

  it.skipIf(NO_NVCC)('eval softmax --json gives the build result and compileOnly', async () => {
    const r = await cli('eval', 'softmax', '--json');
    expect(r.code, show(r)).toBe(0);
    const j = JSON.parse(r.stdout) as { task: string; result: { build: { ok: boolean; cached?: boolean }; compileOnly?: boolean; failure?: unknown } };
    expect(j.task).toBe('softmax');
    expect(j.result.build.ok).toBe(true);
    expect(j.result.build.cached).toBe(true); // built by the previous test in the same home
    expect(j.result.compileOnly).toBe(true);
    expect(j.result.failure).toBeUndefined();
  });

  it.skipIf(NO_NVCC)('eval of a variant with a syntax error exits non-zero and shows [compile] with the line', async () => {
    writeFileSync(join(work, 'bad.cu'), 'void softmax(const float* x, float* y, int rows, int cols) {\n  int q = ;\n}\n');
    const r = await cli('eval', 'softmax', join(work, 'bad.cu'));
    expect(r.code, show(r)).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('[compile]');
    expect(r.stdout + r.stderr).toMatch(/variant\.cu\(2\): error/);
  });

  it('eval of a malformed task folder exits 1 naming the field and line', async () => {
    const dir = join(work, 'broken-task');
    mkdirSync(dir, { recursive: true });
    const src = readFileSync(join(builtinTasksDir(), 'softmax', 'task.yaml'), 'utf8');
    const bad = src.replace('dtype: f32, shape: [rows, cols], role: in', 'dtype: f16, shape: [rows, cols], role: in');
    expect(bad).not.toBe(src);
    writeFileSync(join(dir, 'task.yaml'), bad);
    for (const f of ['kernel.cu', 'reference.cu']) writeFileSync(join(dir, f), readFileSync(join(builtinTasksDir(), 'softmax', f), 'utf8'));
    const r = await cli('eval', dir);
    expect(r.code, show(r)).toBe(1);
    expect(r.stderr).toMatch(/task\.yaml/);
    expect(r.stderr).toMatch(/args\[0\]\.dtype \(line \d+\)/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // a task error is a message, not a stack trace
  });

  it('an unknown task name lists the built-in ones and exits 1', async () => {
    const r = await cli('eval', 'no_such_task_kd');
    expect(r.code, show(r)).toBe(1);
    expect(r.stderr).toContain('no task "no_such_task_kd"');
    for (const n of ['softmax', 'reduce_sum', 'matmul']) expect(r.stderr).toContain(n);
  });

  let sessionId = '';
  it.skipIf(NO_NVCC)('optimize --budget 3 in compile-only creates a session with the baseline and exactly 3 variants, each with a result', async () => {
    const r = await cli('optimize', 'softmax', '--budget', '3');
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toMatch(/compile-only/);
    const m = /session (\S+) \(/.exec(r.stderr);
    expect(m, show(r)).not.toBeNull();
    sessionId = m![1];

    const ls = await cli('sessions', '--json');
    expect(ls.code, show(ls)).toBe(0);
    const list = JSON.parse(ls.stdout) as Array<{ id: string; variants: number; results: number; status?: string; budgetUsed?: number; meta?: { task: { name: string }; gpu: unknown } }>;
    const s = list.find((x) => x.id === sessionId);
    expect(s, ls.stdout).toBeDefined();
    expect(s!.meta?.task.name).toBe('softmax');
    expect(s!.meta?.gpu).toBeNull();
    expect(s!.variants).toBe(4);
    expect(s!.results).toBe(4);
    expect(s!.status).toBe('finished');
    expect(s!.budgetUsed).toBe(3);

    const session = openSession(join(home, 'sessions'), sessionId);
    try {
      const vs = session.variants();
      expect(vs.map((v) => v.origin)).toEqual(['baseline', 'random', 'random', 'random']);
      const configs = new Set(vs.map((v) => JSON.stringify(v.config)));
      expect(configs.size).toBe(4);
      for (const v of vs) {
        const res = session.resultOf(v.id);
        expect(res, v.id).toBeDefined();
        expect(res!.compileOnly).toBe(true);
        expect(res!.build.ok, `${v.id} ${JSON.stringify(v.config)}: ${res!.build.failure?.reason}`).toBe(true);
        expect(res!.timing).toBeUndefined();
      }
      expect(session.best()).toBeNull();
    } finally {
      session.close();
    }
  });

  it.skipIf(NO_NVCC)('export --best of a compile-only session fails with the "no successful timed variant" message', async () => {
    expect(sessionId).not.toBe('');
    const r = await cli('export', sessionId, '--best', '-o', join(work, 'x.cu'));
    expect(r.code, show(r)).not.toBe(0);
    expect(r.stderr).toContain(`session ${sessionId} has no successful timed variant`);
    expect(existsSync(join(work, 'x.cu'))).toBe(false);
  });

  it.skipIf(NO_NVCC)('export of a specific variant of a compile-only session writes it', async () => {
    const r = await cli('export', sessionId, '--variant', 'v2', '-o', join(work, 'v2.cu'));
    expect(r.code, show(r)).toBe(0);
    const text = readFileSync(join(work, 'v2.cu'), 'utf8');
    expect(text).toContain('void softmax(');
  });
});
