import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSession, newSessionId, openSession, sessionsRoot, JOURNAL_FILE, SESSION_FILE } from '../main/engine/session/store.js';
import { listSessions } from '../main/engine/session/list.js';
import { SessionEventSchema } from '../main/engine/session/events.js';
import { SUMMARY_FILE } from '../main/engine/session/summary.js';
import { sourceHash } from '../main/engine/session/encoding.js';
import { crc32 } from '../main/engine/session/journal.js';
import { markRunning, RUNNING_FILE } from '../main/engine/session/running.js';
import { compileOnlyResult, makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

let root: string;
beforeEach(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kd-sessions-')), 'sessions');
});
afterEach(() => fs.rmSync(path.dirname(root), { recursive: true, force: true }));

describe('sessionsRoot', () => {
  it('uses $KERNELDUEL_HOME/sessions, else ~/.kernelduel/sessions', () => {
    expect(sessionsRoot({ KERNELDUEL_HOME: '/data/kd' })).toBe(path.join('/data/kd', 'sessions'));
    expect(sessionsRoot({})).toBe(path.join(os.homedir(), '.kernelduel', 'sessions'));
  });
});

describe('session ids', () => {
  it('sort by creation time and are unique', () => {
    const a = newSessionId(new Date('2025-01-02T03:04:05Z'));
    const b = newSessionId(new Date('2025-01-02T03:04:06Z'));
    expect(a).toMatch(/^20250102-030405-[0-9a-f]{6}$/);
    expect([b, a].sort()).toEqual([a, b]);
    expect(newSessionId()).not.toBe(newSessionId());
  });

  it('newVariantId gives short ids never reused, also after reopening', () => {
    const s = createSession(root, makeMeta('s1'));
    const a = s.newVariantId();
    const b = s.newVariantId();
    expect(a).not.toBe(b);
    expect(a.length).toBeLessThanOrEqual(6);
    s.append({ type: 'variant', variant: makeVariant(a) });
    s.append({ type: 'variant', variant: makeVariant(b) });
    s.close();
    const s2 = openSession(root, 's1');
    const c = s2.newVariantId();
    expect([a, b]).not.toContain(c);
    s2.close();
  });
});

