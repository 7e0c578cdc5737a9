// What the workbench's per-GPU activity panel shows (renderer/src/gpu-activity.ts): each GPU's
// state, current variant, results, rate and busy share; a removed GPU says why; simulated GPUs say so.
import { describe, expect, it } from 'vitest';
import { gpuActivityCaption, gpuActivityRows } from '../renderer/src/gpu-activity.js';
import type { GpuActivity } from '../main/contract/api.js';

const gpu = (over: Partial<GpuActivity>): GpuActivity => ({
  id: 'gpu0', index: 0, uuid: 'GPU-aaaa', name: 'NVIDIA H200', state: 'idle', variantId: null, evaluated: 0, evalsPerMinute: null, busyFraction: null, ...over,
});

describe('GPU activity panel', () => {
  it('shows a busy GPU with its variant, rate and busy share, and a removed GPU with its reason', () => {
    const gpus = [
      gpu({ state: 'busy', variantId: 'v12', evaluated: 7, evalsPerMinute: 21.04, busyFraction: 0.934 }),
      gpu({ id: 'gpu1', index: 1, uuid: 'GPU-bbbb', state: 'removed', variantId: 'v9', evaluated: 2, removedReason: 'no answer within 1800 s while it measured v9: the GPU is taken as hung' }),
    ];
    expect(gpuActivityCaption(gpus)).toBe('2 GPUs in this run');
    const [a, b] = gpuActivityRows(gpus);
    expect(a).toMatchObject({ gpu: '0: NVIDIA H200', stateText: 'measuring', variant: 'v12', results: 7, rate: '21.0', busyPercent: 93 });
    expect(b).toMatchObject({ stateText: 'removed: no answer within 1800 s while it measured v9: the GPU is taken as hung', variant: '–', rate: '–', busyPercent: null });
  });

  it('labels simulated GPUs of a REPLAY', () => {
    const gpus = [gpu({ id: 'sim0', name: 'REPLAY NVIDIA H200 (simulated)', simulated: true })];
    expect(gpuActivityCaption(gpus)).toMatch(/SIMULATED GPUs answering from a recording \(REPLAY\)/);
    expect(gpuActivityRows(gpus)[0].gpu).toBe('0: REPLAY NVIDIA H200 (simulated) [SIMULATED]');
  });
});
