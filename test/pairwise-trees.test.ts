// Pairwise boosted trees (main/engine/search/trees.ts): fitted to "A faster than B" pairs, they
// rank an interaction of two features that no linear score can, and they split only on the
// features they are allowed to.
import { describe, expect, it } from 'vitest';
import { boostedScore, fitPairwiseBoost } from '../main/engine/search/trees.js';
import { fitBradleyTerry } from '../main/engine/search/preference.js';

/** Items on a 4x4 grid of two features; fast when both are high or both are low (an XOR-like interaction). */
const items: Float64Array[] = [];
for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) items.push(Float64Array.from([i / 3, j / 3, 0.5]));
const speed = (x: Float64Array): number => ((x[0] > 0.5) === (x[1] > 0.5) ? 1 : 0) + 0.1 * x[0];
const pairs: Array<[number, number, number]> = [];
items.forEach((a, i) => items.forEach((b, j) => {
  if (speed(a) > speed(b) + 0.05) pairs.push([i, j, 1]);
}));
const accuracy = (score: (x: Float64Array) => number): number => pairs.filter(([i, j]) => score(items[i]) > score(items[j])).length / pairs.length;

describe('pairwise boosted trees', () => {
  it('rank an interaction of two features that a linear Bradley-Terry score cannot', () => {
    const boosted = fitPairwiseBoost(items, pairs);
    const diffs = pairs.map(([i, j]) => items[i].map((v, k) => v - items[j][k]));
    const w = fitBradleyTerry(diffs, pairs.map(() => 1), 3, 0.02);
    const linear = accuracy((x) => x.reduce((s, v, k) => s + v * w[k], 0));
    const trees = accuracy((x) => boostedScore(boosted, x));
    expect(trees).toBeGreaterThan(0.95);
    expect(linear).toBeLessThan(0.8);
  });

  it('never split on a feature that is not allowed', () => {
    const onlyFirst = fitPairwiseBoost(items, pairs, { allowed: Uint8Array.from([1, 0, 0]) });
    // With the second feature hidden, items that differ only in it score the same.
    for (let i = 0; i < 4; i++) {
      const s = new Set([0, 1, 2, 3].map((j) => boostedScore(onlyFirst, items[i * 4 + j]).toFixed(12)));
      expect(s.size).toBe(1);
    }
  });
});
