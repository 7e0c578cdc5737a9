// Numeric features of a variant, for the preference model: tunable values (log2 for powers of
// two, scaled to [0, 1], plus a one-hot of the value so non-monotone effects are representable),
// compiler flags, source-transform indicators, ptxas resources (registers, shared memory, spills)
// and simple static code features. Optional pairwise crosses of the scaled tunables let a linear
// model see interactions (e.g. block size x items per thread).
import type { KernelResources } from '../base/types.js';
import type { Action, ActionSpace } from './actions.js';

export interface FeatureOptions {
  /** Products of every pair of scaled tunable values. */
  crosses?: boolean;
  /** Resource features (known only after a build; zeros when not given). */
  resources?: boolean;
  /** Static code features of the decoded source. */
  code?: boolean;
  /** For every pair of tunables with several values: log2 of their product and of their ratio,
   * scaled to [0, 1] (threads per block, work per thread, tile areas and shapes are products and
   * ratios of launch parameters; a tree splits on them directly). Values of 0 count as 1. */
  logPairs?: boolean;
  /** For every tunable whose values differ in alignment and are not all powers of two: how many times 2 divides
   * the value (its alignment: 48 -> 16, 64 -> 64), log2-scaled to [0, 1] over the dimension's values. A generic
   * GPU prior: sizes that are powers of two or warp multiples often run faster, whatever their magnitude, and a
   * model sees it from a few measured variants instead of one value at a time. */
  align?: boolean;
}

const isPow2 = (v: number): boolean => v > 0 && Number.isInteger(Math.log2(v));
/** log2 of the largest power of two dividing v (0 for odd values, for 0 and non-integers). */
const alignLog2 = (v: number): number => {
  if (!Number.isInteger(v) || v === 0) return 0;
  let k = 0;
  for (let x = Math.abs(v); x % 2 === 0 && k < 52; x /= 2) k++;
  return k;
};

