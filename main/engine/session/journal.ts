// Append-only JSON-lines journal that survives SIGKILL (and power loss, up to the last fsync) at any moment.
//
// Every line is one envelope, written with a single write(2) on an O_APPEND descriptor and then fsync'd:
//   version 2 (written now):  {"v":2,"seq":N,"t":"<iso>","crc":C,"rec":<recJSON>}\n
//     C = crc32 of exactly the <recJSON> bytes, i.e. the text between the first `"rec":` of the line and
//     its final `}`; a reader checks it on the raw bytes (no re-serialisation) and JSON.parses the line once.
//   version 1 (still read):   the same envelope with "v":1, C = crc32 of JSON.stringify(rec). As the writer
//     wrote rec as JSON.stringify(rec), the raw-text crc matches too; only a line re-formatted by hand needs
//     the re-serialising check.
// A process killed mid-write can only leave a torn LAST line (no newline, or not parseable); open() drops it
// and truncates it away so the next append starts on a clean line. Anything wrong before the last line is
// never guessed at: it throws, naming the file and the line.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fsyncDir } from '../base/atomic.js';

export interface JournalOptions<T> {
  /** Checks (and may normalise) one record; throw to reject it. Applied on read and before every append. */
  validate?: (x: unknown) => T;
}

export interface JournalEntry<T> {
  seq: number;
  /** ISO time the record was appended. */
  t: string;
  rec: T;
}

export interface JournalScan {
  /** Sequence number of the last intact record (0 when empty). */
  lastSeq: number;
  /** Byte length of the intact prefix. */
  validBytes: number;
  /** The file ends in a torn line (not counted in lastSeq/validBytes). */
  droppedTornTail: boolean;
}

export interface JournalReadResult<T> {
  records: T[];
  /** A torn last line (from a kill mid-write) was found and dropped. */
  droppedTornTail: boolean;
}

/** An error about a journal file; `line` is 1-based when the problem is one line. */
export class JournalError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly code: 'corrupt' | 'io' | 'closed' | 'invalid-record',
    readonly line?: number,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'JournalError';
  }
}

// ---------------------------------------------------------------------------------------------- crc32

/** CRC-32 (IEEE) of the UTF-8 bytes of `data`: zlib's (Node >= 20.15; package.json requires 20.19). */
export function crc32(data: string | Uint8Array): number {
  return zlib.crc32(data) >>> 0;
}

// ---------------------------------------------------------------------------------------------- parsing

/** The envelope version append() writes. */
export const JOURNAL_VERSION = 2;

const FIX_HINT =
  'move the session folder aside (or restore it from a backup) and start a new session; ' +
  'KernelDuel will not guess which records to trust';

function corrupt(file: string, line: number, what: string): JournalError {
  return new JournalError(
    `journal ${file} line ${line} ${what}: the file was edited or the disk corrupted it; ${FIX_HINT}`,
    file,
    'corrupt',
    line,
  );
}

/** One envelope line for `rec` (already JSON.stringify'd as `recJson`). */
export function formatJournalLine(seq: number, t: string, recJson: string): string {
  return `{"v":${JOURNAL_VERSION},"seq":${seq},"t":${JSON.stringify(t)},"crc":${crc32(recJson)},"rec":${recJson}}\n`;
}

