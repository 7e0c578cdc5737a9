// The roofline's measured ceilings: read from the foundation benchmark's real results file
// (bench/results/h200-foundation.json), matched by GPU name, never guessed; and the roofs drawn
// from them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { limitsOfResults, measuredLimits, normaliseGpuName, pickLimits, NO_LIMITS_NOTE } from '../main/engine/platform/gpu/limits.js';
import { fmtRate, roofsFor } from '../renderer/src/roofline.js';
import { sessionPlots } from '../main/core/views.js';

const RESULTS = path.join(import.meta.dirname, '..', 'bench', 'results');
const h200 = JSON.parse(fs.readFileSync(path.join(RESULTS, 'h200-foundation.json'), 'utf8')) as {
  gpu: { name: string };
  ceilings: { copy: { bandwidthTBs: number }; sgemmFp32NoTf32: { tflops: number } };
};

describe('measured limits', () => {
  it('reads the real H200 file: copy bandwidth in GB/s and FP32 SGEMM in GFLOP/s', () => {
    const l = limitsOfResults(h200);
    expect(l).not.toBeNull();
    expect(l!.gpuName).toBe('NVIDIA H200');
    expect(l!.peakGbps).toBeCloseTo(h200.ceilings.copy.bandwidthTBs * 1000, 6);
    expect(l!.peakGflops).toBeCloseTo(h200.ceilings.sgemmFp32NoTf32.tflops * 1000, 6);
    // Sanity of the real figures (H200: ~4.2 TB/s copy, ~50 TFLOP/s FP32 SGEMM).
    expect(l!.peakGbps!).toBeGreaterThan(3000);
    expect(l!.peakGflops!).toBeGreaterThan(40_000);
  });

  it('matches the session GPU by name (case, vendor prefix and a REPLAY label do not matter)', () => {
    for (const name of ['NVIDIA H200', 'nvidia h200', 'H200', 'REPLAY NVIDIA H200']) {
      const l = measuredLimits(RESULTS, name);
      expect(l.limitsSource, name).toBe('bench/results/h200-foundation.json');
      expect(l.peakGbps).toBeCloseTo(4189.85, 1);
      expect(l.peakGflops).toBeCloseTo(50527.8, 0);
    }
    expect(normaliseGpuName('REPLAY NVIDIA H200')).toBe('h200');
  });

  it('says so for a GPU without measured limits, and for no GPU', () => {
    for (const name of ['NVIDIA H100 80GB HBM3', 'NVIDIA H200 NVL', 'SYNTHETIC (no GPU)']) {
      const l = measuredLimits(RESULTS, name);
      expect(l).toMatchObject({ peakGbps: null, peakGflops: null, limitsSource: null });
      expect(l.note).toContain(NO_LIMITS_NOTE);
    }
    expect(measuredLimits(RESULTS, null).limitsSource).toBeNull();
    // Files without the ceilings (or guessed field names) give nothing.
    expect(pickLimits([{ name: 'x-foundation.json', json: { gpu: { name: 'NVIDIA H200' }, limits: { copyGBps: 1, sgemmGflops: 2 } } }], 'NVIDIA H200').limitsSource).toBeNull();
  });

  it('the roofline carries the limits; the roofs meet at the ridge point', () => {
    const l = measuredLimits(RESULTS, 'NVIDIA H200');
    const plots = sessionPlots({ variants: [], events: [], resultOf: () => undefined }, [], { workOf: () => null, peakGbps: l.peakGbps, peakGflops: l.peakGflops, limitsSource: l.limitsSource, limitsNote: null });
    expect(plots.roofline).toMatchObject({ peakGbps: l.peakGbps, peakGflops: l.peakGflops, limitsSource: 'bench/results/h200-foundation.json' });
    const r = roofsFor(l.peakGbps, l.peakGflops, [0.1667, 2]);
    expect(r.ridge).toBeCloseTo(l.peakGflops! / l.peakGbps!, 9);
    expect(r.memory[0].gflops).toBeCloseTo(l.peakGbps! * r.domain[0], 6);
    expect(r.memory[1]).toEqual({ intensity: r.ridge, gflops: expect.closeTo(l.peakGflops!, 6) });
    expect(r.compute).toEqual([{ intensity: r.ridge, gflops: l.peakGflops }, { intensity: r.domain[1], gflops: l.peakGflops }]);
    expect(r.domain[0]).toBeLessThan(0.1667);
    expect(r.domain[1]).toBeGreaterThan(r.ridge!);
    // Only one roof known: it spans the whole range.
    expect(roofsFor(l.peakGbps, null, [1]).memory[1].intensity).toBe(4);
    expect(roofsFor(null, null, [1])).toMatchObject({ memory: [], compute: [], ridge: null });
    // The y range holds the points and the roofs.
    const withPts = roofsFor(l.peakGbps, l.peakGflops, [680], [4470, 23186]);
    expect(withPts.yDomain[0]).toBeLessThan(Math.min(4470, withPts.memory[0].gflops));
    expect(withPts.yDomain[1]).toBeGreaterThan(l.peakGflops!);
    expect([fmtRate(50527.8), fmtRate(2082), fmtRate(500), fmtRate(0)]).toEqual(['51 T', '2.1 T', '500 G', '']);
  });
});
