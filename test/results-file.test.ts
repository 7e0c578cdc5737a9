// bench/lib/results-file.ts: a benchmark run picks a results name no earlier run holds.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unusedBase } from '../bench/lib/results-file.js';

describe('unusedBase', () => {
  it('keeps the name while it is free, then counts up past any file of it (JSON or Markdown)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kd-results-name-'));
    try {
      expect(unusedBase(dir, 'h200-timing-stability-fill')).toBe('h200-timing-stability-fill');
      writeFileSync(join(dir, 'h200-timing-stability-fill.json'), '{}');
      expect(unusedBase(dir, 'h200-timing-stability-fill')).toBe('h200-timing-stability-fill-2');
      writeFileSync(join(dir, 'h200-timing-stability-fill-2.md'), '');
      expect(unusedBase(dir, 'h200-timing-stability-fill')).toBe('h200-timing-stability-fill-3');
      // only the extensions asked about count
      expect(unusedBase(dir, 'h200-timing-stability-fill-2', ['.json'])).toBe('h200-timing-stability-fill-2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
