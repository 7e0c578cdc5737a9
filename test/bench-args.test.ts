// The benchmarks' command lines (bench/lib/args.ts): `--help` prints the script's usage comment and
// its options; an unknown option or a missing value is one line and the options, exit status 2, not
// a stack trace. Run as a user runs them, through tsx.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const bench = (name: string, ...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(process.cwd(), 'bench', `${name}.ts`), ...args], { encoding: 'utf8', timeout: 60_000 });

describe('bench command lines', () => {
  it('--help prints the usage comment and every option with its default, exit 0', () => {
    const r = bench('vs-pytorch', '--help');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/npm run bench:vs-pytorch/); // from the file's header comment
    expect(r.stdout).toMatch(/--task-limit-s <value> {2}\(default "0"\)/);
    expect(r.stdout).toMatch(/--budget <value> {2}\(default "100"\)/);
  });
  it('an unknown option names itself and the options, exit 2, no stack trace', () => {
    const r = bench('timing-stability', '--bogus');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bench timing-stability: Unknown option '--bogus'/);
    expect(r.stderr).toMatch(/--variants-from <value>/);
    expect(r.stderr).not.toMatch(/at .*node:internal/);
  });
  it("measure-truth's --new-env / --old-env take NAME=VALUE pairs and name the flag of a bad one, before anything runs", () => {
    const r = bench('measure-truth', '--parts', 'throughput', '--new-env', 'KERNELDUEL_SPARES_WAIT=0,spares');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('--new-env: expected NAME=VALUE[,NAME=VALUE…], got "spares"');
  });
  it('a missing value says which option lacks it', () => {
    const r = bench('merge-live', '--out');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bench merge-live: Option '--out <value>' argument missing/);
  });
});
