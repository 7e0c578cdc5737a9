// The workbench's API on a recorded space without kernel source (a small synthetic Kernel Tuner
// cache imported into $KERNELDUEL_HOME/spaces): it is listed as a REPLAY-only task, its runs replay
// its recording and open like any session, and what needs source (files, builds, GPU runs) is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { decodeSession, RECORDED_TABLE_ROWS, type ApiEvent, type RunState } from '../main/contract/api.js';
import { recordedTable } from '../main/core/space-tasks.js';
import { kernelTunerCacheToSpace, parseKernelTunerCache } from '../main/engine/interop/kernel-tuner.js';
import { writeJsonFile } from '../main/engine/interop/files.js';
import { toyKernelTunerCache } from './fixtures/spaces/kernel-tuner-toy.js';

let home: string;
let service: ApiService;
let recording: string;
const events: ApiEvent[] = [];

/** SYNTHETIC (see the fixture): a 4 x 4 space with a formula for time and one failure. */
const syntheticCache = (): string => toyKernelTunerCache({ deviceName: 'SYNTHETIC GPU (test fixture)', failedCorner: true });

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-space-'));
  const { space } = kernelTunerCacheToSpace(parseKernelTunerCache(syntheticCache(), 'toy.json'), { name: 'toy-space', file: 'toy.json', sha256: '0', command: 'test', importedAt: '2026-12-01T00:00:00.000Z' });
  recording = path.join(home, 'spaces', 'synthetic-gpu', 'toy-space.json');
  writeJsonFile(recording, space);
  service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home } });
  service.on((e) => events.push(e));
});
afterAll(async () => {
  await service.stopAll();
  fs.rmSync(home, { recursive: true, force: true });
});