interface Parsed<T> {
  entries: JournalEntry<T>[];
  droppedTornTail: boolean;
  /** Byte length of the intact prefix (where the file should be truncated to). */
  validBytes: number;
  /** Sequence number of the last intact record (0 when empty). */
  lastSeq: number;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const REC_KEY = Buffer.from('"rec":', 'latin1');
/** How many bytes before a tail read must be as they were (they hold the last line's crc and record end). */
export const TAIL_GUARD_BYTES = 64;
const CLOSE_BRACE = 0x7d;
/** The envelope head exactly as append() writes it (any version), up to and including `"rec":`. */
const CANONICAL_HEAD = /^\{"v":(\d+),"seq":(\d+),"t":"[^"\\]*","crc":(\d+),"rec":$/;

/** crc32 of the raw record text of a line (between its first `"rec":` and its final `}`), or null if there is none. */
function rawRecCrc(buf: Buffer, start: number, end: number): number | null {
  const at = buf.indexOf(REC_KEY, start);
  if (at < 0 || at >= end || end - 1 <= at + REC_KEY.length || buf[end - 1] !== CLOSE_BRACE) return null;
  return crc32(buf.subarray(at + REC_KEY.length, end - 1));
}

/**
 * Parses (mode 'full') or only verifies (mode 'scan': seq, crc and envelope of every line, records neither
 * parsed nor validated when the line is in the canonical form) a journal held in `buf`.
 */
function parseJournal<T>(file: string, buf: Buffer, validate: ((x: unknown) => T) | undefined, mode: 'full' | 'scan', startSeq = 0): Parsed<T> {
  // Split into complete lines (ending in \n) and a possible unterminated tail.
  const lines: number[] = []; // start0, end0, start1, end1, ...
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, start);
    if (nl < 0) break;
    lines.push(start, nl);
    start = nl + 1;
  }
  let droppedTornTail = false;
  let validBytes = buf.length;
  if (start < buf.length) {
    // No trailing newline: the last write was cut short.
    droppedTornTail = true;
    validBytes = start;
  }
  const count = lines.length / 2;

  const entries: JournalEntry<T>[] = [];
  // A tail read (readTail) starts after `startSeq` complete lines: one record per line, so line
  // numbers are sequence numbers.
  let lastSeq = startSeq;
  for (let i = 0; i < count; i++) {
    const lineNo = startSeq + i + 1;
    const ls = lines[2 * i];
    const le = lines[2 * i + 1];
    const expected = lastSeq + 1;

    if (mode === 'scan') {
      // Fast path: canonical head, raw crc; no JSON.parse, no validation.
      const at = buf.indexOf(REC_KEY, ls);
      if (at >= 0 && at < le && at - ls < 200) {
        const m = CANONICAL_HEAD.exec(buf.toString('latin1', ls, at + REC_KEY.length));
        if (m && (m[1] === '1' || m[1] === '2') && Number(m[2]) === expected && rawRecCrc(buf, ls, le) === Number(m[3]) >>> 0) {
          lastSeq = expected;
          continue;
        }
      }
      // Anything else gets the full checks below (and their precise error).
    }

    const text = buf.toString('utf8', ls, le);
    const p = tryParse(text);
    if (!p.ok) {
      if (i === count - 1 && !droppedTornTail) {
        // A complete last line that does not parse is also a torn write (e.g. zero-filled after power loss).
        droppedTornTail = true;
        validBytes = ls;
        break;
      }
      throw corrupt(file, lineNo, 'is not valid JSON');
    }
    const env = p.value as Record<string, unknown>;
    if (typeof env !== 'object' || env === null || Array.isArray(env) || !('rec' in env)) {
      throw corrupt(file, lineNo, 'is not a journal record envelope');
    }
    if (env.v !== 1 && env.v !== 2) {
      throw new JournalError(
        `journal ${file} line ${lineNo} has format version ${JSON.stringify(env.v)}, this KernelDuel reads versions 1 and 2: ` +
          'it was written by a different KernelDuel version; open it with that version',
        file,
        'corrupt',
        lineNo,
      );
    }
    if (typeof env.seq !== 'number' || !Number.isInteger(env.seq) || typeof env.t !== 'string' || typeof env.crc !== 'number') {
      throw corrupt(file, lineNo, 'has a damaged envelope (seq/t/crc missing)');
    }
    if (env.seq !== expected) {
      throw corrupt(
        file,
        lineNo,
        `has seq ${env.seq} where ${expected} was expected (a record is ${env.seq > expected ? 'missing' : 'repeated'})`,
      );
    }
    const want = env.crc >>> 0;
    const raw = rawRecCrc(buf, ls, le);
    // v2: the raw record text only. v1: the raw text (as written), else the re-serialised record.
    const crcOk = raw === want || (env.v === 1 && crc32(JSON.stringify(env.rec)) === want);
    if (!crcOk) throw corrupt(file, lineNo, 'fails its checksum');
    lastSeq = expected;
    if (mode === 'scan') continue;
    let rec: T;
    try {
      rec = validate ? validate(env.rec) : (env.rec as T);
    } catch (e) {
      throw new JournalError(
        `journal ${file} line ${lineNo} holds a record KernelDuel does not understand (${describe(e)}); ` +
          `it was edited or written by a different KernelDuel version; ${FIX_HINT}`,
        file,
        'corrupt',
        lineNo,
        e,
      );
    }
    entries.push({ seq: env.seq, t: env.t, rec });
  }
  return { entries, droppedTornTail, validBytes, lastSeq };
}