describe('create / open / list', () => {
  it('creates session.json atomically and an empty journal; open reads both back', () => {
    const meta = makeMeta('20250102-030405-abcdef');
    const s = createSession(root, meta);
    expect(s.dir).toBe(path.join(root, meta.id));
    expect(JSON.parse(fs.readFileSync(path.join(s.dir, SESSION_FILE), 'utf8'))).toEqual(meta);
    expect(fs.existsSync(path.join(s.dir, JOURNAL_FILE))).toBe(true);
    expect(fs.readdirSync(s.dir).sort()).toEqual([JOURNAL_FILE, SESSION_FILE].sort()); // no tmp files left
    s.append({ type: 'note', level: 'info', message: 'hello' });
    s.close();

    for (const o of [openSession(root, meta.id), openSession(path.join(root, meta.id))]) {
      expect(o.meta).toEqual(meta);
      expect(o.events()).toEqual([{ type: 'note', level: 'info', message: 'hello' }]);
      o.close();
    }
  });

  it('refuses to create a session over an existing one', () => {
    createSession(root, makeMeta('dup')).close();
    expect(() => createSession(root, makeMeta('dup'))).toThrow(/session dup already exists/);
  });

  it('opening a missing session names the folder', () => {
    expect(() => openSession(root, 'nope')).toThrow(new RegExp(`no session at .*nope`));
  });

  it('lists sessions newest first with counts, status and best; corrupt ones get an error field instead of throwing', () => {
    const old = createSession(root, makeMeta('20250101-000000-aaaaaa'));
    old.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    old.append({ type: 'result', variantId: 'v1', result: timedResult(2) });
    old.append({ type: 'variant', variant: makeVariant('v2') });
    old.append({ type: 'result', variantId: 'v2', result: timedResult(1) });
    old.append({ type: 'status', status: 'paused', budgetUsed: 2 });
    old.close();
    createSession(root, makeMeta('20250103-000000-cccccc')).close();
    const bad = createSession(root, makeMeta('20250102-000000-bbbbbb'));
    bad.close();
    fs.writeFileSync(path.join(bad.dir, SESSION_FILE), '{"id": "20250102-000000-bbbbbb", "task": ');
    const badJournal = createSession(root, makeMeta('20250104-000000-dddddd'));
    badJournal.append({ type: 'note', level: 'info', message: 'a' });
    badJournal.append({ type: 'note', level: 'info', message: 'b' });
    badJournal.close();
    const jf = path.join(badJournal.dir, JOURNAL_FILE);
    fs.writeFileSync(jf, 'garbage\n' + fs.readFileSync(jf, 'utf8'));
    fs.mkdirSync(path.join(root, 'not-a-session'));

    const list = listSessions(root);
    expect(list.map((s) => s.id)).toEqual([
      'not-a-session',
      '20250104-000000-dddddd',
      '20250103-000000-cccccc',
      '20250102-000000-bbbbbb',
      '20250101-000000-aaaaaa',
    ]);
    const byId = Object.fromEntries(list.map((s) => [s.id, s]));
    expect(byId['20250101-000000-aaaaaa']).toMatchObject({
      variants: 2,
      results: 2,
      status: 'paused',
      budgetUsed: 2,
      best: { variantId: 'v2', medianMs: 1, speedup: 2 },
    });
    expect(byId['20250101-000000-aaaaaa'].error).toBeUndefined();
    expect(byId['20250103-000000-cccccc']).toMatchObject({ variants: 0, results: 0 });
    expect(byId['20250102-000000-bbbbbb'].error).toMatch(/session\.json is not valid JSON/);
    expect(byId['20250104-000000-dddddd'].error).toMatch(/line 1 is not valid JSON/);
    expect(byId['not-a-session'].error).toMatch(/has no session\.json/);
    expect(listSessions(path.join(root, 'missing'))).toEqual([]);
  });

  it('listing does not repair (modify) a journal with a torn tail', () => {
    const s = createSession(root, makeMeta('torn'));
    s.append({ type: 'note', level: 'info', message: 'a' });
    s.close();
    const jf = path.join(s.dir, JOURNAL_FILE);
    fs.appendFileSync(jf, '{"v":1,"seq":2,');
    const before = fs.readFileSync(jf);
    expect(listSessions(root)[0]).toMatchObject({ id: 'torn', tornTail: true });
    expect(fs.readFileSync(jf).equals(before)).toBe(true);
    const o = openSession(root, 'torn');
    expect(o.recoveredFromCrash).toBe(true);
    o.close();
  });
});

