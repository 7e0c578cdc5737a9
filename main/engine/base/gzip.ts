// Files that may be gzip-compressed (another tuner's cache often is; a recording may be): their
// bytes as stored, decompressed when they start with gzip's magic bytes.
import { gunzipSync } from 'node:zlib';

/** The bytes, gunzipped when they start with gzip's magic bytes; `what` names the file in the error when they do not decompress. */
export function gunzipIfGzip(buf: Buffer, what: string): Buffer {
  if (buf.length < 2 || buf[0] !== 0x1f || buf[1] !== 0x8b) return buf;
  try {
    return gunzipSync(buf);
  } catch (e) {
    throw new Error(`${what} looks gzip-compressed but does not decompress: ${(e as Error).message}`, { cause: e });
  }
}
