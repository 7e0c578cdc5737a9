// The replay backend: recorded spaces are validated, answers are always labelled replay, failures
// come back as recorded, unknown variants are constraint failures, duels pair resampled recorded
// samples (seeded), and the optimisation loop runs unchanged on a replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadTask, type Task } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { loadSpace, RecordedSpaceSchema, ReplayMeasurer, variantKey, type RecordedSpace } from '../main/engine/measure/replay.js';
import { duelDecidedByMedians, runLoop, type LoopEvent } from '../main/engine/search/loop.js';
import { randomSearch } from '../main/engine/search/random.js';
import { contrastiveSearch } from '../main/engine/search/contrastive.js';
import { simulate } from '../main/engine/search/simulate.js';
import { ActionSpace } from '../main/engine/search/actions.js';
import { configKey } from '../main/engine/task/space.js';
import { createSession, newSessionId, openSession } from '../main/engine/session/store.js';
import { syntheticSpace, SYNTHETIC_LABEL } from './fixtures/spaces/synthetic.js';

let dir: string;
let task: Task;
let space: RecordedSpace;
let file: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kd-replay-'));
  task = loadTask(join(builtinTasksDir(), 'softmax'));
  space = syntheticSpace(task, { seed: 3, failRate: 0.05 });
  file = join(dir, 'softmax.json');
  writeFileSync(file, JSON.stringify(space));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const meta = (t: Task) => ({ id: newSessionId(), task: { name: t.manifest.name, dir: t.dir, manifestHash: t.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: '0.1.0' });

describe('recorded space format', () => {
  it('a synthetic fixture says it is synthetic', () => {
    expect(space.measured).toBe(SYNTHETIC_LABEL);
    expect(space.measured).not.toBe('real GPU');
  });
  it('loadSpace validates and names the bad field', () => {
    expect(loadSpace(file).entries.length).toBe(space.entries.length);
    const bad = { ...space, entries: [{ ...space.entries[0], medianMs: null }] };
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad));
    expect(() => loadSpace(join(dir, 'bad.json'))).toThrow(/entries\.0.*either a medianMs or a failure/);
    expect(RecordedSpaceSchema.safeParse({ ...space, format: 'other/1' }).success).toBe(false);
  });
  it("another tool's file (a Kernel Tuner cache, gzipped or not; a T4 results file) is refused with the import command that brings it in", () => {
    const kt = { device_name: 'X', kernel_name: 'k', problem_size: [1], tune_params_keys: ['a'], tune_params: { a: [1, 2] }, objective: 'time', cache: {} };
    writeFileSync(join(dir, 'kt.json'), JSON.stringify(kt));
    writeFileSync(join(dir, 'kt.json.gz'), gzipSync(JSON.stringify(kt)));
    writeFileSync(join(dir, 't4.json'), JSON.stringify({ schema_version: '1.0.0', results: [] }));
    expect(() => loadSpace(join(dir, 'kt.json'))).toThrow(/kt\.json is a Kernel Tuner cache, not a KernelDuel recorded space: import it first with `kernelduel import kernel-tuner .*kt\.json`/);
    expect(() => loadSpace(join(dir, 'kt.json.gz'))).toThrow(/kt\.json\.gz is a Kernel Tuner cache, not a KernelDuel recorded space: import it first with `kernelduel import kernel-tuner /);
    // A recording compressed by its user is read as it is.
    writeFileSync(join(dir, 'space.json.gz'), gzipSync(JSON.stringify(space)));
    expect(loadSpace(join(dir, 'space.json.gz')).entries.length).toBe(space.entries.length);
    expect(() => loadSpace(join(dir, 't4.json'))).toThrow(/t4\.json is a T4 results file, not a KernelDuel recorded space: import it first with `kernelduel import t4 /);
    expect(() => loadSpace(join(dir, 'missing.json'))).toThrow(/cannot read the recorded space .*missing\.json: ENOENT/);
  });
  it('variantKey ignores flag defaults and transform order', () => {
    expect(variantKey({ config: { A: 1 }, flags: {} })).toBe(variantKey({ config: { A: 1 }, flags: { opt: 3, fastMath: false } }));
    expect(variantKey({ config: { A: 1 }, transforms: ['b', 'a'] })).toBe(variantKey({ config: { A: 1 }, transforms: ['a', 'b'] }));
    expect(variantKey({ config: { A: 1 }, flags: { maxrregcount: 64 } })).not.toBe(variantKey({ config: { A: 1 } }));
  });
});

