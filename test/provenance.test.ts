// The `command` field of results files names how the run was started (main/engine/base/provenance.ts).
import { describe, expect, test } from 'vitest';
import { invokedAs } from '../main/engine/base/provenance.js';

describe('invokedAs', () => {
  test('from the repository: the npm form the caller names', () => {
    expect(invokedAs('npm run bench:live -- --budget 100', {})).toBe('npm run bench:live -- --budget 100');
    expect(invokedAs('npm run bench:live', { KERNELDUEL_INVOKED: '  ' }), 'blank counts as unset').toBe('npm run bench:live');
  });
  test('from the GPU bundle: the launcher command line and the bundle', () => {
    const env = { KERNELDUEL_INVOKED: './bench contrastive-live --tasks softmax --out /tmp/x', KERNELDUEL_BUNDLE: '0.1.0 of commit abc1234' };
    expect(invokedAs('npm run bench:live', env)).toBe('./bench contrastive-live --tasks softmax --out /tmp/x (GPU bundle 0.1.0 of commit abc1234)');
    expect(invokedAs('npm run bench:live', { KERNELDUEL_INVOKED: './test-gpu hostile' })).toBe('./test-gpu hostile (GPU bundle)');
  });
});
