// The harness's own logic, exercised on a machine without a GPU: every one-shot mode still writes
// a result (with the caller's nonce) that says why it failed; the judge says why it cannot start;
// the system-call filter; reading device code out of a library (as data); and the work
// description, which the untrusted capture process writes and the executor must refuse whenever
// it does not hold together.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { HAS_GPU, NO_NVCC, NVCC, sharedHarness } from './fixtures/toolchain.js';

/** The harness, built once for the test files that share it (test/fixtures/toolchain.ts). */
const buildHarness = sharedHarness;

const PLAN = 'kdplan 1\nnonce n0nce\nseeds 1\nsize 0\nbuffer x f32 in 10 uniform -1 1\nbuffer y f32 out 10 uniform -1 1\nscalar n i32 10\n';

/** Runs a one-shot mode in a folder of its own; its parsed result. */
async function oneShot<B>(mode: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, planText = PLAN): Promise<{ nonce: string; status: string; error?: string; body: B }> {
  const h = await buildHarness();
  const dir = mkdtempSync(join(tmpdir(), `kd-harness-${mode}-`));
  const plan = join(dir, 'plan.txt');
  writeFileSync(plan, planText);
  const out = join(dir, 'result.json');
  execFileSync(h, [mode, plan, out, ...args], { cwd: dir, timeout: 60_000, env: { ...process.env, ...env } });
  return JSON.parse(readFileSync(out, 'utf8')) as { nonce: string; status: string; error?: string; body: B };
}

describe.skipIf(HAS_GPU || NO_NVCC)('harness modes without a GPU', () => {
  it('refuses a timing plan line out of range, naming it (flushsets 1-16, flushclean 0-1, flushcleanbytes a multiple of 16, duelalloc 0-2, duelwarm 0 or 2, spreadlarge 0-1, sparewait 0-2)', async () => {
    const h = await buildHarness();
    const dir = mkdtempSync(join(tmpdir(), 'kd-harness-planline-'));
    for (const line of ['flushsets 0', 'flushsets 17', 'flushclean 2', 'flushcleanbytes 0', 'flushcleanbytes 1000', 'flushcleanbytes 8', 'duelalloc 3', 'duelalloc -1', 'duelwarm 1', 'spreadlarge 2', 'sparewait 3', 'sparewait -1']) {
      const plan = join(dir, 'plan.txt');
      writeFileSync(plan, PLAN.replace('seeds 1\n', `seeds 1\n${line}\n`));
      const r = spawnSync(h, ['probe', plan, join(dir, 'result.json')], { cwd: dir, timeout: 60_000, encoding: 'utf8' });
      expect(r.status, line).not.toBe(0);
      expect(r.stderr, line).toContain(`bad plan line: ${line}`);
    }
    // In range, the plan is read and the probe goes on to the device (none here).
    const ok = await oneShot('probe', [], {}, PLAN.replace('seeds 1\n', 'seeds 1\nflushsets 4\nduelalloc 1\nduelwarm 2\nspreadlarge 1\nsparewait 2\n'));
    expect(ok.error).toMatch(/cudaGetDeviceCount/);
    const okBytes = await oneShot('probe', [], {}, PLAN.replace('seeds 1\n', 'seeds 1\nflushclean 1\nflushcleanbytes 7864320\n'));
    expect(okBytes.error).toMatch(/cudaGetDeviceCount/);
  });

  it('the probe writes a runtime failure naming the CUDA error, with the nonce', async () => {
    const r = await oneShot('probe');
    expect(r).toMatchObject({ nonce: 'n0nce', status: 'runtime' });
    expect(r.error).toMatch(/cudaGetDeviceCount/);
  });

  it('the capture writes a runtime failure (no driver), never a result that claims work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-harness-entry-'));
    const lib = join(dir, 'entry.so');
    writeFileSync(join(dir, 'entry.c'), 'void kd_entry_packed(void** a) { (void)a; }\n');
    execFileSync('cc', ['-shared', '-fPIC', '-o', lib, join(dir, 'entry.c')]);
    const r = await oneShot<{ syscallFilter?: string; sizes?: unknown }>('capture', [lib, join(dir, 'work.kdw')]);
    expect(r).toMatchObject({ nonce: 'n0nce', status: 'runtime' });
    expect(r.error).toMatch(/CUDA|cuda|driver/);
    expect(r.body.sizes).toBeUndefined();
  });

  it('the judge answers its hello with why it cannot start, then exits', async () => {
    const h = await buildHarness();
    const dir = mkdtempSync(join(tmpdir(), 'kd-harness-judge-'));
    const plan = join(dir, 'plan.txt');
    writeFileSync(plan, PLAN);
    const r = spawnSync(h, ['judge', plan, '/nonexistent/reference.so'], { input: 'eval\tx\n', encoding: 'utf8', timeout: 30_000 });
    const hello = JSON.parse(r.stdout.trim().split('\n')[0]) as { id: string; status: string; error: string };
    expect(hello.id).toBe('hello');
    expect(hello.status).toBe('runtime');
    expect(r.status).toBe(0);
  });
});