describe('ReplayMeasurer', () => {
  it('answers a recorded variant with its recorded timing, labelled replay', async () => {
    const m = ReplayMeasurer.fromFile(task, file);
    const e = space.entries.find((x) => x.medianMs !== null)!;
    const r = await m.evaluate({ source: task.baselineSource, config: e.config, flags: e.flags });
    expect(r.source).toEqual({ kind: 'replay', recording: file });
    expect(r.failure).toBeUndefined();
    expect(r.timing![0].medianMs).toBe(e.medianMs);
    expect(r.timing![0].samplesMs).toEqual(e.samplesMs);
    expect(r.check!.ok).toBe(true);
    expect(m.taskHashMatches).toBe(true);
  });
  it('replays recorded failures as recorded, still labelled replay', async () => {
    const m = new ReplayMeasurer(task, space);
    for (const kind of ['compile', 'correctness', 'runtime'] as const) {
      const e = space.entries.find((x) => x.failure?.kind === kind)!;
      const r = await m.evaluate({ source: '', config: e.config, flags: e.flags });
      expect(r.failure?.kind).toBe(kind);
      expect(r.source.kind).toBe('replay');
      expect(r.timing).toBeUndefined();
      expect(r.build.ok).toBe(kind !== 'compile');
    }
  });
  it('an unrecorded variant is a constraints failure "not in the recorded space"', async () => {
    const m = new ReplayMeasurer(task, space);
    const r = await m.evaluate({ source: '', config: { BLOCK: 3 }, flags: {} });
    expect(r.failure?.kind).toBe('constraints');
    expect(r.failure?.reason).toMatch(/not in the recorded space/);
    expect(r.source.kind).toBe('replay');
    const e = space.entries.find((x) => x.medianMs !== null)!;
    const r2 = await m.evaluate({ source: '', config: e.config, flags: { opt: 3, maxrregcount: 32 } });
    expect(r2.failure?.kind).toBe('constraints');
  });
  it('duels pair resampled samples: clear gaps are decided, a variant against itself never is, the seed makes them reproducible', async () => {
    const ok = space.entries.filter((x) => x.medianMs !== null).sort((a, b) => a.medianMs! - b.medianMs!);
    const fast = ok[0];
    const slow = ok[ok.length - 1];
    const m1 = new ReplayMeasurer(task, space, { seed: 5 });
    const d = await m1.duel({ source: '', config: fast.config, flags: fast.flags }, { source: '', config: slow.config, flags: slow.flags });
    expect(d.duels![0].verdict).toBe('faster');
    expect(d.duels![0].ratio).toBeGreaterThan(1.5);
    const d2 = await m1.duel({ source: '', config: slow.config, flags: slow.flags }, { source: '', config: fast.config, flags: fast.flags });
    expect(d2.duels![0].verdict).toBe('slower');
    const again = await new ReplayMeasurer(task, space, { seed: 5 }).duel({ source: '', config: fast.config, flags: fast.flags }, { source: '', config: slow.config, flags: slow.flags });
    expect(again.duels![0].aMs).toEqual(d.duels![0].aMs);
    const self = await m1.duel({ source: '', config: fast.config, flags: fast.flags }, { source: '', config: fast.config, flags: fast.flags });
    expect(['same', 'unsure']).toContain(self.duels![0].verdict);
    const failed = space.entries.find((x) => x.failure)!;
    expect((await m1.duel({ source: '', config: failed.config, flags: failed.flags }, { source: '', config: fast.config, flags: fast.flags })).failure?.kind).toBe(failed.failure!.kind);
  });
});

