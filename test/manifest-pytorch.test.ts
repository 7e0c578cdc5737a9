// task.yaml with a PyTorch reference (reference: {pytorch: model.py}): schema, semantic checks and
// loading, without running Python.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask, parseManifest, PLACEHOLDER_BASELINE_MARK, TaskError } from '../main/engine/task/manifest.js';

const GOOD = `name: scale-pt
entry: model_forward
reference: {pytorch: model.py}
args:
  - {name: x, kind: buffer, dtype: f32, shape: [batch_size, 16], role: in}
  - {name: out, kind: buffer, dtype: f32, shape: [batch_size, 16], role: out}
sizes:
  - {batch_size: 8}
  - {batch_size: 3}
`;
const MODEL = `import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

batch_size = 8

def get_inputs():
    return [torch.rand(batch_size, 16)]

def get_init_inputs():
    return []
`;
const KERNEL = `// ${PLACEHOLDER_BASELINE_MARK}
void model_forward(const float* x, float* out) {}
`;
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kd-manifest-pt-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

function loadIssues(dir: string): TaskError['issues'] {
  try {
    loadTask(dir);
  } catch (e) {
    if (e instanceof TaskError) return e.issues;
    throw e;
  }
  throw new Error('loadTask accepted the folder');
}

describe('manifest: reference.pytorch', () => {
  it('accepts a PyTorch reference, with sizes that set its constants or the empty size (the problem\'s own)', () => {
    const r = parseManifest(GOOD);
    expect(r.issues).toEqual([]);
    expect(r.manifest?.reference).toEqual({ pytorch: 'model.py' });
    const own = parseManifest(GOOD.replace(/batch_size, 16/g, '8, 16').replace('  - {batch_size: 8}\n  - {batch_size: 3}\n', '  - {}\n'));
    expect(own.issues).toEqual([]);
    expect(own.manifest?.sizes).toEqual([{}]);
  });

  it('refuses a reference that is not a .py file, naming the field and line', () => {
    const text = GOOD.replace('{pytorch: model.py}', '{pytorch: model.txt}');
    const r = parseManifest(text);
    expect(r.manifest).toBeUndefined();
    expect(r.issues).toEqual([expect.objectContaining({ field: 'reference.pytorch', line: lineOf(text, 'pytorch:') })]);
    expect(r.issues[0].message).toMatch(/Python file/);
  });

  it('refuses an unknown key and a bad weights_seed', () => {
    const text = GOOD.replace('{pytorch: model.py}', '{pytorch: model.py, seed: 3}');
    expect(parseManifest(text).issues[0]).toEqual(expect.objectContaining({ field: 'reference', line: lineOf(text, 'pytorch:') }));
    const neg = parseManifest(GOOD.replace('{pytorch: model.py}', '{pytorch: model.py, weights_seed: -1}'));
    expect(neg.issues[0].field).toBe('reference.weights_seed');
  });

  it('refuses files.reference beside it, and fills (inputs come from get_inputs())', () => {
    const both = GOOD + 'files: {reference: reference.cu}\n';
    const r = parseManifest(both);
    expect(r.issues).toEqual([expect.objectContaining({ field: 'files.reference', line: lineOf(both, 'files:') })]);
    expect(r.issues[0].message).toMatch(/one reference.*remove one/);
    const fill = GOOD.replace('role: in}', 'role: in, fill: {uniform: [1, 2]}}');
    const f = parseManifest(fill);
    expect(f.issues).toEqual([expect.objectContaining({ field: 'args[0].fill', line: lineOf(fill, 'fill:') })]);
    expect(f.issues[0].message).toMatch(/get_inputs\(\).*remove fill/);
  });
});

describe('loadTask with a PyTorch reference', () => {
  it('loads it: referencePath is the Python file, the weights seed defaults to 42, the placeholder is recognised', () => {
    const d = folder('good', { 'task.yaml': GOOD, 'model.py': MODEL, 'kernel.cu': KERNEL });
    const t = loadTask(d);
    expect(t.referencePath).toBe(join(d, 'model.py'));
    expect(t.referenceSource).toBe(MODEL);
    expect(t.pytorch).toEqual({ weightsSeed: 42 });
    expect(t.baselinePlaceholder).toBe(true);
    const t2 = loadTask(folder('seed', { 'task.yaml': GOOD.replace('{pytorch: model.py}', '{pytorch: model.py, weights_seed: 7}'), 'model.py': MODEL, 'kernel.cu': 'void model_forward(const float* x, float* out) { /* real */ }\n' }));
    expect(t2.pytorch).toEqual({ weightsSeed: 7 });
    expect(t2.baselinePlaceholder).toBe(false);
  });

  it('a missing Python file names reference.pytorch', () => {
    const issues = loadIssues(folder('missing', { 'task.yaml': GOOD, 'kernel.cu': KERNEL }));
    expect(issues).toEqual([expect.objectContaining({ field: 'reference.pytorch' })]);
    expect(issues[0].message).toMatch(/model\.py does not exist/);
  });

  it('a file without get_inputs()/get_init_inputs() is refused, saying what a problem file defines', () => {
    const issues = loadIssues(folder('nofn', { 'task.yaml': GOOD, 'model.py': MODEL.replace(/def get_inputs[\s\S]*$/, ''), 'kernel.cu': KERNEL }));
    expect(issues).toEqual([expect.objectContaining({ field: 'reference.pytorch' })]);
    expect(issues[0].message).toMatch(/does not define def get_inputs\(\), def get_init_inputs\(\)/);
  });

  it('a size symbol that is not a module-level constant of the file is refused by name', () => {
    const text = GOOD.replace('{batch_size: 8}', '{batch: 8}').replace('{batch_size: 3}', '{batch: 3}').replace(/batch_size, 16/g, 'batch, 16');
    const issues = loadIssues(folder('sym', { 'task.yaml': text, 'model.py': MODEL, 'kernel.cu': KERNEL }));
    expect(issues).toEqual([expect.objectContaining({ field: 'sizes[0].batch' }), expect.objectContaining({ field: 'sizes[1].batch' })]);
    expect(issues[0].message).toMatch(/not a module-level constant of model\.py/);
  });

  it('constants assigned together (height = width = 128) and annotated count as constants', () => {
    const model = MODEL.replace('batch_size = 8', 'height = batch_size = 8\nwidth: int = 4');
    const text = GOOD.replace('{batch_size: 3}', '{batch_size: 3, width: 2}').replace('{batch_size: 8}', '{batch_size: 8, width: 4}');
    expect(() => loadTask(folder('multi', { 'task.yaml': text, 'model.py': model, 'kernel.cu': KERNEL }))).not.toThrow();
  });

  it('the baseline must still define the entry point; a CUDA task is unchanged', () => {
    const issues = loadIssues(folder('noentry', { 'task.yaml': GOOD, 'model.py': MODEL, 'kernel.cu': '// nothing\n' }));
    expect(issues).toEqual([expect.objectContaining({ field: 'entry' })]);
    expect(issues[0].message).toMatch(/kernel\.cu does not define the entry point "model_forward"/);
  });
});
