// The session views keep read-only snapshots of a journal while it is unchanged (issue 16: clicking
// through a 20,000-variant session must not re-read the journal per variant); an appended journal
// is caught up by reading only its new lines (a live run appends to journals of tens of MB), so
// nothing stale is served; a replaced journal is read again whole.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionViews } from '../main/core/sessions.js';
import { createSession, openSessionReadOnly } from '../main/engine/session/store.js';
import { Journal, JournalError } from '../main/engine/session/journal.js';
import { makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('session snapshots', () => {
  it('reuses a snapshot while the journal is unchanged and reads an appended one again', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-snap-'));
    dirs.push(root);
    const s = createSession(root, makeMeta('s1'));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(2) });
    const views = new SessionViews(root, () => null);
    const first = views.withSession('s1', (x) => x);
    expect(views.withSession('s1', (x) => x)).toBe(first);
    expect(views.withSession('s1', (x) => views.variantDetail(x, 'v1')).row.medianMs).toBe(2);
    s.append({ type: 'variant', variant: makeVariant('v2', { parents: ['v1'] }) });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(1) });
    const read = vi.spyOn(fs, 'readFileSync');
    const again = views.withSession('s1', (x) => x);
    // The same snapshot, caught up: the journal was not read whole again.
    expect(again).toBe(first);
    expect(read.mock.calls.filter((c) => String(c[0]).endsWith('journal.jsonl'))).toHaveLength(0);
    read.mockRestore();
    expect(views.withSession('s1', (x) => views.variantDetail(x, 'v2')).row).toMatchObject({ medianMs: 1, speedup: 2 });
    expect(views.detail('s1').variants.map((r) => r.id)).toEqual(['v1', 'v2']);
    s.close();
  });

  it('a caught-up snapshot equals a fresh read; a torn last line waits until it is complete', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-snap-'));
    dirs.push(root);
    const s = createSession(root, makeMeta('s2'));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(3) });
    const snap = openSessionReadOnly(root, 's2');
    expect(snap.catchUp()).toBe('same');
    for (let i = 2; i <= 40; i++) {
      s.append({ type: 'variant', variant: makeVariant(`v${i}`, { parents: ['v1'] }) });
      s.append({ type: 'result', variantId: `v${i}`, result: timedResult(3 - i / 20) });
    }
    const jf = path.join(root, 's2', 'journal.jsonl');
    // Half of a line being written: left out, read once the line is complete.
    const full = fs.readFileSync(jf);
    s.append({ type: 'variant', variant: makeVariant('v41', { parents: ['v1'] }) });
    const withLine = fs.readFileSync(jf);
    fs.writeFileSync(jf, withLine.subarray(0, full.length + Math.floor((withLine.length - full.length) / 2)));
    expect(snap.catchUp()).toBe('grew');
    expect(snap.variants().map((v) => v.id)).toHaveLength(40);
    fs.writeFileSync(jf, withLine);
    expect(snap.catchUp()).toBe('grew');
    const fresh = openSessionReadOnly(root, 's2');
    expect(snap.variants().map((v) => v.id)).toEqual(fresh.variants().map((v) => v.id));
    expect(snap.best()?.variant.id).toBe(fresh.best()?.variant.id);
    expect(snap.best()?.variant.id).toBe('v40');
    s.close();
  });

  it('a journal that was replaced or cut short is read again whole; a damaged appended line names its line', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-snap-'));
    dirs.push(root);
    const s = createSession(root, makeMeta('s3'));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(2) });
    s.close();
    const jf = path.join(root, 's3', 'journal.jsonl');
    const bytes = fs.readFileSync(jf);
    const snap = openSessionReadOnly(root, 's3');
    // Cut short: the next read cannot continue where the last one ended.
    fs.writeFileSync(jf, bytes.subarray(0, bytes.indexOf(0x0a) + 1));
    expect(snap.catchUp()).toBe('replaced');
    // Replaced by another session's journal (the file system may even reuse the inode).
    fs.writeFileSync(jf, bytes);
    const snap2 = openSessionReadOnly(root, 's3');
    const other = createSession(root, makeMeta('s4'));
    other.append({ type: 'variant', variant: makeVariant('w1', { origin: 'baseline' }) });
    other.append({ type: 'result', variantId: 'w1', result: timedResult(5) });
    other.append({ type: 'variant', variant: makeVariant('w2', { parents: ['w1'] }) });
    other.close();
    fs.rmSync(jf);
    fs.copyFileSync(path.join(root, 's4', 'journal.jsonl'), jf);
    expect(snap2.catchUp()).toBe('replaced');
    fs.rmSync(jf);
    fs.writeFileSync(jf, bytes);
    // A damaged line appended after the read: the error names the journal's own line number.
    const snap3 = openSessionReadOnly(root, 's3');
    const n = fs.readFileSync(jf, 'utf8').split('\n').filter(Boolean).length;
    fs.appendFileSync(jf, `{"v":2,"seq":${n + 1},"t":"x","crc":1,"rec":{"type":"status","status":"finished"}}\n`);
    expect(() => snap3.catchUp()).toThrow(JournalError);
    expect(() => snap3.catchUp()).toThrow(new RegExp(`line ${n + 1} fails its checksum`));
    // Read whole, the same file names the same line.
    expect(() => Journal.readTail(jf, 0, 0, fs.statSync(jf).ino)).toThrow(new RegExp(`line ${n + 1} fails its checksum`));
  });
});

describe('variant detail: the buffer sets of an older timing', () => {
  it('fills in each set\'s median and their share from the recorded samples; a timing on one set stays as it was', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-sets-'));
    dirs.push(root);
    const s = createSession(root, makeMeta('s3'));
    const old = timedResult(1);
    // Recorded before timings carried perSetMedianMs / setRelSd: 8 calls, call i on set i mod 4.
    const samples = [1, 1.1, 0.9, 1, 1, 1.1, 0.9, 1];
    old.timing = [{ ...old.timing![0], samplesMs: samples, eventMs: samples, bufferSets: 4 }];
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: old });
    s.append({ type: 'variant', variant: makeVariant('v2', { parents: ['v1'] }) });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(0.5) });
    const views = new SessionViews(root, () => null);
    const t = views.withSession('s3', (x) => views.variantDetail(x, 'v1')).result!.timing![0];
    expect(t.perSetMedianMs).toEqual([1, 1.1, 0.9, 1]);
    expect(t.setRelSd).toBeCloseTo(0.0408, 4);
    const one = views.withSession('s3', (x) => views.variantDetail(x, 'v2')).result!.timing![0];
    expect(one.perSetMedianMs).toBeUndefined();
    expect(one.setRelSd).toBeUndefined();
    s.close();
  });
});
