// Isolation of harness runs and builds (main/engine/platform/sandbox): bubblewrap blocks the network and writes
// outside the run's folders, lets writes inside through; without bwrap runs carry on (said once),
// or are refused with KERNELDUEL_SANDBOX=require; resource limits and the output-flood kill work.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs, findBwrap, resetSandboxProbe, sandboxStatus, setSandboxNotifier, SandboxError } from '../main/engine/platform/sandbox/index.js';
import { runProcess } from '../main/engine/platform/proc/run.js';
import { runHarness } from '../main/engine/measure/harness.js';

const bwrap = findBwrap();
let status: Awaited<ReturnType<typeof sandboxStatus>> | null = null;
let root: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-sandbox-'));
  status = bwrap ? await sandboxStatus({ ...process.env, KERNELDUEL_SANDBOX: 'auto' }) : null;
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.KERNELDUEL_BWRAP;
  delete process.env.KERNELDUEL_SANDBOX;
  resetSandboxProbe();
  setSandboxNotifier((m) => void process.stderr.write(`kernelduel: note: ${m}\n`));
});

const sandboxed = (): boolean => !!status?.active;

function sh(script: string, writable: string[], readable: string[] = []): ReturnType<typeof runProcess> {
  return runProcess('/bin/bash', ['-c', script], { timeoutMs: 20_000, sandbox: { bwrap: bwrap!, args: bwrapArgs({ writable, readable }) } });
}

