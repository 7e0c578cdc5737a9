// The roofline's roofs as plottable points (pure: no DOM, unit-tested). Attainable GFLOP/s at
// arithmetic intensity I (FLOP/byte) is min(peak GFLOP/s, peak GB/s × I): a sloped memory roof that
// meets the flat compute roof at the ridge point I = peakGflops / peakGbps.

export interface RoofPoint {
  intensity: number;
  gflops: number;
}

export interface Roofs {
  /** The sloped memory roof, from the left edge to the ridge (or the right edge without a compute roof). */
  memory: RoofPoint[];
  /** The flat compute roof, from the ridge (or the left edge) to the right edge. */
  compute: RoofPoint[];
  /** Intensity where the roofs meet, when both are known. */
  ridge: number | null;
  /** X range covering the points and the ridge, in FLOP/byte. */
  domain: [number, number];
  /** Y range covering the points and the roofs, in GFLOP/s. */
  yDomain: [number, number];
}

/** GFLOP/s as a short tick label: 500 G, 2.1 T, 50 T. */
export function fmtRate(gflops: number): string {
  if (!Number.isFinite(gflops) || gflops <= 0) return '';
  return gflops >= 1000 ? `${Number((gflops / 1000).toPrecision(2))} T` : `${Number(gflops.toPrecision(2))} G`;
}

/** Roofs spanning the variants' intensities (and the ridge point), a decade of margin either side. */
export function roofsFor(peakGbps: number | null, peakGflops: number | null, intensities: number[], rates: number[] = []): Roofs {
  const xs = intensities.filter((x) => Number.isFinite(x) && x > 0);
  const ridge = peakGbps && peakGflops ? peakGflops / peakGbps : null;
  if (ridge) xs.push(ridge);
  const lo = xs.length ? Math.min(...xs) / 4 : 0.01;
  const hi = xs.length ? Math.max(...xs) * 4 : 100;
  const domain: [number, number] = [lo, hi];
  const memory: RoofPoint[] = [];
  const compute: RoofPoint[] = [];
  if (peakGbps) {
    const end = ridge ?? hi;
    memory.push({ intensity: lo, gflops: peakGbps * lo }, { intensity: end, gflops: peakGbps * end });
  }
  if (peakGflops) {
    const start = ridge ?? lo;
    compute.push({ intensity: start, gflops: peakGflops }, { intensity: hi, gflops: peakGflops });
  }
  const ys = [...rates, ...memory.map((p) => p.gflops), ...compute.map((p) => p.gflops)].filter((y) => Number.isFinite(y) && y > 0);
  const yDomain: [number, number] = ys.length ? [Math.min(...ys) / 2, Math.max(...ys) * 1.5] : [1, 1000];
  return { memory, compute, ridge, domain, yDomain };
}
