// The session views keep read-only snapshots of a journal while it is unchanged (issue 16: clicking
// through a 20,000-variant session must not re-read the journal per variant); an appended journal
// is read again, so nothing stale is served.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionViews } from '../main/core/sessions.js';
import { createSession } from '../main/engine/session/store.js';
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
    const again = views.withSession('s1', (x) => x);
    expect(again).not.toBe(first);
    expect(views.withSession('s1', (x) => views.variantDetail(x, 'v2')).row).toMatchObject({ medianMs: 1, speedup: 2 });
    expect(views.detail('s1').variants.map((r) => r.id)).toEqual(['v1', 'v2']);
    s.close();
  });
});
