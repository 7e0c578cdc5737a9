// The byte fill of resources/harness/kd_buffers.h (fill_u8_group: four bytes from one hash, issue 17),
// run on the CPU: it is a __host__ __device__ function the fill kernel calls once per group of four
// bytes. These tests fail if it writes outside its buffer (any length, any alignment), leaves a byte
// unwritten, gives values outside [lo, hi], is far from uniform on 0-255, or if the aligned word
// store and the unaligned byte stores write different values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../main/engine/platform/proc/run.js';
import { buildHarnessHostProgram, NO_NVCC } from './fixtures/toolchain.js';

const root = mkdtempSync(join(tmpdir(), 'kd-fill-'));
let exe = '';
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Fills n bytes at `offset` into a buffer of 0xCD bytes (0xCD: also a byte value the fill may write,
// so "unwritten" is told by a second buffer of 0x00 filled the same way) and prints: the count of
// bytes outside [offset, offset + n) changed, of bytes inside left as they were in both buffers,
// then the bytes written (hex).
const SOURCE = `#include "kd_buffers.h"
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  size_t n = strtoull(argv[1], 0, 10);
  long long lo = atoll(argv[2]), hi = atoll(argv[3]);
  unsigned long long key = strtoull(argv[4], 0, 10);
  int off = atoi(argv[5]);
  std::vector<unsigned char> a(n + 64, 0xCD), b(n + 64, 0x00);
  for (size_t g = 0; g < (n + 3) / 4; g++) {
    fill_u8_group(a.data() + off, n, g, key, lo, fill_span((double)lo, (double)hi));
    fill_u8_group(b.data() + off, n, g, key, lo, fill_span((double)lo, (double)hi));
  }
  long outside = 0, unwritten = 0;
  for (size_t i = 0; i < a.size(); i++) {
    bool in = i >= (size_t)off && i < off + n;
    if (!in && (a[i] != 0xCD || b[i] != 0x00)) outside++;
    if (in && a[i] != b[i]) unwritten++;
  }
  printf("%ld %ld\\n", outside, unwritten);
  for (size_t i = 0; i < n; i++) printf("%02x", a[off + i]);
  printf("\\n");
  return 0;
}
`;

async function fill(n: number, lo: number, hi: number, key: number, offset: number): Promise<{ outside: number; unwritten: number; bytes: number[] }> {
  const r = await runProcess(exe, [String(n), String(lo), String(hi), String(key), String(offset)], { timeoutMs: 60_000, maxOutputBytes: 64 << 20 });
  expect(r.code, r.stderr).toBe(0);
  const [head, hex] = r.stdout.split('\n');
  const [outside, unwritten] = head.split(' ').map(Number);
  const bytes: number[] = [];
  for (let i = 0; i < (hex ?? '').length; i += 2) bytes.push(parseInt(hex.slice(i, i + 2), 16));
  return { outside, unwritten, bytes };
}

describe.skipIf(NO_NVCC)('the harness byte fill (fill_u8_group), on the CPU', () => {
  beforeAll(async () => {
    exe = await buildHarnessHostProgram(root, 'fill', SOURCE);
  }, 180_000);

  it('writes every byte of its buffer and nothing around it, for any length and alignment; the word and byte stores agree', async () => {
    for (const n of [1, 3, 4, 5, 7, 8, 1001]) {
      const at: number[][] = [];
      for (const offset of [0, 1, 2, 3, 4]) {
        const r = await fill(n, 0, 255, 42, offset);
        expect(r.outside, `n ${n} offset ${offset}`).toBe(0);
        expect(r.unwritten, `n ${n} offset ${offset}`).toBe(0);
        expect(r.bytes).toHaveLength(n);
        at.push(r.bytes);
      }
      // Offsets 0 and 4 take the 32-bit stores, 1-3 the byte stores: the same values either way.
      for (const b of at) expect(b).toEqual(at[0]);
    }
  }, 120_000);

  it('values lie in [lo, hi], every one of them comes, uniformly on 0-255; another key gives other bytes', async () => {
    const small = await fill(100_003, 3, 12, 7, 0);
    expect(Math.min(...small.bytes)).toBe(3);
    expect(Math.max(...small.bytes)).toBe(12);
    const n = 256 * 4000;
    const { bytes } = await fill(n, 0, 255, 9, 0);
    const counts = new Array<number>(256).fill(0);
    for (const v of bytes) counts[v]++;
    // 4000 expected per value, sd ~63: every count within 6 sd, and the chi-square of 255 degrees of
    // freedom below its 99.99th percentile (~346).
    for (const c of counts) expect(Math.abs(c - 4000)).toBeLessThan(6 * 63);
    const chi2 = counts.reduce((s, c) => s + (c - 4000) ** 2 / 4000, 0);
    expect(chi2).toBeLessThan(346);
    const other = await fill(1000, 0, 255, 10, 0);
    const same = other.bytes.filter((v, i) => v === bytes[i]).length;
    expect(same).toBeLessThan(30); // ~4 of 1000 by chance
  }, 120_000);
});
