// Where the benchmarks find recorded spaces (bench/lib/spaces-dir.ts): --spaces when given (and a
// missing folder is named), else the bench data beside the script, else bench/spaces under the
// working folder, where the GPU bundle's benchmarks find a checkout's spaces.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordedSpacesDir } from '../bench/lib/spaces-dir.js';

const made: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'kd-spaces-dir-'));
  made.push(d);
  return d;
};
const cwd = process.cwd();
afterEach(() => {
  process.chdir(cwd);
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('recordedSpacesDir', () => {
  it('takes --spaces as given, and names it when it does not exist', () => {
    const d = tmp();
    expect(recordedSpacesDir(d, join(d, 'none'), 'a100')).toBe(d);
    expect(() => recordedSpacesDir(join(d, 'missing'), d, 'a100')).toThrow(/--spaces .*missing: no such folder/);
  });

  it("prefers the GPU's own folder beside the script, then the H200's", () => {
    const bench = tmp();
    mkdirSync(join(bench, 'spaces', 'h200'), { recursive: true });
    expect(recordedSpacesDir(undefined, bench, 'a100')).toBe(join(bench, 'spaces', 'h200'));
    mkdirSync(join(bench, 'spaces', 'a100'));
    expect(recordedSpacesDir(undefined, bench, 'a100')).toBe(join(bench, 'spaces', 'a100'));
  });

  it("falls back to bench/spaces under the working folder (a bundle run from a checkout), else says where it looked", () => {
    const bundle = tmp();
    const checkout = tmp();
    process.chdir(checkout);
    expect(() => recordedSpacesDir(undefined, bundle, 'h200')).toThrow(/no recorded spaces for h200 \(looked in .*: give --spaces DIR/);
    mkdirSync(join(checkout, 'bench', 'spaces', 'h200'), { recursive: true });
    expect(recordedSpacesDir(undefined, bundle, 'h200')).toMatch(/bench\/spaces\/h200$/);
  });
});
