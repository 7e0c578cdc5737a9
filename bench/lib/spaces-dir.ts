// Where a benchmark finds the recorded spaces (bench/spaces/<gpu>/<task>.json): --spaces, else the
// bench data beside the script (a checkout's bench/), else bench/spaces under the working folder
// (the GPU bundle carries no recorded spaces: the repository checkout it runs from has them). The
// GPU's own folder first, then the H200's (the only GPU recorded so far).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export function recordedSpacesDir(given: string | undefined, benchDir: string, slug: string): string {
  if (given) {
    if (!existsSync(given)) throw new Error(`--spaces ${given}: no such folder`);
    return given;
  }
  const tried = [join(benchDir, 'spaces', slug), join(benchDir, 'spaces', 'h200'), resolve('bench', 'spaces', slug), resolve('bench', 'spaces', 'h200')];
  const dir = tried.find((d) => existsSync(d));
  if (!dir) throw new Error(`no recorded spaces for ${slug} (looked in ${tried.join(', ')}): give --spaces DIR`);
  return dir;
}
