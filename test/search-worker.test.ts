// The optimisation loop in a worker thread: events stream to the parent (variants, results, duels,
// model accuracy), pause holds measurements until resume, stop ends the run with the session
// intact, and everything it measured on a replay is labelled replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { startOptimisation, type OptimisationMessage } from '../main/core/run/worker.js';
import { openSession } from '../main/engine/session/store.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';

let dir: string;
let recording: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kd-worker-'));
  const task = loadTask(join(builtinTasksDir(), 'softmax'));
  recording = join(dir, 'softmax.json');
  writeFileSync(recording, JSON.stringify(syntheticSpace(task, { seed: 5 })));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opts = (budget: number) => ({ task: 'softmax', strategy: 'contrastive' as const, budget, seed: 1, backend: { kind: 'replay' as const, recording }, sessionsRoot: join(dir, 'sessions') });

describe('startOptimisation', () => {
  it('runs the contrastive loop in a worker and streams variant, result, duel, model and finished events', async () => {
    const h = startOptimisation(opts(30));
    const msgs: OptimisationMessage[] = [];
    for await (const m of h.events) msgs.push(m);
    expect(await h.done).toEqual({ evaluated: 30 });
    const started = msgs[0];
    expect(started.type).toBe('started');
    const events = msgs.flatMap((m) => (m.type === 'event' ? [m.event] : []));
    const results = events.filter((e) => e.type === 'result');
    expect(results).toHaveLength(31);
    for (const r of results) if (r.type === 'result') expect(r.result.source.kind).toBe('replay');
    expect(events.filter((e) => e.type === 'duel').length).toBeGreaterThan(10);
    expect(events.some((e) => e.type === 'model' && e.stats.trainedOn > 0)).toBe(true);
    expect(msgs[msgs.length - 1].type).toBe('finished');
    if (started.type !== 'started') throw new Error('no start');
    const s = openSession(started.sessionDir);
    expect(s.events().filter((e) => e.type === 'duel').length).toBe(events.filter((e) => e.type === 'duel').length);
    expect(s.status()?.status).toBe('finished');
    s.close();
  }, 30_000);

  it('pause holds measurements until resume; stop ends early with the session kept', async () => {
    const h = startOptimisation(opts(200));
    let results = 0;
    let atPause = -1;
    const seen: string[] = [];
    for await (const m of h.events) {
      seen.push(m.type);
      if (m.type === 'event' && m.event.type === 'result') {
        results++;
        if (results === 5) h.pause();
      }
      if (m.type === 'paused') {
        atPause = results;
        await new Promise((r) => setTimeout(r, 300));
        // Nothing more than the in-flight measurement may arrive while paused.
        h.resume();
      }
      if (m.type === 'resumed') expect(results).toBeLessThanOrEqual(atPause + 1);
      if (results === 12) h.stop();
    }
    const r = await h.done;
    expect(seen).toContain('paused');
    expect(seen).toContain('resumed');
    expect(r.evaluated).toBeLessThan(200);
    expect(r.evaluated).toBeGreaterThanOrEqual(11);
  }, 30_000);

  it('reports a bad recording as an error message, not a hang', async () => {
    const h = startOptimisation({ ...opts(5), backend: { kind: 'replay', recording: join(dir, 'missing.json') } });
    const msgs: OptimisationMessage[] = [];
    for await (const m of h.events) msgs.push(m);
    expect(msgs.some((m) => m.type === 'error' && /cannot read the recorded space/.test(m.message))).toBe(true);
    await expect(h.done).rejects.toThrow(/recorded space/);
  }, 30_000);
});
