// The search space of a task: the cartesian product of its tunables' values, filtered by its
// restrictions (evaluated with the timed size's symbols in scope, as Kernel Tuner does).
import type { Config } from '../base/types.js';
import { evalExpr, exprSymbols } from '../base/expr.js';
import type { Task } from './manifest.js';

export const MAX_SPACE = 2_000_000;

export function configKey(c: Config): string {
  return Object.keys(c).sort().map((k) => `${k}=${c[k]}`).join(',');
}

export function isValidConfig(task: Task, c: Config): boolean {
  return restrictionsHold(task, task.manifest.restrictions ?? [], c);
}

/** Whether the given restrictions hold for c, with the timed size's symbols in scope. */
function restrictionsHold(task: Task, restrictions: string[], c: Config): boolean {
  if (!restrictions.length) return true;
  const scope = { ...task.manifest.sizes[task.timed[0]], ...c };
  return restrictions.every((r) => evalExpr(r, scope) !== 0);
}

/**
 * Every valid configuration, in a deterministic order (the cartesian product's, first tunable
 * slowest). Throws when the restrictions exclude all. Each restriction is checked as soon as the
 * last tunable it names has its value, so a subtree it excludes is never walked: matmul's 331,776
 * combinations, 1,049 of them valid, took 2.8 s leaf by leaf (every list of the tasks paid it).
 */
export function enumerateSpace(task: Task): Config[] {
  const t = task.manifest.tunables ?? {};
  const names = Object.keys(t);
  let total = 1;
  for (const n of names) total *= t[n].length;
  if (total > MAX_SPACE) throw new Error(`task ${task.manifest.name}: ${total} configurations is more than ${MAX_SPACE}; narrow the tunables`);
  // at[i]: the restrictions whose last named tunable is names[i]; fixed: those naming none.
  const at: string[][] = names.map(() => []);
  const fixed: string[] = [];
  for (const r of task.manifest.restrictions ?? []) {
    const last = Math.max(-1, ...exprSymbols(r).map((sym) => names.indexOf(sym)));
    if (last < 0) fixed.push(r);
    else at[last].push(r);
  }
  const out: Config[] = [];
  const cur: Config = {};
  const rec = (i: number): void => {
    if (i === names.length) {
      out.push({ ...cur });
      return;
    }
    for (const v of t[names[i]]) {
      cur[names[i]] = v;
      if (restrictionsHold(task, at[i], cur)) rec(i + 1);
    }
  };
  if (restrictionsHold(task, fixed, cur)) rec(0);
  if (names.length && out.length === 0) {
    throw new Error(`${task.manifestPath}: restrictions exclude every configuration of the tunables (${names.join(', ')}); relax "restrictions"`);
  }
  return out;
}

/** The baseline's configuration: the manifest's `defaults` (others left to the source's own #ifndef defaults). */
export function defaultConfig(task: Task): Config {
  return { ...(task.manifest.defaults ?? {}) };
}