/** Simple static features of a CUDA source. */
export function staticCodeFeatures(src: string): Record<string, number> {
  const count = (re: RegExp): number => (src.match(re) ?? []).length;
  return {
    pragmaUnroll: count(/#\s*pragma\s+unroll/g),
    restrict: count(/__restrict__/g),
    launchBounds: count(/__launch_bounds__/g),
    shared: count(/__shared__/g),
    syncthreads: count(/__syncthreads\s*\(/g),
    shuffles: count(/__shfl_\w*sync\s*\(/g),
    atomics: count(/\batomic\w+\s*\(/g),
    forLoops: count(/\bfor\s*\(/g),
    ldg: count(/__ldg\s*\(/g),
  };
}

/** Resource features of the first (usually only) kernel: registers/255, smem/48 KiB, log spills, stack. */
export function resourceFeatures(res: readonly KernelResources[] | undefined): number[] {
  const k = res?.[0];
  if (!k) return [0, 0, 0, 0];
  return [k.registers / 255, k.sharedBytes / 49152, Math.log1p(k.spillStoreBytes + k.spillLoadBytes) / 10, Math.log1p(k.stackBytes) / 10];
}

export class FeatureEncoder {
  readonly names: string[] = [];
  /** The dimensions of the action space each feature depends on (in `names` order). */
  readonly dimsOf: number[][] = [];
  private readonly scale: Array<((v: number) => number) | null>;
  private readonly offsets: number[] = [];
  private readonly codeNames: string[];
  private readonly cache = new Map<string, Float64Array>();
  private readonly baseCode: Record<string, number>;
  private readonly aligns: Array<{ i: number; lo: number; hi: number }> = [];
  private readonly logPairs: Array<{ i: number; j: number; li: number[]; lj: number[]; sum: [number, number]; diff: [number, number] }> = [];

  constructor(
    readonly space: ActionSpace,
    readonly o: FeatureOptions = {},
  ) {
    this.scale = space.dims.map((d) => {
      if (d.kind !== 'tunable') return null;
      const vs = d.values as number[];
      const pow2 = vs.every(isPow2);
      const f = (v: number): number => (pow2 ? Math.log2(v) : v);
      const lo = Math.min(...vs.map(f));
      const hi = Math.max(...vs.map(f));
      return (v: number) => (hi > lo ? (f(v) - lo) / (hi - lo) : 0);
    });
    space.dims.forEach((d, i) => {
      this.offsets.push(this.names.length);
      if (this.scale[i]) this.push(`${d.name}:scaled`, [i]);
      d.values.forEach((v, j) => {
        if (d.kind !== 'tunable' && j === 0) return; // "not applied" is the reference level
        if (d.kind === 'tunable' && d.values.length <= 2 && j === 0) return;
        this.push(`${d.name}=${v}`, [i]);
      });
    });
    const tun = space.dims.map((d, i) => (this.scale[i] ? i : -1)).filter((i) => i >= 0);
    if (o.crosses) for (let a = 0; a < tun.length; a++) for (let b = a + 1; b < tun.length; b++) this.push(`${space.dims[tun[a]].name}*${space.dims[tun[b]].name}`, [tun[a], tun[b]]);
    // log2 of products and ratios of pairs of multi-valued tunables, each scaled by its range over the product of the two value lists.
    const multi = space.dims.map((d, i) => (d.kind === 'tunable' && d.values.length > 1 ? i : -1)).filter((i) => i >= 0);
    const lg = (v: number): number => Math.log2(Math.max(1, v));
    if (o.logPairs) {
      for (let a = 0; a < multi.length; a++) {
        for (let b = a + 1; b < multi.length; b++) {
          const [i, j] = [multi[a], multi[b]];
          const li = (space.dims[i].values as number[]).map(lg);
          const lj = (space.dims[j].values as number[]).map(lg);
          const range = (f: (x: number, y: number) => number): [number, number] => {
            let lo = Infinity;
            let hi = -Infinity;
            for (const x of li) for (const y of lj) {
              lo = Math.min(lo, f(x, y));
              hi = Math.max(hi, f(x, y));
            }
            return [lo, hi];
          };
          const sum = range((x, y) => x + y);
          const diff = range((x, y) => x - y);
          this.logPairs.push({ i, j, li, lj, sum, diff });
          this.push(`log(${space.dims[i].name}*${space.dims[j].name})`, [i, j]);
          this.push(`log(${space.dims[i].name}/${space.dims[j].name})`, [i, j]);
        }
      }
    }
    if (o.align) {
      for (const i of multi) {
        const vs = space.dims[i].values as number[];
        if (vs.every(isPow2)) continue;
        const al = vs.map(alignLog2);
        const lo = Math.min(...al);
        const hi = Math.max(...al);
        if (hi === lo) continue;
        this.aligns.push({ i, lo, hi });
        this.push(`align(${space.dims[i].name})`, [i]);
      }
    }
    if (o.resources) for (const n of ['registers', 'smem', 'spills', 'stack']) this.push(n, []);
    this.baseCode = staticCodeFeatures(space.task.baselineSource);
    this.codeNames = o.code ? Object.keys(this.baseCode) : [];
    for (const n of this.codeNames) this.push(`code:${n}`, []);
  }

  get length(): number {
    return this.names.length;
  }

  private push(name: string, dims: number[]): void {
    this.names.push(name);
    this.dimsOf.push(dims);
  }

  encode(a: Action, resources?: readonly KernelResources[]): Float64Array {
    const key = a.join(',');
    const hit = !this.o.resources ? this.cache.get(key) : undefined;
    if (hit) return hit;
    const x = new Float64Array(this.names.length);
    let p = 0;
    const scaled: number[] = [];
    this.space.dims.forEach((d, i) => {
      const s = this.scale[i];
      if (s) {
        const v = s(d.values[a[i]] as number);
        x[p++] = v;
        scaled.push(v);
      }
      d.values.forEach((_, j) => {
        if (d.kind !== 'tunable' && j === 0) return;
        if (d.kind === 'tunable' && d.values.length <= 2 && j === 0) return;
        x[p++] = a[i] === j ? 1 : 0;
      });
    });
    if (this.o.crosses) for (let i = 0; i < scaled.length; i++) for (let j = i + 1; j < scaled.length; j++) x[p++] = scaled[i] * scaled[j];
    const unit = (v: number, [lo, hi]: [number, number]): number => (hi > lo ? (v - lo) / (hi - lo) : 0);
    for (const q of this.logPairs) {
      const x1 = q.li[a[q.i]];
      const x2 = q.lj[a[q.j]];
      x[p++] = unit(x1 + x2, q.sum);
      x[p++] = unit(x1 - x2, q.diff);
    }
    for (const q of this.aligns) x[p++] = (alignLog2(this.space.dims[q.i].values[a[q.i]] as number) - q.lo) / (q.hi - q.lo);
    if (this.o.resources) for (const v of resourceFeatures(resources)) x[p++] = v;
    if (this.codeNames.length) {
      const code = staticCodeFeatures(this.space.decode(a).source);
      for (const n of this.codeNames) x[p++] = code[n] - this.baseCode[n];
    }
    if (!this.o.resources) this.cache.set(key, x);
    return x;
  }
}
