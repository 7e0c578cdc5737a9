// What `kernelduel optimize` says while it runs, without a GPU: a baseline that does not build stops
// the run at once with its error (no budget spent on it); failed variants get a line of their own,
// also above the progress bar in a terminal; compile-only lines show each variant's configuration,
// flags and registers; the ETA is never a non-number. And the task argument: a folder here with a
// built-in task's name is announced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { listSessions } from '../main/engine/session/list.js';
import { openSessionReadOnly } from '../main/engine/session/store.js';
import { etaText, describeVariant } from '../main/doors/cli/progress.js';
import { chooseTaskDir } from '../main/engine/task/resolve.js';
import { cliEnv, runCli, showRun, KERNELDUEL_BIN as BIN, REPO, type CliRun } from './fixtures/cli.js';
import { NO_NVCC } from './fixtures/toolchain.js';

let home: string;
let work: string;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-opt-home-'));
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-opt-work-'));
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => cliEnv(home);
const cli = (cwd: string, ...args: string[]): Promise<CliRun> => runCli(home, args, { cwd });
const show = showRun;

/** A copy of the built-in axpy task whose kernel does not build for BLOCK 512 and 1024. */
function axpyWithFailures(): string {
  const dir = path.join(work, 'axpy-fails');
  fs.cpSync(path.join(builtinTasksDir(), 'axpy'), dir, { recursive: true });
  const k = path.join(dir, 'kernel.cu');
  fs.writeFileSync(k, '#if defined(BLOCK) && BLOCK >= 512\n#error "BLOCK 512 and 1024 do not build in this copy"\n#endif\n' + fs.readFileSync(k, 'utf8'));
  return dir;
}

describe('a baseline that does not build', () => {
  it.skipIf(NO_NVCC)('stops optimize at once with its error and a non-zero exit, spending none of the budget', async () => {
    const dir = path.join(work, 'axpy-broken');
    fs.cpSync(path.join(builtinTasksDir(), 'axpy'), dir, { recursive: true });
    fs.appendFileSync(path.join(dir, 'kernel.cu'), '\nthis does not compile;\n');
    const r = await cli(REPO, 'optimize', dir, '--budget', '20');
    expect(r.code, show(r)).not.toBe(0);
    expect(r.stderr).toMatch(/kernelduel: the baseline of task axpy \(.*axpy-broken\/kernel\.cu\) fails \[compile\]: variant\.cu\(\d+\): error/);
    expect(r.stderr).toMatch(/kernelduel eval .*axpy-broken/);
    expect(r.stderr).not.toMatch(/export .* --best/);
    const [s] = listSessions(path.join(home, 'sessions'));
    const snap = openSessionReadOnly(path.join(home, 'sessions'), s.id);
    expect(snap.variants().map((v) => v.origin)).toEqual(['baseline']);
    expect(snap.status()).toMatchObject({ status: 'stopped', budgetUsed: 0 });
  }, 120_000);
});

describe('progress lines', () => {
  it.skipIf(NO_NVCC)('compile-only, not a terminal: one line per variant with its configuration and registers, failures with their first line', async () => {
    const dir = axpyWithFailures();
    const r = await cli(REPO, 'optimize', dir, '--budget', '8', '--tunables-only', '--seed', '2');
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toMatch(/^\[\d\/8\] v\d+ built \(compile-only\): BLOCK=\d+ ITEMS=\d+ VEC=\d GRID_MULT=\d+; .*\d+ regs \| best - \| ETA (\d+m)?\d+s$/m);
    expect(r.stderr).toMatch(/^\[\d\/8\] v\d+ FAILED \[compile\] .*#error "BLOCK 512 and 1024 do not build in this copy" \(BLOCK=(512|1024) /m);
    expect(r.stderr).not.toMatch(/NaN|Infinity|NF|INF/);
  }, 170_000);

  it.skipIf(NO_NVCC)('in a terminal: failed and built variants get lines above the bar, and the ETA is "-" before there is a rate, never NFs', async (ctx) => {
    if (spawnSync('script', ['--version']).status !== 0) ctx.skip();
    const dir = axpyWithFailures();
    // util-linux `script` gives the CLI a terminal for its stderr.
    const cmd = [process.execPath, BIN, 'optimize', dir, '--budget', '8', '--tunables-only', '--seed', '2'].map((a) => `'${a}'`).join(' ');
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env: { ...env(), TERM: 'xterm' }, encoding: 'utf8', timeout: 170_000 });
    expect(r.status, r.stdout).toBe(0);
    // eslint-disable-next-line no-control-regex -- the terminal's escape sequences are what this reads past
    const text = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '\n').replace(/\r/g, '\n');
    expect(text).toMatch(/v\d+ FAILED \[compile\] .*#error "BLOCK 512 and 1024 do not build in this copy" \(BLOCK=(512|1024) ITEMS=/);
    expect(text).toMatch(/v\d+ built \(compile-only\): BLOCK=\d+ .*\d+ regs/);
    expect(text).toMatch(/\d\/8 \| ETA - \| best -/);
    expect(text).toMatch(/8\/8 \| ETA 0s \| best -/);
    expect(text).not.toMatch(/ETA (NFs|INF|NULL)/);
  }, 170_000);

  it('etaText: "-" without a rate, minutes and hours when long', () => {
    expect(etaText(5000, 0, 10)).toBe('-');
    expect(etaText(Number.NaN, 3, 10)).toBe('-');
    expect(etaText(10_000, 5, 10)).toBe('10s');
    expect(etaText(65_000, 1, 2)).toBe('1m05s');
    expect(etaText(3_700_000, 1, 2)).toBe('1h01m');
    expect(etaText(1000, 12, 10)).toBe('0s');
    expect(describeVariant({ config: { B: 2 }, flags: { opt: 3, fastMath: true, maxrregcount: 32 }, transforms: ['unroll:L1'] })).toBe('B=2 --use_fast_math -maxrregcount=32 unroll:L1');
  });
});

describe('a task argument that names a folder here and a built-in task', () => {
  it.skipIf(NO_NVCC)('uses the folder when it is a task folder, the built-in task otherwise, and says which', async () => {
    const here = path.join(work, 'cwd-task');
    fs.mkdirSync(here, { recursive: true });
    fs.cpSync(path.join(builtinTasksDir(), 'axpy'), path.join(here, 'axpy'), { recursive: true });
    const r = await cli(here, 'eval', 'axpy');
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toContain(`note: task "axpy": the task folder ${path.join(here, 'axpy')} is used, not the built-in task axpy (${path.join(builtinTasksDir(), 'axpy')})`);
    const plain = path.join(work, 'cwd-plain');
    fs.mkdirSync(path.join(plain, 'axpy'), { recursive: true });
    const prev = process.cwd();
    try {
      process.chdir(plain);
      expect(chooseTaskDir('axpy')).toEqual({ dir: path.join(builtinTasksDir(), 'axpy'), note: `task "axpy": ${path.join(plain, 'axpy')} is not a task folder (no task.yaml), so the built-in task axpy is used` });
      expect(chooseTaskDir('./axpy').dir).toBe(path.join(plain, 'axpy')); // a path is a path
    } finally {
      process.chdir(prev);
    }
    // `tasks` lists the built-in tasks, whatever folders the current directory holds.
    const t = await cli(here, 'tasks', '--json');
    expect((JSON.parse(t.stdout) as Array<{ name: string; dir: string }>).find((x) => x.name === 'axpy')?.dir).toBe(path.join(builtinTasksDir(), 'axpy'));
  }, 120_000);
});
