// The plan file the harness reads, the harness source compiling with nvcc (no GPU runs it in CI),
// and the child-process runner every build and measurement goes through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_TIMING, ensureHarness, renderPlan, type PlanInput } from '../main/engine/measure/harness.js';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { builtinTasksDir, resourcesDir } from '../main/engine/base/paths.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { runProcess, tail } from '../main/engine/platform/proc/run.js';

const softmax = (): Task => loadTask(join(builtinTasksDir(), 'softmax'));
const PLAN_READER = join(resourcesDir(), 'harness', 'kd_plan.h');

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kd-harness-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function plan(task: Task, extra: Partial<PlanInput> = {}): PlanInput {
  return { task, sizes: [0, 3], seeds: [11, 22, 33], timed: [0], timing: DEFAULT_TIMING, ...extra };
}

describe('renderPlan', () => {
  it('writes header, tolerances, timing, timed sizes and each size\'s buffers and scalars', () => {
    const text = renderPlan(plan(softmax(), { sizeSeeds: { 0: [11] } }), 'n0nce');
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['kdplan 1', 'nonce n0nce', 'seeds 11 22 33']);
    expect(lines).toContain('tol f32 0.0001 1e-7'); // the task's own f32 tolerance
    expect(lines).toContain('tol f64 1e-9 1e-12'); // the default for dtypes it does not set
    expect(lines).toContain('timing 50 10 5000 0.0025 100 3000 0');
    expect(lines).toContain('timed 0');
    const s0 = lines.indexOf('size 0');
    const s3 = lines.indexOf('size 3');
    expect(s0).toBeGreaterThan(0);
    expect(s3).toBeGreaterThan(s0);
    expect(lines.slice(s0 + 1, s3)).toEqual([
      'sizeseeds 11',
      'buffer x f32 in 67108864 uniform -4 4',
      'buffer y f32 out 67108864 uniform -1 1',
      'scalar rows i32 8192',
      'scalar cols i32 8192',
    ]);
    expect(lines.slice(s3 + 1)).toEqual(['buffer x f32 in 15 uniform -4 4', 'buffer y f32 out 15 uniform -1 1', 'scalar rows i32 5', 'scalar cols i32 3', '']);
    expect(text.endsWith('\n')).toBe(true);
  });
  it('writes only the requested sizes, and custom timing settings', () => {
    const text = renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, maxMs: 500, flushBytes: 1 << 26 } }), 'x');
    expect(text.match(/^size /gm)).toEqual(['size ']);
    expect(text).toContain('size 2\n');
    expect(text).not.toMatch(/^timed/m);
    expect(text).toContain('timing 50 10 5000 0.0025 100 500 67108864');
    expect(text).not.toContain('sizeseeds');
    expect(text).not.toContain('flushclean'); // off unless asked for
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushClean: 1 } }), 'x')).toMatch(/^flushclean 1$/m);
    expect(text).not.toContain('flushcleanbytes'); // half the flush buffer unless asked for
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushClean: 1, flushCleanBytes: 1 << 23 } }), 'x')).toMatch(/^flushclean 1\nflushcleanbytes 8388608$/m);
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushCleanBytes: 1 << 23 } }), 'x')).toThrow(/flushCleanBytes needs flushClean 1/);
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushClean: 1, flushCleanBytes: 1000 } }), 'x')).toThrow(/multiple of 16 .*got 1000/);
    expect(text).not.toContain('flushsets'); // one flush buffer unless asked for
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushSets: 4 } }), 'x')).toMatch(/^flushsets 4$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushSets: 1 } }), 'x')).not.toContain('flushsets');
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, flushSets: 17 } }), 'x')).toThrow(/flushSets must be a whole number from 1 to 16 \(got 17\)/);
    // The duel's allocation and warm-up order (diagnostics, off by default): A first writes nothing.
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelAllocOrder: 1 } }), 'x')).toMatch(/^duelalloc 1$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelAllocOrder: 0 } }), 'x')).not.toContain('duelalloc');
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: DEFAULT_TIMING }), 'x')).not.toContain('duelalloc');
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelAllocOrder: 3 } }), 'x')).toThrow(/duelAllocOrder must be 0 \(A first\), 1 \(a coin toss per duel\) or 2 \(B first\) \(got 3\)/);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelWarmOrder: 2 } }), 'x')).toMatch(/^duelwarm 2$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: DEFAULT_TIMING }), 'x')).not.toContain('duelwarm');
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelWarmOrder: 1 } }), 'x')).toThrow(/duelWarmOrder must be 0 \(A first\) or 2 \(B first\) \(got 1\)/);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, spreadLarge: 1 } }), 'x')).toMatch(/^spreadlarge 1$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: DEFAULT_TIMING }), 'x')).toMatch(/^spreadlarge 1$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, spreadLarge: 0 } }), 'x')).not.toContain('spreadlarge');
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, spreadLarge: 2 } }), 'x')).toThrow(/spreadLarge must be 0 or 1 \(got 2\)/);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, sparesWait: 0 } }), 'x')).toMatch(/^sparewait 0$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: DEFAULT_TIMING }), 'x')).not.toContain('sparewait');
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, sparesWait: 1 } }), 'x')).not.toContain('sparewait');
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, sparesWait: 2 } }), 'x')).toMatch(/^sparewait 2$/m);
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, sparesWait: 3 } }), 'x')).toThrow(/sparesWait must be 0, 1 or 2 \(got 3\)/);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, timingContexts: 2 } }), 'x')).toMatch(/^timectx 2$/m);
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: DEFAULT_TIMING }), 'x')).not.toContain('timectx');
    expect(() => renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, timingContexts: 5 } }), 'x')).toThrow(/timingContexts must be a whole number from 1 to 4 \(got 5\)/);
    expect(text).not.toContain('dueltarget'); // a duel's target is the timing's unless asked for
    expect(renderPlan(plan(softmax(), { sizes: [2], timed: [], timing: { ...DEFAULT_TIMING, duelTargetRelNoise: 0.005 } }), 'x')).toMatch(/^dueltarget 0\.005$/m);
  });
  it('renders a well-formed plan for every built-in task and every size', () => {
    for (const name of readdirSync(builtinTasksDir())) {
      const t = loadTask(join(builtinTasksDir(), name));
      const text = renderPlan(plan(t, { sizes: t.manifest.sizes.map((_, i) => i), timed: t.timed }), 'n');
      const argsPerSize = t.manifest.args.length;
      expect(text.match(/^size \d+$/gm)?.length, name).toBe(t.manifest.sizes.length);
      expect((text.match(/^(buffer|scalar) /gm) ?? []).length, name).toBe(argsPerSize * t.manifest.sizes.length);
      for (const l of text.split('\n')) {
        if (l.startsWith('buffer ')) expect(l, name).toMatch(/^buffer \w+ (f32|f64|i32|u32|i64|u8) (in|out|inout) [1-9]\d* (uniform|int) -?[\d.e+-]+ -?[\d.e+-]+$/);
        if (l.startsWith('scalar ')) expect(l, name).toMatch(/^scalar \w+ (f32|f64|i32|u32|i64|u8) -?[\d.e+-]+$/);
      }
    }
  });
  it('writes the number of verified timed calls only when it is set', () => {
    expect(renderPlan(plan(softmax()), 'n')).not.toMatch(/^verify/m);
    expect(renderPlan(plan(softmax(), { verifySamples: 5 }), 'n')).toMatch(/^verify 5$/m);
  });
  it('uses only keys that the harness reads', () => {
    const src = readFileSync(PLAN_READER, 'utf8');
    const text = renderPlan(plan(softmax(), { sizeSeeds: { 0: [1] }, verifySamples: 2 }), 'n');
    const keys = new Set(text.split('\n').filter(Boolean).map((l) => l.split(' ')[0]));
    keys.delete('kdplan');
    expect(keys.size).toBeGreaterThanOrEqual(9);
    for (const k of keys) expect(src, `kd_plan.h does not read "${k}"`).toContain(`strcmp(key, "${k}")`);
  });
});