describe('events are validated', () => {
  it('rejects an event of the wrong shape on append', () => {
    const s = createSession(root, makeMeta('val'));
    expect(() => s.append({ type: 'status', status: 'exploded' } as never)).toThrow(/invalid record/);
    expect(() => s.append({ type: 'result', variantId: 'v1', result: { nope: 1 } } as never)).toThrow(/invalid record/);
    expect(s.events()).toEqual([]);
    s.close();
  });

  it('keeps unknown nested fields (loose schemas) through a round trip', () => {
    const s = createSession(root, makeMeta('loose'));
    const v = { ...makeVariant('v1'), extraField: { kept: true } };
    s.append({ type: 'variant', variant: v });
    s.close();
    const o = openSession(root, 'loose');
    expect(o.variants()[0]).toEqual(v);
    o.close();
    expect(SessionEventSchema.safeParse({ type: 'duel', a: 'v1', b: 'v2', result: { ratio: 1 } }).success).toBe(false);
    const duel = { type: 'duel', a: 'v1', b: 'v2', result: { size: 0, aMs: [1], bMs: [2], ratio: 2, ratioLow: 1.9, ratioHigh: 2.1, verdict: 'faster', timer: 'events', pairs: 1 } };
    expect(SessionEventSchema.safeParse({ ...duel, prediction: { pAFaster: 0.7, model: 'm' } }).success).toBe(true);
    expect(SessionEventSchema.safeParse({ ...duel, prediction: { pAFaster: 1.5, model: 'm' } }).success).toBe(false);
  });

  it('a journal record edited into the wrong shape fails open with its line number', () => {
    const s = createSession(root, makeMeta('edited'));
    s.append({ type: 'note', level: 'info', message: 'fine' });
    s.close();
    // Re-write the line with a valid envelope and crc but a record that is not a SessionEvent.
    const jf = path.join(s.dir, JOURNAL_FILE);
    const env = JSON.parse(fs.readFileSync(jf, 'utf8'));
    const rec = { type: 'note', level: 'loud', message: 'x' };
    env.rec = rec;
    env.crc = crc32(JSON.stringify(rec));
    fs.writeFileSync(jf, JSON.stringify(env) + '\n');
    expect(() => openSession(root, 'edited')).toThrow(/line 1 holds a record KernelDuel does not understand \(level/);
  });
});

describe('best(), speedup and resume', () => {
  it('best() picks the lowest median among correct timed variants and computes speedup vs the baseline', () => {
    const s = createSession(root, makeMeta('best'));
    const add = (id: string, origin: string, result?: ReturnType<typeof timedResult>) => {
      s.append({ type: 'variant', variant: makeVariant(id, { origin }) });
      if (result) s.append({ type: 'result', variantId: id, result });
    };
    add('v1', 'baseline', timedResult(4));
    add('v2', 'random', timedResult(2));
    // Faster but wrong: must not win.
    add('v3', 'random', timedResult(0.5, { check: { ok: false, checks: [], durationMs: 1 } }));
    // Faster but failed: must not win.
    add('v4', 'random', timedResult(0.25, { failure: { kind: 'runtime', reason: 'illegal address' } }));
    // Compile-only: no timing.
    add('v5', 'random', compileOnlyResult());
    add('v6', 'policy', timedResult(1));
    add('v7', 'policy'); // no result yet
    const b = s.best()!;
    expect(b.variant.id).toBe('v6');
    expect(b.medianMs).toBe(1);
    expect(b.speedup).toBeCloseTo(4);
    expect(b.baseline).toEqual({ variantId: 'v1', medianMs: 4 });
    s.close();
  });

  it('uses the LAST result of a variant (a re-measurement replaces the earlier one)', () => {
    const s = createSession(root, makeMeta('last'));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(3) });
    s.append({ type: 'variant', variant: makeVariant('v2') });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(1) });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(5) });
    expect(s.resultOf('v2')!.timing![0].medianMs).toBe(5);
    expect(s.best()!.variant.id).toBe('v1');
    expect(s.best()!.speedup).toBe(1);
    s.close();
  });

  it('speedup is null without a timed baseline, and best() is null without any successful timing', () => {
    const s = createSession(root, makeMeta('nobase'));
    s.append({ type: 'variant', variant: makeVariant('v1') });
    s.append({ type: 'result', variantId: 'v1', result: compileOnlyResult() });
    expect(s.best()).toBeNull();
    s.append({ type: 'variant', variant: makeVariant('v2') });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(2) });
    expect(s.best()).toMatchObject({ medianMs: 2, speedup: null });
    s.close();
  });

  it('a resumed session sees completed variants (to skip them) and everything recorded before', () => {
    const s = createSession(root, makeMeta('resume'));
    s.append({ type: 'status', status: 'running' });
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(2) });
    s.append({ type: 'variant', variant: makeVariant('v2') });
    s.append({ type: 'result', variantId: 'v2', result: compileOnlyResult() });
    s.append({ type: 'variant', variant: makeVariant('v3') }); // proposed, killed before it was measured
    s.append({ type: 'duel', a: 'v2', b: 'v1', result: { size: 0, aMs: [1], bMs: [2], ratio: 2, ratioLow: 1.9, ratioHigh: 2.1, verdict: 'faster', timer: 'events', pairs: 1 } });
    s.close();
    // Simulate a crash mid-append.
    fs.appendFileSync(path.join(s.dir, JOURNAL_FILE), '{"v":1,"seq":8,"t":"x","crc":0,"rec":{"type":"res');

    const r = openSession(root, 'resume');
    expect(r.recoveredFromCrash).toBe(true);
    expect(r.completedIds()).toEqual(new Set(['v1', 'v2']));
    expect(r.variants().map((v) => v.id)).toEqual(['v1', 'v2', 'v3']);
    expect(r.events().filter((e) => e.type === 'duel')).toHaveLength(1);
    expect(r.status()).toEqual({ status: 'running', budgetUsed: undefined });
    // A duel with the preference model's prediction (made before it was measured) reads back whole.
    r.append({ type: 'duel', a: 'v1', b: 'v2', result: { size: 0, aMs: [2], bMs: [1], ratio: 0.5, ratioLow: 0.45, ratioHigh: 0.55, verdict: 'slower', timer: 'events', pairs: 1 }, prediction: { pAFaster: 0.25, model: 'preference model v3 (trained on 40 pairs)' } });
    r.append({ type: 'result', variantId: 'v3', result: timedResult(1) });
    r.close();
    const again = openSession(root, 'resume');
    expect(again.completedIds()).toEqual(new Set(['v1', 'v2', 'v3']));
    expect(again.events().filter((e) => e.type === 'duel').map((e) => (e.type === 'duel' ? e.prediction?.pAFaster : null))).toEqual([undefined, 0.25]);
    expect(again.best()).toMatchObject({ medianMs: 1, speedup: 2 });
    expect(again.measuredAt('v3')).toMatch(/^\d{4}-\d\d-\d\dT/);
    again.close();
  });
});

