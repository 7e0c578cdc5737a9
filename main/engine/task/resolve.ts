// A task argument is a folder path (any task folder, anywhere) or the name of a built-in task
// (resources/tasks/<name>). A name that is also a folder in the current directory is ambiguous:
// the folder wins when it is a task folder, the built-in task otherwise, and either way the
// choice comes with a note saying which one is used.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { builtinTasksDir } from '../base/paths.js';
import { findManifest, loadTask, type Task } from './manifest.js';

export function builtinTaskNames(): string[] {
  const dir = builtinTasksDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && findManifest(join(dir, d.name)))
    .map((d) => d.name)
    .sort();
}

export interface TaskChoice {
  dir: string;
  /** Said when the argument names both a folder here and a built-in task. */
  note?: string;
}

export function chooseTaskDir(arg: string): TaskChoice {
  const builtin = join(builtinTasksDir(), arg);
  const isName = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(arg);
  const builtinTask = isName && findManifest(builtin) !== null;
  if (existsSync(arg)) {
    const local = resolve(arg);
    if (!builtinTask || local === resolve(builtin)) return { dir: local };
    if (findManifest(local)) return { dir: local, note: `task "${arg}": the task folder ${local} is used, not the built-in task ${arg} (${builtin}); give the built-in one's path to use it` };
    return { dir: builtin, note: `task "${arg}": ${local} is not a task folder (no task.yaml), so the built-in task ${arg} is used` };
  }
  if (existsSync(builtin)) return { dir: builtin };
  throw new Error(`no task "${arg}": not a folder, and not a built-in task (built-in: ${builtinTaskNames().join(', ') || 'none'}); a task folder holds task.yaml, reference.cu and kernel.cu (docs/TASK-FORMAT.md)`);
}

export function resolveTaskDir(arg: string): string {
  return chooseTaskDir(arg).dir;
}

export function resolveTask(arg: string): Task {
  return loadTask(resolveTaskDir(arg));
}
