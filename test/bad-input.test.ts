// Bad input through the CLI: malformed manifests, missing files, restrictions that exclude every
// configuration, a kernel without the entry point and corrupt session folders each give an error
// that names the field or file and says what to do, and no stack trace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, newSessionId } from '../main/engine/session/store.js';
import { NO_NVCC } from './fixtures/toolchain.js';
import { runCli, type CliRun } from './fixtures/cli.js';

const REPO = path.resolve(import.meta.dirname, '..');
const SOFTMAX = path.join(REPO, 'resources', 'tasks', 'softmax');
let root: string;
let home: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-bad-'));
  home = path.join(root, 'home');
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** The CLI as test/fixtures/cli.ts runs it, its files in `home`. */
const cli = (...args: string[]): Promise<CliRun> => runCli(home, args);
const STACK = /\n\s+at .+:\d+:\d+\)?/;

/** A copy of the softmax task with `from` replaced by `to` in task.yaml. */
function taskWith(name: string, from: string, to: string): string {
  const d = path.join(root, name);
  fs.cpSync(SOFTMAX, d, { recursive: true });
  const y = fs.readFileSync(path.join(d, 'task.yaml'), 'utf8');
  if (!y.includes(from)) throw new Error(`test bug: ${from} not in task.yaml`);
  fs.writeFileSync(path.join(d, 'task.yaml'), y.replace(from, to));
  return d;
}

const MANIFESTS: Array<{ name: string; from: string; to: string; expect: RegExp[] }> = [
  { name: 'wrong-type', from: 'sizes:\n  - {rows: 8192, cols: 8192}', to: 'sizes: big\n_unused:\n  - {rows: 8192, cols: 8192}', expect: [/sizes \(line \d+\): .*expected array/, /Unrecognized key: "_unused"/] },
  { name: 'unknown-dtype', from: '{name: x, kind: buffer, dtype: f32', to: '{name: x, kind: buffer, dtype: f16', expect: [/args\[0\]\.dtype \(line 5\)/, /"f32"/] },
  { name: 'bad-shape', from: 'shape: [rows, cols], role: in', to: 'shape: [rows *, cols], role: in', expect: [/args\[0\]\.shape \(line 5\): cannot parse "rows \*"/] },
  { name: 'negative-size', from: '{rows: 1000, cols: 1023}', to: '{rows: -1000, cols: 1023}', expect: [/sizes\[1\]\.rows \(line \d+\): must be a positive integer, got -1000/] },
  { name: 'absurd-size', from: '{rows: 8192, cols: 8192}', to: '{rows: 100000000, cols: 100000000}', expect: [/args\[0\]\.shape .*GiB: too large/] },
  { name: 'missing-file', from: 'files: {reference: reference.cu', to: 'files: {reference: nothere.cu', expect: [/files\.reference: .*nothere\.cu does not exist/] },
];

describe('malformed task folders', () => {
  for (const m of MANIFESTS) {
    it(`${m.name}: names the field and line, says what to do, no stack trace`, async () => {
      const r = await cli('eval', taskWith(m.name, m.from, m.to));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('task.yaml');
      for (const re of m.expect) expect(r.stderr).toMatch(re);
      expect(r.stderr).toMatch(/fix the task folder and run again/);
      expect(r.stderr).not.toMatch(STACK);
    }, 60_000);
  }

  it('a task folder that does not exist, and one without task.yaml', async () => {
    const a = await cli('eval', path.join(root, 'no-such-task'));
    expect(a.code).not.toBe(0);
    expect(a.stderr).toMatch(/no-such-task/);
    expect(a.stderr).not.toMatch(STACK);
    const empty = path.join(root, 'empty-task');
    fs.mkdirSync(empty, { recursive: true });
    const b = await cli('eval', empty);
    expect(b.code).not.toBe(0);
    expect(b.stderr).toMatch(/task\.yaml/);
    expect(b.stderr).not.toMatch(STACK);
  }, 60_000);

  it('restrictions that exclude every configuration: optimize refuses to start, naming "restrictions"', async () => {
    const r = await cli('optimize', taskWith('no-config', '- TPR <= BLOCK', '- TPR > 4096'), '--budget', '2');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/restrictions exclude every configuration/);
    expect(r.stderr).toMatch(/relax "restrictions"/);
    expect(r.stderr).not.toMatch(STACK);
    expect(fs.existsSync(path.join(home, 'sessions')) ? fs.readdirSync(path.join(home, 'sessions')) : []).toEqual([]);
  }, 60_000);
});

