// Where KernelDuel keeps its files, and where its bundled resources are.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

/** `$KERNELDUEL_HOME` (an empty value counts as unset), or `~/.kernelduel`: sessions, builds, locks, settings. */
export function kernelduelHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.KERNELDUEL_HOME;
  return resolve(home && home.trim() !== '' ? home : join(os.homedir(), '.kernelduel'));
}

/** Work folder for builds, reference outputs and harness binaries. */
export function workRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(kernelduelHome(env), 'work');
}

let cachedResources: string | null = null;
/** The `resources/` folder (next to the sources in a checkout, next to the bundle when bundled). */
export function resourcesDir(): string {
  if (cachedResources) return cachedResources;
  const candidates: string[] = [];
  if (process.env.KERNELDUEL_RESOURCES) candidates.push(process.env.KERNELDUEL_RESOURCES);
  let d = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    candidates.push(join(d, 'resources'));
    d = dirname(d);
  }
  for (const c of candidates) {
    if (existsSync(join(c, 'harness', 'harness.cu'))) return (cachedResources = resolve(c));
  }
  throw new Error(`cannot find KernelDuel's resources folder (looked in ${candidates.join(', ')}); set KERNELDUEL_RESOURCES`);
}

export function builtinTasksDir(): string {
  return join(resourcesDir(), 'tasks');
}
