// One run on a pool of GPUs (main/engine/search/pool.ts), proven on SIMULATED GPUs answering from
// a synthetic recorded space (REPLAY, no GPU): every GPU measures at once, every result is
// journaled with the GPU that measured it, a duel's two sides run on one GPU, a GPU that fails or
// hangs leaves the pool with a message while its variant is measured again elsewhere once, the
// run continues and a resume measures what was journaled but never measured; GPUs of different
// models are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { ReplayMeasurer } from '../main/engine/measure/replay.js';
import { parseSimulatedFault, simulatedGpuLanes, type SimulatedGpusOptions } from '../main/engine/measure/simulated-gpus.js';
import type { Lane } from '../main/engine/measure/lane.js';
import type { MeasuredSpec, Measurer } from '../main/engine/measure/measurer.js';
import { checkOneModel, PoolError, runPoolLoop } from '../main/engine/search/pool.js';
import type { LoopEvent, Strategy } from '../main/engine/search/loop.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { makeStrategy } from '../main/engine/search/strategies.js';
import { createSession, newSessionId, openSession, type Session } from '../main/engine/session/store.js';
import type { EvalResult, GpuActivity } from '../main/engine/base/types.js';
import { gpuGroupsByModel, parseGpuPool, pickGpus } from '../main/core/gpus.js';
import { startOptimisation, type OptimisationMessage } from '../main/core/run/worker.js';
import { resumeRunOptions } from '../main/core/run/resume.js';
import { syntheticSpace } from './fixtures/spaces/synthetic.js';

let dir: string;
let task: Task;
let recording: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kd-pool-'));
  task = loadTask(join(builtinTasksDir(), 'softmax'));
  recording = join(dir, 'softmax.json');
  writeFileSync(recording, JSON.stringify(syntheticSpace(task, { seed: 7 })));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const newSession = (): Session =>
  createSession(join(dir, 'sessions'), { id: newSessionId(), task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: '0.1.0' });

function pool(sim: SimulatedGpusOptions, strategyName: 'random' | 'contrastive' = 'random', seed = 1): { lanes: Lane[]; strategy: Strategy } {
  const replay = new ReplayMeasurer(task, recording, { seed });
  const lanes = simulatedGpuLanes(replay, sim);
  return { lanes, strategy: makeStrategy(strategyName, ActionSpace.fromRecording(task, replay), seed) };
}

/** A lane whose measurer is the simulated GPU's with some methods replaced (to watch what the pool asks of which GPU). */
const spy = (l: Lane, over: Partial<Measurer>): Lane => ({
  ...l,
  measurer: { task: l.measurer.task, compileOnly: false, evaluate: (sp, o) => l.measurer.evaluate(sp, o), duel: (a, b, sig) => l.measurer.duel(a, b, sig), ...over },
});
const idOf = (spec: MeasuredSpec): string => (spec as { id?: string }).id ?? '?';
const simIndex = (r: EvalResult): number | undefined => (r.source.kind === 'replay' ? r.source.simulatedGpu?.index : undefined);

