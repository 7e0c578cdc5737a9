// The task of a recorded space that has no kernel source (one imported from another tuner, e.g.
// a Kernel Tuner cache): the space carries its own tunables and the configuration a run starts
// from, and stands in for the task folder. Such a task can only be replayed: it has no source to
// build, no reference to check against and no sizes; its variants are its tunables alone (no
// compiler flags, no source transforms). Spaces recorded from a KernelDuel task are not affected.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_TOLERANCE, type Task } from '../task/manifest.js';
import { resolveTask } from '../task/resolve.js';
import { loadSpace, type RecordedSpace } from './replay.js';

export type SourceFreeSpace = RecordedSpace & { tunables: Record<string, number[]>; baseline: Record<string, number> };

/** A space that is a task of its own: it names its tunables and its baseline configuration. */
export function isSourceFree(space: RecordedSpace): space is SourceFreeSpace {
  return space.tunables !== undefined;
}

/** One line on where a source-free space came from, for labels. */
export function originLabel(space: RecordedSpace): string {
  const o = space.origin;
  if (!o) return `recorded on ${space.gpu.name}`;
  const tool = o.tool === 'kernel-tuner' ? 'Kernel Tuner' : o.tool === 't4' ? 'a T4 results file' : o.tool;
  return `recorded by ${tool} on ${space.gpu.name}${o.kernel ? ` (kernel ${o.kernel})` : ''}, imported from ${o.file}`;
}

/** The task a source-free space stands for; throws naming the field when the space contradicts itself. */
export function spaceTask(space: RecordedSpace, file: string): Task {
  if (!isSourceFree(space)) throw new Error(`${file} is a recording of the KernelDuel task ${space.task}, not a task of its own: replay it with that task`);
  const names = Object.keys(space.tunables);
  if (!names.length) throw new Error(`${file}: tunables is empty`);
  if (!space.baseline) throw new Error(`${file}: a space with its own tunables needs a baseline configuration`);
  const bad = (where: string, c: Record<string, number>): string | null => {
    const ks = Object.keys(c);
    const extra = ks.find((k) => !(k in space.tunables));
    if (extra) return `${where}.${extra} is not one of the tunables (${names.join(', ')})`;
    const miss = names.find((n) => !(n in c));
    if (miss) return `${where} has no value for ${miss}`;
    const off = names.find((n) => !space.tunables[n].includes(c[n]));
    return off ? `${where}.${off} is ${c[off]}, not one of tunables.${off}` : null;
  };
  const problem = bad('baseline', space.baseline) ?? space.entries.map((e, i) => bad(`entries.${i}.config`, e.config)).find((x) => x !== null) ?? null;
  if (problem) throw new Error(`${file}: ${problem}`);
  const path = resolve(file);
  return {
    dir: path,
    manifestPath: path,
    manifest: {
      name: space.task,
      description: `A recorded space without kernel source (${originLabel(space)}): REPLAY only, tunables only.`,
      entry: (space.origin?.kernel ?? 'kernel').replace(/[^A-Za-z0-9_]/g, '_').replace(/^(?=\d)/, '_'),
      args: [],
      sizes: [{}],
      tunables: space.tunables,
      defaults: space.baseline,
    },
    referencePath: '',
    baselinePath: '',
    referenceSource: '',
    baselineSource: '',
    hash: space.taskHash,
    timed: [0],
    tolerance: { ...DEFAULT_TOLERANCE },
  };
}

/** Whether a task is a recorded space's own (no source: it can only be replayed). */
export function isSpaceTask(task: Task): boolean {
  return task.baselinePath === '' && task.referencePath === '' && task.manifestPath === task.dir;
}

/** Whether a path names a file (a recording) rather than a task folder or a built-in task's name. */
function isFile(p: string): boolean {
  return existsSync(p) && statSync(p).isFile();
}

/** A task folder or built-in name, or the path of a source-free recorded space (its own task). */
export function resolveTaskOrSpace(arg: string): Task {
  if (!isFile(arg)) return resolveTask(arg);
  return spaceTask(loadSpace(arg), arg);
}

/**
 * The task a replay of `recording` runs: the recording's own when it is source-free (the task
 * argument must then be its name or its path), else the task named.
 */
export function replayTask(taskArg: string, recording: string, space: RecordedSpace = loadSpace(recording)): Task {
  if (!isSourceFree(space)) return resolveTask(taskArg);
  if (taskArg !== space.task && !(isFile(taskArg) && resolve(taskArg) === resolve(recording))) {
    throw new Error(`${recording} is a space of its own (task ${space.task}, ${originLabel(space)}, no kernel source): give ${space.task} as the task`);
  }
  return spaceTask(space, recording);
}
