import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask, parseManifest, sizeLayout, TaskError, type Task } from '../main/engine/task/manifest.js';
import { configKey, defaultConfig, enumerateSpace, isValidConfig } from '../main/engine/task/space.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';

const BUILTIN = builtinTasksDir();
const builtinNames = readdirSync(BUILTIN, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

// A small valid task; each malformed case edits one line of it. Line numbers matter: tests
// assert that errors point at the right one.
const GOOD = `name: scale
entry: scale
args:
  - {name: x, kind: buffer, dtype: f32, shape: [n], role: in}
  - {name: y, kind: buffer, dtype: f32, shape: [n], role: out}
  - {name: n, kind: scalar, dtype: i32, value: n}
sizes:
  - {n: 1000}
  - {n: 7}
timed: [0]
tunables:
  BLOCK: [32, 64, 128]
  VEC: [1, 2, 4]
restrictions:
  - BLOCK * VEC <= 256
defaults: {BLOCK: 64, VEC: 1}
metrics:
  bytes: 2 * n * 4
  flops: n
`;
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

const KERNEL = `#include <cuda_runtime.h>
__global__ void k(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }
void scale(const float* x, float* y, int n) { k<<<(n + 127) / 128, 128>>>(x, y, n); }
`;

let root: string;
let counter = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kd-manifest-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function taskDir(yaml: string, files: Record<string, string | null> = {}): string {
  const dir = join(root, `t${counter++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'task.yaml'), yaml);
  const all: Record<string, string | null> = { 'reference.cu': KERNEL, 'kernel.cu': KERNEL, ...files };
  for (const [n, s] of Object.entries(all)) if (s !== null) writeFileSync(join(dir, n), s);
  return dir;
}

function taskError(dir: string): TaskError {
  try {
    loadTask(dir);
  } catch (e) {
    expect(e).toBeInstanceOf(TaskError);
    return e as TaskError;
  }
  throw new Error(`${dir} loaded without error`);
}

/** Loads GOOD with `from` replaced by `to` and expects an issue on `field` at the line holding `at`. */
function expectIssue(from: string, to: string, field: string, at: string | null, message?: RegExp): TaskError {
  expect(GOOD).toContain(from);
  const yaml = GOOD.replace(from, to);
  const e = taskError(taskDir(yaml));
  const issue = e.issues.find((i) => i.field === field);
  expect(issue, `no issue on ${field}; got ${e.message}`).toBeDefined();
  if (at !== null) {
    expect(issue!.line).toBe(lineOf(yaml, at));
    expect(e.message).toContain(`${field} (line ${issue!.line})`);
  }
  if (message) expect(issue!.message).toMatch(message);
  return e;
}

describe('built-in tasks', () => {
  it('includes softmax, reduce_sum and matmul', () => {
    expect(builtinNames).toEqual(expect.arrayContaining(['softmax', 'reduce_sum', 'matmul']));
  });
  for (const name of builtinNames) {
    it(`${name}: loads, and its space has at least 200 configurations including the defaults`, () => {
      const t = loadTask(join(BUILTIN, name));
      expect(t.manifest.name).toBe(name);
      expect(t.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(t.referenceSource).toContain(t.manifest.entry);
      expect(t.baselineSource).toContain(t.manifest.entry);
      const space = enumerateSpace(t);
      expect(space.length).toBeGreaterThanOrEqual(200);
      const keys = new Set(space.map(configKey));
      expect(keys.size).toBe(space.length);
      const d = defaultConfig(t);
      expect(Object.keys(d).sort()).toEqual(Object.keys(t.manifest.tunables ?? {}).sort());
      expect(isValidConfig(t, d)).toBe(true);
      expect(keys.has(configKey(d))).toBe(true);
      for (const si of t.timed) expect(si).toBeLessThan(t.manifest.sizes.length);
      for (let i = 0; i < t.manifest.sizes.length; i++) {
        const lay = sizeLayout(t, i);
        for (const a of lay.args) if (a.kind === 'buffer') expect(Number.isInteger(a.elements) && a.elements > 0).toBe(true);
      }
    });
  }
});

describe('a valid task', () => {
  it('loads with defaults applied (timed, tolerance, file names)', () => {
    const t = loadTask(taskDir(GOOD));
    expect(t.timed).toEqual([0]);
    expect(t.tolerance.f32).toEqual({ rtol: 1e-4, atol: 1e-6 });
    expect(t.baselinePath.endsWith('kernel.cu')).toBe(true);
    expect(t.referencePath.endsWith('reference.cu')).toBe(true);
  });
  it('enumerates exactly the configurations the restrictions allow, deterministically', () => {
    const t = loadTask(taskDir(GOOD));
    const space = enumerateSpace(t);
    // 9 combinations minus 128*4 = 512 > 256.
    expect(space).toHaveLength(8);
    expect(space.some((c) => c.BLOCK === 128 && c.VEC === 4)).toBe(false);
    expect(enumerateSpace(t)).toEqual(space);
    expect(isValidConfig(t, { BLOCK: 128, VEC: 4 })).toBe(false);
    expect(isValidConfig(t, { BLOCK: 128, VEC: 2 })).toBe(true);
  });
  it('checks a restriction as soon as its tunables are set, and still gives exactly the product filtered leaf by leaf, in its order (every built-in task)', () => {
    const leafByLeaf = (task: Task): string[] => {
      const tun = task.manifest.tunables ?? {};
      const names = Object.keys(tun);
      const out: string[] = [];
      const cur: Record<string, number> = {};
      const rec = (i: number): void => {
        if (i === names.length) {
          if (isValidConfig(task, cur)) out.push(configKey(cur));
          return;
        }
        for (const v of tun[names[i]]) {
          cur[names[i]] = v;
          rec(i + 1);
        }
      };
      rec(0);
      return out;
    };
    for (const n of builtinNames) {
      const t = loadTask(join(BUILTIN, n));
      expect(enumerateSpace(t).map(configKey), n).toEqual(leafByLeaf(t));
    }
    // A restriction on the first tunable alone, one on a size symbol only, one naming both.
    const yaml = GOOD.replace(/restrictions:\n( {2}- .*\n)+/, 'restrictions:\n  - BLOCK >= 64\n  - n > 10\n  - BLOCK * VEC <= n\n');
    const t = loadTask(taskDir(yaml));
    expect(enumerateSpace(t).map(configKey)).toEqual(leafByLeaf(t));
    expect(enumerateSpace(t).every((c) => c.BLOCK >= 64)).toBe(true);
    // A restriction that no size can satisfy, naming no tunable: every configuration excluded.
    const none = loadTask(taskDir(GOOD.replace(/restrictions:\n( {2}- .*\n)+/, 'restrictions:\n  - n < 0\n')));
    expect(() => enumerateSpace(none)).toThrow(/restrictions exclude every configuration/);
  });
  it('sizeLayout computes element counts, scalar values, fills and metrics per size', () => {
    const yaml = GOOD.replace('shape: [n], role: in}', 'shape: [n, 3], role: in, fill: {uniform: [0, 2]}}');
    const t = loadTask(taskDir(yaml));
    const l0 = sizeLayout(t, 0);
    expect(l0.values).toEqual({ n: 1000 });
    expect(l0.args[0]).toEqual({ kind: 'buffer', name: 'x', dtype: 'f32', role: 'in', elements: 3000, fill: { kind: 'uniform', lo: 0, hi: 2 } });
    expect(l0.args[1]).toMatchObject({ kind: 'buffer', name: 'y', elements: 1000, fill: { kind: 'uniform', lo: -1, hi: 1 } });
    expect(l0.args[2]).toEqual({ kind: 'scalar', name: 'n', dtype: 'i32', value: 1000 });
    expect(l0.bytes).toBe(8000);
    expect(l0.flops).toBe(1000);
    const l1 = sizeLayout(t, 1);
    expect(l1.args[0]).toMatchObject({ elements: 21 });
    expect(l1.bytes).toBe(56);
    expect(() => sizeLayout(t, 2)).toThrow(/no size 2/);
  });
  it('sizeLayout gives integer buffers an integer fill by default', () => {
    const yaml = GOOD.replace('dtype: f32, shape: [n], role: in}', 'dtype: i32, shape: [n], role: in}');
    const l = sizeLayout(loadTask(taskDir(yaml)), 1);
    expect(l.args[0]).toMatchObject({ dtype: 'i32', elements: 7, fill: { kind: 'int', lo: 1, hi: 100 } });
  });
});

describe('malformed manifests name the field and the line', () => {
  it('wrong type: sizes: 5', () => {
    const e = expectIssue('sizes:\n  - {n: 1000}\n  - {n: 7}\n', 'sizes: 5\n', 'sizes', 'sizes: 5', /expected array/);
    expect(e.file.endsWith('task.yaml')).toBe(true);
    expect(e.message).toContain('task.yaml');
  });
  it('unknown dtype f16 names args[0].dtype', () => {
    expectIssue('dtype: f32, shape: [n], role: in', 'dtype: f16, shape: [n], role: in', 'args[0].dtype', 'f16', /f32/);
  });
  it('a shape expression that does not parse', () => {
    expectIssue('shape: [n], role: out', 'shape: [n *], role: out', 'args[1].shape', 'n *', /cannot parse/);
  });
  it('an unknown size symbol in a shape names the symbol', () => {
    expectIssue('shape: [n], role: out', 'shape: [m], role: out', 'args[1].shape', 'shape: [m]', /unknown name "m"/);
  });
  it('a negative size', () => {
    expectIssue('{n: 7}', '{n: -7}', 'sizes[1].n', '{n: -7}', /positive integer, got -7/);
  });
  it('an absurd size over 2^31', () => {
    expectIssue('{n: 7}', '{n: 4294967296}', 'sizes[1].n', '4294967296', /absurdly large/);
  });
  it('a duplicate argument name', () => {
    expectIssue('{name: y,', '{name: x,', 'args[1].name', 'role: out', /"x" is used twice/);
  });
  it('a default that is not among the tunable\'s values', () => {
    expectIssue('defaults: {BLOCK: 64', 'defaults: {BLOCK: 100', 'defaults.BLOCK', 'defaults:', /100 is not one of the values of BLOCK/);
  });
  it('a default for something that is not a tunable', () => {
    expectIssue('defaults: {BLOCK: 64, VEC: 1}', 'defaults: {BLOCK: 64, VEC: 1, WARPS: 2}', 'defaults.WARPS', 'defaults:', /not a tunable/);
  });
  it('restrictions referring to an unknown name', () => {
    expectIssue('BLOCK * VEC <= 256', 'BLOCK * VECTOR <= 256', 'restrictions[0]', 'VECTOR', /unknown name "VECTOR".*BLOCK, VEC/);
  });
  it('restrictions naming an Object.prototype member are still an unknown name', () => {
    expectIssue('BLOCK * VEC <= 256', 'BLOCK * toString <= 256', 'restrictions[0]', 'toString', /unknown name "toString"/);
  });
  it('a timed index out of range', () => {
    expectIssue('timed: [0]', 'timed: [0, 2]', 'timed', 'timed:', /size index 2 does not exist \(there are 2 sizes\)/);
  });
  it('an unknown top-level key', () => {
    const e = taskError(taskDir(GOOD + 'tunable: {X: [1]}\n'));
    expect(e.message).toMatch(/tunable/);
  });
  it('invalid YAML reports the line of the error', () => {
    const yaml = GOOD.replace('timed: [0]', 'timed: [0\nfoo: : bar');
    const e = taskError(taskDir(yaml));
    expect(e.message).toMatch(/not valid YAML/);
    expect(e.issues[0].line).toBeGreaterThanOrEqual(lineOf(yaml, 'timed:'));
    expect(e.issues[0].line).toBeLessThanOrEqual(lineOf(yaml, 'foo: : bar'));
    expect(e.message).toMatch(/\(line \d+\)/);
  });
  it('parseManifest returns the issues without throwing, and the manifest when valid', () => {
    expect(parseManifest(GOOD).manifest?.name).toBe('scale');
    const r = parseManifest(GOOD.replace('entry: scale', 'entry: 9scale'));
    expect(r.manifest).toBeUndefined();
    expect(r.issues.map((i) => i.field)).toContain('entry');
  });
});

describe('task folders', () => {
  it('restrictions that exclude every configuration make enumerateSpace throw naming restrictions', () => {
    const t: Task = loadTask(taskDir(GOOD.replace('BLOCK * VEC <= 256', 'BLOCK > 1000')));
    expect(() => enumerateSpace(t)).toThrow(/restrictions exclude every configuration.*"restrictions"/);
  });
  it('a missing reference.cu names files.reference', () => {
    const e = taskError(taskDir(GOOD, { 'reference.cu': null }));
    expect(e.issues.map((i) => i.field)).toEqual(['files.reference']);
    expect(e.message).toMatch(/files\.reference.*reference\.cu does not exist/);
  });
  it('a missing baseline names files.baseline, honouring files: overrides', () => {
    const e = taskError(taskDir(GOOD + 'files: {baseline: mine.cu}\n'));
    expect(e.issues.map((i) => i.field)).toEqual(['files.baseline']);
    expect(e.message).toContain('mine.cu');
  });
  it('a kernel without the entry point names entry', () => {
    const e = taskError(taskDir(GOOD, { 'kernel.cu': KERNEL.replace('void scale(', 'void scale2_(') }));
    expect(e.issues.map((i) => i.field)).toContain('entry');
    expect(e.message).toMatch(/kernel\.cu does not define the entry point "scale"/);
  });
  it('a folder without task.yaml, and a missing folder, are TaskErrors', () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect(taskError(empty).message).toMatch(/no task\.yaml/);
    expect(taskError(join(root, 'does-not-exist')).message).toMatch(/no such task folder/);
  });
  it('the task hash changes when the kernel changes', () => {
    const a = loadTask(taskDir(GOOD));
    const b = loadTask(taskDir(GOOD, { 'kernel.cu': KERNEL + '// changed\n' }));
    expect(a.hash).not.toBe(b.hash);
  });
});
