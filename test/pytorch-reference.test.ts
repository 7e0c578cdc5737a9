// The trusted PyTorch reference script (resources/python/kd_reference.py) and its client
// (main/engine/pytorch/server.ts) on small synthetic problem files: the layout and its order, determinism
// per seed, the problem's own input distributions, module-level constants overridden, buffers
// restored between forwards, random forwards found, failures by kind, time limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReferenceFailure, ReferenceServer } from '../main/engine/pytorch/server.js';
import { layoutToArgs, LayoutSchema, manifestLayoutIssues, type Layout } from '../main/engine/pytorch/protocol.js';
import { parseManifest } from '../main/engine/task/manifest.js';
import { referenceScript } from '../main/engine/platform/toolchain/python.js';
import { TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';

const PROBLEM = `import torch
import torch.nn as nn

class Model(nn.Module):
    """A log of positive inputs, a lookup, a mask and a number."""
    def __init__(self, features, scale):
        super().__init__()
        self.scale = scale
        self.lin = nn.Linear(features, features)
        self.offset = nn.Parameter(torch.randn(features))
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x, idx, mask, s):
        print("the problem prints on stdout")
        self.calls += 1
        y = torch.log(x) * self.scale + self.lin(x) * self.calls + self.offset * s
        return y, idx * 2, mask.float().sum()

batch_size = 8
features = width = 16

def get_inputs():
    return [torch.rand(batch_size, features).abs() + 1, torch.randint(3, 7, (batch_size,)), torch.randint(0, 2, (batch_size, features)).bool(), 0.5]

def get_init_inputs():
    return [features, 0.5]
`;

const DROPOUT = `import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(x)

def get_inputs():
    return [torch.rand(64, 64)]

def get_init_inputs():
    return [0.5]
`;

const problemWith = (forwardBody: string, inputs = '[torch.rand(4, 4)]', extra = ''): string => `import torch
import torch.nn as nn
${extra}
class Model(nn.Module):
    def forward(self, x):
${forwardBody}

def get_inputs():
    return ${inputs}

def get_init_inputs():
    return []
`;

const suite = TORCH_PYTHON ? 'the PyTorch reference script' : `the PyTorch reference script — SKIPPED: ${TORCH_SKIP_REASON}`;
let dir: string;
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const servers: ReferenceServer[] = [];
async function start(problem: string, o: { overrides?: Record<string, number> } = {}): Promise<ReferenceServer> {
  const s = await ReferenceServer.start({ python: TORCH_PYTHON!, problem, device: 'cpu', ...o });
  servers.push(s);
  return s;
}
function oneShot(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  return new Promise((res) => {
    execFile(TORCH_PYTHON!, [referenceScript(), ...args], { timeout: 120_000 }, (err, stdout) => {
      res({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, json: JSON.parse(stdout.trim()) as Record<string, unknown> });
    });
  });
}
const sig = (l: Layout): string[] => l.args.map((a) => `${a.name}:${a.source}:${a.kind}:${a.dtype}:[${a.shape.join(',')}]`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kd-pyref-'));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!TORCH_PYTHON)(suite, () => {
  it('layout: inputs (tensors, then the number), parameters (the module\'s own first), buffers, outputs; names, dtypes, shapes', async () => {
    const s = await start(file('p.py', PROBLEM));
    expect(s.ready.constants).toEqual({ batch_size: 8, features: 16, width: 16 });
    const l = await s.layout({ via: 'run' }, 60_000);
    expect(sig(l)).toEqual([
      'x:input:tensor:f32:[8,16]',
      'idx:input:tensor:i64:[8]',
      'mask:input:tensor:u8:[8,16]',
      's:input:scalar:f32:[]',
      'offset:parameter:tensor:f32:[16]',
      'lin_weight:parameter:tensor:f32:[16,16]',
      'lin_bias:parameter:tensor:f32:[16]',
      'calls:buffer:tensor:f32:[1]',
      'out0:output:tensor:f32:[8,16]',
      'out1:output:tensor:i64:[8]',
      'out2:output:tensor:f32:[]',
    ]);
    expect(l.args.find((a) => a.name === 'mask')?.torch_dtype).toBe('bool');
    expect(l.args.find((a) => a.name === 's')?.value).toBe(0.5);
    expect(l.args.find((a) => a.name === 'lin_weight')?.torch_name).toBe('lin.weight');
    expect(l.init_inputs).toEqual([16, 0.5]);
    expect(l.training).toBe(true);
    expect(l.weights_seed).toBe(42);
    expect(l.bytes).toBe(8 * 16 * 4 + 8 * 8 + 8 * 16 + 16 * 4 + 256 * 4 + 16 * 4 + 4 + 8 * 16 * 4 + 8 * 8 + 4);
    // As task.yaml args: a 0-d tensor is a buffer of one element, the number a scalar.
    const { args, problems } = layoutToArgs(l);
    expect(problems).toEqual([]);
    expect(args.find((a) => a.name === 'out2')).toEqual({ name: 'out2', kind: 'buffer', dtype: 'f32', shape: [1], role: 'out' });
    expect(args.find((a) => a.name === 's')).toEqual({ name: 's', kind: 'scalar', dtype: 'f32', value: 0.5 });
  });

  it('the meta device and a batch-size extrapolation give the same layout as a real forward', async () => {
    const s = await start(file('p2.py', PROBLEM));
    const run = await s.layout({ via: 'run' }, 60_000);
    const meta = await s.layout({ via: 'meta' }, 60_000);
    expect(meta.via).toBe('meta');
    expect(sig(meta)).toEqual(sig(run));
    const scaled = await s.layout({ via: 'scaled' }, 60_000);
    expect(scaled.via).toBe('scaled');
    expect(scaled.scaled).toEqual({ constant: 'batch_size', points: [1, 2], value: 8 });
    expect(sig(scaled)).toEqual(sig(run));
    expect(scaled.notes.join(' ')).toMatch(/extrapolated linearly from real runs with batch_size = 1 and 2/);
  });

  it('overrides set module-level constants; constants computed together keep theirs; an unknown one is refused by name', async () => {
    const s = await start(file('p3.py', PROBLEM), { overrides: { features: 4, batch_size: 3 } });
    expect(s.ready.constants).toEqual({ batch_size: 3, features: 4, width: 16 });
    const l = await s.layout({ via: 'meta' }, 60_000);
    expect(l.args.find((a) => a.name === 'x')?.shape).toEqual([3, 4]);
    expect(l.args.find((a) => a.name === 'lin_weight')?.shape).toEqual([4, 4]);
    const err = await start(file('p4.py', PROBLEM), { overrides: { channels: 3 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReferenceFailure);
    expect((err as ReferenceFailure).kind).toBe('problem');
    expect((err as ReferenceFailure).message).toMatch(/channels is not a module-level constant of the problem \(its constants: batch_size, features, width\)/);
  });

  it('a seed gives the same inputs, weights and outputs in every process; another seed other inputs, the same weights', async () => {
    const p = file('p5.py', PROBLEM);
    const a = await oneShot('run', p, '--seed', '5', '--hash', '--out', join(dir, 'a'), '--write', 'inputs,weights,outputs');
    const b = await oneShot('run', p, '--seed', '5', '--hash', '--out', join(dir, 'b'), '--write', 'inputs,weights,outputs');
    const c = await oneShot('run', p, '--seed', '6', '--hash', '--out', join(dir, 'c'), '--write', 'inputs,weights,outputs');
    expect(a.code).toBe(0);
    type F = { name: string; source: string; sha256: string; path: string };
    const files = (r: { json: Record<string, unknown> }): F[] => r.json.files as F[];
    const hashes = (r: { json: Record<string, unknown> }): Record<string, string> => Object.fromEntries(files(r).map((f) => [f.name, f.sha256]));
    expect(files(a).map((f) => `${f.source}.${f.name}`)).toEqual(['input.x', 'input.idx', 'input.mask', 'input.s', 'parameter.offset', 'parameter.lin_weight', 'parameter.lin_bias', 'buffer.calls', 'output.out0', 'output.out1', 'output.out2']);
    expect(hashes(b)).toEqual(hashes(a));
    const [ha, hc] = [hashes(a), hashes(c)];
    expect(hc.x).not.toBe(ha.x);
    expect(hc.out0).not.toBe(ha.out0);
    for (const w of ['offset', 'lin_weight', 'lin_bias', 'calls', 's']) expect(hc[w]).toBe(ha[w]);
    // The raw files hold what the hashes say; the weights are as built (the forward's update of `calls` is not written).
    expect(readFileSync(join(dir, 'a', 'input.x.bin')).length).toBe(8 * 16 * 4);
    expect(new Float32Array(new Uint8Array(readFileSync(join(dir, 'a', 'buffer.calls.bin'))).buffer)[0]).toBe(0);
  });

  it('inputs keep the problem\'s distributions: positive (rand().abs() + 1), integer indices (randint), a boolean mask', async () => {
    const p = file('p6.py', PROBLEM);
    for (const seed of [1, 2, 3]) {
      const r = await oneShot('run', p, '--seed', String(seed), '--out', join(dir, `d${seed}`), '--write', 'inputs');
      expect(r.code).toBe(0);
      const bytes = (n: string): Uint8Array => new Uint8Array(readFileSync(join(dir, `d${seed}`, `input.${n}.bin`)));
      const x = new Float32Array(bytes('x').buffer);
      expect(Math.min(...x)).toBeGreaterThanOrEqual(1);
      expect(Math.max(...x)).toBeLessThan(2);
      const idx = Array.from(new BigInt64Array(bytes('idx').buffer), Number);
      expect(idx.every((v) => v >= 3 && v <= 6)).toBe(true);
      const mask = bytes('mask');
      expect(mask.length).toBe(8 * 16);
      expect(mask.every((v) => v === 0 || v === 1)).toBe(true);
      expect(new Set(mask).size).toBe(2);
    }
  });

  it('buffers are restored before every forward: the same seed twice in one server gives the same outputs', async () => {
    const s = await start(file('p7.py', PROBLEM));
    const a = await s.run({ seed: 9, hash: true }, 60_000);
    const b = await s.run({ seed: 9, hash: true }, 60_000);
    expect(b.files.map((f) => f.sha256)).toEqual(a.files.map((f) => f.sha256));
    expect(a.files.map((f) => f.name)).toEqual(['x', 'idx', 'mask', 's', 'out0', 'out1', 'out2']);
    expect(a.output_stats[2]).toEqual(expect.objectContaining({ elements: 1 }));
  });

  it('a random forward (dropout in training mode) is found, by running it twice and by its modules', async () => {
    const s = await start(file('drop.py', DROPOUT));
    const l = await s.layout({ via: 'run', determinism: true }, 60_000);
    expect(l.random_forward).toBe(true);
    expect(l.random_modules).toEqual(['drop (Dropout, p=0.5)']);
    const meta = await s.layout({ via: 'meta' }, 60_000);
    expect(meta.random_modules).toEqual(['drop (Dropout, p=0.5)']);
    const det = await start(file('det.py', PROBLEM));
    expect((await det.layout({ via: 'run', determinism: true }, 60_000)).random_forward).toBe(false);
  });

  it('failures come back by kind: the problem\'s error, an input it cannot take, a dtype it has not, a bad command', async () => {
    const raising = await start(file('raise.py', problemWith('        raise ValueError("bad shape in the problem")')));
    const e1 = await raising.layout({ via: 'run' }, 60_000).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ReferenceFailure);
    expect((e1 as ReferenceFailure).kind).toBe('problem');
    expect((e1 as ReferenceFailure).message).toBe('ValueError: bad shape in the problem');
    expect((e1 as ReferenceFailure).traceback).toMatch(/raise\.py/);
    expect(raising.alive).toBe(true); // a failed command does not end the server
    const list = await start(file('list.py', problemWith('        return x', '[torch.rand(4, 4), [1, 2]]')));
    const e2 = await list.layout({ via: 'meta' }, 60_000).catch((e: unknown) => e);
    expect((e2 as ReferenceFailure).kind).toBe('unsupported');
    expect((e2 as ReferenceFailure).message).toMatch(/get_inputs\(\)\[1\] is a list: a KernelDuel entry point takes tensors and numbers/);
    const half = await start(file('half.py', problemWith('        return x.half()')));
    const l = await half.layout({ via: 'run' }, 60_000);
    expect(l.args[1].dtype).toBeNull();
    expect(layoutToArgs(l).problems[0]).toMatch(/output out is float16, which KernelDuel's entry points cannot take/);
    const bad = await oneShot('layout', file('p8.py', PROBLEM), '--via', 'meta', '--set', 'features');
    expect(bad.code).toBe(1);
    expect(bad.json).toEqual({ ok: false, error: { kind: 'protocol', message: '--set features: expected NAME=VALUE' } });
  });

  it('a problem file that does not load fails the start, naming the file and line', async () => {
    const e = await start(file('syntax.py', 'class Model(:\n')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ReferenceFailure);
    expect((e as ReferenceFailure).kind).toBe('problem');
    expect((e as ReferenceFailure).message).toMatch(/syntax\.py is not valid Python: .*\(line 1\)/);
    const e2 = await start(file('nomodel.py', 'def get_inputs():\n    return []\n')).catch((x: unknown) => x);
    expect((e2 as ReferenceFailure).message).toMatch(/does not define Model, get_init_inputs/);
  });

  it('a command past its time limit kills the server (its whole group); later commands fail with the same error', async () => {
    const s = await start(file('slow.py', problemWith('        time.sleep(60)\n        return x', '[torch.rand(4, 4)]', 'import time')));
    const t0 = Date.now();
    const e = await s.layout({ via: 'run' }, 1500).catch((x: unknown) => x);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(e).toBeInstanceOf(ReferenceFailure);
    expect((e as ReferenceFailure).kind).toBe('timeout');
    expect((e as ReferenceFailure).message).toMatch(/did not answer layout within 1\.5 s and was killed/);
    expect(s.alive).toBe(false);
    await expect(s.run({ seed: 1 }, 5000)).rejects.toThrow(/did not answer/);
    await new Promise((r) => setTimeout(r, 300));
    expect(() => process.kill(s.pid!, 0)).toThrow();
  });

  it('the layout checks a task.yaml: a shape or name that differs is an issue naming the argument', async () => {
    const s = await start(file('p9.py', PROBLEM), { overrides: { batch_size: 3 } });
    const l = LayoutSchema.parse(await s.layout({ via: 'meta' }, 60_000));
    const yaml = `name: p
entry: model_forward
reference: {pytorch: p9.py}
args:
  - {name: x, kind: buffer, dtype: f32, shape: [batch_size, 16], role: in}
  - {name: idx, kind: buffer, dtype: i64, shape: [batch_size], role: in}
  - {name: mask, kind: buffer, dtype: u8, shape: [batch_size, 16], role: in}
  - {name: s, kind: scalar, dtype: f32, value: 0.5}
  - {name: offset, kind: buffer, dtype: f32, shape: [16], role: in}
  - {name: lin_weight, kind: buffer, dtype: f32, shape: [16, 16], role: in}
  - {name: lin_bias, kind: buffer, dtype: f32, shape: [16], role: in}
  - {name: calls, kind: buffer, dtype: f32, shape: [1], role: in}
  - {name: out0, kind: buffer, dtype: f32, shape: [batch_size, 16], role: out}
  - {name: out1, kind: buffer, dtype: i64, shape: [batch_size], role: out}
  - {name: out2, kind: buffer, dtype: f32, shape: [1], role: out}
sizes:
  - {batch_size: 8}
  - {batch_size: 3}
`;
    const m = parseManifest(yaml).manifest!;
    expect(manifestLayoutIssues(m, 1, l)).toEqual([]);
    expect(manifestLayoutIssues(m, 0, l)).toEqual([
      { field: 'args[0].shape', message: 'x is [8, 16] for size 0, the reference\'s is [3, 16]' },
      { field: 'args[1].shape', message: 'idx is [8] for size 0, the reference\'s is [3]' },
      { field: 'args[2].shape', message: 'mask is [8, 16] for size 0, the reference\'s is [3, 16]' },
      { field: 'args[8].shape', message: 'out0 is [8, 16] for size 0, the reference\'s is [3, 16]' },
      { field: 'args[9].shape', message: 'out1 is [8] for size 0, the reference\'s is [3]' },
    ]);
    const swapped = parseManifest(yaml.replace('{name: offset', '{name: offs')).manifest!;
    expect(manifestLayoutIssues(swapped, 1, l)).toEqual([{ field: 'args[4].name', message: 'is offs, the reference\'s argument 5 is offset (in f32 [16])' }]);
  });
});
