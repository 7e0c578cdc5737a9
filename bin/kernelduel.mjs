#!/usr/bin/env node
// The `kernelduel` command of a checkout (package.json "bin"). Runs the built CLI
// (dist/cli/kernelduel.mjs) when there is one, else the TypeScript sources (main/doors/cli/index.ts)
// through tsx.
//
// The CLI runs in this process (tsx registered with its module API) rather than in a child
// `node --import tsx` process: the CLI stops gracefully on the first Ctrl-C and quits on the
// second, and a wrapper that forwards signals to a child in the same process group makes one
// Ctrl-C arrive twice (once from the terminal, once forwarded). In-process, signals, exit codes,
// stdio and process.argv are simply the CLI's own.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'kernelduel.mjs');

if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch (e) {
    process.stderr.write(
      `kernelduel: cannot run the TypeScript sources: tsx is not installed (${e?.code ?? e}).\n` +
        `Run \`npm install\` in ${root} (tsx is a dev dependency), or build the CLI to dist/cli/kernelduel.mjs.\n`,
    );
    process.exit(1);
  }
  register();
  await import(pathToFileURL(join(root, 'main', 'doors', 'cli', 'index.ts')).href);
}
