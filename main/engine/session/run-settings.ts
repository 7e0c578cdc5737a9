// The run settings a session keeps in session.json (`settings`): what `--resume` continues with
// and what `kernelduel sessions` shows. Written by prepareRun (main/core/run/prepare.ts); read here with
// every field optional, as sessions made by earlier versions lack some (flags, transforms, the
// backend's arch and time cap). Knows nothing of strategies or backends beyond these plain fields.
import { z } from 'zod';
import type { SessionMeta } from './events.js';

export const StoredBackendSchema = z.discriminatedUnion('kind', [
  z.looseObject({
    kind: z.literal('replay'), recording: z.string().min(1), seed: z.number().optional(),
    /** SIMULATED GPUs of a REPLAY pool (main/engine/measure/simulated-gpus.ts). */
    simulateGpus: z.looseObject({ count: z.number().int().positive(), latencyMs: z.array(z.number().nonnegative()).optional() }).optional(),
  }),
  z.looseObject({
    kind: z.literal('gpu'),
    arch: z.string().optional(),
    maxMs: z.number().positive().optional(),
    /** `--duel-noise`: a duel's own noise target. */
    duelNoise: z.number().positive().optional(),
    /** `--duel-skip`: no duel for a variant this fraction or more slower than its opponent, intervals apart. */
    duelSkip: z.number().positive().optional(),
    /** `--time-cutoff`: timing stopped at this multiple of the best's median (0: off). Absent (sessions before 2026-12-07): the default applies when resumed. */
    timeCutoff: z.number().nonnegative().optional(),
    /** Built without a GPU (none was usable, or none was asked for). */
    compileOnly: z.boolean().optional(),
    /** The GPUs of a pool run (`--gpus`), all of one model. */
    gpus: z.array(z.looseObject({ index: z.number().int().nonnegative(), uuid: z.string(), name: z.string() })).optional(),
  }),
  z.looseObject({
    /** Python candidates (ModelNew) judged by kd_candidate.py; device cpu: CPU times, labelled so. */
    kind: z.literal('python'),
    device: z.enum(['cuda', 'cpu']),
    python: z.string().optional(),
    torch: z.string().nullable().optional(),
    duelRounds: z.number().int().positive().optional(),
    timingArgs: z.array(z.string()).optional(),
    /** What variants were ranked and duelled by (sessions before 2026-12-02 have none: they were one-call). */
    figure: z.enum(['per-call', 'one-call']).optional(),
  }),
]);
export type StoredBackend = z.infer<typeof StoredBackendSchema>;

export const StoredRunSettingsSchema = z.looseObject({
  strategy: z.string().min(1).optional(),
  budget: z.number().int().nonnegative().optional(),
  seed: z.number().optional(),
  backend: StoredBackendSchema.optional(),
  /** Compiler flags / source transforms were varied (false: --tunables-only). */
  flags: z.boolean().optional(),
  transforms: z.boolean().optional(),
  llm: z.record(z.string(), z.unknown()).optional(),
});
export type StoredRunSettings = z.infer<typeof StoredRunSettingsSchema>;

/** A session's run settings; a malformed one names the field of session.json and what to do. */
export function runSettingsOf(meta: Pick<SessionMeta, 'id' | 'settings'>): StoredRunSettings {
  const p = StoredRunSettingsSchema.safeParse(meta.settings);
  if (p.success) return p.data;
  const i = p.error.issues[0];
  throw new Error(`session ${meta.id}: session.json field settings.${i.path.join('.')} is not valid (${i.message}); the file was edited: restore it or start a new session`);
}

/** The recording a REPLAY session answers from, or null (settings that cannot be read count as not REPLAY). */
export function replayRecordingOf(settings: Record<string, unknown>): string | null {
  const p = StoredBackendSchema.safeParse(settings.backend);
  return p.success && p.data.kind === 'replay' ? p.data.recording : null;
}

/** The device of a Python-candidate session ('cpu': its times are CPU times), or null for any other session. */
export function pythonDeviceOf(settings: Record<string, unknown>): 'cuda' | 'cpu' | null {
  const p = StoredBackendSchema.safeParse(settings.backend);
  return p.success && p.data.kind === 'python' ? p.data.device : null;
}

/** A Python-candidate session's figure (sessions from before it: one-call); null for other sessions. */
export function pythonFigureOf(settings: Record<string, unknown>): 'per-call' | 'one-call' | null {
  const p = StoredBackendSchema.safeParse(settings.backend);
  return p.success && p.data.kind === 'python' ? (p.data.figure ?? 'one-call') : null;
}
