// What the per-GPU activity panel (views/GpuActivity.tsx) shows for a pool run's GPUs, as plain
// text: pure, so it is tested without a DOM. Simulated GPUs of a REPLAY are always labelled.
import type { GpuActivity } from '../../main/contract/api.js';

export interface GpuActivityRow {
  id: string;
  uuid: string;
  gpu: string;
  state: GpuActivity['state'];
  /** 'measuring', 'idle', or 'removed: <why>'. */
  stateText: string;
  variant: string;
  results: number;
  rate: string;
  /** 0..100, rounded. */
  busyPercent: number | null;
}

export function gpuActivityCaption(gpus: GpuActivity[]): string {
  const simulated = gpus.some((g) => g.simulated);
  return `${gpus.length} GPU${gpus.length === 1 ? '' : 's'} in this run${simulated ? ' · SIMULATED GPUs answering from a recording (REPLAY), not real ones' : ''}`;
}

export function gpuActivityRows(gpus: GpuActivity[]): GpuActivityRow[] {
  return gpus.map((g) => ({
    id: g.id,
    uuid: g.uuid,
    gpu: `${g.index}: ${g.name}${g.simulated ? ' [SIMULATED]' : ''}`,
    state: g.state,
    stateText: g.state === 'busy' ? 'measuring' : g.state === 'removed' ? `removed${g.removedReason ? `: ${g.removedReason}` : ''}` : 'idle',
    variant: g.state === 'busy' && g.variantId ? g.variantId : '–',
    results: g.evaluated,
    rate: g.evalsPerMinute === null ? '–' : g.evalsPerMinute.toFixed(1),
    busyPercent: g.busyFraction === null ? null : Math.round(g.busyFraction * 100),
  }));
}