describe.skipIf(NO_NVCC)('the harness', () => {
  it('compiles with nvcc for sm_90 against the shared CUDA runtime, exporting the runtime wrappers a capture needs', async () => {
    const out = await ensureHarness({ nvcc: NVCC!.nvcc, nvccVersion: NVCC!.version, arch: 'sm_90', libDir: NVCC!.libDir, workRoot: tmp });
    expect(existsSync(out)).toBe(true);
    // The CUDA runtime calls a captured variant makes resolve to the harness's wrappers first.
    const dyn = await runProcess('nm', ['-D', '--defined-only', out], { timeoutMs: 30_000 });
    if (dyn.code === 0) for (const f of ['cudaDeviceSynchronize', 'cudaMemcpy_ptds', 'cudaMalloc']) expect(dyn.stdout, f).toMatch(new RegExp(` T ${f}$`, 'm'));
    // A linked ELF executable, not an object file.
    expect(readFileSync(out).subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(statSync(out).mode & 0o111).not.toBe(0);
  }, 180_000);
});

describe('the harness build across processes', () => {
  it('two processes asking for the same harness at once build it once; both get the binary', async () => {
    // A stand-in nvcc (no toolkit needed): counts its runs, takes a second, writes the output.
    const dir = mkdtempSync(join(tmp, 'two-'));
    const count = join(dir, 'runs.txt');
    const nvcc = join(dir, 'nvcc');
    writeFileSync(nvcc, `#!/bin/bash\necho run >> '${count}'\nsleep 1\nout=; prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done\nprintf built > "$out"\n`);
    chmodSync(nvcc, 0o755);
    const work = join(dir, 'work');
    mkdirSync(work);
    const mod = pathToFileURL(resolve('main/engine/measure/harness.ts')).href;
    const script = `import { ensureHarness } from '${mod}'; process.stdout.write(await ensureHarness({ nvcc: '${nvcc}', nvccVersion: 'fake', arch: 'sm_90', workRoot: '${work}' }));`;
    const one = () => runProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeoutMs: 60_000 });
    const [a, b] = await Promise.all([one(), one()]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(readFileSync(a.stdout, 'utf8')).toBe('built');
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1);
  }, 60_000);
});

