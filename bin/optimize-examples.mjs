#!/usr/bin/env node
// `npm run optimize-examples`: optimise the built-in example tasks with the CLI
// (random search, budget 20 each; KERNELDUEL_START_BUDGET overrides). Without a GPU this builds
// every variant (compile-only) and says so.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const budget = process.env.KERNELDUEL_START_BUDGET ?? '20';
const tasks = (process.env.KERNELDUEL_START_TASKS ?? 'softmax,reduce_sum,matmul').split(',');
for (const t of tasks) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'main/doors/cli/index.ts'), 'optimize', t, '--budget', budget, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
