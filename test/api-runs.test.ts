// Runs through the API service run in a worker thread (main/core/run/worker.ts): start, pause (no
// measurement completes beyond the one in flight), resume, stop (the session keeps what was
// measured), all observed through the service's events, on a SYNTHETIC recorded space (REPLAY).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { decodeSession, type ApiEvent, type RunState } from '../main/contract/api.js';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';

let home: string;
let service: ApiService;
let recording: string;
const events: ApiEvent[] = [];

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-runs-'));
  const task = loadTask(path.join(builtinTasksDir(), 'softmax'));
  recording = path.join(home, 'spaces', 'synthetic-test-fixture', 'softmax.json');
  fs.mkdirSync(path.dirname(recording), { recursive: true });
  fs.writeFileSync(recording, JSON.stringify(syntheticSpace(task, { seed: 9 })));
  service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home } });
  service.on((e) => events.push(e));
});
afterAll(async () => {
  await service.stopAll();
  fs.rmSync(home, { recursive: true, force: true });
});

const until = async (what: () => boolean, ms = 20_000): Promise<void> => {
  const t0 = Date.now();
  while (!what()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('runs in a worker thread', () => {
  it('start, pause, resume, stop', async () => {
    const h = service.handlers();
    const st = (await h['runs.start']({ task: 'softmax', strategy: 'random', budget: 400, gpu: null, recording })) as RunState;
    expect(st).toMatchObject({ phase: 'running', replay: true, budget: 400 });
    const sid = st.sessionId;
    const results = (): number => events.filter((e) => e.type === 'run.result' && e.sessionId === sid).length;
    await until(() => results() >= 3);
    expect((await h['runs.pause']({ sessionId: sid })).phase).toBe('paused');
    await new Promise((r) => setTimeout(r, 150));
    const atPause = results();
    await new Promise((r) => setTimeout(r, 500));
    expect(results()).toBe(atPause);
    expect((await h['runs.resume']({ sessionId: sid })).phase).toBe('running');
    await until(() => results() >= atPause + 5);
    expect((await h['runs.stop']({ sessionId: sid })).phase).toBe('stopping');
    const last = (): RunState | undefined => events.filter((e): e is Extract<ApiEvent, { type: 'run.state' }> => e.type === 'run.state' && e.state.sessionId === sid).at(-1)?.state;
    await until(() => last()?.phase === 'stopped');
    expect((await h['runs.list']({})).find((r) => r.sessionId === sid)).toBeUndefined();
    // The session (read from disk) keeps every result that was reported, all labelled REPLAY.
    const d = decodeSession(await h['sessions.get']({ id: sid }));
    const done = d.variants.filter((v) => v.status !== 'pending');
    // What measured each variant is in its detail (variants.get), not in the session's compact rows.
    const sources = await Promise.all(done.map(async (v) => (await h['variants.get']({ sessionId: sid, variantId: v.id })).row.source));
    expect(done.length).toBeGreaterThanOrEqual(results());
    expect(sources.every((x) => x === 'replay')).toBe(true);
    expect(d.replay?.recording).toBe(recording);
    expect(d.notes.some((n) => n.message.startsWith('REPLAY:'))).toBe(true);
    expect(last()!.evaluated).toBeLessThan(400);
  }, 60_000);

  it('a run on SIMULATED GPUs streams each GPU\'s activity with the run\'s state; simulated GPUs need a recording', async () => {
    const h = service.handlers();
    const st = (await h['runs.start']({ task: 'softmax', strategy: 'random', budget: 16, gpu: null, recording, simulateGpus: 2 })) as RunState;
    const sid = st.sessionId;
    const states = (): RunState[] => events.flatMap((e) => (e.type === 'run.state' && e.state.sessionId === sid ? [e.state] : []));
    await until(() => states().at(-1)?.phase === 'finished', 40_000);
    const withGpus = states().filter((x) => x.gpus?.length);
    expect(withGpus.length).toBeGreaterThan(0);
    const end = states().at(-1)!.gpus!;
    expect(end.map((g) => [g.id, g.simulated, g.state])).toEqual([['sim0', true, 'idle'], ['sim1', true, 'idle']]);
    expect(end.reduce((a, g) => a + g.evaluated, 0)).toBe(17);
    expect(end.every((g) => g.evalsPerMinute !== null && g.evalsPerMinute > 0)).toBe(true);
    await expect(h['runs.start']({ task: 'softmax', strategy: 'random', budget: 1, gpu: null, simulateGpus: 2 })).rejects.toThrow(/simulated GPUs answer from a recorded space/);
  }, 60_000);

  it('the llm policy refuses a recorded space', async () => {
    await expect(service.handlers()['runs.start']({ task: 'softmax', strategy: 'llm', budget: 1, gpu: null, recording })).rejects.toThrow(/recorded space cannot answer/);
  });

  it('replays the baseline strategies on the recording of a replay session, for the session\'s number of evaluations', async () => {
    const h = service.handlers();
    const st = (await h['runs.start']({ task: 'softmax', strategy: 'contrastive', budget: 30, gpu: null, recording })) as RunState;
    const sid = st.sessionId;
    const last = (): RunState | undefined => events.filter((e): e is Extract<ApiEvent, { type: 'run.state' }> => e.type === 'run.state' && e.state.sessionId === sid).at(-1)?.state;
    await until(() => last()?.phase === 'finished', 40_000);
    const b = await h['sessions.baselines']({ id: sid });
    expect(b.recording).toBe(recording);
    expect(b.evaluations).toBe(30);
    expect(b.curves.map((c) => c.name)).toEqual(['random', 'anneal', 'genetic']);
    for (const c of b.curves) {
      expect(c.points).toHaveLength(30);
      // best-so-far never falls, and is a speedup over the same baseline as the session's
      for (let i = 1; i < c.points.length; i++) expect(c.points[i].bestSpeedup).toBeGreaterThanOrEqual(c.points[i - 1].bestSpeedup - 1e-12);
      expect(c.points[0].bestSpeedup).toBeGreaterThan(0);
    }
    expect(b.note).toMatch(/^REPLAY/);
    // The preference model's prediction for each duel's pair, made before the duel was measured,
    // once the model was trained; the comparison view shows it (turned around for the reverse pair).
    const d = await h['sessions.get']({ id: sid });
    const predicted = d.duels.filter((x) => x.prediction);
    expect(predicted.length).toBeGreaterThan(0);
    expect(d.duels.length).toBeGreaterThan(predicted.length); // the first duels came before any training
    const one = predicted.at(-1)!;
    expect(one.prediction!.pAFaster).toBeGreaterThanOrEqual(0);
    expect(one.prediction!.pAFaster).toBeLessThanOrEqual(1);
    const ab = await h['variants.compare']({ sessionId: sid, a: one.a, b: one.b });
    const ba = await h['variants.compare']({ sessionId: sid, a: one.b, b: one.a });
    expect(ab.prediction!.pAFaster).toBeCloseTo(one.prediction!.pAFaster, 12);
    expect(ba.prediction!.pAFaster).toBeCloseTo(1 - one.prediction!.pAFaster, 12);
    expect(ab.prediction!.model).toMatch(/^preference model v\d+ \(trained on \d+ pairs\), before the duel$/);
    // An unknown session is refused.
    await expect(h['sessions.baselines']({ id: '20990101-000000-zzzzzz' })).rejects.toThrow();
  }, 60_000);
});