const journalRecs = (dir: string): Array<{ v: number; seq: number; rec: Record<string, unknown> }> =>
  fs.readFileSync(path.join(dir, JOURNAL_FILE), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('storage format: each source once, samples once', () => {
  it('journals a source once, before the first variant using it; variants come back with their source', () => {
    const s = createSession(root, makeMeta('dedup'));
    const a = makeVariant('v1', { source: 'SRC A', origin: 'baseline' });
    const b = makeVariant('v2', { source: 'SRC A', config: { BLOCK: 128 } });
    const c = makeVariant('v3', { source: 'SRC C', parents: ['v1'] });
    for (const v of [a, b, c]) s.append({ type: 'variant', variant: v });
    expect(s.variants()).toEqual([a, b, c]);
    s.close();
    const recs = journalRecs(s.dir).map((e) => e.rec);
    expect(recs.map((r) => r.type)).toEqual(['source', 'variant', 'variant', 'source', 'variant']);
    expect(recs[0]).toEqual({ type: 'source', hash: sourceHash('SRC A'), source: 'SRC A' });
    expect(recs[1].variant).toMatchObject({ id: 'v1', sourceHash: sourceHash('SRC A') });
    expect(recs[1].variant).not.toHaveProperty('source');
    const o = openSession(root, 'dedup');
    expect(o.variants()).toEqual([a, b, c]);
    expect(o.variant('v2')).toEqual(b);
    expect(o.variant('v2')).not.toHaveProperty('sourceHash');
    expect(o.events()).toEqual([a, b, c].map((variant) => ({ type: 'variant', variant })));
    // Resumed: a known source is not journaled again.
    o.append({ type: 'variant', variant: makeVariant('v4', { source: 'SRC C' }) });
    o.close();
    expect(journalRecs(s.dir).filter((e) => e.rec.type === 'source')).toHaveLength(2);
  });

  it('journals samplesMs by the name of the timer array it repeats, and gives the result back whole', () => {
    const s = createSession(root, makeMeta('samples'));
    const r = timedResult(2);
    const t = r.timing![0];
    t.eventMs = [1, 2, 3];
    t.wallMs = [4, 5, 6];
    t.samplesMs = [1, 2, 3];
    const wall = timedResult(3);
    Object.assign(wall.timing![0], { timer: 'wall', eventMs: [1], wallMs: [7, 8], samplesMs: [7, 8] });
    const odd = timedResult(4);
    Object.assign(odd.timing![0], { eventMs: [1], wallMs: [2], samplesMs: [9] });
    s.append({ type: 'variant', variant: makeVariant('v1') });
    s.append({ type: 'result', variantId: 'v1', result: r });
    s.append({ type: 'result', variantId: 'v2', result: wall });
    s.append({ type: 'result', variantId: 'v3', result: odd });
    expect(s.resultOf('v1')).toEqual(r);
    s.close();
    const stored = journalRecs(s.dir).filter((e) => e.rec.type === 'result').map((e) => (e.rec.result as { timing: Array<{ samplesMs: unknown }> }).timing[0].samplesMs);
    expect(stored).toEqual(['eventMs', 'wallMs', [9]]);
    const o = openSession(root, 'samples');
    expect(o.resultOf('v1')).toEqual(r);
    expect(o.resultOf('v2')).toEqual(wall);
    expect(o.resultOf('v3')).toEqual(odd);
    expect(JSON.stringify(o.resultOf('v1'))).toBe(JSON.stringify(r));
    o.close();
  });

  it('reads a journal written by an earlier version (v1 envelopes, source inline in every variant)', () => {
    const s = createSession(root, makeMeta('old'));
    s.close();
    fs.rmSync(path.join(s.dir, SUMMARY_FILE), { force: true });
    const evs = [
      { type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) },
      { type: 'result', variantId: 'v1', result: timedResult(2) },
      { type: 'variant', variant: makeVariant('v2') },
      { type: 'result', variantId: 'v2', result: timedResult(1) },
      { type: 'status', status: 'finished', budgetUsed: 1 },
    ];
    fs.writeFileSync(
      path.join(s.dir, JOURNAL_FILE),
      evs.map((e, i) => `{"v":1,"seq":${i + 1},"t":"2025-01-01T00:00:00.000Z","crc":${crc32(JSON.stringify(e))},"rec":${JSON.stringify(e)}}\n`).join(''),
    );
    expect(listSessions(root)[0]).toMatchObject({ id: 'old', variants: 2, results: 2, status: 'finished', best: { variantId: 'v2', speedup: 2 } });
    const o = openSession(root, 'old');
    expect(o.events()).toEqual(evs);
    expect(o.best()).toMatchObject({ medianMs: 1, speedup: 2 });
    o.append({ type: 'variant', variant: makeVariant('v3') });
    o.close();
    const again = openSession(root, 'old');
    expect(again.variants().map((v) => v.source)).toEqual(['v1', 'v2', 'v3'].map((id) => makeVariant(id).source));
    again.close();
  });

  it('a variant naming a source that is not in the journal fails open with file and line', () => {
    const s = createSession(root, makeMeta('nosrc'));
    s.append({ type: 'note', level: 'info', message: 'x' });
    s.close();
    const rec = { type: 'variant', variant: { ...makeVariant('v1'), source: undefined, sourceHash: 'abcdef0123456789' } };
    const j = JSON.stringify(rec);
    fs.appendFileSync(path.join(s.dir, JOURNAL_FILE), `{"v":2,"seq":2,"t":"2025-01-01T00:00:00.000Z","crc":${crc32(j)},"rec":${j}}\n`);
    expect(() => openSession(root, 'nosrc')).toThrow(/journal\.jsonl line 2 holds variant v1 whose source abcdef0123456789 is not recorded/);
    expect(listSessions(root)[0].error).toBeUndefined(); // listing needs no sources
  });

  it('an invalid variant is refused before its source is journaled', () => {
    const s = createSession(root, makeMeta('badvar'));
    expect(() => s.append({ type: 'variant', variant: { ...makeVariant('v1'), config: { BLOCK: 'big' } } as never })).toThrow(/invalid record.*config/);
    expect(() => s.append({ type: 'variant', variant: { ...makeVariant(''), source: 'S' } })).toThrow(/invalid record/);
    s.close();
    expect(journalRecs(s.dir)).toEqual([]);
  });

  it('a malformed record (failing the quick check, then zod) names the field and the line', () => {
    const s = createSession(root, makeMeta('shape'));
    s.append({ type: 'variant', variant: makeVariant('v1') });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(1) });
    s.close();
    const jf = path.join(s.dir, JOURNAL_FILE);
    const l = fs.readFileSync(jf, 'utf8').split('\n');
    const env = JSON.parse(l[2]);
    env.rec.result.timing[0].medianMs = 'fast';
    const j = JSON.stringify(env.rec);
    l[2] = `{"v":2,"seq":3,"t":"2025-01-01T00:00:00.000Z","crc":${crc32(j)},"rec":${j}}`;
    fs.writeFileSync(jf, l.join('\n'));
    expect(() => openSession(root, 'shape')).toThrow(/journal .*journal\.jsonl line 3 holds a record KernelDuel does not understand \(result\.timing\.0\.medianMs/);
  });
});