describe('pool loop on simulated GPUs (REPLAY)', () => {
  it('keeps every GPU busy at once and journals each result with the simulated GPU that measured it', async () => {
    const { lanes, strategy } = pool({ count: 3, latencyMs: [4, 8, 16] });
    const session = newSession();
    const events: LoopEvent[] = [];
    const r = await runPoolLoop({ session, lanes, strategy, budget: 45, onEvent: (e) => events.push(e) });
    expect(r.evaluated).toBe(45);
    const results = session.events().filter((e) => e.type === 'result');
    expect(results).toHaveLength(46);
    const per = [0, 0, 0];
    for (const e of results) if (e.type === 'result') per[simIndex(e.result)!]++;
    expect(per.every((n) => n > 0)).toBe(true);
    // The fastest GPU takes the most work, the slowest the least.
    expect(per[0]).toBeGreaterThan(per[2]);
    // At some moment all three measured at once.
    const busyAtOnce = Math.max(...events.flatMap((e) => (e.type === 'gpus' ? [e.gpus.filter((g) => g.state === 'busy').length] : [0])));
    expect(busyAtOnce).toBe(3);
    const done = events.find((e) => e.type === 'done');
    expect(done?.type === 'done' && done.gpus?.map((g) => g.evaluated)).toEqual(per);
    expect(session.events().some((e) => e.type === 'note' && /GPU pool: sim0 .*\[simulated\]/.test(e.message))).toBe(true);
    expect(session.status()?.status).toBe('finished');
    session.close();
  });

  it('times both sides of every duel on the GPU that measured the new variant', async () => {
    const { lanes, strategy } = pool({ count: 2, latencyMs: [3, 5] }, 'contrastive');
    const duelLane = new Map<string, string>();
    const spied = lanes.map((l) =>
      spy(l, {
        duel: (a, b, sig) => {
          duelLane.set(idOf(a), l.id);
          return l.measurer.duel(a, b, sig);
        },
      }),
    );
    const session = newSession();
    await runPoolLoop({ session, lanes: spied, strategy, budget: 40 });
    const duels = session.events().filter((e) => e.type === 'duel');
    expect(duels.length).toBeGreaterThan(5);
    for (const d of duels) {
      if (d.type !== 'duel') continue;
      const measuredOn = simIndex(session.resultOf(d.a)!);
      expect(duelLane.get(d.a)).toBe(`sim${measuredOn}`);
    }
    session.close();
  });

  it('each GPU captures the next variant ahead (prepare) and then measures it itself', async () => {
    const { lanes, strategy } = pool({ count: 2, latencyMs: [4, 6] });
    const preparedOn = new Map<string, string>();
    const withPrepare = lanes.map((l) => spy(l, { build: async () => undefined, prepare: async (sp) => void preparedOn.set(idOf(sp), l.id) }));
    const session = newSession();
    await runPoolLoop({ session, lanes: withPrepare, strategy, budget: 30 });
    const results = session.events().flatMap((e) => (e.type === 'result' && preparedOn.has(e.variantId) ? [e] : []));
    expect(results.length).toBeGreaterThan(15);
    const same = results.filter((e) => e.type === 'result' && `sim${simIndex(e.result)}` === preparedOn.get(e.variantId)).length;
    expect(same / results.length).toBeGreaterThan(0.8);
    session.close();
  });

  it('a GPU that fails is removed with a message, its variant measured again on another GPU once, and the run finishes', async () => {
    const { lanes, strategy } = pool({ count: 3, latencyMs: [4], fault: { gpu: 1, at: 3, kind: 'fail' } });
    const session = newSession();
    const messages: string[] = [];
    const r = await runPoolLoop({ session, lanes, strategy, budget: 30, onEvent: (e) => void (e.type === 'gpus' && e.message && messages.push(e.message)) });
    expect(r.evaluated).toBe(30);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/GPU 1 .*SIMULATED-GPU-1.* removed from the pool: .*simulated GPU 1 fault.*measured again on another GPU \(once\); 2 GPUs left/);
    const victim = messages[0].match(/(\S+) is measured again/)![1];
    // The variant the failed GPU was measuring has one result, from a GPU still in the pool.
    const its = session.events().filter((e) => e.type === 'result' && e.variantId === victim);
    expect(its).toHaveLength(1);
    expect(its[0].type === 'result' && simIndex(its[0].result)).not.toBe(1);
    expect(r.gpus.find((g) => g.id === 'sim1')?.state).toBe('removed');
    expect(session.events().some((e) => e.type === 'note' && e.level === 'warn' && e.message === messages[0])).toBe(true);
    // No result of the broken GPU's failure was journaled as the variant's.
    expect(session.events().filter((e) => e.type === 'result' && /simulated GPU 1 fault/.test(e.result.failure?.reason ?? ''))).toHaveLength(0);
    expect(session.status()?.status).toBe('finished');
    session.close();
  });

  it('a GPU that hangs is removed by the watchdog and the run continues on the rest', async () => {
    const { lanes, strategy } = pool({ count: 2, latencyMs: [3], fault: { gpu: 0, at: 4, kind: 'hang' } });
    const session = newSession();
    const ac = new AbortController();
    const r = await runPoolLoop({ session, lanes, strategy, budget: 20, hangMs: 150, signal: ac.signal });
    ac.abort(); // releases the simulated hang
    expect(r.evaluated).toBe(20);
    const notes = session.events().filter((e) => e.type === 'note' && e.level === 'warn');
    expect(notes).toHaveLength(1);
    expect(notes[0].type === 'note' && notes[0].message).toMatch(/GPU 0 .* removed from the pool: no answer within 150 ms while it measured \S+: the GPU is taken as hung; \S+ is measured again/);
    expect(r.gpus.map((g) => g.state)).toEqual(['removed', 'idle']);
    session.close();
  });

  it('when every GPU failed the run stops with the reason, and a resume measures what was journaled but not measured', async () => {
    const { lanes, strategy } = pool({ count: 1, latencyMs: [2], fault: { gpu: 0, at: 5, kind: 'fail' } });
    const session = newSession();
    await expect(runPoolLoop({ session, lanes, strategy, budget: 25 })).rejects.toThrow(/every GPU of the pool failed .*resume it with --resume/);
    const measured = session.events().filter((e) => e.type === 'result').length;
    expect(measured).toBe(5); // the baseline, three variants, and the variant the last GPU failed on (recorded as failed)
    const lost = session.events().find((e) => e.type === 'result' && /the last GPU of the pool failed while measuring it/.test(e.result.failure?.reason ?? ''));
    expect(lost).toBeDefined();
    expect(session.status()?.status).toBe('stopped');
    const unmeasured = session.variants().filter((v) => !session.resultOf(v.id));
    expect(unmeasured.length).toBeGreaterThan(0);
    const sessionDir = session.dir;
    session.close();
    // Resume on two healthy simulated GPUs: everything journaled is kept, the rest is measured.
    const again = openSession(sessionDir);
    const healthy = pool({ count: 2, latencyMs: [2] });
    const r = await runPoolLoop({ session: again, lanes: healthy.lanes, strategy: healthy.strategy, budget: 25 });
    expect(r.evaluated).toBe(25);
    for (const v of unmeasured) expect(again.resultOf(v.id)).toBeDefined();
    expect(again.events().filter((e) => e.type === 'result')).toHaveLength(26);
    again.close();
  });

  it('asks the strategy for batches that fill every GPU (an asynchronous policy: several requests at once)', async () => {
    const { lanes, strategy } = pool({ count: 3, latencyMs: [5] }, 'random');
    const asked: number[] = [];
    const asyncPolicy: Strategy = {
      name: 'async-spy',
      propose: () => [],
      async proposeAsync(n) {
        asked.push(n);
        await new Promise((r) => setTimeout(r, 5)); // a model answering
        return strategy.propose(n);
      },
      observe: (spec, r) => strategy.observe?.(spec, r),
    };
    const session = newSession();
    const r = await runPoolLoop({ session, lanes, strategy: asyncPolicy, budget: 12 });
    expect(r.evaluated).toBe(12);
    expect(asked[0]).toBe(3); // one per GPU (a replay builds nothing ahead)
    expect(Math.max(...asked)).toBeGreaterThan(1);
    session.close();
  });

  it('refuses GPUs of different models in one pool, naming them', () => {
    const { lanes } = pool({ count: 2 });
    const other: Lane = { ...lanes[1], gpu: { ...lanes[1].gpu, name: 'NVIDIA A100', model: 'a100' } };
    expect(() => checkOneModel([lanes[0], other])).toThrow(PoolError);
    expect(() => checkOneModel([lanes[0], other])).toThrow(/different models .*1: NVIDIA A100/);
  });
});

