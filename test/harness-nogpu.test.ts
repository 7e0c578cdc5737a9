// The harness's own failure paths, exercised on a machine without a GPU: every mode must still
// write a result file (with the caller's nonce) that says why, and the sweep must record a line
// per library before giving up on a broken CUDA context.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { findToolchain } from '../main/toolchain/nvcc.js';
import { ensureHarness, runHarness } from '../main/eval/harness.js';
import { findBwrap, sandboxStatus } from '../main/sandbox/index.js';

const hasGpu = (() => {
  try {
    execFileSync('nvidia-smi', ['-L'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
})();

/** The harness, built once for every test in this file (in a work root of its own). */
let built: Promise<string> | null = null;
function buildHarness(): Promise<string> {
  built ??= (async () => {
    const tc = await findToolchain();
    if (!tc.nvcc || !tc.version) throw new Error('nvcc is needed for this test');
    return ensureHarness({ nvcc: tc.nvcc, nvccVersion: tc.version, arch: 'sm_90', libDir: tc.libDir, workRoot: mkdtempSync(join(tmpdir(), 'kd-harness-build-')) });
  })();
  return built;
}

/** Runs one of the harness's self-test modes (no GPU) in a folder of its own; its parsed result. */
async function selftest<B>(mode: string, nonce: string, o: { dir?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<{ nonce: string; body: B }> {
  const h = await buildHarness();
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), `kd-harness-${mode}-`));
  const plan = join(dir, 'plan.txt');
  writeFileSync(plan, `kdplan 1\nnonce ${nonce}\nrefdir /nonexistent\nseeds 1\nsize 0\nbuffer x f32 in 10 uniform -1 1\n`);
  const out = join(dir, 'selftest.json');
  execFileSync(h, [mode, plan, out], { cwd: dir, timeout: o.timeout ?? 30_000, env: { ...process.env, ...(o.env ?? {}) } });
  return JSON.parse(readFileSync(out, 'utf8')) as { nonce: string; body: B };
}

describe.skipIf(hasGpu)('harness without a GPU', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kd-harness-nogpu-'));
  const harness = buildHarness();
  const plan = join(dir, 'plan.txt');
  writeFileSync(plan, 'kdplan 1\nnonce n0nce\nrefdir /nonexistent\nseeds 1\nsize 0\nbuffer x f32 in 10 uniform -1 1\n');

  it('a one-shot mode writes a runtime failure naming the CUDA error, with the nonce', async () => {
    const h = await harness;
    const out = join(dir, 'probe.json');
    execFileSync(h, ['probe', plan, out]);
    const r = JSON.parse(readFileSync(out, 'utf8')) as { nonce: string; status: string; error: string };
    expect(r.nonce).toBe('n0nce');
    expect(r.status).toBe('runtime');
    expect(r.error).toMatch(/cudaGetDeviceCount/);
  });

  it('the sweep records the failing library as a line, then exits 3 on a broken context', async () => {
    const h = await harness;
    const list = join(dir, 'list.txt');
    writeFileSync(list, 'v7 /nonexistent/variant.so\nv8 /nonexistent/other.so\n');
    const out = join(dir, 'sweep.jsonl');
    let code = 0;
    try {
      execFileSync(h, ['sweep', plan, out, list]);
    } catch (e) {
      code = (e as { status: number }).status;
    }
    expect(code).toBe(3);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; status: string; error: string; nonce: string });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ id: 'v7', status: 'runtime', nonce: 'n0nce' });
    expect(lines[0].error).toMatch(/cannot load \/nonexistent\/variant\.so/);
  });

  it('a failure in the middle of a mode still leaves a valid result: check and time name the CUDA error', async () => {
    const h = await harness;
    // A library that exports the entry point: the modes get past loading it and fail at the first
    // device allocation, after they have started writing their body.
    const lib = join(dir, 'entry.so');
    writeFileSync(join(dir, 'entry.c'), 'void kd_entry_packed(void** a) { (void)a; }\n');
    execFileSync('cc', ['-shared', '-fPIC', '-o', lib, join(dir, 'entry.c')]);
    for (const mode of ['check', 'time', 'checktime']) {
      const out = join(dir, `${mode}.json`);
      execFileSync(h, [mode, plan, out, lib]);
      const r = JSON.parse(readFileSync(out, 'utf8')) as { nonce: string; status: string; error: string; body: unknown; stage?: string };
      expect(r).toMatchObject({ nonce: 'n0nce', status: 'runtime', body: {} });
      expect(r.error).toMatch(/cuda\w+/);
      // check and time in one process: the result says the run ended in the check stage
      expect(r.stage).toBe(mode === 'checktime' ? 'check' : undefined);
    }
  });
});

describe.skipIf(process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch))('the harness system-call filter', () => {
  it('stops new processes, IP sockets and signals to others; threads, Unix sockets and signals to itself still work', async () => {
    const r = await selftest<Record<string, number | string>>('filter-selftest', 'f1lter');
    expect(r.nonce).toBe('f1lter');
    const b = r.body;
    const eperm = -Number(b.eperm);
    expect(b.filter).toBe('active');
    expect(b).toMatchObject({ fork: eperm, inet: eperm, inet6: eperm, killOther: eperm, killAll: eperm, exec: eperm });
    expect(b.forkEarlyThread).toBe(eperm); // a thread started before the filter is filtered too (TSYNC)
    expect(b).toMatchObject({ thread: 0, unix: 0, killSelf: 0 });
    expect(b.system).not.toBe(0); // system("true") cannot start a shell
  });
});

