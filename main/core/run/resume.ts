// What `--resume <session>` continues with: the session's own strategy, budget, seed, backend
// (a REPLAY session stays REPLAY of its recording; a GPU session stays on its GPU; a compile-only
// one stays compile-only), flags and transforms, and LLM settings, as session.json keeps them.
// Options given on the command line may repeat those values; one that differs is a conflict,
// refused with a message naming the option, the session's value and what to do. Pure: the caller
// reads the session's metadata and says which options were given.
import path from 'node:path';
import type { SessionMeta } from '../../engine/session/events.js';
import { runSettingsOf } from '../../engine/session/run-settings.js';
import { isRunStrategyName, type RunStrategyName } from '../../engine/search/strategies.js';
import type { Backend } from './prepare.js';

/** Options given explicitly on the command line (defaults left out). */
export interface GivenRunOptions {
  /** The task argument, resolved to its folder. */
  taskDir?: string;
  strategy?: string;
  budget?: number;
  seed?: number;
  /** --replay, resolved to an absolute path. */
  replay?: string;
  tunablesOnly?: boolean;
  gpu?: number;
  /** --gpus: the pool a resumed session continues on (its GPUs must be of the session's model). */
  gpus?: 'all' | number[];
  arch?: string;
  maxMs?: number;
  duelNoise?: number;
  duelSkip?: number;
  timeCutoff?: number;
  /** LLM settings given by --llm-* flags, by settings field name (only those given). */
  llm?: Record<string, unknown>;
}

/** The options a resumed run continues with. */
export interface ResumedRunOptions {
  strategy: RunStrategyName;
  budget: number;
  seed: number;
  backend: Backend;
  flags: boolean;
  transforms: boolean;
}

/** Options that differ from a session's own settings; the message says what to do. */
export class ResumeConflict extends Error {
  constructor(
    readonly sessionId: string,
    readonly conflicts: string[],
  ) {
    super(
      `session ${sessionId} continues with its own settings, and ${conflicts.length === 1 ? 'this option differs' : 'these options differ'}:\n` +
        conflicts.map((c) => `  ${c}\n`).join('') +
        `leave ${conflicts.length === 1 ? 'it' : 'them'} out to resume it (\`kernelduel optimize --resume ${sessionId}\`), or start a new session with ${conflicts.length === 1 ? 'it' : 'them'}`,
    );
    this.name = 'ResumeConflict';
  }
}

const LLM_FLAG: Record<string, string> = { baseURL: '--llm-base-url', model: '--llm-model', apiKeyEnv: '--llm-key-env', temperature: '--llm-temperature', maxTokens: '--llm-max-tokens', requestTimeoutMs: '--llm-timeout-ms' };

/**
 * The run options of session `meta` for a resume, or ResumeConflict listing every option given
 * that differs from the session's (each with what to do). Sessions made before a setting was kept
 * (flags, transforms, arch, time cap) take it from the command line, or the default.
 */