function describe(e: unknown): string {
  if (e && typeof e === 'object' && 'issues' in e && Array.isArray((e as { issues: unknown[] }).issues)) {
    // zod error: keep it to one line.
    return (e as { issues: { path?: unknown[]; message?: string }[] }).issues
      .slice(0, 3)
      .map((i) => `${(i.path ?? []).join('.') || '(root)'}: ${i.message ?? 'invalid'}`)
      .join('; ');
  }
  return e instanceof Error ? e.message.split('\n')[0] : String(e);
}

function errCode(e: unknown): string | undefined {
  return e && typeof e === 'object' && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

function ioError(file: string, action: string, e: unknown, safeNote: boolean): JournalError {
  const code = errCode(e);
  const safe = safeNote ? ' Everything already written to the journal is safe.' : '';
  let msg: string;
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      msg = `disk full while ${action} journal ${file} (${code}).${safe} Free some space and resume the session.`;
      break;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      msg = `cannot ${action === 'appending to' ? 'append to' : 'open for writing'} journal ${file}: the folder ${path.dirname(file)} or the file is read-only (${code}).${safe} Make it writable, or point KERNELDUEL_HOME at a writable folder.`;
      break;
    case 'ENOENT':
    case 'ENOTDIR':
      msg = `cannot open journal ${file}: the folder ${path.dirname(file)} does not exist (was the session folder deleted or moved?) (${code}).${safe}`;
      break;
    default:
      msg = `I/O error while ${action} journal ${file} (${code ?? describe(e)}).${safe}`;
  }
  return new JournalError(msg, file, 'io', undefined, e);
}

// ---------------------------------------------------------------------------------------------- Journal

export class Journal<T> {
  private fd: number | undefined;
  private size: number;
  private readonly entriesList: JournalEntry<T>[];

  private constructor(
    readonly path: string,
    fd: number,
    parsed: Parsed<T>,
    private readonly validate: ((x: unknown) => T) | undefined,
  ) {
    this.fd = fd;
    this.size = parsed.validBytes;
    this.entriesList = parsed.entries;
    this.droppedTornTail = parsed.droppedTornTail;
  }

  /** Whether open() found and removed a torn last line. */
  readonly droppedTornTail: boolean;

  /** Opens (creating if missing) a journal for appending; drops and truncates a torn last line. */
  static open<T>(file: string, opts: JournalOptions<T> = {}): Journal<T> {
    const existed = fs.existsSync(file);
    let fd: number;
    try {
      fd = fs.openSync(file, 'a');
    } catch (e) {
      throw ioError(file, 'opening', e, existed);
    }
    try {
      const buf = fs.readFileSync(file);
      const parsed = parseJournal(file, buf, opts.validate, 'full');
      if (parsed.validBytes < buf.length) {
        try {
          fs.ftruncateSync(fd, parsed.validBytes);
          fs.fsyncSync(fd);
        } catch (e) {
          throw ioError(file, 'repairing the torn last line of', e, true);
        }
      }
      if (!existed) fsyncDir(path.dirname(file));
      return new Journal<T>(file, fd, parsed, opts.validate);
    } catch (e) {
      fs.closeSync(fd);
      if (e instanceof JournalError) throw e;
      throw ioError(file, 'reading', e, true);
    }
  }

