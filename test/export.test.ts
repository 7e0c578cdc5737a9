import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession, type Session } from '../main/engine/session/store.js';
import { exportVariant, renderDefines, renderProvenanceHeader } from '../main/engine/export/cu.js';
import { writeFileAtomic } from '../main/engine/base/atomic.js';
import { compileOnlyResult, makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

let tmp: string;
let s: Session;
const NOW = new Date('2025-03-04T05:06:07.000Z');

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-export-'));
  s = createSession(path.join(tmp, 'sessions'), makeMeta('20250102-030405-abcdef'));
});
afterEach(() => {
  s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function seed(): void {
  s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline', config: { BLOCK: 128 } }) });
  s.append({ type: 'result', variantId: 'v1', result: timedResult(0.5) });
  s.append({
    type: 'variant',
    variant: makeVariant('v2', {
      config: { BLOCK: 512, UNROLL: 4 },
      flags: { opt: 3, fastMath: true, maxrregcount: 64, dlcm: 'cg' },
      parents: ['v1'],
      source: '__global__ void saxpy_v2(float a) { int i = BLOCK * UNROLL; }',
    }),
  });
  s.append({ type: 'result', variantId: 'v2', result: timedResult(0.25) });
  s.append({ type: 'variant', variant: makeVariant('v3', { config: { BLOCK: 64 } }) });
  s.append({ type: 'result', variantId: 'v3', result: compileOnlyResult() });
}

describe('exportVariant', () => {
  it("exports the best variant with a provenance header: version, task, GPU, dates, nvcc flags, tunables, time, speedup", () => {
    seed();
    const out = path.join(tmp, 'best.cu');
    const res = exportVariant(s, 'best', out, { now: NOW });
    expect(res).toMatchObject({ path: out, variantId: 'v2', medianMs: 0.25, speedup: 2 });
    const text = fs.readFileSync(out, 'utf8');
    const header = text.slice(0, text.indexOf('*/') + 2);
    expect(header).toMatch(/KernelDuel:\s+0\.1\.0/);
    expect(header).toMatch(/Task:\s+saxpy \(\/tasks\/saxpy\)/);
    expect(header).toMatch(/Session:\s+20250102-030405-abcdef/);
    expect(header).toMatch(/Variant:\s+v2 \(origin: random, parents: v1\)/);
    expect(header).toMatch(/GPU:\s+NVIDIA GeForce RTX 4090 \(sm_89\)/);
    expect(header).toMatch(/Exported at:\s+2025-03-04T05:06:07\.000Z/);
    expect(header).toMatch(/Measured at:\s+\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(header).toContain('nvcc -O3 -Xptxas -O3 -arch=sm_89 --use_fast_math -maxrregcount=64 -Xptxas -dlcm=cg -DBLOCK=512 -DUNROLL=4 -c kernel.cu');
    expect(header).toMatch(/Tunables:\s+BLOCK=512, UNROLL=4/);
    expect(header).toMatch(/Time:\s+0\.2500 ms/);
    expect(header).toMatch(/Speedup:\s+2\.00x vs baseline v1 \(0\.5000 ms/);
    // The header comes first and the source is intact after the defines.
    expect(text.startsWith('/*')).toBe(true);
    expect(text.trimEnd().endsWith('__global__ void saxpy_v2(float a) { int i = BLOCK * UNROLL; }')).toBe(true);
  });

  it('writes #ifndef-guarded #defines for every tunable, before the source', () => {
    seed();
    const out = path.join(tmp, 'v2.cu');
    exportVariant(s, 'v2', out, { now: NOW });
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('#ifndef BLOCK\n#define BLOCK 512\n#endif\n#ifndef UNROLL\n#define UNROLL 4\n#endif\n');
    expect(text.indexOf('#define UNROLL')).toBeLessThan(text.indexOf('__global__'));
    expect(text.indexOf('*/')).toBeLessThan(text.indexOf('#ifndef BLOCK'));
  });

  it('labels a compile-only variant as not timed, with no speedup', () => {
    seed();
    const out = path.join(tmp, 'v3.cu');
    const res = exportVariant(s, 'v3', out, { now: NOW });
    expect(res.medianMs).toBeNull();
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toMatch(/Time:\s+not timed \(compile-only\)/);
    expect(text).toMatch(/Speedup:\s+n\/a/);
  });

  it('labels the baseline itself as 1.00x', () => {
    seed();
    exportVariant(s, 'v1', path.join(tmp, 'v1.cu'), { now: NOW });
    expect(fs.readFileSync(path.join(tmp, 'v1.cu'), 'utf8')).toMatch(/Speedup:\s+1\.00x \(this is the baseline\)/);
  });

  it('writes atomically: replaces an existing file and leaves no temporary files', () => {
    seed();
    const out = path.join(tmp, 'out.cu');
    fs.writeFileSync(out, 'old contents');
    exportVariant(s, 'best', out, { now: NOW });
    expect(fs.readFileSync(out, 'utf8')).toContain('saxpy_v2');
    expect(fs.readdirSync(tmp).sort()).toEqual(['out.cu', 'sessions']);
  });

  it('into an existing folder writes <task>-<variant>.cu there', () => {
    seed();
    const res = exportVariant(s, 'best', tmp, { now: NOW });
    expect(res.path).toBe(path.join(tmp, 'saxpy-v2.cu'));
    expect(fs.existsSync(res.path)).toBe(true);
  });

  it('errors name the session when it has no successful timed variant', () => {
    s.append({ type: 'variant', variant: makeVariant('v1') });
    s.append({ type: 'result', variantId: 'v1', result: compileOnlyResult() });
    expect(() => exportVariant(s, 'best', path.join(tmp, 'x.cu'))).toThrow(
      'session 20250102-030405-abcdef has no successful timed variant: run `kernelduel optimize` first',
    );
    expect(fs.existsSync(path.join(tmp, 'x.cu'))).toBe(false);
  });

  it('errors name the session and the variant for an unknown variant id', () => {
    seed();
    expect(() => exportVariant(s, 'v99', path.join(tmp, 'x.cu'))).toThrow(/session 20250102-030405-abcdef has no variant v99 \(it has v1, v2, v3\)/);
  });

  it('a failed write leaves the previous file untouched and no temporary file', () => {
    seed();
    const missingDir = path.join(tmp, 'no', 'such', 'dir', 'x.cu');
    expect(() => exportVariant(s, 'best', missingDir)).toThrow(/cannot export variant v2 of session 20250102-030405-abcdef: could not write .*does not exist/);
  });
});

describe('renderProvenanceHeader / renderDefines (pure)', () => {
  it('keeps values from closing the comment early', () => {
    const h = renderProvenanceHeader({
      kernelduelVersion: '0.1.0',
      sessionId: 's',
      task: { name: 'evil */ task' },
      gpu: null,
      variant: makeVariant('v1', { config: {} }),
      exportedAt: NOW.toISOString(),
    });
    expect(h.indexOf('*/')).toBe(h.lastIndexOf('*/'));
    expect(h).toMatch(/GPU:\s+none recorded/);
    expect(h).toMatch(/Time:\s+not measured/);
    expect(h).toMatch(/Tunables:\s+\(none\)/);
  });

  it('labels replayed measurements as such', () => {
    const h = renderProvenanceHeader({
      kernelduelVersion: '0.1.0',
      sessionId: 's',
      task: { name: 't' },
      gpu: { name: 'G', arch: 'sm_90' },
      variant: makeVariant('v1'),
      result: timedResult(1, { source: { kind: 'replay', recording: 'rec.json' } }),
      exportedAt: NOW.toISOString(),
    });
    expect(h).toMatch(/Measured on:\s+REPLAYED from recording rec\.json/);
  });

  it('gives the buffer sets\' share of the time beside its interval, computed from the samples where the result predates it', () => {
    const r = timedResult(1);
    const samples = [1, 1.1, 0.9, 1, 1, 1.1, 0.9, 1]; // call i on set i mod 4: medians 1, 1.1, 0.9, 1
    r.timing = [{ ...r.timing![0], samplesMs: samples, eventMs: samples, bufferSets: 4 }];
    const input = { kernelduelVersion: '0.1.0', sessionId: 's', task: { name: 't' }, gpu: { name: 'G', arch: 'sm_90' }, variant: makeVariant('v1'), exportedAt: NOW.toISOString() };
    expect(renderProvenanceHeader({ ...input, result: r })).toMatch(/; over 4 buffer sets, their mean's sd 4\.08%\)/);
    expect(renderProvenanceHeader({ ...input, result: timedResult(1) })).not.toMatch(/buffer sets/);
  });

  it('rejects tunable names that are not C identifiers', () => {
    expect(() => renderDefines({ 'BAD-NAME': 1 })).toThrow(/not a C identifier/);
    expect(renderDefines({ X: 1.5 })).toBe('#ifndef X\n#define X 1.5\n#endif\n');
  });
});

describe('writeFileAtomic', () => {
  it('replaces the target in one step and cleans up its temporary file on failure', () => {
    const f = path.join(tmp, 'a.txt');
    writeFileAtomic(f, 'one');
    writeFileAtomic(f, 'two');
    expect(fs.readFileSync(f, 'utf8')).toBe('two');
    // Target is a folder: rename fails; the temp file must not be left behind.
    const d = path.join(tmp, 'adir');
    fs.mkdirSync(d);
    expect(() => writeFileAtomic(d, 'x')).toThrow(/could not write/);
    expect(fs.readdirSync(tmp).sort()).toEqual(['a.txt', 'adir', 'sessions']);
  });
});