describe.skipIf(NO_NVCC || process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch))('the harness system-call filter', () => {
  it('stops new processes, IP sockets and signals to others; threads, Unix sockets and signals to itself still work', async () => {
    const r = await oneShot<Record<string, number | string>>('filter-selftest');
    expect(r.nonce).toBe('n0nce');
    const b = r.body;
    const eperm = -Number(b.eperm);
    expect(b.filter).toBe('active');
    expect(b).toMatchObject({ fork: eperm, inet: eperm, inet6: eperm, killOther: eperm, killAll: eperm, exec: eperm });
    expect(b.forkEarlyThread).toBe(eperm); // a thread started before the filter is filtered too (TSYNC)
    expect(b).toMatchObject({ thread: 0, unix: 0, killSelf: 0 });
    expect(b.system).not.toBe(0); // system("true") cannot start a shell
  });
});

describe.skipIf(NO_NVCC)('device code read out of a library as data', () => {
  type Parts = { ok: boolean; error?: string; sectionBytes?: number; parts?: Array<{ offset: number; bytes: number; holds: boolean[] }> };
  it('finds the fat binaries of an nvcc-built library and the one that holds its kernels', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-fatbin-'));
    writeFileSync(join(dir, 'k.cu'), '__global__ void kd_probe_kernel_one(float* y) { y[0] = 1; }\n__global__ void kd_probe_kernel_two(float* y) { y[1] = 2; }\n' +
      'extern "C" void kd_entry_packed(void** a) { kd_probe_kernel_one<<<1, 1>>>((float*)a[0]); kd_probe_kernel_two<<<1, 1>>>((float*)a[0]); }\n');
    const lib = join(dir, 'k.so');
    execFileSync(NVCC!.nvcc, ['-shared', '-Xcompiler', '-fPIC', '-cudart', 'shared', '--default-stream', 'per-thread', '-arch=sm_90', '-o', lib, join(dir, 'k.cu')], { timeout: 120_000 });
    const r = await oneShot<Parts>('fatbin-selftest', [lib, '_Z19kd_probe_kernel_onePf', '_Z19kd_probe_kernel_twoPf']);
    expect(r.body.ok, r.body.error).toBe(true);
    expect(r.body.parts!.length).toBeGreaterThanOrEqual(1);
    const holders = r.body.parts!.filter((p) => p.holds[0] && p.holds[1]);
    expect(holders).toHaveLength(1); // one translation unit: one fat binary with both kernels
    for (const p of r.body.parts!) expect(p.offset + p.bytes).toBeLessThanOrEqual(r.body.sectionBytes!);
  }, 120_000);

  it('refuses a file that is not an ELF library, and a library without device code, saying which', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-fatbin-bad-'));
    writeFileSync(join(dir, 'not.so'), 'hello');
    expect((await oneShot<Parts>('fatbin-selftest', [join(dir, 'not.so')])).body.error).toMatch(/not\.so: not a 64-bit ELF file/);
    writeFileSync(join(dir, 'c.c'), 'int f(void) { return 1; }\n');
    execFileSync('cc', ['-shared', '-fPIC', '-o', join(dir, 'c.so'), join(dir, 'c.c')]);
    expect((await oneShot<Parts>('fatbin-selftest', [join(dir, 'c.so')])).body.error).toMatch(/no \.nv_fatbin section/);
  });
});

