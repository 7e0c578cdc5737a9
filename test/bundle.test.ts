// The GPU-server bundle (scripts/bundle-gpu.mjs, `npm run bundle:gpu`): builds it into a temporary
// folder (so a dist-gpu/ you are copying is left alone) and runs its launchers with a PATH that has
// no Node.js on it, only bash and a few tools, to prove the bundled runtime is what runs.
// The first build fetches Node from the npm registry (npm pack, ~50 MB) and xz-compresses it; later
// builds reuse node_modules/.cache/kernelduel. The test builds with `--xz-level 0` (xz -0: 37 MB
// instead of -6's 29 MB, 7 s of CPU instead of 69 on CI's two cores; unpacked as fast): the size
// checked below is then an upper bound of the product's default bundle.
// Skipped when the registry cannot be reached and nothing is cached, or when not on Linux x86-64.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const NODE_VERSION = '22.23.5';
const SIZE_LIMIT = 60 * 1000 * 1000;
const BUILD_TIMEOUT_MS = 10 * 60_000;

const tmp = mkdtempSync(join(tmpdir(), 'kd-bundle-test-'));
const bundle = join(tmp, 'kernelduel');
let skipReason = '';

function dirSize(p: string): number {
  const st = statSync(p);
  return st.isDirectory() ? readdirSync(p).reduce((a, n) => a + dirSize(join(p, n)), 0) : st.size;
}

function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/** A folder to use as the whole PATH: symlinks to the given tools, and a `node` that fails loudly. */
function sandboxPath(name: string, tools: Record<string, string | null>): string {
  const bin = join(tmp, name);
  mkdirSync(bin, { recursive: true });
  for (const [t, p] of Object.entries(tools)) if (p) symlinkSync(p, join(bin, t));
  writeFileSync(join(bin, 'node'), `#!${which('bash')}\necho "the system node was run: $*" >&2\nexit 99\n`, { mode: 0o755 });
  return bin;
}

interface RunResult { code: number | null; stdout: string; stderr: string }
function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const coreTools = (): Record<string, string | null> => ({
  bash: which('bash'), mkdir: which('mkdir'), mv: which('mv'), rm: which('rm'), chmod: which('chmod'), readlink: which('readlink'),
});
let plainPath = '';
const shell = which('sh') ?? '/bin/sh';
const envFor = (path: string, runtimeDir: string): NodeJS.ProcessEnv => ({
  PATH: path, HOME: join(tmp, 'home'), KERNELDUEL_RUNTIME_DIR: runtimeDir, KERNELDUEL_HOME: join(tmp, 'kd-home'), LANG: 'C',
});

