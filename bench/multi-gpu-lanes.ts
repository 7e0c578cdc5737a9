// Where each GPU's time went in the sessions of `bench multi-gpu` (issue 19), read back from their
// journals: per session and GPU, the median interval between two results on that GPU and its parts
// (the duel after the first result, then the second's stages: queued for the GPU, capture, check,
// timing; "other" is the rest: build, policy, journal), and duels split by whether their two sides
// were first measured on the same GPU or on different ones. Real measurements as journaled; nothing
// is re-measured here.
//   npx tsx bench/multi-gpu-lanes.ts <sessions folder> [--out FILE.md]
// (scripts/device-multigpu.sh brings the sessions back as multi-gpu-sessions.tgz.)
import { writeFileSync } from 'node:fs';
import { benchArgs as parseArgs } from './lib/args.js';
import { lanesTable } from './lib/multi-gpu-lanes.js';

const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
const root = positionals[0];
if (!root) {
  process.stderr.write('usage: npx tsx bench/multi-gpu-lanes.ts <sessions folder> [--out FILE.md]\n');
  process.exit(2);
}
const md = lanesTable(root);
process.stdout.write(md);
if (values.out) writeFileSync(values.out, md);