describe('the harness comparison', () => {
  it('compares large outputs on several threads, against references kept masked in memory, with the same counts, first bad element and errors as one plain pass', async () => {
    type S = { bad: number; first: number; maxabs: number | null; maxrel: number | null; num: number; den: number; fg: number | null };
    const r = await selftest<{ serial: S; threaded: S; maskedDiffers: boolean }>('compare-selftest', 'c0mp', { timeout: 60_000, env: { KERNELDUEL_SYSCALL_FILTER: 'off' } });
    expect(r.body.maskedDiffers).toBe(true); // the threaded pass compared against a masked copy
    const { serial, threaded } = r.body;
    // 4 elements off by 0.5 and one NaN, the first at 3 Mi (in the middle of a chunk).
    expect(serial.bad).toBe(5);
    expect(serial.first).toBe(3 << 20);
    expect(threaded.bad).toBe(serial.bad);
    expect(threaded.first).toBe(serial.first);
    expect(threaded.fg).toBe(serial.fg);
    expect(threaded.maxabs).toBe(serial.maxabs);
    expect(threaded.maxrel).toBe(serial.maxrel);
    expect(threaded.num).toBeCloseTo(serial.num, 9);
    expect(threaded.den / serial.den).toBeCloseTo(1, 12);
  });
});

describe.skipIf(process.platform !== 'linux')('the reference folder out of the variant\'s reach (Landlock)', () => {
  it('nothing beneath the hidden folder can be read, written, planted or listed; everything beside it still works', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kd-harness-hide-'));
    // The layout of a real work root: refs/<task>-<key>/… beside the run folders.
    const refs = join(root, 'work', 'refs');
    const run = join(root, 'work', 'runs', 'r1');
    mkdirSync(join(refs, 'softmax-abc'), { recursive: true });
    mkdirSync(run, { recursive: true });
    const secret = join(refs, 'softmax-abc', 'ref_s0_1_y.bin');
    writeFileSync(secret, 'reference');
    const visible = join(root, 'work', 'visible.txt');
    writeFileSync(visible, 'ok');
    const { body: b } = await selftest<Record<string, number | string>>('hide-selftest', 'h1de', { dir: run, env: { KD_SELFTEST_HIDE: refs, KD_SELFTEST_SECRET: secret, KD_SELFTEST_VISIBLE: visible } });
    expect(b.state).toMatch(/^hidden/);
    const eacces = -Number(b.eacces);
    expect(b).toMatchObject({ readSecret: eacces, writeSecret: eacces, plant: eacces, listHidden: eacces, readVisible: 0, readSystem: 0 });
    expect(readFileSync(secret, 'utf8')).toBe('reference');
  });

  // The probe tries Landlock on a folder beside its own work folder. On the H200 (2026-11-30) that
  // folder was not bound into the bubblewrap sandbox, so the trial said "not applied: No such file
  // or directory" although check runs (whose refdir is bound) hid their references. A folder the
  // run is given to read is there inside the sandbox, and Landlock hides it there too.
  it.runIf(!!findBwrap())('inside the bubblewrap sandbox a folder bound for reading is hidden; one not bound is not even there', async () => {
    const st = await sandboxStatus({ ...process.env, KERNELDUEL_SANDBOX: 'auto' });
    expect(st.active, st.problem).toBe(true);
    const h = await buildHarness();
    const root = mkdtempSync(join(tmpdir(), 'kd-harness-hide-bwrap-'));
    const trial = join(root, 'work', 'probe-hidden-trial');
    mkdirSync(trial, { recursive: true });
    const secret = join(trial, 'secret.bin');
    writeFileSync(secret, 'reference');
    const visible = join(root, 'work', 'visible.txt');
    writeFileSync(visible, 'ok');
    const saved = { ...process.env };
    Object.assign(process.env, { KD_SELFTEST_HIDE: trial, KD_SELFTEST_SECRET: secret, KD_SELFTEST_VISIBLE: visible });
    try {
      const run = (readable: string[], dir: string) =>
        runHarness<Record<string, number | string>>({ harness: h, mode: 'hide-selftest', plan: null, libs: [], workDir: join(root, 'work', dir), gpu: null, timeoutMs: 30_000, isolation: { readable } });
      const bound = await run([trial, visible], 'probe');
      expect(bound.ok, bound.failure?.reason).toBe(true);
      const b = bound.body!;
      const eacces = -Number(b.eacces);
      expect(b.state).toMatch(/^hidden/);
      expect(b).toMatchObject({ readSecret: eacces, listHidden: eacces, readVisible: 0 });
      expect(Number(b.plant)).toBeLessThan(0); // EACCES (Landlock) or EROFS (bound read-only)
      const unbound = await run([visible], 'probe2');
      expect(unbound.ok, unbound.failure?.reason).toBe(true);
      expect(String(unbound.body!.state)).toMatch(/not applied.*No such file/);
    } finally {
      for (const k of ['KD_SELFTEST_HIDE', 'KD_SELFTEST_SECRET', 'KD_SELFTEST_VISIBLE']) if (!(k in saved)) delete process.env[k];
    }
  });
});