describe('the loop on a replay', () => {
  it('runs random search on a Measurer without builds; every result is labelled replay', async () => {
    const s = createSession(join(dir, 'sessions'), meta(task));
    const m = ReplayMeasurer.fromFile(task, file);
    const { evaluated } = await runLoop({ session: s, evaluator: m, strategy: randomSearch(task, 1), budget: 12 });
    expect(evaluated).toBe(12);
    const results = s.events().filter((e) => e.type === 'result');
    expect(results).toHaveLength(13);
    for (const r of results) if (r.type === 'result') expect(r.result.source).toEqual({ kind: 'replay', recording: file });
    expect(m.evaluations).toBe(13);
    s.close();
  });
  it('--duel-skip: no duel for a variant clearly slower than its opponent (intervals apart), every other duel still runs', async () => {
    const decided = (sess: ReturnType<typeof createSession>, skip: number) =>
      sess.events().filter((e) => e.type === 'duel' && duelDecidedByMedians(sess.resultOf(e.a)!, sess.resultOf(e.b), skip)).length;
    const run = async (duelSkip?: number) => {
      const s = createSession(join(dir, `sessions-skip-${duelSkip ?? 0}`), meta(task));
      const m = new ReplayMeasurer(task, file, { seed: 2 });
      const strategy = contrastiveSearch(ActionSpace.fromRecording(task, m), 1);
      // The strategy is told each duel left out (it keeps the medians' pair with the duels' priority).
      const told: Array<[string, string]> = [];
      const orig = strategy.observeDuelSkipped!.bind(strategy);
      strategy.observeDuelSkipped = (a, b) => {
        told.push([a.id, b.id]);
        orig(a, b);
      };
      const { evaluated } = await runLoop({ session: s, evaluator: m, strategy, budget: 30, ...(duelSkip ? { duelSkip } : {}) });
      return { s, evaluated, told, duels: s.events().filter((e) => e.type === 'duel').length };
    };
    const all = await run();
    const skipped = await run(0.05);
    expect(skipped.evaluated).toBe(30);
    // Without the option some duels could only have said "slower"; with it none of those ran, and fewer duels ran in all.
    expect(decided(all.s, 0.05)).toBeGreaterThan(0);
    for (const d of all.s.events()) if (d.type === 'duel' && duelDecidedByMedians(all.s.resultOf(d.a)!, all.s.resultOf(d.b), 0.05)) expect(d.result.verdict).toBe('slower');
    expect(decided(skipped.s, 0.05)).toBe(0);
    expect(skipped.duels).toBeGreaterThan(0);
    expect(skipped.duels).toBeLessThan(all.duels);
    expect(all.told).toHaveLength(0);
    expect(skipped.told.length).toBeGreaterThan(0);
    for (const [a, b] of skipped.told) expect(duelDecidedByMedians(skipped.s.resultOf(a)!, skipped.s.resultOf(b), 0.05)).toBe(true);
    all.s.close();
    skipped.s.close();
    // The in-memory run of the benchmarks (simulate) follows the same rule.
    const sim = async (duelSkip?: number) => {
      const m = new ReplayMeasurer(task, file, { seed: 2 });
      return simulate(contrastiveSearch(ActionSpace.fromRecording(task, m), 1), m, 30, duelSkip ? { duelSkip } : {});
    };
    const [simAll, simSkip] = [await sim(), await sim(0.05)];
    expect(simSkip.steps).toHaveLength(30);
    expect(simSkip.duels.length).toBeGreaterThan(0);
    expect(simSkip.duels.length).toBeLessThan(simAll.duels.length);
  });
  it('journals and streams the duels a strategy asks for, and model accuracy events; a resumed run replays them to the strategy', async () => {
    const root = join(dir, 'sessions2');
    const s = createSession(root, meta(task));
    const m = new ReplayMeasurer(task, file, { seed: 2 });
    const events: LoopEvent[] = [];
    await runLoop({ session: s, evaluator: m, strategy: contrastiveSearch(ActionSpace.fromRecording(task, m), 1), budget: 25, onEvent: (e) => events.push(e) });
    const duels = s.events().filter((e) => e.type === 'duel');
    expect(duels.length).toBeGreaterThan(10);
    expect(events.filter((e) => e.type === 'duel')).toHaveLength(duels.length);
    for (const d of duels) if (d.type === 'duel') expect(s.variant(d.a) && s.variant(d.b)).toBeTruthy();
    const model = events.filter((e) => e.type === 'model');
    expect(model.length).toBeGreaterThan(0);
    s.close();
    // Resume with a larger budget: the new strategy is told the journaled duels.
    const s2 = openSession(root, s.id);
    const strat = contrastiveSearch(ActionSpace.fromRecording(task, m), 1);
    let told = 0;
    const orig = strat.observeDuel!.bind(strat);
    strat.observeDuel = (a, b, d) => {
      told++;
      orig(a, b, d);
    };
    await runLoop({ session: s2, evaluator: m, strategy: strat, budget: 27 });
    expect(told).toBeGreaterThanOrEqual(duels.length);
    expect(s2.events().filter((e) => e.type === 'result')).toHaveLength(28);
    s2.close();
  });
});