describe('summary.json', () => {
  function filled(id: string): ReturnType<typeof createSession> {
    const s = createSession(root, makeMeta(id));
    s.append({ type: 'variant', variant: makeVariant('v1', { origin: 'baseline' }) });
    s.append({ type: 'result', variantId: 'v1', result: timedResult(2) });
    s.append({ type: 'variant', variant: makeVariant('v2') });
    s.append({ type: 'result', variantId: 'v2', result: timedResult(1) });
    return s;
  }
  const summaryOf = (dir: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(dir, SUMMARY_FILE), 'utf8'));
  const age = (file: string, seconds: number): void => {
    const t = new Date(Date.now() - seconds * 1000);
    fs.utimesSync(file, t, t);
  };

  it('is written on status events and on close, with counts, status, best and the journal position', () => {
    const s = filled('sum');
    s.append({ type: 'status', status: 'paused', budgetUsed: 1 });
    expect(summaryOf(s.dir)).toMatchObject({ v: 1, variants: 2, results: 2, status: 'paused', budgetUsed: 1, best: { variantId: 'v2', medianMs: 1, speedup: 2 } });
    s.append({ type: 'variant', variant: makeVariant('v3') });
    s.close();
    expect(summaryOf(s.dir)).toMatchObject({ variants: 3, results: 2, journalSeq: journalRecs(s.dir).length, journalBytes: fs.statSync(path.join(s.dir, JOURNAL_FILE)).size });
    expect(fs.readdirSync(s.dir).sort()).toEqual([JOURNAL_FILE, SESSION_FILE, SUMMARY_FILE].sort());
  });

  it('listSessions uses a summary that matches the journal, and reads the journal for one that does not', () => {
    const s = filled('uses');
    s.close();
    const sf = path.join(s.dir, SUMMARY_FILE);
    const jf = path.join(s.dir, JOURNAL_FILE);
    // Same journal position, other figures: the listing shows the summary's (it did not read the records).
    fs.writeFileSync(sf, JSON.stringify({ ...summaryOf(s.dir), variants: 7, results: 5 }));
    expect(listSessions(root)[0]).toMatchObject({ variants: 7, results: 5, best: { variantId: 'v2' } });
    // Records appended behind it, a while ago (no run is writing): the journal is read, the summary refreshed.
    const o = openSession(root, 'uses');
    o.append({ type: 'variant', variant: makeVariant('v3') });
    o.close();
    fs.writeFileSync(sf, JSON.stringify({ ...summaryOf(s.dir), journalSeq: 5, journalBytes: 10, variants: 7 }));
    age(sf, 60);
    age(jf, 30);
    expect(listSessions(root)[0]).toMatchObject({ variants: 3, results: 2 });
    expect(summaryOf(s.dir)).toMatchObject({ variants: 3, results: 2, journalSeq: journalRecs(s.dir).length });
    // Not JSON, or not ours: ignored.
    fs.writeFileSync(sf, '{"v":1,');
    expect(listSessions(root)[0]).toMatchObject({ variants: 3, results: 2 });
    fs.writeFileSync(sf, JSON.stringify({ v: 9 }));
    expect(listSessions(root)[0]).toMatchObject({ variants: 3, results: 2 });
  });

  it('a run appending right now (its mark names a live process): a summary a few seconds behind its journal is used', () => {
    const s = filled('live');
    s.close();
    const unmark = markRunning(s.dir);
    const sf = path.join(s.dir, SUMMARY_FILE);
    fs.writeFileSync(sf, JSON.stringify({ ...summaryOf(s.dir), journalSeq: 2, journalBytes: 100, variants: 1, results: 1 }));
    expect(listSessions(root)[0]).toMatchObject({ variants: 1, results: 1, status: 'running' });
    age(sf, 30); // far behind the journal: not trusted
    expect(listSessions(root)[0]).toMatchObject({ variants: 2, results: 2 });
    unmark();
    expect(fs.existsSync(path.join(s.dir, RUNNING_FILE))).toBe(false);
  });

  it('a killed run: its summary, seconds behind the journal, is never trusted, and the session is interrupted', () => {
    const s = filled('killed');
    s.close();
    // What a SIGKILL leaves: the run's mark with its process gone, a summary from before the last results.
    fs.writeFileSync(path.join(s.dir, RUNNING_FILE), JSON.stringify({ pid: 999_999, host: os.hostname(), startedAt: new Date().toISOString() }));
    fs.writeFileSync(path.join(s.dir, SUMMARY_FILE), JSON.stringify({ ...summaryOf(s.dir), journalSeq: 2, journalBytes: 100, variants: 1, results: 0, best: undefined }));
    expect(listSessions(root)[0]).toMatchObject({ variants: 2, results: 2, status: 'interrupted', best: { variantId: 'v2' } });
  });

  it('a session whose run never journaled an end (killed by an earlier version) is interrupted; a finished one is not', () => {
    filled('noend').close();
    expect(listSessions(root)[0].status).toBe('interrupted');
    const s = openSession(root, 'noend');
    s.append({ type: 'status', status: 'finished', budgetUsed: 1 });
    s.close();
    expect(listSessions(root)[0].status).toBe('finished');
  });

  it('a damaged journal is reported even with a summary that matches it in length', () => {
    const s = filled('damaged');
    s.close();
    const jf = path.join(s.dir, JOURNAL_FILE);
    const l = fs.readFileSync(jf, 'utf8').split('\n');
    l[1] = l[1].replace('"v1"', '"v9"');
    fs.writeFileSync(jf, l.join('\n'));
    expect(listSessions(root)[0].error).toMatch(/journal\.jsonl line 2 fails its checksum/);
  });

  it('a torn tail after the summary is reported (and the journal left as it is)', () => {
    const s = filled('tornsum');
    s.close();
    const jf = path.join(s.dir, JOURNAL_FILE);
    fs.appendFileSync(jf, '{"v":2,"seq":7,');
    const before = fs.readFileSync(jf);
    expect(listSessions(root)[0]).toMatchObject({ variants: 2, results: 2, tornTail: true });
    expect(fs.readFileSync(jf).equals(before)).toBe(true);
  });

  it('a read-only session folder: closing and listing work without a summary', (ctx) => {
    const s = filled('ro');
    fs.chmodSync(s.dir, 0o555);
    try {
      let writable = false;
      try {
        fs.writeFileSync(path.join(s.dir, 'probe'), 'x');
        fs.unlinkSync(path.join(s.dir, 'probe'));
        writable = true;
      } catch {
        /* read-only as intended */
      }
      if (writable) ctx.skip();
      expect(() => s.close()).not.toThrow();
      expect(listSessions(root)[0]).toMatchObject({ variants: 2, results: 2 });
      expect(fs.readdirSync(s.dir).filter((f) => f.includes('kdtmp'))).toEqual([]);
    } finally {
      fs.chmodSync(s.dir, 0o755);
      s.close();
    }
  });
});