  /** Reads a journal without opening it for writing (nothing is truncated). A missing file reads as empty. */
  static readFile<T>(file: string, opts: JournalOptions<T> = {}): JournalReadResult<T> & { entries: JournalEntry<T>[]; validBytes: number; tailBytes: Buffer } {
    return Journal.parseBuffer(file, Journal.readBytes(file), opts);
  }

  /** The bytes of a journal file (empty for a missing file in an existing folder); errors name the file. */
  static readBytes(file: string): Buffer {
    try {
      return fs.readFileSync(file);
    } catch (e) {
      if (errCode(e) === 'ENOENT' && fs.existsSync(path.dirname(file))) return Buffer.alloc(0);
      throw ioError(file, 'reading', e, false);
    }
  }

  /** Parses a journal already read into memory (as readFile does; nothing is written). */
  static parseBuffer<T>(file: string, buf: Buffer, opts: JournalOptions<T> = {}): JournalReadResult<T> & { entries: JournalEntry<T>[]; validBytes: number; tailBytes: Buffer } {
    const parsed = parseJournal(file, buf, opts.validate, 'full');
    const tailBytes = Buffer.from(buf.subarray(Math.max(0, parsed.validBytes - TAIL_GUARD_BYTES), parsed.validBytes));
    return { records: parsed.entries.map((e) => e.rec), entries: parsed.entries, droppedTornTail: parsed.droppedTornTail, validBytes: parsed.validBytes, tailBytes };
  }

