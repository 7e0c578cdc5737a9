// Results files of a benchmark run never replace another run's: two bundles measured in one device
// session with the same --tag (or the same --out) wrote one name, and on 2026-12-07 the second
// timing-stability run's JSON replaced the first's (its figures survived only in the session log).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `base` when no `base + ext` exists in `dir` for any of `exts`, else the first of `base-2`,
 * `base-3`, … that names none. Decide once, before a run's first write: a run that saves as it goes
 * keeps its own name.
 */
export function unusedBase(dir: string, base: string, exts: readonly string[] = ['.json', '.md']): string {
  const taken = (b: string): boolean => exts.some((e) => existsSync(join(dir, b + e)));
  if (!taken(base)) return base;
  for (let i = 2; ; i++) if (!taken(`${base}-${i}`)) return `${base}-${i}`;
}

/** The checkout's commit (short), for a results file; null outside a git checkout (a GPU bundle). */
export function checkoutCommit(root: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}
