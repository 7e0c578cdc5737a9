// `kernelduel confirm` and `optimize --confirm` from the command line, without a GPU: what cannot be
// measured again is refused with its reason and a non-zero exit (the measuring path is in
// confirm.test.ts with a FIXTURE measurer; on a GPU, docs/GPU-RUNS.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listSessions } from '../main/engine/session/list.js';
import { runCli, showRun, REPO, type CliRun } from './fixtures/cli.js';

let home: string;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-confirm-home-'));
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});
const cli = (...args: string[]): Promise<CliRun> => runCli(home, args, { cwd: REPO });
const SPACE = path.join(REPO, 'bench', 'spaces', 'h200', 'axpy.json');

describe('kernelduel confirm', () => {
  it('refuses a REPLAY session, naming its recording', async () => {
    const run = await cli('optimize', 'axpy', '--replay', SPACE, '--budget', '3', '--strategy', 'random');
    expect(run.code, showRun(run)).toBe(0);
    const [sid] = listSessions(path.join(home, 'sessions')).map((x) => x.id);
    const r = await cli('confirm', sid);
    expect(r.code, showRun(r)).toBe(1);
    expect(r.stderr).toContain(`kernelduel: session ${sid} is a REPLAY of ${SPACE}: its times come from that recording`);
  });

  it('optimize --confirm is refused with --replay and with a bad count, before anything runs', async () => {
    const a = await cli('optimize', 'axpy', '--replay', SPACE, '--budget', '3', '--confirm');
    expect(a.code, showRun(a)).toBe(1);
    expect(a.stderr).toContain('--confirm measures variants again on a GPU; a --replay answers from a recording');
    const b = await cli('optimize', 'axpy', '--budget', '3', '--confirm', '0');
    expect(b.code, showRun(b)).toBe(1);
    expect(b.stderr).toContain('--confirm 0: give how many of the fastest variants to confirm, 1 to 50');
  });
});
