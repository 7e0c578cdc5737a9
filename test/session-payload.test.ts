// sessions.get's compact payload (issue 16: a 20,000-variant session was 13.5 MB of row objects):
// rows as columns with interned configs, the timeline, roofline and speedups rebuilt from the rows.
// Decoding must give back exactly the session's view rows and plots, also where a value does not
// follow from the rows (then it travels whole), and refuse a payload that does not hold together.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactRow, decodeSession, encodeSession, type FullVariantRow, type SessionDetail, type SessionPayload } from '../main/contract/api.js';
import { SessionViews } from '../main/core/sessions.js';
import { openSession } from '../main/engine/session/store.js';
import { bigReplaySession } from './fixtures/big-session.js';
import { makeVariant } from './fixtures/session-data.js';

const ROOT = path.resolve(import.meta.dirname, '..');
let home: string;
let views: SessionViews;
let id: string;

/** What the renderer should hold: the session with its rows' view fields only. */
const viewOf = (d: SessionDetail<FullVariantRow>): SessionDetail => ({ ...d, variants: d.variants.map(compactRow) });

beforeAll(async () => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-payload-'));
  const big = await bigReplaySession({ home, taskDir: path.join(ROOT, 'resources', 'tasks', 'axpy'), variants: 2000 });
  id = big.id;
  // A variant still pending, and one whose parent is no variant of this session.
  const s = openSession(path.join(home, 'sessions'), id);
  s.append({ type: 'variant', variant: makeVariant('v9001', { parents: ['v3', 'elsewhere'], origin: 'genetic', config: { BLOCK: 128, ITEMS: 1, VEC: 1, GRID_MULT: 1 } }) });
  s.append({ type: 'variant', variant: makeVariant('v9002', { parents: ['from-another-session'], origin: 'genetic' }) });
  s.close();
  views = new SessionViews(path.join(home, 'sessions'), () => null);
}, 120_000);

afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('sessions.get payload', () => {
  it('a 2,000-variant session decodes to exactly its rows and plots, in under a quarter of the bytes', () => {
    const d = views.detail(id);
    expect(d.variants.length).toBe(2003);
    expect(d.variants.some((r) => r.status === 'failed')).toBe(true);
    expect(d.variants.some((r) => r.status === 'pending')).toBe(true);
    expect(d.variants.some((r) => r.parents.length > 1)).toBe(true);
    expect(d.plots.roofline?.points.length).toBeGreaterThan(1000);
    const p = views.payload(id);
    // Everything follows from the rows here: no explicit columns or series travel.
    expect(p.variants.speedup).toBeUndefined();
    expect(p.plots.timeline).toBeUndefined();
    expect(Array.isArray(p.plots.roofline?.points)).toBe(false);
    expect(p.variants.configs.length).toBeLessThan(p.variants.id.length / 2);
    // Through JSON, as both transports carry it.
    const wire = JSON.stringify(p);
    const back = decodeSession(JSON.parse(wire) as SessionPayload);
    expect(back).toEqual(viewOf(d));
    const full = JSON.stringify(d).length;
    expect(wire.length).toBeLessThan(full / 4);
    // Parents outside the session keep their ids; inside, they are row indices.
    expect(back.variants.find((r) => r.id === 'v9001')!.parents).toEqual(['v3', 'elsewhere']);
    expect(p.variants.parents[p.variants.id.indexOf('v9001')]).toEqual([p.variants.id.indexOf('v3'), 'elsewhere']);
  });

  it('values that do not follow from the rows travel whole and come back exactly', () => {
    const d = viewOf(views.detail(id));
    const rows = d.variants.map((r, i) => (i === 7 && r.speedup !== null ? { ...r, speedup: r.speedup * 1.5 } : r));
    const timeline = d.plots.timeline.map((t, i) => (i === 3 ? { ...t, reward: 0.123 } : i === 4 ? { ...t, bestSpeedup: 99 } : t));
    const roofline = { ...d.plots.roofline!, points: d.plots.roofline!.points.map((q, i) => (i === 2 ? { ...q, gbps: 1 } : q)) };
    const odd: SessionDetail = { ...d, variants: rows, plots: { ...d.plots, timeline, roofline } };
    const p = encodeSession(odd);
    expect(p.variants.speedup).toHaveLength(rows.length);
    expect(p.plots.timeline).toHaveLength(timeline.length);
    expect(Array.isArray(p.plots.roofline?.points)).toBe(true);
    expect(decodeSession(JSON.parse(JSON.stringify(p)) as SessionPayload)).toEqual(odd);
    // Only a recorded reward (not the ln(speedup) proxy): it travels by itself, the timeline is rebuilt.
    const rewarded: SessionDetail = { ...d, plots: { ...d.plots, timeline: d.plots.timeline.map((t, i) => (i === 3 ? { ...t, reward: 0.123 } : t)) } };
    const q = encodeSession(rewarded);
    expect(q.plots.timeline).toBeUndefined();
    expect(q.plots.rewards).toEqual({ row: [d.variants.findIndex((r) => r.id === d.plots.timeline[3].variantId)], value: [0.123] });
    expect(decodeSession(q)).toEqual(rewarded);
  });

  it('an empty session and a compile-only one round-trip', () => {
    const d = viewOf(views.detail(id));
    const empty: SessionDetail = { ...d, variants: [], baselineId: null, bestId: null, plots: { ...d.plots, timeline: [], roofline: null, paramEffects: [] } };
    expect(decodeSession(encodeSession(empty))).toEqual(empty);
    const built: SessionDetail = { ...d, variants: d.variants.slice(0, 5).map((r) => ({ ...r, status: 'built', medianMs: null, speedup: null })), plots: { ...d.plots, timeline: [], roofline: null } };
    expect(decodeSession(encodeSession(built))).toEqual(built);
  });

  it('what measured each row and a Python candidate\'s label come back (a CPU row stays CPU)', () => {
    const d = viewOf(views.detail(id));
    expect(d.variants.filter((r) => r.source === 'replay').length).toBeGreaterThan(1000);
    const py: SessionDetail = { ...d, variants: d.variants.map((r, i) => (i === 5 ? { ...r, source: 'cpu', label: 'custom' } : i === 6 ? { ...r, label: 'fallback' } : r)) };
    const p = encodeSession(py);
    expect(p.variants.label).toHaveLength(py.variants.length);
    const back = decodeSession(JSON.parse(JSON.stringify(p)) as SessionPayload);
    expect(back).toEqual(py);
    expect(back.variants[5]).toMatchObject({ source: 'cpu', label: 'custom' });
    // Without any label, no label column travels; rows come back with label null.
    expect(encodeSession(d).variants.label).toBeUndefined();
    expect(decodeSession(encodeSession(d)).variants.every((r) => r.label === null)).toBe(true);
  });

  it('a payload that does not hold together is refused with what is wrong', () => {
    const p = views.payload(id);
    const bad = (f: (x: SessionPayload) => void): SessionPayload => {
      const x = JSON.parse(JSON.stringify(p)) as SessionPayload;
      f(x);
      return x;
    };
    expect(() => decodeSession(bad((x) => x.variants.medianMs.pop()))).toThrow(/column medianMs has 2002 entries for 2003 rows/);
    expect(() => decodeSession(bad((x) => (x.variants.config[0] = x.variants.configs.length)))).toThrow(/config: index \d+ outside/);
    expect(() => decodeSession(bad((x) => (x.variants.parents[1] = [5000])))).toThrow(/parent index 5000 of row 1/);
    expect(() => decodeSession(bad((x) => (x.variants.status[0] = 9)))).toThrow(/status: index 9/);
    expect(() => decodeSession(bad((x) => (x.variants.source[0] = x.variants.sourceKinds.length)))).toThrow(/source: index \d+ outside/);
  });
});