/** Whether a process still runs (a zombie awaiting its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

describe('runProcess', () => {
  it('captures stdout, stderr and the exit code', async () => {
    const r = await runProcess('sh', ['-c', 'echo out; echo err >&2; exit 3'], { timeoutMs: 10_000 });
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, cancelled: false, outputTruncated: false });
    expect(r.spawnError).toBeUndefined();
  });
  it('a timeout kills the whole process group, grandchildren included', async () => {
    const started = Date.now();
    const r = await runProcess('sh', ['-c', 'sleep 60 & echo $!; wait'], { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5000);
    const grandchild = Number(r.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    await new Promise((res) => setTimeout(res, 200));
    expect(alive(grandchild)).toBe(false);
  });
  it('when the child exits, what it left running in its group is killed too', async () => {
    const dur = `59.${String(Date.now() % 1e6).padStart(6, '0')}${process.pid}`; // a command line nothing else runs
    const r = await runProcess('sh', ['-c', `(sleep ${dur} >/dev/null 2>&1 &) ; echo started`], { timeoutMs: 10_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('started\n');
    // The orphan kept no pipe open, so the run ended at once; find it and check it is gone.
    await new Promise((res) => setTimeout(res, 200));
    const survivors = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\u0000${dur}\u0000` && alive(Number(p));
        } catch {
          return false;
        }
      });
    expect(survivors).toEqual([]);
  });
  it('caps captured output and says it truncated, even when one chunk overflows', async () => {
    const big = await runProcess('sh', ['-c', 'head -c 300000 /dev/zero | tr "\\0" a'], { timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(big.stdout.length).toBe(1000);
    expect(big.outputTruncated).toBe(true);
    expect(big.code).toBe(0);
    const one = await runProcess('sh', ['-c', 'printf "%01500d" 0'], { timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(one.stdout.length).toBe(1000);
    expect(one.outputTruncated).toBe(true);
    const fits = await runProcess('sh', ['-c', 'printf "%0999d" 0'], { timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(fits.stdout.length).toBe(999);
    expect(fits.outputTruncated).toBe(false);
  });
  it('an AbortSignal cancels a running child promptly', async () => {
    const ac = new AbortController();
    const p = runProcess('sh', ['-c', 'sleep 60 & echo $!; wait'], { timeoutMs: 60_000, signal: ac.signal });
    await new Promise((res) => setTimeout(res, 200));
    const t = Date.now();
    ac.abort();
    const r = await p;
    expect(Date.now() - t).toBeLessThan(2000);
    expect(r.cancelled).toBe(true);
    expect(r.timedOut).toBe(false);
    await new Promise((res) => setTimeout(res, 200));
    expect(alive(Number(r.stdout.trim()))).toBe(false);
  });
  it('an already-aborted signal never lets the child run to completion', async () => {
    const ac = new AbortController();
    ac.abort();
    const t = Date.now();
    const r = await runProcess('sleep', ['60'], { timeoutMs: 60_000, signal: ac.signal });
    expect(r.cancelled).toBe(true);
    expect(Date.now() - t).toBeLessThan(2000);
  });
  it('spawning a missing binary reports spawnError instead of throwing', async () => {
    const r = await runProcess('/nonexistent/kd-no-such-binary', ['x'], { timeoutMs: 5000 });
    expect(r.spawnError).toMatch(/kd-no-such-binary.*ENOENT/);
    expect(r.code).toBeNull();
    expect(r.timedOut).toBe(false);
  });
  it('passes cwd and env to the child', async () => {
    const r = await runProcess('sh', ['-c', 'pwd; echo $KD_TEST_VAR'], { cwd: tmp, env: { ...process.env, KD_TEST_VAR: 'hello' }, timeoutMs: 5000 });
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([tmp, 'hello']);
  });
});

describe('tail', () => {
  it('keeps short logs and marks how much was cut from long ones', () => {
    expect(tail('abc', 10)).toBe('abc');
    expect(tail('0123456789', 4)).toBe('…(6 characters before)\n6789');
  });
});
