// The provenance note of a recorded space (bench/record-spaces.ts) whose configurations were not
// all measured by one run on one GPU: the recording's header names the last run's GPU and command
// only, so a recording resumed from its `.partial.jsonl` says which GPU and which run measured how
// many configurations. Every entry carries the GPU (`gpuUuid`) and the start of the run that
// measured it (`runStartedAt`); partial lines written before those fields existed count as "an
// earlier run (GPU not stored)".

export interface EntryProvenance {
  gpuUuid?: string;
  runStartedAt?: string;
}

/** Undefined when every configuration was measured by this run on this GPU. */
export function recordingNotes(entries: readonly EntryProvenance[], gpu: { uuid: string; name: string }, runStartedAt: string): string[] | undefined {
  const parts = new Map<string, number>();
  for (const e of entries) {
    const where = e.gpuUuid ?? 'GPU not stored';
    const when = e.runStartedAt === runStartedAt ? 'this run' : e.runStartedAt ? `the run started ${e.runStartedAt}` : 'an earlier run';
    const k = `${when} (${where})`;
    parts.set(k, (parts.get(k) ?? 0) + 1);
  }
  const mine = `this run (${gpu.uuid})`;
  if (parts.size === 1 && parts.has(mine)) return undefined;
  return [`measured in parts: ${[...parts].map(([k, n]) => `${n} configuration${n === 1 ? '' : 's'} by ${k}`).join(', ')}; all on ${gpu.name}`];
}
