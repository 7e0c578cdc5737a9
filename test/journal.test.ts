import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Journal, JournalError, crc32 } from '../main/engine/session/journal.js';

type Rec = { n: number; s?: string };

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-journal-'));
  file = path.join(dir, 'journal.jsonl');
});
afterEach(() => {
  vi.restoreAllMocks();
  try {
    fs.chmodSync(dir, 0o755);
  } catch {
    /* already gone */
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

function writeRecords(n: number): void {
  const j = Journal.open<Rec>(file);
  for (let i = 1; i <= n; i++) j.append({ n: i, s: `rec ${i}` });
  j.close();
}
const lines = (): string[] => fs.readFileSync(file, 'utf8').split('\n');

function expectJournalError(fn: () => unknown, ...parts: (string | RegExp)[]): JournalError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(JournalError);
  for (const p of parts) expect((err as Error).message).toMatch(p);
  return err as JournalError;
}

describe('Journal basics', () => {
  it('creates a missing file and reads back appended records after reopening, seq continuing', () => {
    expect(fs.existsSync(file)).toBe(false);
    writeRecords(3);
    const j = Journal.open<Rec>(file);
    expect(j.read()).toEqual({ records: [{ n: 1, s: 'rec 1' }, { n: 2, s: 'rec 2' }, { n: 3, s: 'rec 3' }], droppedTornTail: false });
    j.append({ n: 4 });
    expect(j.lastSeq).toBe(4);
    j.close();
    const env = lines().filter(Boolean).map((l) => JSON.parse(l));
    expect(env.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(env[3]).toMatchObject({ v: 2, seq: 4, rec: { n: 4 } });
    expect(typeof env[3].t).toBe('string');
    expect(env[3].crc).toBe(crc32(JSON.stringify({ n: 4 })));
  });

  it('writes exactly one newline-terminated line per append', () => {
    writeRecords(5);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n').length).toBe(6);
  });

  it('checksums lines with the standard CRC-32, so journals written by earlier versions verify', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
  });

  it('refuses to append a record the validator rejects, writing nothing', () => {
    const j = Journal.open<Rec>(file, {
      validate: (x) => {
        if (typeof (x as Rec).n !== 'number') throw new Error('n must be a number');
        return x as Rec;
      },
    });
    j.append({ n: 1 });
    expectJournalError(() => j.append({ n: 'no' } as unknown as Rec), file, /n must be a number/);
    j.close();
    expect(lines().filter(Boolean)).toHaveLength(1);
  });
});

describe('torn tail (kill mid-write)', () => {
  it('drops a last line without newline, truncates it away, and later appends continue on a clean line', () => {
    writeRecords(3);
    const intact = fs.readFileSync(file);
    fs.appendFileSync(file, '{"v":1,"seq":4,"t":"2025-01-01T00:00:00.000Z","crc":1,"rec":{"n":4,"s":"re');
    const j = Journal.open<Rec>(file);
    const r = j.read();
    expect(r.droppedTornTail).toBe(true);
    expect(r.records.map((x) => x.n)).toEqual([1, 2, 3]);
    // Truncated on open, before any append.
    expect(fs.readFileSync(file).equals(intact)).toBe(true);
    j.append({ n: 4 });
    j.close();
    const j2 = Journal.open<Rec>(file);
    expect(j2.read()).toEqual({ records: [1, 2, 3, 4].map((n) => expect.objectContaining({ n })), droppedTornTail: false });
    j2.close();
  });

  it('drops an unparseable complete last line (e.g. zero-filled after power loss)', () => {
    writeRecords(2);
    fs.appendFileSync(file, '\0\0\0\0\0\0\n');
    const j = Journal.open<Rec>(file);
    expect(j.read().droppedTornTail).toBe(true);
    expect(j.read().records).toHaveLength(2);
    j.append({ n: 3 });
    j.close();
    expect(Journal.readFile<Rec>(file).records.map((r) => r.n)).toEqual([1, 2, 3]);
  });

  it('readFile reports a torn tail without modifying the file', () => {
    writeRecords(2);
    fs.appendFileSync(file, '{"v":1,"se');
    const before = fs.readFileSync(file);
    const r = Journal.readFile<Rec>(file);
    expect(r.droppedTornTail).toBe(true);
    expect(r.records).toHaveLength(2);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('a file holding only a torn first line opens empty', () => {
    fs.writeFileSync(file, '{"v":1,"seq":1');
    const j = Journal.open<Rec>(file);
    expect(j.read()).toEqual({ records: [], droppedTornTail: true });
    j.append({ n: 1 });
    j.close();
    expect(Journal.readFile<Rec>(file).records).toEqual([{ n: 1 }]);
  });
});

describe('damage before the last line is never silently dropped', () => {
  it('throws naming file and line number for invalid JSON in the middle, and leaves the file untouched', () => {
    writeRecords(4);
    const l = lines();
    l[1] = l[1].slice(0, 20);
    fs.writeFileSync(file, l.join('\n'));
    const before = fs.readFileSync(file);
    const err = expectJournalError(() => Journal.open<Rec>(file), file, /line 2 is not valid JSON/, /move the session folder aside/);
    expect(err.line).toBe(2);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('detects a line that parses but whose record was altered (crc mismatch)', () => {
    writeRecords(3);
    const l = lines();
    l[1] = l[1].replace('"n":2', '"n":7');
    fs.writeFileSync(file, l.join('\n'));
    const err = expectJournalError(() => Journal.open<Rec>(file), file, /line 2 fails its checksum/);
    expect(err.line).toBe(2);
  });

  it('treats a crc mismatch on the LAST line as damage, not as a torn write', () => {
    writeRecords(3);
    const l = lines();
    l[2] = l[2].replace('"n":3', '"n":9');
    fs.writeFileSync(file, l.join('\n'));
    expectJournalError(() => Journal.open<Rec>(file), /line 3 fails its checksum/);
  });

  it('detects a missing record (seq gap) in the middle', () => {
    writeRecords(4);
    const l = lines();
    l.splice(1, 1);
    fs.writeFileSync(file, l.join('\n'));
    expectJournalError(() => Journal.open<Rec>(file), /line 2 has seq 3 where 2 was expected \(a record is missing\)/);
  });

  it('detects a repeated record', () => {
    writeRecords(3);
    const l = lines();
    l.splice(2, 0, l[1]);
    fs.writeFileSync(file, l.join('\n'));
    expectJournalError(() => Journal.open<Rec>(file), /line 3 has seq 2 where 3 was expected \(a record is repeated\)/);
  });

  it('reports a record the validator rejects with its line number', () => {
    writeRecords(3);
    expectJournalError(
      () =>
        Journal.open<Rec>(file, {
          validate: (x) => {
            if ((x as Rec).n === 2) throw new Error('two is not allowed');
            return x as Rec;
          },
        }),
      /line 2 holds a record KernelDuel does not understand \(two is not allowed\)/,
    );
  });
});

describe('I/O failures name the path and say written records are safe', () => {
  it('disk full (ENOSPC) mid-write: error names the file, the partial line is rolled back, earlier records intact', () => {
    writeRecords(2);
    const j = Journal.open<Rec>(file);
    const real = fs.writeSync;
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, buf: Buffer) => {
      real(fd, buf.subarray(0, 10)); // a partial line reaches the disk, then the disk is full
      const e = new Error('ENOSPC: no space left on device') as NodeJS.ErrnoException;
      e.code = 'ENOSPC';
      throw e;
    }) as unknown as typeof fs.writeSync);
    expectJournalError(() => j.append({ n: 3 }), file, /disk full/, /already written .* is safe/);
    vi.restoreAllMocks();
    // Rolled back: the next append works and the journal reads clean.
    j.append({ n: 3 });
    j.close();
    const r = Journal.readFile<Rec>(file);
    expect(r.droppedTornTail).toBe(false);
    expect(r.records.map((x) => x.n)).toEqual([1, 2, 3]);
  });

  it('a deleted session folder makes append fail with a clear error instead of writing into the void', () => {
    const sub = path.join(dir, 'session');
    fs.mkdirSync(sub);
    const f = path.join(sub, 'journal.jsonl');
    const j = Journal.open<Rec>(f);
    j.append({ n: 1 });
    fs.rmSync(sub, { recursive: true });
    expectJournalError(() => j.append({ n: 2 }), f, /deleted/);
    j.close();
  });

  it('opening in a folder that does not exist names the folder', () => {
    const f = path.join(dir, 'gone', 'journal.jsonl');
    expectJournalError(() => Journal.open<Rec>(f), path.join(dir, 'gone'), /does not exist/);
  });

  it('a read-only folder gives an error naming the path', (ctx) => {
    fs.chmodSync(dir, 0o555);
    // Root ignores permission bits: probe, and skip when chmod is ineffective.
    let writable = false;
    try {
      fs.writeFileSync(path.join(dir, 'probe'), 'x');
      writable = true;
      fs.unlinkSync(path.join(dir, 'probe'));
    } catch {
      /* read-only as intended */
    }
    if (writable) ctx.skip();
    expectJournalError(() => Journal.open<Rec>(file), file, /read-only/);
  });

  it('append after close throws', () => {
    const j = Journal.open<Rec>(file);
    j.close();
    expectJournalError(() => j.append({ n: 1 }), /closed/);
  });
});

describe('envelope versions', () => {
  const v1Line = (seq: number, rec: unknown, recText = JSON.stringify(rec)): string =>
    `{"v":1,"seq":${seq},"t":"2025-01-01T00:00:00.000Z","crc":${crc32(JSON.stringify(rec))},"rec":${recText}}\n`;

  it('writes v2 lines whose crc is of the raw record text between "rec": and the final }', () => {
    writeRecords(2);
    for (const l of lines().filter(Boolean)) {
      expect(l).toMatch(/^\{"v":2,"seq":\d+,"t":"[^"]+","crc":\d+,"rec":/);
      const raw = l.slice(l.indexOf('"rec":') + 6, -1);
      expect(JSON.parse(l).crc).toBe(crc32(raw));
    }
  });

  it('reads journals written with v1 envelopes (also re-formatted ones), and appends v2 after them', () => {
    fs.writeFileSync(file, v1Line(1, { n: 1, s: 'a' }) + v1Line(2, { n: 2 }, '{ "n": 2 }') + v1Line(3, { n: 3, s: 'µs ✓' }));
    const j = Journal.open<Rec>(file);
    expect(j.read().records).toEqual([{ n: 1, s: 'a' }, { n: 2 }, { n: 3, s: 'µs ✓' }]);
    j.append({ n: 4 });
    j.close();
    const env = lines().filter(Boolean).map((l) => JSON.parse(l));
    expect(env.map((e) => e.v)).toEqual([1, 1, 1, 2]);
    expect(Journal.readFile<Rec>(file).records.map((r) => r.n)).toEqual([1, 2, 3, 4]);
    expect(Journal.scanBuffer(file, fs.readFileSync(file))).toEqual({ lastSeq: 4, validBytes: fs.statSync(file).size, droppedTornTail: false });
  });

  it('a v1 line whose record was altered still fails its checksum', () => {
    fs.writeFileSync(file, v1Line(1, { n: 1 }) + v1Line(2, { n: 2 }).replace('"n":2', '"n":5') + v1Line(3, { n: 3 }));
    expectJournalError(() => Journal.readFile<Rec>(file), /line 2 fails its checksum/);
  });

  it('a v2 line whose record text was re-formatted (same JSON value) fails its checksum: the raw text is what counts', () => {
    writeRecords(3);
    const l = lines();
    l[1] = l[1].replace('"n":2,', '"n": 2,');
    fs.writeFileSync(file, l.join('\n'));
    expectJournalError(() => Journal.readFile<Rec>(file), /line 2 fails its checksum/);
  });

  it('refuses an unknown envelope version, naming the line', () => {
    writeRecords(2);
    const l = lines();
    l[1] = l[1].replace('{"v":2,', '{"v":3,');
    fs.writeFileSync(file, l.join('\n'));
    expectJournalError(() => Journal.readFile<Rec>(file), /line 2 has format version 3, this KernelDuel reads versions 1 and 2/);
  });

  it('scanBuffer checks seq and crc of every line without parsing records, and reports a torn tail', () => {
    writeRecords(4);
    const good = fs.readFileSync(file);
    expect(Journal.scanBuffer(file, good)).toEqual({ lastSeq: 4, validBytes: good.length, droppedTornTail: false });
    expect(Journal.scanBuffer(file, Buffer.concat([good, Buffer.from('{"v":2,"seq":5,')]))).toEqual({ lastSeq: 4, validBytes: good.length, droppedTornTail: true });
    const l = lines();
    const edited = [...l];
    edited[2] = edited[2].replace('rec 3', 'REC 3');
    expect(() => Journal.scanBuffer(file, Buffer.from(edited.join('\n')))).toThrow(/line 3 fails its checksum/);
    const gap = [...l];
    gap.splice(1, 1);
    expect(() => Journal.scanBuffer(file, Buffer.from(gap.join('\n')))).toThrow(/line 2 has seq 3 where 2 was expected/);
    expect(() => Journal.scanBuffer(file, Buffer.from('garbage\n' + l.join('\n')))).toThrow(/line 1 is not valid JSON/);
  });
});