const until = async (what: () => boolean, ms = 30_000): Promise<void> => {
  const t0 = Date.now();
  while (!what()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('a recorded space without kernel source in the workbench', () => {
  it('is listed as a REPLAY-only task with its tunables and its recording', async () => {
    const h = service.handlers();
    const t = (await h['tasks.list']({})).find((x) => x.name === 'toy-space');
    expect(t).toBeDefined();
    expect(t!.id).toMatch(/^space:/);
    expect(t!.replayOnly).toMatch(/^REPLAY only: recorded by Kernel Tuner on SYNTHETIC GPU/);
    expect(t!.recordings).toEqual([recording]);
    expect(t!.spaceSize).toBe(16);
    expect(t!.tunables).toEqual({ block_size_x: [16, 32, 64, 128], block_size_y: [1, 2, 4, 8] });
    const d = await h['tasks.get']({ taskId: t!.id });
    expect(d.readOnly).toBe(true);
    expect(d.kernel).toBe('');
    expect(d.defaults).toEqual({ block_size_x: 16, block_size_y: 1 });
    // What the recording holds, fastest first (the fixture's formula: 64 x 2 fastest, 16 x 1 the baseline at 2 ms).
    const r = d.recorded!;
    expect([r.gpu, r.configurations, r.failed, r.time]).toEqual(['SYNTHETIC GPU (test fixture)', 16, 1, 'mean (Kernel Tuner time)']);
    expect(r.fastest).toHaveLength(15);
    expect(r.fastest[0]).toMatchObject({ config: { block_size_x: 64, block_size_y: 2 }, ofBest: 1, baseline: false });
    expect(r.fastest.map((x) => x.medianMs)).toEqual([...r.fastest.map((x) => x.medianMs)].sort((a, b) => a - b));
    const base = r.fastest.find((x) => x.baseline)!;
    expect(base.config).toEqual({ block_size_x: 16, block_size_y: 1 });
    expect(base.ofBest).toBeCloseTo(r.fastest[0].medianMs / base.medianMs);
    expect(r.baseline).toBeNull(); // it is among the rows shown
  });

  it('a recording larger than the table shows its fastest rows and the baseline\'s row with its rank', () => {
    // SYNTHETIC: 6 x 6 configurations, time growing with both values, so the baseline (the smallest) is the slowest.
    const xs = [16, 32, 48, 64, 80, 96];
    const cache: Record<string, unknown> = {};
    for (const x of xs) for (const y of xs) cache[`${x},${y}`] = { block_size_x: x, block_size_y: y, time: 10 - x / 100 - y / 1000 };
    const text = JSON.stringify({ device_name: 'SYNTHETIC', kernel_name: 'k', problem_size: [1], tune_params_keys: ['block_size_x', 'block_size_y'], tune_params: { block_size_x: xs, block_size_y: xs }, objective: 'time', cache });
    const { space } = kernelTunerCacheToSpace(parseKernelTunerCache(text, 'big.json'), { name: 'big', file: 'big.json', sha256: '0', command: 'test', importedAt: '2026-12-01T00:00:00.000Z' });
    const t = recordedTable(space);
    expect(t.fastest).toHaveLength(RECORDED_TABLE_ROWS);
    expect(t.fastest[0].config).toEqual({ block_size_x: 96, block_size_y: 96 });
    expect(t.fastest.some((x) => x.baseline)).toBe(false);
    expect(t.baseline).toMatchObject({ config: { block_size_x: 16, block_size_y: 16 }, rank: 36 });
  });

  it('refuses what needs kernel source, saying it can only be replayed', async () => {
    const h = service.handlers();
    const id = (await h['tasks.list']({})).find((x) => x.name === 'toy-space')!.id;
    // Handlers answer synchronously or with a promise; either way the call fails.
    const call = (f: () => unknown): Promise<unknown> => Promise.resolve().then(f);
    await expect(call(() => h['tasks.readFile']({ taskId: id, file: 'kernel' }))).rejects.toThrow(/no task files/);
    await expect(call(() => h['eval.build']({ taskId: id, source: '' }))).rejects.toThrow(/can only be replayed/);
    await expect(call(() => h['runs.start']({ task: id, strategy: 'random', budget: 3, gpu: null }))).rejects.toThrow(/can only be replayed/);
  });

  it('a contrastive run replays the recording; the session, its plots and the baseline curves open like any replay', async () => {
    const h = service.handlers();
    const id = (await h['tasks.list']({})).find((x) => x.name === 'toy-space')!.id;
    const st = (await h['runs.start']({ task: id, strategy: 'contrastive', budget: 12, gpu: null, recording })) as RunState;
    expect(st.replay).toBe(true);
    const sid = st.sessionId;
    const last = (): RunState | undefined => events.filter((e): e is Extract<ApiEvent, { type: 'run.state' }> => e.type === 'run.state' && e.state.sessionId === sid).at(-1)?.state;
    await until(() => last()?.phase === 'finished');
    const d = decodeSession(await h['sessions.get']({ id: sid }));
    expect(d.replay?.recording).toBe(recording);
    // The baseline and 12 proposals: 13 of the 16 recorded configurations, each once; the failed one (if visited) is a failure, not a time.
    const done = d.variants.filter((v) => v.status !== 'pending');
    // What measured each variant is in its detail (variants.get), not in the session's compact rows.
    const sources = await Promise.all(done.map(async (v) => (await h['variants.get']({ sessionId: sid, variantId: v.id })).row.source));
    expect(done).toHaveLength(13);
    expect(sources.every((x) => x === 'replay')).toBe(true);
    expect(new Set(done.map((v) => JSON.stringify(v.config))).size).toBe(13);
    expect(d.summary.gpu).toMatch(/^REPLAY SYNTHETIC GPU/);
    const b = await h['sessions.baselines']({ id: sid });
    expect(b.curves.map((c) => c.name)).toEqual(['random', 'anneal', 'genetic']);
    expect(b.curves.every((c) => c.points.length === 12)).toBe(true);
  }, 60_000);
});

describe('spaces.import: another tuner\'s file uploaded from the workbench', () => {
  const upload = (text: string, gz = false): string => (gz ? gzipSync(Buffer.from(text)) : Buffer.from(text)).toString('base64');
  const call = (f: () => unknown): Promise<unknown> => Promise.resolve().then(f);

  it('writes a gzipped Kernel Tuner cache as a REPLAY-only task where the task list finds it, and it opens', async () => {
    const h = service.handlers();
    const r = await h['spaces.import']({ fileName: 'My Cache.json.gz', contentBase64: upload(syntheticCache(), true) });
    expect(r).toMatchObject({ name: 'my-cache', format: 'kernel-tuner cache', gpu: 'SYNTHETIC GPU (test fixture)', configurations: 16, failed: 1, tunables: 2, replaced: false });
    expect(r.path).toBe(path.join(home, 'spaces', 'synthetic-gpu-test-fixture', 'my-cache.json'));
    expect(fs.existsSync(r.path)).toBe(true);
    const t = (await h['tasks.list']({})).find((x) => x.id === r.taskId);
    expect(t).toMatchObject({ name: 'my-cache', spaceSize: 16, recordings: [r.path] });
    expect(t!.replayOnly).toMatch(/^REPLAY only: recorded by Kernel Tuner on SYNTHETIC GPU/);
    expect((await h['tasks.get']({ taskId: r.taskId })).name).toBe('my-cache');
  });

  it('refuses to replace a space of that name unless asked, naming the file; with replace it does', async () => {
    const h = service.handlers();
    await expect(call(() => h['spaces.import']({ fileName: 'my-cache.json', contentBase64: upload(syntheticCache()) }))).rejects.toThrow(/a recorded space named my-cache already exists \(.*my-cache\.json\): give another name, or replace it/);
    const r = await h['spaces.import']({ fileName: 'my-cache.json', contentBase64: upload(syntheticCache()), replace: true });
    expect(r.replaced).toBe(true);
    const other = await h['spaces.import']({ fileName: 'my-cache.json', contentBase64: upload(syntheticCache()), name: 'other-name' });
    expect(other).toMatchObject({ name: 'other-name', replaced: false });
  });

  it('a file that is no recording, or a built-in task\'s name, fails naming the file or the field', async () => {
    const h = service.handlers();
    await expect(call(() => h['spaces.import']({ fileName: 'notes.json', contentBase64: upload('{"hello": 1}') }))).rejects.toThrow(/notes\.json/);
    await expect(call(() => h['spaces.import']({ fileName: 'softmax.json', contentBase64: upload(syntheticCache()) }))).rejects.toThrow(/^name softmax: that is a built-in task's name/);
    await expect(call(() => h['spaces.import']({ fileName: 'broken.json.gz', contentBase64: Buffer.from([0x1f, 0x8b, 1, 2, 3]).toString('base64') }))).rejects.toThrow(/broken\.json\.gz looks gzip-compressed but does not decompress/);
  });
});