  /**
   * What was appended to a journal after `fromByte` (the end of the complete lines read before, which
   * held `startSeq` records), without reading what came before. `ino` is the file's inode when it was
   * read before: a file that was replaced (another inode) or cut (smaller than `fromByte`) must be read
   * whole again (`replaced: true`, nothing else read). The appended lines get every check a full read
   * gives them (seq continuing from `startSeq`, crc, envelope, record validation); a torn last line is
   * left out (it may be a line being written), and `validBytes` says where the next read starts.
   */
  static readTail<T>(
    file: string,
    fromByte: number,
    startSeq: number,
    ino: number,
    opts: JournalOptions<T> & { endsWith?: Buffer } = {},
  ): { replaced: boolean; entries: JournalEntry<T>[]; validBytes: number; droppedTornTail: boolean; endsWith: Buffer } {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (e) {
      throw ioError(file, 'reading', e, false);
    }
    try {
      const st = fs.fstatSync(fd);
      const replaced = { replaced: true, entries: [], validBytes: 0, droppedTornTail: false, endsWith: Buffer.alloc(0) };
      if (st.ino !== ino || st.size < fromByte) return replaced;
      if (fromByte > 0) {
        // What was read last must still end where the tail begins (a line end, and the same bytes:
        // a file replaced by another can reuse the inode).
        const want = opts.endsWith && opts.endsWith.length ? opts.endsWith : Buffer.from([0x0a]);
        const b = Buffer.alloc(Math.min(want.length, fromByte));
        if (fs.readSync(fd, b, 0, b.length, fromByte - b.length) !== b.length || !b.equals(want.subarray(want.length - b.length)) || b[b.length - 1] !== 0x0a) return replaced;
      }
      const n = st.size - fromByte;
      const buf = Buffer.alloc(n);
      let got = 0;
      while (got < n) {
        const r = fs.readSync(fd, buf, got, n - got, fromByte + got);
        if (r <= 0) break;
        got += r;
      }
      const parsed = parseJournal(file, buf.subarray(0, got), opts.validate, 'full', startSeq);
      const end = parsed.validBytes;
      const endsWith = end > 0 ? Buffer.from(buf.subarray(Math.max(0, end - TAIL_GUARD_BYTES), end)) : opts.endsWith ?? Buffer.alloc(0);
      return { replaced: false, entries: parsed.entries, validBytes: fromByte + end, droppedTornTail: parsed.droppedTornTail, endsWith };
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw ioError(file, 'reading', e, false);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Verifies a journal held in `buf` without parsing its records: every line's envelope, seq and crc are
   * checked (a damaged line throws the same JournalError as reading), a torn last line is reported.
   * Much cheaper than parseBuffer for lines in the form append() writes.
   */
  static scanBuffer(file: string, buf: Buffer): JournalScan {
    const p = parseJournal<unknown>(file, buf, undefined, 'scan');
    return { lastSeq: p.lastSeq, validBytes: p.validBytes, droppedTornTail: p.droppedTornTail };
  }

  read(): JournalReadResult<T> {
    return { records: this.entriesList.map((e) => e.rec), droppedTornTail: this.droppedTornTail };
  }

  /** Records with their sequence numbers and append times. */
  entries(): JournalEntry<T>[] {
    return this.entriesList.slice();
  }

  /** Sequence number of the last record (0 when empty). */
  get lastSeq(): number {
    return this.entriesList.length;
  }

  /** The last record with its sequence number and time (undefined when empty). */
  lastEntry(): JournalEntry<T> | undefined {
    return this.entriesList[this.entriesList.length - 1];
  }

  /** Byte length of the journal (all intact records). */
  get bytes(): number {
    return this.size;
  }

  /** Throws the JournalError append() would throw for a record that does not validate; writes nothing. */
  check(rec: T): void {
    this.prepare(rec);
  }

  private prepare(rec: T): { recJson: string; stored: T } {
    try {
      if (this.validate) this.validate(rec);
      const recJson = JSON.stringify(rec) as string | undefined;
      if (recJson === undefined) throw new Error('the record is not JSON-serialisable');
      const stored = this.validate ? this.validate(JSON.parse(recJson)) : (JSON.parse(recJson) as T);
      return { recJson, stored };
    } catch (e) {
      throw new JournalError(`refusing to append an invalid record to journal ${this.path}: ${describe(e)}`, this.path, 'invalid-record', undefined, e);
    }
  }

  /** Appends one record durably: when this returns, the record survives a kill or power loss. */
  append(rec: T): void {
    if (this.fd === undefined) throw new JournalError(`journal ${this.path} is closed`, this.path, 'closed');
    const { recJson, stored } = this.prepare(rec);
    const seq = this.entriesList.length + 1;
    const t = new Date().toISOString();
    const line = formatJournalLine(seq, t, recJson);
    const buf = Buffer.from(line, 'utf8');

    let st: fs.Stats;
    try {
      st = fs.fstatSync(this.fd);
    } catch (e) {
      throw ioError(this.path, 'appending to', e, true);
    }
    if (st.nlink === 0) {
      throw new JournalError(
        `cannot append to journal ${this.path}: the file or its session folder was deleted while the session was open. ` +
          'Records written before the deletion went with the folder; restore it from a backup or start a new session.',
        this.path,
        'io',
      );
    }
    try {
      const n = fs.writeSync(this.fd, buf);
      if (n !== buf.length) {
        const err = new Error(`short write (${n} of ${buf.length} bytes)`) as NodeJS.ErrnoException;
        err.code = 'ENOSPC';
        throw err;
      }
      fs.fsyncSync(this.fd);
    } catch (e) {
      // Undo a partial line so the journal stays clean for the next append.
      try {
        fs.ftruncateSync(this.fd, this.size);
      } catch {
        // A torn tail left here is dropped by the next open().
      }
      throw ioError(this.path, 'appending to', e, true);
    }
    this.size += buf.length;
    this.entriesList.push({ seq, t, rec: stored });
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    fs.closeSync(fd);
  }
}