describe('choosing the GPUs of a pool', () => {
  it('parses --gpus and its simulated-fault option, naming the option on bad input', () => {
    expect(parseGpuPool('all')).toBe('all');
    expect(parseGpuPool('0,1,3')).toEqual([0, 1, 3]);
    expect(() => parseGpuPool('0,x')).toThrow(/--gpus 0,x: give "all" or GPU indices/);
    expect(() => parseGpuPool('1,1')).toThrow(/named twice/);
    expect(parseSimulatedFault('1:5:hang', 2)).toEqual({ gpu: 1, at: 5, kind: 'hang' });
    expect(parseSimulatedFault('0:3', 2)).toEqual({ gpu: 0, at: 3, kind: 'fail' });
    expect(() => parseSimulatedFault('2:1', 2)).toThrow(/there are 2 simulated GPUs/);
  });

  it('refuses a host whose GPUs are of different models unless they are named apart, and groups them by model when asked', async () => {
    const smi = join(dir, 'fake-smi');
    writeFileSync(smi, `#!/bin/sh\ncat <<'CSV'\n0, NVIDIA H200, GPU-aaaa, 9.0, 143771, 1980, 3201, 1980, 3201, 570.86.15\n1, NVIDIA A100-SXM4-80GB, GPU-bbbb, 8.0, 81920, 1410, 1593, 1410, 1593, 570.86.15\n2, NVIDIA H200, GPU-cccc, 9.0, 143771, 1980, 3201, 1980, 3201, 570.86.15\nCSV\n`);
    chmodSync(smi, 0o755);
    const env = { ...process.env, KERNELDUEL_NVIDIA_SMI: smi };
    const saved = process.env.KERNELDUEL_NVIDIA_SMI;
    process.env.KERNELDUEL_NVIDIA_SMI = smi;
    try {
      await expect(pickGpus('all', { env })).rejects.toThrow(/different models .*1: NVIDIA A100.*e\.g\. --gpus 0,2/);
      expect((await pickGpus([0, 2], { env })).map((g) => g.uuid)).toEqual(['GPU-aaaa', 'GPU-cccc']);
      await expect(pickGpus([3], { env })).rejects.toThrow(/no usable GPU 3/);
      await expect(pickGpus([0, 2], { env, model: 'NVIDIA A100-SXM4-80GB' })).rejects.toThrow(/the session measured on NVIDIA A100/);
      // Asked for (--mixed-models): one group, and so one session and one best, per model.
      expect(await gpuGroupsByModel('all', { env })).toEqual([{ name: 'NVIDIA H200', indices: [0, 2] }, { name: 'NVIDIA A100-SXM4-80GB', indices: [1] }]);
      await expect(gpuGroupsByModel([1, 5], { env })).rejects.toThrow(/no usable GPU 5/);
    } finally {
      if (saved === undefined) delete process.env.KERNELDUEL_NVIDIA_SMI;
      else process.env.KERNELDUEL_NVIDIA_SMI = saved;
    }
  });
});