beforeAll(() => {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    skipReason = `the bundle carries a Linux x86-64 Node runtime; this is ${process.platform}-${process.arch}`;
    return;
  }
  const r = spawnSync(process.execPath, [join(repo, 'scripts', 'bundle-gpu.mjs'), '--out', bundle, '--xz-level', '0'], { cwd: repo, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (r.status === 3) {
    skipReason = `could not fetch the Node runtime from the npm registry (no network?): ${r.stderr.trim().split('\n').pop()}`;
    console.warn(`SKIPPED the bundle tests: ${skipReason}`);
    return;
  }
  if (r.status !== 0) throw new Error(`bundle-gpu.mjs failed (${r.status ?? r.signal}):\n${r.stderr}\n${r.stdout}`);
  mkdirSync(join(tmp, 'home'), { recursive: true });
  plainPath = sandboxPath('path-xz', { ...coreTools(), xz: which('xz'), sha256sum: which('sha256sum') });
}, BUILD_TIMEOUT_MS + 30_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('GPU-server bundle', () => {
  test('refuses an --xz-level that is not 0-9, naming the flag', () => {
    const r = spawnSync(process.execPath, [join(repo, 'scripts', 'bundle-gpu.mjs'), '--out', join(tmp, 'never'), '--xz-level', '12'], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--xz-level 12');
    expect(existsSync(join(tmp, 'never'))).toBe(false);
  });

  test('has the launchers, the bundled CLI, resources and the compressed runtime, under 60 MB', (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    for (const f of ['kernelduel', 'test-gpu', 'bench', 'README.txt', 'lib/runtime.sh', 'lib/kernelduel.mjs', 'runtime/node.xz', 'runtime/node.sha256', 'resources/harness/harness.cu']) {
      expect(existsSync(join(bundle, f)), f).toBe(true);
    }
    for (const f of ['kernelduel', 'test-gpu', 'bench']) expect(statSync(join(bundle, f)).mode & 0o111, `${f} is executable`).not.toBe(0);
    if (existsSync(join(repo, 'test', 'gpu', 'fixtures'))) expect(readdirSync(join(bundle, 'test-data', 'gpu', 'fixtures')).sort()).toEqual(readdirSync(join(repo, 'test', 'gpu', 'fixtures')).sort());
    const tests = existsSync(join(repo, 'test', 'gpu')) ? readdirSync(join(repo, 'test', 'gpu')).filter((n) => n.endsWith('.test.ts')) : [];
    for (const t of tests) expect(existsSync(join(bundle, 'lib', 'test-gpu', t.replace(/\.ts$/, '.mjs'))), t).toBe(true);
    // The source transforms' parser loads tree-sitter.wasm from beside the chunk that holds it (a bundle
    // built without it failed on the GPU server at the first transform search).
    expect(readdirSync(join(bundle, 'lib'), { recursive: true }).map(String).some((f) => f.endsWith('tree-sitter.wasm')), 'lib/**/tree-sitter.wasm').toBe(true);
    const size = dirSize(bundle);
    expect(size).toBeLessThan(SIZE_LIMIT);
    expect(statSync(join(bundle, 'runtime', 'node.xz')).size).toBeGreaterThan(10e6);
  });

  test("carries bubblewrap (Debian's package or this machine's) that runs on its own libraries", (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const v = spawnSync(join(bundle, 'bin', 'bwrap'), ['--version'], { encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^bubblewrap \d/);
    expect(existsSync(join(bundle, 'bin', 'bwrap.bin'))).toBe(true);
  });

  test('runs --version and tasks --json on the bundled runtime, with no node on PATH', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const found = spawnSync(shell, ['-c', 'command -v node'], { env: { PATH: plainPath }, encoding: 'utf8' });
    expect(found.stdout.trim(), 'the only node on PATH is the failing shim').toBe(join(plainPath, 'node'));
    const rt = join(tmp, 'rt-main');
    const env = envFor(plainPath, rt);
    const v = await run(join(bundle, 'kernelduel'), ['--version'], env);
    expect(v.stderr).not.toMatch(/system node was run/);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version);
    expect(v.stderr).toMatch(/unpacking the Node 22\.23\.5 runtime/);
    const node = join(rt, `node-${NODE_VERSION}`);
    expect(spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()).toBe(`v${NODE_VERSION}`);

    const t = await run(join(bundle, 'kernelduel'), ['tasks', '--json'], env);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr, 'the second run reuses the unpacked runtime').not.toMatch(/unpacking/);
    const tasks = JSON.parse(t.stdout) as { name: string; dir: string; error?: string }[];
    expect(tasks.map((x) => x.name).sort()).toEqual(readdirSync(join(repo, 'resources', 'tasks')).filter((n) => existsSync(join(repo, 'resources', 'tasks', n, 'task.yaml'))).sort());
    for (const x of tasks) {
      expect(x.error, x.name).toBeUndefined();
      expect(x.dir.startsWith(join(bundle, 'resources', 'tasks')), x.dir).toBe(true);
    }
  });

  test('unpacks with python3 (lzma, hashlib) when xz and sha256sum are missing', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const py = spawnSync('python3', ['-c', 'import lzma, hashlib, sys; print(sys.executable)'], { encoding: 'utf8' });
    if (py.status !== 0 || !py.stdout.trim()) return ctx.skip('no python3 with lzma here');
    const path = sandboxPath('path-py', { ...coreTools(), python3: py.stdout.trim() });
    const found = spawnSync(shell, ['-c', 'command -v xz || command -v sha256sum || command -v shasum || echo none'], { env: { PATH: path }, encoding: 'utf8' });
    expect(found.stdout.trim()).toBe('none');
    const rt = join(tmp, 'rt-py');
    const v = await run(join(bundle, 'kernelduel'), ['--version'], envFor(path, rt));
    expect(v.code, v.stderr).toBe(0);
    expect(existsSync(join(rt, `node-${NODE_VERSION}`))).toBe(true);
  });

  test('concurrent first runs all succeed and leave one runtime, no temporary files', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const rt = join(tmp, 'rt-concurrent');
    const rs = await Promise.all([0, 1, 2].map(() => run(join(bundle, 'kernelduel'), ['--version'], envFor(plainPath, rt))));
    for (const r of rs) expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(rt).sort()).toEqual([`node-${NODE_VERSION}`, `node-${NODE_VERSION}.sha256`]);
  });

  test('the bench launcher lists the bundled benchmarks', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const r = await run(join(bundle, 'bench'), [], envFor(plainPath, join(tmp, 'rt-main')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage: bench NAME/);
  });

  test('the bench launcher says why a benchmark run from the bundle folder cannot write bench/results there', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const inDir = (cwd: string, args: string[]): Promise<RunResult> => new Promise((resolve) => {
      execFile(join(bundle, 'bench'), args, { cwd, env: envFor(plainPath, join(tmp, 'rt-main')), encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
      });
    });
    const hint = /results go to \.\/bench\/results under the working folder, which here is this launcher/;
    expect((await inDir(bundle, ['timing-stability'])).stderr).toMatch(hint);
    expect((await inDir(bundle, ['timing-stability', '--out', join(tmp, 'ts-out')])).stderr).not.toMatch(hint);
    expect((await inDir(tmp, ['timing-stability'])).stderr).not.toMatch(hint);
  });

  test('the test-gpu launcher tells the tests how it was started and which bundle it is (for results files)', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const probe = join(tmp, 'env-probe.test.mjs');
    writeFileSync(probe, "import { test } from 'node:test';\ntest('env', () => { console.log('INVOKED=' + process.env.KERNELDUEL_INVOKED); console.log('BUNDLE=' + process.env.KERNELDUEL_BUNDLE); });\n");
    const r = await run(join(bundle, 'test-gpu'), ['--test-reporter=tap', probe], envFor(plainPath, join(tmp, 'rt-main')));
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(`INVOKED=./test-gpu --test-reporter=tap ${probe}`);
    const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
    expect(r.stdout).toMatch(new RegExp(`BUNDLE=${version.replace(/\./g, '\\.')}${commit ? ` of commit ${commit}` : ''}`));
  });

  test('a damaged runtime is refused with a clear message', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    writeFileSync(join(bundle, 'runtime', 'node.sha256'), `${'0'.repeat(64)}  node\n`);
    const rt = join(tmp, 'rt-bad');
    const r = await run(join(bundle, 'kernelduel'), ['--version'], envFor(plainPath, rt));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/damaged/);
    expect(existsSync(rt) ? readdirSync(rt) : []).toEqual([]);
  });
});