export function resumeRunOptions(meta: SessionMeta, given: GivenRunOptions): ResumedRunOptions {
  const s = runSettingsOf(meta);
  const id = meta.id;
  const conflicts: string[] = [];
  const differ = (option: string, value: unknown, stored: unknown): void => {
    if (value !== undefined && stored !== undefined && value !== stored) conflicts.push(`${option} ${String(value)}: the session has ${String(stored)}`);
  };
  if (given.taskDir !== undefined && path.resolve(given.taskDir) !== path.resolve(meta.task.dir)) {
    conflicts.push(`task ${given.taskDir}: the session is of task ${meta.task.name} (${meta.task.dir})`);
  }
  if (s.strategy === undefined || !isRunStrategyName(s.strategy)) {
    throw new Error(`session ${id}: session.json names no strategy this version knows (${String(s.strategy)}); start a new session`);
  }
  if (s.budget === undefined) throw new Error(`session ${id}: session.json has no budget; start a new session`);
  differ('--strategy', given.strategy, s.strategy);
  differ('--budget', given.budget, s.budget);
  differ('--seed', given.seed, s.seed);
  const flags = s.flags ?? !given.tunablesOnly;
  const transforms = s.transforms ?? !given.tunablesOnly;
  if (given.tunablesOnly && (s.flags || s.transforms)) conflicts.push('--tunables-only: the session varies compiler flags and source transforms too');
  for (const [k, v] of Object.entries(given.llm ?? {})) {
    const stored = s.llm?.[k];
    if (stored === undefined) conflicts.push(`${LLM_FLAG[k] ?? k} ${String(v)}: the session uses no language model`);
    else differ(LLM_FLAG[k] ?? k, v, stored);
  }
  const seed = s.seed ?? given.seed ?? 1;
  let backend: Backend;
  const b = s.backend;
  if (b?.kind === 'replay') {
    if (given.replay !== undefined && path.resolve(given.replay) !== path.resolve(b.recording)) conflicts.push(`--replay ${given.replay}: the session is a REPLAY of ${b.recording}`);
    if (given.gpus !== undefined) conflicts.push(`--gpus: the session is a REPLAY of ${b.recording} (answered from the recording, never measured)`);
    for (const [opt, v] of [['--gpu', given.gpu], ['--arch', given.arch], ['--max-ms', given.maxMs], ['--duel-noise', given.duelNoise], ['--duel-skip', given.duelSkip], ['--time-cutoff', given.timeCutoff]] as const) {
      if (v !== undefined) conflicts.push(`${opt} ${v}: the session is a REPLAY of ${b.recording} (answered from the recording, never measured)`);
    }
    backend = { kind: 'replay', recording: b.recording, seed: b.seed ?? seed, ...(b.simulateGpus ? { simulateGpus: { count: b.simulateGpus.count, ...(b.simulateGpus.latencyMs ? { latencyMs: b.simulateGpus.latencyMs } : {}) } } : {}) };
  } else if (b?.kind === 'python') {
    // A Python-candidate session continues on its device (a CPU session stays on the CPU: its times are CPU times).
    const what = `the session measures Python candidates on ${b.device === 'cpu' ? 'the CPU' : `GPU ${meta.gpu?.name ?? 'cuda'}`}`;
    for (const [opt, v] of [['--replay', given.replay], ['--gpus', given.gpus], ['--gpu', given.gpu], ['--arch', given.arch], ['--max-ms', given.maxMs], ['--duel-noise', given.duelNoise], ['--duel-skip', given.duelSkip], ['--time-cutoff', given.timeCutoff]] as const) {
      if (v !== undefined) conflicts.push(`${opt} ${String(v)}: ${what}`);
    }
    // its figure stays what its results hold: sessions from before the per-call figure were one-call
    backend = { kind: 'python', device: b.device, figure: b.figure ?? 'one-call', ...(b.duelRounds ? { duelRounds: b.duelRounds } : {}), ...(b.timingArgs ? { timingArgs: b.timingArgs } : {}) };
  } else {
    if (given.replay !== undefined) conflicts.push(`--replay ${given.replay}: the session ${meta.gpu ? `measures on GPU ${meta.gpu.name}` : 'is compile-only'}, not a REPLAY of a recording`);
    const compileOnly = b?.compileOnly ?? meta.gpu === null;
    if (compileOnly && given.gpu !== undefined) conflicts.push(`--gpu ${given.gpu}: the session is compile-only (no GPU measured its baseline)`);
    if (compileOnly && given.gpus !== undefined) conflicts.push('--gpus: the session is compile-only (no GPU measured its baseline)');
    // A pool session continues on a pool (--gpus, else every GPU of its model); a one-GPU session may continue on a pool of its model.
    const pool = given.gpus ?? (b?.gpus?.length ? 'all' : undefined);
    const arch = b?.arch ?? meta.gpu?.arch;
    differ('--arch', given.arch, arch);
    differ('--max-ms', given.maxMs, b?.maxMs);
    differ('--duel-noise', given.duelNoise, b?.duelNoise);
    differ('--duel-skip', given.duelSkip, b?.duelSkip);
    differ('--time-cutoff', given.timeCutoff, b?.timeCutoff);
    backend = {
      kind: 'gpu',
      ...(compileOnly
        ? { noGpu: true }
        : pool !== undefined
          ? { gpus: pool, gpuName: meta.gpu?.name }
          : { uuid: meta.gpu?.uuid, gpuName: meta.gpu?.name, ...(given.gpu !== undefined ? { gpu: given.gpu } : {}) }),
      ...((arch ?? given.arch) ? { arch: arch ?? given.arch } : {}),
      ...((b?.maxMs ?? given.maxMs) ? { maxMs: b?.maxMs ?? given.maxMs } : {}),
      ...((b?.duelNoise ?? given.duelNoise) ? { duelNoise: b?.duelNoise ?? given.duelNoise } : {}),
      ...((b?.duelSkip ?? given.duelSkip) ? { duelSkip: b?.duelSkip ?? given.duelSkip } : {}),
      ...((b?.timeCutoff ?? given.timeCutoff) !== undefined ? { timeCutoff: b?.timeCutoff ?? given.timeCutoff } : {}),
    };
  }
  if (conflicts.length) throw new ResumeConflict(id, conflicts);
  return { strategy: s.strategy, budget: s.budget, seed, backend, flags, transforms };
}
