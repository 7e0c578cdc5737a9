// Atomic file replacement: readers see the old file or the new one, never half of either.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

function errCode(e: unknown): string | undefined {
  return e && typeof e === 'object' && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

/** Suffix of the temporary files writeFileAtomic creates next to the target (for cleanup/ignore rules). */
export const ATOMIC_TMP_SUFFIX = '.kdtmp';

/** fsync a directory so a rename/create in it is durable. Best effort (unsupported on some platforms). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // EISDIR/EPERM/EINVAL on platforms that cannot fsync directories.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Writes `data` to `file` atomically: a temporary file in the same folder is written and fsync'd, renamed
 * over `file`, and the folder is fsync'd. On failure the temporary file is removed and `file` is untouched.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, opts: { mode?: number } = {}): void {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${ATOMIC_TMP_SUFFIX}`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', opts.mode ?? 0o644);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        /* ignore */
      }
    }
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* it may never have been created */
    }
    const code = errCode(e);
    const why =
      code === 'ENOSPC' || code === 'EDQUOT'
        ? 'the disk is full'
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? `the folder ${dir} is read-only`
          : code === 'ENOENT' || code === 'ENOTDIR'
            ? `the folder ${dir} does not exist`
            : code === 'EISDIR'
              ? `${file} is a folder`
              : (e instanceof Error ? e.message : String(e));
    const err = new Error(`could not write ${file}: ${why} (${code ?? 'error'}); any previous version of the file is untouched`, {
      cause: e,
    }) as NodeJS.ErrnoException;
    if (code) err.code = code;
    throw err;
  }
  fsyncDir(dir);
}