describe.runIf(process.platform === 'linux' && bwrap)('bubblewrap sandbox', () => {
  it('works on this machine (CI installs bubblewrap)', () => {
    expect(status?.active, status?.problem).toBe(true);
  });

  it('a connection to a TCP server on 127.0.0.1 is refused inside, and works outside', async () => {
    if (!sandboxed()) return;
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const work = fs.mkdtempSync(path.join(root, 'net-'));
    try {
      const inside = await sh(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`, [work]);
      expect(inside.code).not.toBe(0);
      expect(inside.stdout).not.toContain('CONNECTED');
      expect(connections).toBe(0);
      const outside = await runProcess('/bin/bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`], { timeoutMs: 10_000 });
      expect(outside.stdout).toContain('CONNECTED');
    } finally {
      server.close();
    }
  });

  it('writes outside the work folder fail; writes inside succeed; readable folders are read-only', async () => {
    if (!sandboxed()) return;
    const work = fs.mkdtempSync(path.join(root, 'work-'));
    const ref = fs.mkdtempSync(path.join(root, 'ref-'));
    fs.writeFileSync(path.join(ref, 'ref.bin'), 'REF');
    const outsideTarget = path.join(root, 'escaped.txt');
    const home = path.join(os.homedir(), `.kd-sandbox-escape-${process.pid}`);
    const r = await sh(
      [
        `echo inside > ${work}/ok.txt && echo W_OK`,
        `(echo x > ${outsideTarget}) 2>/dev/null && echo TMP_WRITE_PRIVATE`, // lands in the private /tmp
        `(echo x > /var/tmp/kd-escape-${process.pid}) 2>/dev/null && echo ESCAPED_VAR`,
        `(echo x > ${home}) 2>/dev/null && echo ESCAPED_HOME`,
        `(echo x > ${ref}/ref.bin) 2>/dev/null && echo REF_WRITTEN`,
        `cat ${ref}/ref.bin && echo`,
        `(echo x > /tmp/private.txt) && echo TMP_PRIVATE`,
        'true',
      ].join('; '),
      [work],
      [ref],
    );
    expect(r.stdout).toContain('W_OK');
    expect(fs.readFileSync(path.join(work, 'ok.txt'), 'utf8')).toBe('inside\n');
    expect(r.stdout).not.toContain('ESCAPED');
    expect(r.stdout).not.toContain('REF_WRITTEN');
    expect(r.stdout).toContain('REF');
    expect(r.stdout).toContain('TMP_PRIVATE'); // a private /tmp...
    expect(fs.existsSync('/tmp/private.txt')).toBe(false); // ...that is not the real one
    expect(fs.existsSync(outsideTarget)).toBe(false);
    expect(fs.existsSync(home)).toBe(false);
    expect(fs.existsSync(`/var/tmp/kd-escape-${process.pid}`)).toBe(false);
    expect(fs.readFileSync(path.join(ref, 'ref.bin'), 'utf8')).toBe('REF');
  });

  it('every process started inside dies with the run (own PID namespace), even ones that left the process group', async () => {
    if (!sandboxed()) return;
    const work = fs.mkdtempSync(path.join(root, 'pid-'));
    const marker = `kd-sandbox-sleeper-${process.pid}-${Date.now()}`;
    const r = await sh(`for i in 1 2 3 4 5; do setsid sh -c 'exec -a ${marker} sleep 600' & done; sleep 0.3; echo started`, [work]);
    expect(r.stdout).toContain('started');
    await new Promise((res) => setTimeout(res, 300));
    const left = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });

  it('runHarness runs a (stand-in) capture in the sandbox: its result and description written in the work folder; the variant library read-only; outside untouched', async () => {
    if (!sandboxed()) return;
    const work = fs.mkdtempSync(path.join(root, 'h-'));
    const libDir = fs.mkdtempSync(path.join(root, 'hl-'));
    const lib = path.join(libDir, 'variant.so');
    fs.writeFileSync(lib, 'built');
    const escaped = path.join(os.homedir(), `.kd-harness-escape-${process.pid}`);
    const fake = path.join(root, 'fake-harness.sh');
    // capture <plan> <result> <lib> <description>: tries to write outside and over its own library.
    fs.writeFileSync(
      fake,
      `#!/bin/bash\nnonce=$(sed -n 's/^nonce //p' "$2")\n(echo x > ${escaped}) 2>/dev/null && w1=1 || w1=0\n(echo x >> "$4") 2>/dev/null && w2=1 || w2=0\necho kdwork > "$5"\nprintf '{"kdresult":1,"nonce":"%s","status":"ok","body":{"outside":%s,"lib":%s}}' "$nonce" $w1 $w2 > "$3"\n`,
      { mode: 0o755 },
    );
    const { resolveTask } = await import('../main/engine/task/resolve.js');
    const task = resolveTask('softmax');
    const plan = { task, sizes: [3], seeds: [1], timed: [], timing: { warmupMs: 1, minSamples: 1, maxSamples: 1, targetRelNoise: 1, minMs: 1, maxMs: 1, flushBytes: 0, bufferSets: 1 } };
    const desc = path.join(work, 'work.kdw');
    const r = await runHarness<{ outside: number; lib: number }>({ harness: fake, mode: 'capture', plan, libs: [lib, desc], workDir: work, gpu: null, timeoutMs: 20_000 });
    expect(r.ok, r.failure?.reason).toBe(true);
    expect(r.body).toEqual({ outside: 0, lib: 0 });
    expect(fs.existsSync(escaped)).toBe(false);
    expect(fs.readFileSync(lib, 'utf8')).toBe('built');
    expect(fs.readFileSync(desc, 'utf8')).toBe('kdwork\n');
  });
});

