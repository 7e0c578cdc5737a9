// sessions.confirm through the API, and the confirmation in sessions.get: a session journaled with
// FIXTURE confirm events shows its confirmation (lines without samples, the confirmed best, the
// search's best when the ranking changed); on this machine (no GPU) sessions.confirm refuses with
// the reason, and nothing is journaled.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { createSession, openSession } from '../main/engine/session/store.js';
import { resolveTask } from '../main/engine/task/resolve.js';
import { makeMeta, makeVariant, timedResult } from './fixtures/session-data.js';

let home: string;
let service: ApiService;
const SID = '20261205-070000-aaaaaa';
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-confirm-'));
  service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home, KERNELDUEL_NO_GPU: '1' } });
  const t = resolveTask('axpy');
  const s = createSession(path.join(home, 'sessions'), makeMeta(SID, { task: { name: t.manifest.name, dir: t.dir, manifestHash: t.hash } }));
  s.append({ type: 'variant', variant: makeVariant('v0', { origin: 'baseline' }) });
  s.append({ type: 'result', variantId: 'v0', result: timedResult(0.5) });
  s.append({ type: 'variant', variant: makeVariant('v1', { config: { BLOCK: 512 } }) });
  s.append({ type: 'result', variantId: 'v1', result: timedResult(0.25) });
  s.append({ type: 'variant', variant: makeVariant('v2', { config: { BLOCK: 1024 } }) });
  s.append({ type: 'result', variantId: 'v2', result: timedResult(0.251) });
  s.close();
});
afterAll(async () => {
  await service.stopAll();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('sessions.confirm', () => {
  it('refuses here (no GPU of the session\'s model), naming the model, and journals nothing', async () => {
    const h = service.handlers();
    expect((await h['sessions.get']({ id: SID })).confirm).toBeNull();
    await expect(h['sessions.confirm']({ id: SID })).rejects.toThrow(/no usable NVIDIA GPU here: session 20261205-070000-aaaaaa was measured on NVIDIA GeForce RTX 4090/);
    expect((await h['sessions.get']({ id: SID })).confirm).toBeNull();
  });

  it('sessions.get carries a confirmation journaled by the engine, without its samples', async () => {
    const s = openSession(path.join(home, 'sessions'), SID);
    s.append({ type: 'confirm', variantId: 'v0', timing: 'precise', result: timedResult(0.5) });
    // v1's timing over 4 placements whose medians run 1% apart: its placements' share travels with it.
    const placed = timedResult(0.2504);
    placed.timing![0] = { ...placed.timing![0], bufferSets: 4, perSetMedianMs: [0.2492, 0.2516, 0.2492, 0.2516], setRelSd: 0.0024 };
    s.append({ type: 'confirm', variantId: 'v1', timing: 'precise', result: placed });
    s.append({ type: 'confirm', variantId: 'v2', timing: 'precise', result: timedResult(0.2490) });
    s.close();
    const c = (await service.handlers()['sessions.get']({ id: SID })).confirm!;
    expect(c.bestId).toBe('v2');
    expect(c.searchBestId).toBe('v1');
    expect(c.variants.map((l) => l.variantId)).toEqual(['v2', 'v1']);
    expect(c.variants[0]).toMatchObject({ ms: 0.249, searchMs: 0.251, samples: 3, contexts: 1, bufferSets: 1 });
    expect(c.variants[0].speedup).toBeCloseTo(0.5 / 0.249, 12);
    expect(Object.keys(c.variants[0])).not.toContain('result');
    // The session list (the picker) and the session's own summary say it too.
    expect((await service.handlers()['sessions.list']({})).find((x) => x.id === SID)!.confirmed).toEqual({ variantId: 'v2', speedup: 0.5 / 0.249 });
    expect((await service.handlers()['sessions.get']({ id: SID })).summary.confirmed).toEqual({ variantId: 'v2', speedup: 0.5 / 0.249 });
    // The run report carries it, beside the search's figures.
    const md = (await service.handlers()['export.report']({ sessionId: SID, format: 'md' })).content;
    expect(md).toContain('## Confirmation (precise timing)');
    expect(md).toMatch(/\| v2 \| 251\.00 µs \| 249\.00 µs \| 246\.51 µs – 251\.49 µs \| 2\.008x \| 1\.958 – 2\.059 \|/);
    expect(md).toMatch(/\| v1 \| 250\.00 µs \| 250\.40 µs \| 247\.90 µs – 252\.90 µs \(placements' sd 0\.24%\) \|/);
    expect(c.variants[1].placementSd).toBe(0.0024);
    expect(c.variants[0].placementSd).toBeNull();
    expect(md).toContain('Confirmed best: v2 on NVIDIA GeForce RTX 4090, measured ');
    expect(md).toContain('(the search ranked v1 first).');
  });

  it('sessions.get and the report carry the duel of the best against a tied variant', async () => {
    const s = openSession(path.join(home, 'sessions'), SID);
    s.append({ type: 'confirm', variantId: 'v0', timing: 'precise', result: timedResult(0.5), run: 'r2' });
    s.append({ type: 'confirm', variantId: 'v1', timing: 'precise', result: timedResult(0.2497), run: 'r2' });
    s.append({ type: 'confirm', variantId: 'v2', timing: 'precise', result: timedResult(0.2490), run: 'r2' });
    // As the engine journals a tie duel: the best (v2) as A; v1 faster in the pairs by 0.2%.
    s.append({ type: 'duel', a: 'v2', b: 'v1', result: { size: 0, aMs: [0.25], bMs: [0.2495], ratio: 0.998, ratioLow: 0.9975, ratioHigh: 0.9985, verdict: 'same', timer: 'events', pairs: 120 } });
    s.close();
    const c = (await service.handlers()['sessions.get']({ id: SID })).confirm!;
    expect(c.tiedWithBest).toEqual(['v1']);
    expect(c.tieDuels).toMatchObject([{ variantId: 'v1', ratio: 0.998, verdict: 'same', pairs: 120 }]);
    const md = (await service.handlers()['export.report']({ sessionId: SID, format: 'md' })).content;
    expect(md).toContain("Duel of v2 against v1 (120 interleaved pairs in one process): v1 is faster by 0.20%, within the duel's ±1% \"same\" band: v2's speed over v1's 0.9980× (95% interval 0.9975–0.9985 over the pairs and the buffer placements; the pairs alone 0.9975–0.9985).");
  });
});
