// The manifest form edits task.yaml in place (issue 16): only the edited value's text changes;
// comments, alignment, flow maps and number spellings elsewhere stay byte for byte.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { setManifestValue } from '../renderer/src/manifest-edit.js';

const read = (t: string) => fs.readFileSync(path.join(import.meta.dirname, '..', 'resources', 'tasks', t, 'task.yaml'), 'utf8');
const changed = (a: string, b: string) => {
  const x = a.split('\n');
  const y = b.split('\n');
  return { lines: x.length === y.length ? x.map((l, i) => (l !== y[i] ? i : -1)).filter((i) => i >= 0) : null, x, y };
};

describe('manifest edits through the Document API', () => {
  it('a tunable list stays a flow list with its comment; nothing else changes', () => {
    const text = read('softmax');
    const out = setManifestValue(text, ['tunables', 'BLOCK'], [64, 128, 256]);
    const d = changed(text, out);
    expect(d.lines).toHaveLength(1);
    expect(d.y[d.lines![0]]).toMatch(/^ {2}BLOCK: \[64, 128, 256\] +# threads per block$/);
    expect(YAML.parse(out).tunables.BLOCK).toEqual([64, 128, 256]);
  });
  it('the name (a plain scalar) changes on its own line only', () => {
    const text = read('matmul');
    const out = setManifestValue(text, ['name'], 'matmul2');
    expect(changed(text, out).lines).toEqual([0]);
    expect(out).toContain('f32: {rtol: 1.0e-4, atol: 2.0e-3}');
  });
  it('restrictions: unchanged items keep their comments, a new one is added, a removed one goes', () => {
    const text = read('transpose');
    const before = YAML.parse(text).restrictions as string[];
    const next = [...before.slice(1), 'TILE_X <= 128'];
    const out = setManifestValue(text, ['restrictions'], next);
    expect(YAML.parse(out).restrictions).toEqual(next);
    expect(out).toContain('- TILE_Y <= 16 * BLOCK_ROWS                      # at most 16 elements per thread');
    expect(out.split('\n').length).toBe(text.split('\n').length);
    expect(out.replace(/\n {2}- BLOCK_ROWS <= TILE_Y[^\n]*/, '').replace(/\n {2}- TILE_X <= 128/, '')).toBe(text.replace(/\n {2}- BLOCK_ROWS <= TILE_Y[^\n]*/, ''));
  });
  it('a string that needs quotes is quoted; a quoted one keeps its quotes', () => {
    expect(setManifestValue('name: a\ndescription: "x"\n', ['description'], 'y: z')).toBe('name: a\ndescription: "y: z"\n');
    expect(setManifestValue('name: a\ndescription: b # c\n', ['description'], 'has: colon')).toBe('name: a\ndescription: "has: colon" # c\n');
  });
  it('a key that is not there yet is added', () => {
    expect(YAML.parse(setManifestValue('name: a\n', ['restrictions'], ['X < 2'])).restrictions).toEqual(['X < 2']);
  });
});
