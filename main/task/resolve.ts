// A task argument is a folder path or the name of a built-in task.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { builtinTasksDir } from '../common/paths.js';
import { findManifest, loadTask, type Task } from './manifest.js';

export function builtinTaskNames(): string[] {
  const dir = builtinTasksDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && findManifest(join(dir, d.name)))
    .map((d) => d.name)
    .sort();
}

export function resolveTaskDir(arg: string): string {
  if (existsSync(arg)) return resolve(arg);
  const builtin = join(builtinTasksDir(), arg);
  if (existsSync(builtin)) return builtin;
  throw new Error(`no task "${arg}": not a folder, and not a built-in task (built-in: ${builtinTaskNames().join(', ') || 'none'})`);
}

export function resolveTask(arg: string): Task {
  return loadTask(resolveTaskDir(arg));
}