describe('a recording made before the task gained a tunable', () => {
  it('stands for the new tunable at its default: replays answer the default; it is no dimension of the action space, and its proposals carry the default', () => {
    const t = loadTask(join(builtinTasksDir(), 'layernorm'));
    const defaults = t.manifest.defaults ?? {};
    const added = Object.keys(t.manifest.tunables ?? {}).find((k) => k !== Object.keys(t.manifest.tunables ?? {})[0])!;
    const full = syntheticSpace(t, { seed: 2 });
    // The same recording as if `added` did not exist yet: its default configurations, without the name.
    const old: RecordedSpace = { ...full, entries: full.entries.filter((e) => e.config[added] === defaults[added]).map((e) => ({ ...e, config: Object.fromEntries(Object.entries(e.config).filter(([k]) => k !== added)) })) };
    const m = new ReplayMeasurer(t, old, { seed: 1 });
    expect(m.predates).toEqual([added]);
    expect(m.has({ config: { ...defaults } })).toBe(true);
    const space = ActionSpace.fromRecording(t, m);
    expect(space.dims.find((d) => d.name === added)).toBeUndefined();
    const b = space.baseline();
    expect(b).not.toBeNull();
    expect(space.decode(b!).config[added]).toBe(defaults[added]);
    // a configuration with the new tunable off its default is outside the recording's space
    const other = (t.manifest.tunables ?? {})[added].find((v) => v !== defaults[added])!;
    expect(space.encode({ config: { ...defaults, [added]: other } })).toBeNull();
    expect(new ReplayMeasurer(t, full, { seed: 1 }).predates).toEqual([]);
  });

  it('a tunable added later changes no strategy\'s random stream on the old recording', () => {
    const t = loadTask(join(builtinTasksDir(), 'layernorm'));
    const tunables = t.manifest.tunables ?? {};
    const added = 'STATS';
    expect(Object.keys(tunables)).toContain(added);
    const defaults = t.manifest.defaults ?? {};
    const full = syntheticSpace(t, { seed: 2 });
    const old: RecordedSpace = { ...full, entries: full.entries.filter((e) => e.config[added] === defaults[added]).map((e) => ({ ...e, config: Object.fromEntries(Object.entries(e.config).filter(([k]) => k !== added)) })) };
    // the task as it was before `added` existed: without it, its default and the restrictions naming it
    const drop = <V,>(o: Record<string, V>): Record<string, V> => Object.fromEntries(Object.entries(o).filter(([k]) => k !== added));
    const before: Task = { ...t, manifest: { ...t.manifest, tunables: drop(tunables), defaults: drop(defaults), restrictions: (t.manifest.restrictions ?? []).filter((r) => !new RegExp(`\\b${added}\\b`).test(r)) } };
    const order = (task: Task): string[] => {
      const m = new ReplayMeasurer(task, old, { seed: 3 });
      const space = ActionSpace.fromRecording(task, m);
      return randomSearch(task, 5, space).propose(12).map((p) => configKey(drop(p.config)));
    };
    const now = order(t);
    expect(now).toHaveLength(12);
    expect(now).toEqual(order(before));
  });
});