describe('bad kernels', () => {
  it.skipIf(NO_NVCC)('a kernel without the entry point: a compile failure naming the entry point', async () => {
    const f = path.join(root, 'noentry.cu');
    fs.writeFileSync(f, '#include <cuda_runtime.h>\n__global__ void k(float* y) {}\nvoid not_softmax(const float* x, float* y, int rows, int cols) { k<<<1, 1>>>(y); }\n');
    const r = await cli('eval', 'softmax', f, '--json');
    expect(r.code).toBe(2);
    const j = JSON.parse(r.stdout) as { result: { failure: { kind: string; reason: string } } };
    expect(j.result.failure.kind).toBe('compile');
    expect(j.result.failure.reason).toMatch(/^the variant defines no function "softmax", the task's entry point: expected void softmax\(const float\* x, float\* y, int rows, int cols\)/);
  }, 90_000);

  it('a variant file that does not exist', async () => {
    const r = await cli('eval', 'softmax', path.join(root, 'missing.cu'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot read .*missing\.cu/);
    expect(r.stderr).not.toMatch(STACK);
  }, 60_000);
});

describe('corrupt session folders', () => {
  const sessions = (): string => path.join(home, 'sessions');
  function session(): string {
    const s = createSession(sessions(), { id: newSessionId(), task: { name: 'softmax', dir: SOFTMAX, manifestHash: 'x' }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: 'test' });
    s.append({ type: 'note', level: 'info', message: 'one' });
    s.append({ type: 'note', level: 'info', message: 'two' });
    s.append({ type: 'note', level: 'info', message: 'three' });
    s.close();
    return s.id;
  }

  it('an edited journal line: names the journal file and the line, says to move the folder aside', async () => {
    const id = session();
    const j = path.join(sessions(), id, 'journal.jsonl');
    const lines = fs.readFileSync(j, 'utf8').split('\n');
    lines[1] = lines[1].replace('two', 'TWO');
    fs.writeFileSync(j, lines.join('\n'));
    const r = await cli('export', id, '-o', path.join(root, 'x.cu'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/journal\.jsonl line 2 fails its checksum/);
    expect(r.stderr).toMatch(/move the session folder aside/);
    expect(r.stderr).not.toMatch(STACK);
    // `sessions` still lists it, with the error, instead of failing.
    const l = await cli('sessions');
    expect(l.code).toBe(0);
    expect(l.stdout).toMatch(new RegExp(`${id}.*ERROR .*line 2`));
  }, 60_000);

  it('a journal line that is not JSON in the middle, a missing session.json, a session.json that is not JSON', async () => {
    const a = session();
    const j = path.join(sessions(), a, 'journal.jsonl');
    const lines = fs.readFileSync(j, 'utf8').split('\n');
    lines[0] = '{garbage';
    fs.writeFileSync(j, lines.join('\n'));
    const ra = await cli('export', a, '-o', path.join(root, 'x.cu'));
    expect(ra.stderr).toMatch(/line 1 is not valid JSON/);
    expect(ra.stderr).not.toMatch(STACK);

    const b = session();
    fs.rmSync(path.join(sessions(), b, 'session.json'));
    const rb = await cli('export', b, '-o', path.join(root, 'x.cu'));
    expect(rb.stderr).toMatch(/has no session\.json.*move it aside/);
    expect(rb.stderr).not.toMatch(STACK);

    const c = session();
    fs.writeFileSync(path.join(sessions(), c, 'session.json'), '{"id": ');
    const rc = await cli('optimize', 'softmax', '--resume', c, '--budget', '1');
    expect(rc.code).not.toBe(0);
    expect(rc.stderr).toMatch(/session\.json is not valid JSON.*move the session folder aside/);
    expect(rc.stderr).not.toMatch(STACK);

    const rd = await cli('export', 'no-such-session', '-o', path.join(root, 'x.cu'));
    expect(rd.stderr).toMatch(/no session at .*no-such-session.*kernelduel sessions/);
    expect(rd.stderr).not.toMatch(STACK);
  }, 90_000);
});