describe.skipIf(NO_NVCC)('the work description a capture writes (read by the executor, untrusted)', () => {
  const VALID = [
    'kdwork 1',
    'module 0 1624 7232 /lib/variant.so',
    'blob 16',
    'scratch 0 8 0 8',
    'global 0 8 8 _ZL5g_tab',
    'gptr 0 scratch 0 0',
    'size 0',
    'op 0 memset arg 1 0 0 255 1 40 1',
    'op 1 kernel 0 _Z1kPKfPfi 1 1 1 32 1 1 0 0 0 0 0 0 -1 0:8,8:8,16:4 ' + '00'.repeat(20),
    'ptr 0 arg 0 0',
    'ptr 8 scratch 0 0',
    'dep 0 1',
    'end',
    '',
  ].join('\n');
  async function check(text: string, blob = Buffer.alloc(16)): Promise<{ status: string; error?: string; body: { ops?: number; text?: string } }> {
    const dir = mkdtempSync(join(tmpdir(), 'kd-workdesc-'));
    writeFileSync(join(dir, 'w.kdw'), text);
    writeFileSync(join(dir, 'w.kdw.blob'), blob);
    return oneShot('workdesc-selftest', [join(dir, 'w.kdw')]);
  }
  it('a well-formed description is read back as written', async () => {
    const r = await check(VALID);
    expect(r.status, r.error).toBe('ok');
    expect(r.body.ops).toBe(2);
    expect(r.body.text).toBe(VALID);
  });
  const broken: Array<[string, (s: string) => string, RegExp]> = [
    ['a pointer outside the parameter bytes', (s) => s.replace('ptr 8 scratch 0 0', 'ptr 16 scratch 0 0'), /pointer outside the parameter bytes/],
    ['a dependency that is not in topological order', (s) => s.replace('dep 0 1', 'dep 1 1'), /bad dependency/],
    ['a kernel of a module that is not listed', (s) => s.replace('op 1 kernel 0 ', 'op 1 kernel 3 '), /kernel of an unknown module/],
    ['a memset past the end of a task buffer', (s) => s.replace('255 1 40 1', '255 1 41 1'), /41 bytes at offset 0 lie outside its 40 bytes/],
    ['a pointer into memory that was never declared', (s) => s.replace('ptr 8 scratch 0 0', 'ptr 8 scratch 1 0'), /unknown scratch 1/],
    ['a size the plan does not have', (s) => s.replace('size 0', 'size 7'), /no such size in the plan/],
    ['a blob file of another length', (s) => s.replace('blob 16', 'blob 17'), /the blob file has 16 bytes/],
    ['a device variable that points anywhere but a workspace', (s) => s.replace('gptr 0 scratch 0 0', 'gptr 0 arg 0 0'), /may point into scratch only/],
    ['a device variable whose value lies outside the blob', (s) => s.replace('global 0 8 8 ', 'global 0 16 8 '), /value lies outside the blob/],
    ['a description cut off before its end', (s) => s.replace('end\n', ''), /cut off/],
    ['a grid with a zero dimension', (s) => s.replace('_Z1kPKfPfi 1 1 1', '_Z1kPKfPfi 0 1 1'), /zero grid or block dimension/],
    ['parameters whose layout runs past their bytes', (s) => s.replace('16:4', '16:8'), /parameter lies outside the parameter bytes/],
  ];
  for (const [what, edit, why] of broken) {
    it(`refuses ${what}, naming the line`, async () => {
      const r = await check(edit(VALID));
      expect(r.status).toBe('constraints');
      expect(r.error).toMatch(why);
    });
  }
  // Run-time code (a library's kernels as the driver loaded them, recorded through CUPTI: cuBLAS 13
  // keeps its kernels in no .nv_fatbin) lies beside the description, never at a path it names.
  const WITH_CODE = VALID.replace('module 0 1624 7232 /lib/variant.so\n', 'module 0 1624 7232 /lib/variant.so\ncode 1 80 module-26-loaded-at-run-time\n');
  const elf = (n: number): Buffer => Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(n - 4)]);
  async function checkCode(text: string, code: Buffer | null): Promise<{ status: string; error?: string; body: { code?: number; text?: string } }> {
    const dir = mkdtempSync(join(tmpdir(), 'kd-workdesc-code-'));
    writeFileSync(join(dir, 'w.kdw'), text);
    writeFileSync(join(dir, 'w.kdw.blob'), Buffer.alloc(16));
    if (code) writeFileSync(join(dir, 'w.kdw.code1'), code);
    return oneShot('workdesc-selftest', [join(dir, 'w.kdw')]);
  }
  it('reads run-time code from the file beside the description, and writes the record back as read', async () => {
    const r = await checkCode(WITH_CODE, elf(80));
    expect(r.status, r.error).toBe('ok');
    expect(r.body.code).toBe(1);
    expect(r.body.text).toBe(WITH_CODE);
  });
  it('refuses run-time code that is missing, of another size than declared, or not a device image', async () => {
    expect((await checkCode(WITH_CODE, null)).error).toMatch(/run-time code 1: .*w\.kdw\.code1/);
    expect((await checkCode(WITH_CODE, elf(81))).error).toMatch(/has 81 bytes, the description says 80/);
    expect((await checkCode(WITH_CODE, Buffer.alloc(80, 1))).error).toMatch(/not a device code image/);
    expect((await checkCode(WITH_CODE.replace('code 1 80 ', 'code 1 0 '), elf(80))).error).toMatch(/run-time code of 0 bytes/);
    expect((await checkCode(WITH_CODE.replace('code 1 80 ', 'code 2 80 '), elf(80))).error).toMatch(/bad code line/);
  });
  it('refuses a description that leaves a size of the plan without work', async () => {
    const r = await check(VALID.replace(/size 0\n[\s\S]*end\n/, 'end\n'));
    expect(r.status).toBe('constraints');
    expect(r.error).toMatch(/no work for size 0/);
  });
});

describe.skipIf(NO_NVCC || process.platform !== 'linux')('the capture process writes only to its own folder (Landlock)', () => {
  it('its folder is writable; files and folders beside it, and /proc/self/mem, are not; reading still works', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'kd-writes-outside-'));
    writeFileSync(join(outside, 'existing.bin'), 'built');
    const r = await oneShot<Record<string, number | string>>('writes-selftest', [outside]);
    const b = r.body;
    if (!String(b.state).startsWith('only to')) return; // no Landlock on this kernel: the engine says so (see the probe)
    const eacces = -Number(b.eacces);
    expect(b).toMatchObject({ own: 0, outsideNew: eacces, outsideExisting: eacces, procMem: eacces, readOutside: 0, devNull: 0 });
    expect(readFileSync(join(outside, 'existing.bin'), 'utf8')).toBe('built');
  });
});