describe('without bubblewrap', () => {
  it('KERNELDUEL_BWRAP=/nonexistent: says so once and runs without the sandbox, with the other limits', async () => {
    const notes: string[] = [];
    setSandboxNotifier((m) => notes.push(m));
    resetSandboxProbe();
    const env = { ...process.env, KERNELDUEL_BWRAP: '/nonexistent', KERNELDUEL_SANDBOX: 'auto' };
    const a = await sandboxStatus(env);
    const b = await sandboxStatus(env);
    expect(a.active).toBe(false);
    expect(b.active).toBe(false);
    expect(a.problem).toMatch(/\/nonexistent does not exist/);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/without the bubblewrap sandbox/);
    expect(notes[0]).toMatch(/other limits/);

    // A harness run still happens (unsandboxed) and still has its limits.
    process.env.KERNELDUEL_BWRAP = '/nonexistent';
    const work = fs.mkdtempSync(path.join(root, 'nb-'));
    const fake = path.join(root, 'fake-nb.sh');
    fs.writeFileSync(fake, `#!/bin/bash\nnonce=$(sed -n 's/^nonce //p' "$2")\nprintf '{"kdresult":1,"nonce":"%s","status":"ok","body":{"data":"%s"}}' "$nonce" "$(ulimit -d)" > "$3"\n`, { mode: 0o755 });
    const r = await runHarness<{ data: string }>({ harness: fake, mode: 'probe', plan: null, libs: [], workDir: work, gpu: null, timeoutMs: 20_000, isolation: { dataBytes: 2 * 2 ** 30 } });
    expect(r.ok, r.failure?.reason).toBe(true);
    if (fs.existsSync('/usr/bin/prlimit') || fs.existsSync('/bin/prlimit')) expect(r.body?.data).toBe(String(2 * 2 ** 20)); // ulimit -d is in KiB
    expect(notes).toHaveLength(1);
  });

  it('KERNELDUEL_SANDBOX=require refuses to run without it, naming the problem', async () => {
    resetSandboxProbe();
    await expect(sandboxStatus({ ...process.env, KERNELDUEL_BWRAP: '/nonexistent', KERNELDUEL_SANDBOX: 'require' })).rejects.toThrow(SandboxError);
    process.env.KERNELDUEL_BWRAP = '/nonexistent';
    process.env.KERNELDUEL_SANDBOX = 'require';
    const work = fs.mkdtempSync(path.join(root, 'rq-'));
    const r = await runHarness({ harness: '/bin/true', mode: 'probe', plan: null, libs: [], workDir: work, gpu: null, timeoutMs: 5_000 });
    expect(r.ok).toBe(false);
    expect(r.failure?.kind).toBe('runtime');
    expect(r.failure?.reason).toMatch(/KERNELDUEL_SANDBOX=require/);
  });

  it('KERNELDUEL_SANDBOX=off: no probe, no note', async () => {
    const notes: string[] = [];
    setSandboxNotifier((m) => notes.push(m));
    const s = await sandboxStatus({ ...process.env, KERNELDUEL_SANDBOX: 'off', KERNELDUEL_BWRAP: '/nonexistent' });
    expect(s).toMatchObject({ mode: 'off', active: false });
    expect(notes).toEqual([]);
  });
});

describe('limits of every harness run', () => {
  it('an output flood kills the run at once and is a runtime failure', async () => {
    const work = fs.mkdtempSync(path.join(root, 'flood-'));
    const t0 = Date.now();
    const r = await runHarness({ harness: '/usr/bin/yes', mode: 'probe', plan: null, libs: [], workDir: work, gpu: null, timeoutMs: 30_000 });
    expect(r.failure?.kind).toBe('runtime');
    expect(r.failure?.reason).toMatch(/wrote more than 256 KiB/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('RLIMIT_DATA stops a huge host allocation (and RLIMIT_AS is not used)', async () => {
    if (!fs.existsSync('/usr/bin/prlimit')) return;
    const code = 'const a=[];try{for(let i=0;i<16;i++){a.push(Buffer.alloc(64*2**20,1));}console.log("ALLOCATED")}catch(e){console.log("REFUSED")}';
    const r = await runProcess(process.execPath, ['-e', code], { timeoutMs: 30_000, dataBytes: 256 * 2 ** 20 });
    expect(r.stdout).not.toContain('ALLOCATED');
    const free = await runProcess(process.execPath, ['-e', code], { timeoutMs: 30_000, dataBytes: 4 * 2 ** 30 });
    expect(free.stdout).toContain('ALLOCATED');
  });
});