describe('resuming a pool session', () => {
  const meta = (backend: Record<string, unknown>) => ({
    id: '20261201-000000-aaaaaa', task: { name: 'softmax', dir: '/t/softmax', manifestHash: 'h' }, gpu: { name: 'NVIDIA H200', uuid: 'GPU-aaaa', arch: 'sm_90' },
    settings: { strategy: 'contrastive', budget: 10, seed: 1, backend }, createdAt: '2026-12-01T00:00:00Z', kernelduelVersion: '0.1.0',
  });
  it('continues on a pool of the session\'s GPU model (every such GPU, or those --gpus names); a one-GPU session stays on its GPU', () => {
    const pooled = resumeRunOptions(meta({ kind: 'gpu', arch: 'sm_90', gpus: [{ index: 0, uuid: 'GPU-aaaa', name: 'NVIDIA H200' }, { index: 1, uuid: 'GPU-bbbb', name: 'NVIDIA H200' }] }), {});
    expect(pooled.backend).toMatchObject({ kind: 'gpu', gpus: 'all', gpuName: 'NVIDIA H200' });
    expect(resumeRunOptions(meta({ kind: 'gpu', arch: 'sm_90' }), { gpus: [1] }).backend).toMatchObject({ gpus: [1], gpuName: 'NVIDIA H200' });
    expect(resumeRunOptions(meta({ kind: 'gpu', arch: 'sm_90' }), {}).backend).toMatchObject({ uuid: 'GPU-aaaa' });
    expect(() => resumeRunOptions(meta({ kind: 'replay', recording: '/r.json' }), { gpus: 'all' })).toThrow(/--gpus: the session is a REPLAY/);
    expect(resumeRunOptions(meta({ kind: 'replay', recording: '/r.json', simulateGpus: { count: 3 } }), {}).backend).toMatchObject({ kind: 'replay', simulateGpus: { count: 3 } });
  });
});

describe('a pool run through the run lifecycle (worker thread)', () => {
  it('streams per-GPU activity, labels the run SIMULATED and survives an injected GPU failure', async () => {
    const h = startOptimisation({
      task: 'softmax', strategy: 'contrastive', budget: 24, seed: 2, sessionsRoot: join(dir, 'sessions'),
      backend: { kind: 'replay', recording, simulateGpus: { count: 2, latencyMs: [3, 6], fault: { gpu: 1, at: 4, kind: 'fail' } } },
    });
    const msgs: OptimisationMessage[] = [];
    for await (const m of h.events) msgs.push(m);
    expect(await h.done).toEqual({ evaluated: 24 });
    const started = msgs[0];
    if (started.type !== 'started') throw new Error('no start');
    expect(started.label).toMatch(/REPLAY .* on 2 SIMULATED GPUs/);
    const gpuEvents = msgs.flatMap((m) => (m.type === 'event' && m.event.type === 'gpus' ? [m.event] : []));
    const last: GpuActivity[] = gpuEvents[gpuEvents.length - 1].gpus;
    expect(last.map((g) => [g.id, g.state, g.simulated])).toEqual([['sim0', 'idle', true], ['sim1', 'removed', true]]);
    expect(gpuEvents.filter((e) => e.message)).toHaveLength(1);
    const s = openSession(started.sessionDir);
    expect((s.meta.settings.backend as { simulateGpus?: { count: number } }).simulateGpus?.count).toBe(2);
    expect(s.status()?.status).toBe('finished');
    s.close();
  }, 30_000);
});
