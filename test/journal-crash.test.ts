// A real kill test: a child process appends to a journal in a tight loop and is SIGKILLed at random moments
// (including during open/repair). After every kill, each record the child reported as appended must be there,
// opening must not throw, and the next append must work.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../main/engine/session/journal.js';

const CHILD_TS = fileURLToPath(new URL('./fixtures/journal-child.ts', import.meta.url));
type Rec = { pid: number; i: number; pad: string } | { parent: number };

let dir: string;
/** The child bundled to plain JS (~0.1 s start instead of ~1 s under tsx) so many rounds fit the time budget. */
let bundled: string | null = null;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-crash-'));
  try {
    const { buildSync } = await import('esbuild');
    bundled = path.join(dir, 'journal-child.mjs');
    buildSync({ entryPoints: [CHILD_TS], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: bundled, logLevel: 'silent' });
  } catch {
    bundled = null; // fall back to tsx for every round
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Round {
  reported: number[];
  pid: number;
  openedAt: number | null;
}

/** Runs the child until SIGKILL: `killAfterMs` after spawn, or after its first append when `afterOpen`. */
function runChild(file: string, useTsx: boolean, killAfterMs: number, afterOpen: boolean): Promise<Round> {
  return new Promise((resolve, reject) => {
    const args = useTsx || !bundled ? ['--import', 'tsx', CHILD_TS, file] : [bundled, file];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: path.dirname(path.dirname(CHILD_TS)) });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    const kill = () => child.kill('SIGKILL');
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (afterOpen && !timer && /\n\d+\n/.test(out)) timer = setTimeout(kill, killAfterMs);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    if (!afterOpen) timer = setTimeout(kill, killAfterMs);
    const safety = setTimeout(kill, 10_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(safety);
      if (signal !== 'SIGKILL') {
        reject(new Error(`child exited by itself (code ${code}, signal ${signal}): ${err}`));
        return;
      }
      // Only complete lines count: the last one may have been cut by the kill.
      const complete = out.slice(0, out.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
      const opened = complete.find((l) => l.startsWith('open '));
      resolve({
        reported: complete.filter((l) => /^\d+$/.test(l)).map(Number),
        pid: child.pid!,
        openedAt: opened ? Number(opened.slice(5)) : null,
      });
    });
  });
}

describe('journal survives SIGKILL at any moment', () => {
  it('keeps every record the killed child reported as appended, reopens without error, and accepts the next append', async () => {
    const file = path.join(dir, 'journal.jsonl');
    const started = Date.now();
    // At least MIN_ROUNDS kills; more (up to MAX_ROUNDS) while the run stays well under 30 s.
    const MIN_ROUNDS = 30;
    const MAX_ROUNDS = 40;
    let rounds = 0;
    let totalReported = 0;
    let killsDuringStartup = 0;
    let parentSeq = 0;
    for (let round = 0; round < MAX_ROUNDS && (round < MIN_ROUNDS || Date.now() - started < 20_000); round++) {
      // The first two rounds run the fixture through tsx itself; the rest the bundled copy.
      const useTsx = round < 2;
      // A quarter of the rounds kill at a random time from spawn (often during open/truncate or the first
      // appends), the rest a random 0-40 ms into the append loop.
      const early = round % 4 === 3;
      const r = await runChild(file, useTsx, early ? Math.random() * 150 : Math.random() * 40, !early);
      rounds++;
      if (r.openedAt === null) killsDuringStartup++;

      const j = Journal.open<Rec>(file);
      const { records } = j.read();
      // The child may have appended one record it did not get to report, never fewer than it reported.
      for (const seq of r.reported) {
        expect(seq).toBeLessThanOrEqual(records.length);
        expect(records[seq - 1]).toMatchObject({ pid: r.pid });
      }
      if (r.reported.length > 0) {
        expect(records.length - Math.max(...r.reported)).toBeLessThanOrEqual(1);
        if (r.openedAt !== null) expect(r.reported[0]).toBe(r.openedAt + 1);
      }
      expect(records.length).toBeGreaterThanOrEqual(parentSeq);
      totalReported += r.reported.length;

      // The next append works and lands on a clean line.
      j.append({ parent: round });
      parentSeq = j.lastSeq;
      j.close();
      const again = Journal.readFile<Rec>(file);
      expect(again.droppedTornTail).toBe(false);
      expect(again.records[parentSeq - 1]).toEqual({ parent: round });
    }
    const elapsed = Date.now() - started;
    // Sanity: the test really exercised appends under kill.
    expect(rounds).toBeGreaterThanOrEqual(MIN_ROUNDS);
    expect(totalReported).toBeGreaterThan(rounds);
    console.log(`${rounds} kills, ${totalReported} reported appends, ${killsDuringStartup} kills before open finished, ${elapsed} ms`);
  }, 60_000);
});
