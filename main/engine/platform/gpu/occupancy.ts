// Theoretical occupancy of a kernel on one SM, as CUDA's occupancy calculator works it out: resident
// blocks are limited by the SM's block slots, its warps, its register file (allocated per warp in
// units of 256, in four sub-partitions) and its shared memory (static, plus the 1 KB the system
// reserves per block from compute capability 8.0). Limits per compute capability from the CUDA C
// Programming Guide's table of technical specifications. Pure.
import type { KernelResources } from '../../base/types.js';

export interface SmLimits {
  cc: string;
  maxThreadsPerSm: number;
  maxBlocksPerSm: number;
  registersPerSm: number;
  maxRegistersPerThread: number;
  sharedPerSm: number;
  sharedPerBlock: number;
  reservedSharedPerBlock: number;
}

const K = 1024;
const TABLE: Record<string, Omit<SmLimits, 'cc' | 'registersPerSm' | 'maxRegistersPerThread'>> = {
  '7.0': { maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 96 * K, sharedPerBlock: 96 * K, reservedSharedPerBlock: 0 },
  '7.5': { maxThreadsPerSm: 1024, maxBlocksPerSm: 16, sharedPerSm: 64 * K, sharedPerBlock: 64 * K, reservedSharedPerBlock: 0 },
  '8.0': { maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 164 * K, sharedPerBlock: 163 * K, reservedSharedPerBlock: K },
  '8.6': { maxThreadsPerSm: 1536, maxBlocksPerSm: 16, sharedPerSm: 100 * K, sharedPerBlock: 99 * K, reservedSharedPerBlock: K },
  '8.7': { maxThreadsPerSm: 1536, maxBlocksPerSm: 16, sharedPerSm: 164 * K, sharedPerBlock: 163 * K, reservedSharedPerBlock: K },
  '8.9': { maxThreadsPerSm: 1536, maxBlocksPerSm: 24, sharedPerSm: 100 * K, sharedPerBlock: 99 * K, reservedSharedPerBlock: K },
  '9.0': { maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 228 * K, sharedPerBlock: 227 * K, reservedSharedPerBlock: K },
  '10.0': { maxThreadsPerSm: 2048, maxBlocksPerSm: 32, sharedPerSm: 228 * K, sharedPerBlock: 227 * K, reservedSharedPerBlock: K },
  '12.0': { maxThreadsPerSm: 1536, maxBlocksPerSm: 32, sharedPerSm: 100 * K, sharedPerBlock: 99 * K, reservedSharedPerBlock: K },
};

/** Limits for `sm_90` / `9.0` / `90`; null for an unknown architecture. */
export function smLimits(arch: string): SmLimits | null {
  const m = /(\d+)(\d)[a-z]?$/.exec(arch.replace(/^(sm|compute)_/, '').replace('.', ''));
  if (!m) return null;
  const cc = `${m[1]}.${m[2]}`;
  const t = TABLE[cc];
  return t ? { cc, registersPerSm: 65536, maxRegistersPerThread: 255, ...t } : null;
}

export type OccupancyLimiter = 'blocks' | 'warps' | 'registers' | 'shared memory';

export interface Occupancy {
  /** Resident warps / the SM's maximum warps, 0..1. */
  occupancy: number;
  blocksPerSm: number;
  warpsPerSm: number;
  maxWarpsPerSm: number;
  limiter: OccupancyLimiter;
  /** Blocks per SM each resource allows. */
  limits: Record<OccupancyLimiter, number>;
  threadsPerBlock: number;
  cc: string;
}

const ceilTo = (x: number, u: number): number => Math.ceil(x / u) * u;

export function occupancy(k: Pick<KernelResources, 'registers' | 'sharedBytes'>, threadsPerBlock: number, l: SmLimits): Occupancy {
  const warpsPerBlock = Math.ceil(threadsPerBlock / 32);
  const maxWarps = l.maxThreadsPerSm / 32;
  const regsPerWarp = ceilTo(Math.max(1, k.registers) * 32, 256);
  const warpsByRegs = 4 * Math.floor(l.registersPerSm / 4 / regsPerWarp);
  const smem = k.sharedBytes > 0 || l.reservedSharedPerBlock > 0 ? ceilTo(k.sharedBytes + l.reservedSharedPerBlock, 128) : 0;
  const limits: Record<OccupancyLimiter, number> = {
    blocks: l.maxBlocksPerSm,
    warps: Math.floor(maxWarps / warpsPerBlock),
    registers: k.registers > l.maxRegistersPerThread ? 0 : Math.floor(warpsByRegs / warpsPerBlock),
    'shared memory': smem === 0 ? l.maxBlocksPerSm : k.sharedBytes > l.sharedPerBlock ? 0 : Math.floor(l.sharedPerSm / smem),
  };
  let limiter: OccupancyLimiter = 'blocks';
  for (const key of ['warps', 'registers', 'shared memory'] as const) if (limits[key] < limits[limiter]) limiter = key;
  const blocks = limits[limiter];
  return { occupancy: (blocks * warpsPerBlock) / maxWarps, blocksPerSm: blocks, warpsPerSm: blocks * warpsPerBlock, maxWarpsPerSm: maxWarps, limiter, limits, threadsPerBlock, cc: l.cc };
}
