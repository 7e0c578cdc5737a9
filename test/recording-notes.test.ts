// A recorded space's provenance note (bench/record-spaces.ts): before this helper, the run's own
// configurations were counted as "an earlier run (GPU not stored)" (their GPU was written to the
// partial file but not kept in memory), so a recording made in one go said it was resumed.
import { describe, expect, it } from 'vitest';
import { recordingNotes } from '../bench/lib/recording-notes.js';

const gpu = { uuid: 'GPU-a', name: 'NVIDIA H200' };
const now = '2026-12-05T14:16:17.000Z';

describe('recordingNotes', () => {
  it('says nothing when this run measured every configuration on this GPU', () => {
    expect(recordingNotes(Array.from({ length: 5 }, () => ({ gpuUuid: 'GPU-a', runStartedAt: now })), gpu, now)).toBeUndefined();
  });

  it('names each run and GPU of a resumed recording with its count', () => {
    const entries = [
      ...Array.from({ length: 3 }, () => ({ gpuUuid: 'GPU-a', runStartedAt: '2026-12-05T14:04:56.000Z' })),
      ...Array.from({ length: 2 }, () => ({ gpuUuid: 'GPU-a', runStartedAt: now })),
      { gpuUuid: 'GPU-b' },
      {},
    ];
    expect(recordingNotes(entries, gpu, now)).toEqual([
      'measured in parts: 3 configurations by the run started 2026-12-05T14:04:56.000Z (GPU-a), 2 configurations by this run (GPU-a), 1 configuration by an earlier run (GPU-b), 1 configuration by an earlier run (GPU not stored); all on NVIDIA H200',
    ]);
  });

  it('notes a recording this run made on another GPU than the header names', () => {
    expect(recordingNotes([{ gpuUuid: 'GPU-b', runStartedAt: now }], gpu, now)).toEqual(['measured in parts: 1 configuration by this run (GPU-b); all on NVIDIA H200']);
  });
});
