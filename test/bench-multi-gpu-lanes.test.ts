// bench multi-gpu's look back at a pool run's sessions (bench/lib/multi-gpu-lanes.ts): one row per
// GPU with the intervals between its results, and duels split by whether their sides were first
// measured on the same GPU. A session journaled as a two-GPU pool run would journal it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../main/engine/session/store.js';
import { lanesTable } from '../bench/lib/multi-gpu-lanes.js';
import { makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';
import type { DuelResult, EvalResult } from '../main/engine/base/types.js';

const duel: DuelResult = { size: 0, aMs: [1], bMs: [2], ratio: 2, ratioLow: 1.9, ratioHigh: 2.1, verdict: 'faster', timer: 'events', pairs: 1 };
const on = (uuid: string, ms: number): EvalResult => timedResult(ms, { source: { kind: 'gpu', gpu: 'NVIDIA H200', uuid }, stages: { queuedMs: 5, captureMs: 0, checkMs: 20, timeMs: 300 } });

describe('bench multi-gpu-lanes', () => {
  it('one row per GPU of a pool session; results counted on the GPU that measured them; duels split same GPU / across GPUs', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-lanes-'));
    const s = createSession(root, makeMeta('20261204-000000-aaaaaa'));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: on('GPU-aaaa', 3) });
    // GPU …aaaa measures v2, v4, v5; GPU …bbbb measures v3, v6.
    const plan: Array<[string, string, string | null]> = [['v2', 'GPU-aaaa', 'v1'], ['v3', 'GPU-bbbb', 'v2'], ['v4', 'GPU-aaaa', 'v3'], ['v5', 'GPU-aaaa', 'v2'], ['v6', 'GPU-bbbb', null]];
    for (const [id, gpu, opp] of plan) {
      s.append({ type: 'variant', variant: makeVariant(id, { parents: ['v1'] }) });
      s.append({ type: 'result', variantId: id, result: on(gpu, 1) });
      if (opp) s.append({ type: 'duel', a: id, b: opp, result: duel });
    }
    s.close();
    const rows = lanesTable(root).split('\n').filter((l) => l.startsWith('| 2026'));
    expect(rows).toHaveLength(2);
    const cells = (gpu: string): string[] => rows.find((r) => r.includes(`…${gpu}`))!.split('|').map((c) => c.trim());
    // session | task | GPUs | GPU | intervals | interval | duel | queued | capture | check | timing | other | same | across
    const a = cells('aaaa');
    expect(a.slice(2, 6)).toEqual(['saxpy', '2', '…aaaa', '2']); // v2→v4, v4→v5 (the baseline is left out)
    expect(a.slice(8, 12)).toEqual(['5', '0', '20', '300']);
    expect(a[13]).toMatch(/^2, \d+$/); // v2 vs v1 and v5 vs v2: both sides on …aaaa
    expect(a[14]).toMatch(/^1, \d+$/); // v4 vs v3: v3 on …bbbb
    const b = cells('bbbb');
    expect(b[5]).toBe('1');
    expect(b[13]).toBe('0, -');
    expect(b[14]).toMatch(/^1, \d+$/);
  });
});
