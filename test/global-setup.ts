// Once per `vitest run`: builds the CLI from this checkout's sources with esbuild
// (scripts/bundle-gpu.mjs --cli-only, ~1 s) for the tests that run `kernelduel` as a child process.
// The built CLI starts in ~0.4 s where the sources through tsx take ~1.4 s (2-3 s on CI's two busy
// cores), and the suite starts it a few hundred times. It is the same code the GPU server bundle
// ships, built from the sources of this run, so it is never stale; KERNELDUEL_TEST_CLI=source runs
// every test through tsx instead (bin/kernelduel.mjs's path in a checkout), and test/cli.test.ts
// keeps one test on that path whatever is set.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built CLI (…/lib/kernelduel.mjs), or '' where tests run the sources through tsx. */
    kernelduelCli: string;
  }
}

const REPO = resolve(import.meta.dirname, '..');

export default function setup(project: TestProject): () => void {
  if (process.env.KERNELDUEL_TEST_CLI === 'source') {
    project.provide('kernelduelCli', '');
    return () => {};
  }
  // Directly under node_modules/.cache, so the built code finds <checkout>/resources by walking up
  // from lib/chunks/ as the sources do (main/engine/base/paths.ts looks in six folders: chunks, lib,
  // this one, .cache, node_modules and the checkout).
  const out = join(REPO, 'node_modules', '.cache', `kd-test-cli-${process.pid}`);
  const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'bundle-gpu.mjs'), '--cli-only', '--out', out], { cwd: REPO, encoding: 'utf8' });
  const cli = join(out, 'lib', 'kernelduel.mjs');
  if (r.status !== 0 || !existsSync(cli)) throw new Error(`test/global-setup.ts: building the CLI failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  project.provide('kernelduelCli', cli);
  return () => rmSync(out, { recursive: true, force: true });
}
