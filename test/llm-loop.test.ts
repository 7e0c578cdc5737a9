// The LLM policy in the real optimisation loop, against a local fake model server: compile-only
// with the real Evaluator and nvcc (no GPU), and on a scripted measurer for rewards, re-measuring,
// duels and the mixed (LLM + tuning) strategy. Also the dataset export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { createSession, type Session } from '../main/engine/session/store.js';
import { runLoop } from '../main/engine/search/loop.js';
import type { Measurer, MeasuredSpec } from '../main/engine/measure/measurer.js';
import { Evaluator } from '../main/engine/measure/evaluate.js';
import { NO_NVCC, NVCC } from './fixtures/toolchain.js';
import { LlmProvider } from '../main/engine/llm/provider.js';
import { LlmStrategy, mixedStrategy, remeasureIfSuspicious } from '../main/engine/search/llm.js';
import { llmInfoOf } from '../main/engine/llm/variant-info.js';
import { buildDataset, writeDataset } from '../main/engine/llm/dataset.js';
import type { DuelResult, EvalResult, VariantRecord } from '../main/engine/base/types.js';
import { startFakeServer, type FakeServer } from './fixtures/llm/server.js';
import { CHEATS, GOOD_ANSWER, GOOD_ANSWER_2, GOOD_CODE, GOOD_CODE_2, MALFORMED_ANSWER, NO_ENTRY_ANSWER, answer } from './fixtures/llm/answers.js';

const task = loadTask(join(builtinTasksDir(), 'softmax'));
const KEY = 'sk-loop-SECRET-987654321';
let srv: FakeServer;
let root: string;
beforeAll(async () => {
  srv = await startFakeServer();
  root = mkdtempSync(join(tmpdir(), 'kd-llm-loop-'));
});
afterAll(async () => {
  await srv.close();
  rmSync(root, { recursive: true, force: true });
});

let sessionNo = 0;
function newSession(): Session {
  return createSession(join(root, 'sessions'), {
    id: `s${++sessionNo}`, task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash }, gpu: null, settings: {}, createdAt: new Date().toISOString(), kernelduelVersion: 'test',
  });
}
// A generous timeout: CI machines run other suites beside this one (a 5 s limit timed out there).
const provider = (): LlmProvider => new LlmProvider({ baseURL: srv.url, model: 'test-model', retries: 0, requestTimeoutMs: 60_000 }, { env: { KERNELDUEL_LLM_API_KEY: KEY } });

describe.skipIf(NO_NVCC)('LLM policy, compile-only with the real Evaluator', () => {
  it('records the three parts, builds the good answer and rejects the rest with reasons', async () => {
    const replies = [GOOD_ANSWER, MALFORMED_ANSWER, NO_ENTRY_ANSWER, answer(CHEATS[0].code)];
    let n = 0;
    srv.handler = () => ({ type: 'ok', text: replies[n++ % replies.length], chunk: 200 });
    const evaluator = new Evaluator({ task, toolchain: NVCC!, gpu: null, workRoot: join(root, 'work') });
    const session = newSession();
    const deltas = new Map<string, string>();
    const strategy = new LlmStrategy({ task, session, provider: provider(), seed: 1, onDelta: (e) => deltas.set(e.answerId, (deltas.get(e.answerId) ?? '') + e.delta) });
    const preview = strategy.previewPrompt();
    const { evaluated } = await runLoop({ session, evaluator, strategy, budget: 4 });
    expect(evaluated).toBe(4);
    const llm = session.variants().filter((v) => v.origin === 'llm');
    expect(llm).toHaveLength(4);
    const infos = llm.map((v) => llmInfoOf(v)!);
    expect(new Set(infos.map((i) => i.promptId)).size).toBe(1); // one GRPO group
    expect(infos[0].prompt[1].content).toContain('void softmax(const float* x, float* y, int rows, int cols)');
    const [good, malformed, noEntry, cheat] = llm;
    const goodR = session.resultOf(good.id)!;
    expect(goodR.build.ok).toBe(true);
    expect(goodR.compileOnly).toBe(true);
    expect(good.source.trim()).toBe(GOOD_CODE.trim());
    expect(llmInfoOf(good)).toMatchObject({ analysis: expect.stringMatching(/uncoalesced/), design: expect.stringMatching(/One warp per row/), model: 'test-model' });
    expect(session.resultOf(malformed.id)!.failure).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/no ```cuda code block/) });
    expect(session.resultOf(noEntry.id)!.failure!.reason).toMatch(/does not define the entry point softmax/);
    expect(session.resultOf(cheat.id)!.failure!.reason).toMatch(/^screening: .*cudaStreamCreateWithFlags is not allowed/);
    // Streaming reached the caller, whole.
    expect(deltas.get(infos[0].answerId)).toBe(GOOD_ANSWER);
    // The preview was the prompt that went out.
    expect(preview.promptId).toBe(infos[0].promptId);
    // Rewards: null while unmeasured (compile-only), 0 for failures.
    expect(strategy.records().map((r) => r.reward)).toEqual([null, 0, 0, 0]);
    // Nothing secret in the journal.
    expect(readFileSync(join(session.dir, 'journal.jsonl'), 'utf8')).not.toContain(KEY);
    // The dataset: one group of four, rewards as above.
    const out = join(root, 'ds.jsonl');
    const w = writeDataset(session, out);
    expect(w).toMatchObject({ rows: 4, groups: 1, measured: 0 });
    const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows[0]).toMatchObject({ group_id: infos[0].promptId, group_size: 4, status: 'unmeasured', reward: null, completion: { code: good.source } });
    expect(rows[1]).toMatchObject({ status: 'failed', reward: 0 });
    session.close();
    // The CLI writes the same file.
    const cliOut = join(root, 'cli.jsonl');
    const stdout = execFileSync(process.execPath, ['--import', 'tsx', join(process.cwd(), 'main/doors/cli/index.ts'), 'export-dataset', session.dir, '-o', cliOut, '--json'], { encoding: 'utf8', env: { ...process.env, KERNELDUEL_NO_GPU: '1' } });
    expect(JSON.parse(stdout)).toMatchObject({ rows: 4, groups: 1 });
    expect(readFileSync(cliOut, 'utf8')).toBe(readFileSync(out, 'utf8'));
  });
});

// A scripted measurer: times are looked up by source (and config), so rewards are known exactly.
function fakeMeasurer(timeOf: (spec: MeasuredSpec, call: number) => number | null): Measurer & { calls: Map<string, number>; duels: number } {
  const calls = new Map<string, number>();
  const m = {
    task,
    compileOnly: false,
    calls,
    duels: 0,
    async evaluate(spec: MeasuredSpec): Promise<EvalResult> {
      const key = spec.source + JSON.stringify(spec.config);
      const n = (calls.get(key) ?? 0) + 1;
      calls.set(key, n);
      const ms = timeOf(spec, n);
      const build = { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 1 };
      if (ms === null) return { build, check: { ok: false, checks: [], durationMs: 1, failure: { kind: 'correctness', reason: 'y[0] wrong' } }, failure: { kind: 'correctness', reason: 'y[0] wrong' }, source: { kind: 'none' } };
      const t = { size: 0, samplesMs: [ms], eventMs: [ms], wallMs: [ms], timer: 'events' as const, medianMs: ms, meanMs: ms, minMs: ms, ciLowMs: ms * 0.99, ciHighMs: ms * 1.01, relNoise: 0.01, converged: true, warmupCalls: 1, l2FlushBytes: 0 };
      return { build, check: { ok: true, checks: [], durationMs: 1 }, timing: [t], source: { kind: 'replay', recording: 'scripted' } };
    },
    async duel(a: MeasuredSpec, b: MeasuredSpec): Promise<{ duels?: DuelResult[] }> {
      m.duels++;
      const ta = timeOf(a, 1)!;
      const tb = timeOf(b, 1)!;
      return { duels: [{ size: 0, aMs: [ta], bMs: [tb], ratio: tb / ta, ratioLow: (tb / ta) * 0.99, ratioHigh: (tb / ta) * 1.01, verdict: tb / ta > 1.01 ? 'faster' : 'same', timer: 'events', pairs: 1 }] };
    },
  };
  return m;
}

describe('LLM policy on a scripted measurer', () => {
  it('rewards are measured speedups; a suspicious jump is re-measured and rejected when not reproduced; duels against exemplars', async () => {
    let n = 0;
    srv.handler = () => ({ type: 'ok', text: [GOOD_ANSWER, GOOD_ANSWER_2][n++ % 2] });
    const m = fakeMeasurer((spec, call) => (spec.source === task.baselineSource ? 10 : spec.source === GOOD_CODE ? 5 : spec.source === GOOD_CODE_2 ? (call === 1 ? 1 : 4) : 8));
    const session = newSession();
    const strategy = new LlmStrategy({ task, session, provider: provider(), seed: 2, groupSize: 2 });
    await runLoop({ session, evaluator: m, strategy, budget: 2, lookahead: 2 });
    // The two answers of one group come back concurrently: find each variant by its code.
    const llmVariants = session.variants().filter((v) => v.origin === 'llm');
    const a = llmVariants.find((v) => v.source === GOOD_CODE)!;
    const b = llmVariants.find((v) => v.source === GOOD_CODE_2)!;
    const why = JSON.stringify(llmVariants.map((v) => [v.source.slice(0, 40), session.resultOf(v.id)?.failure?.reason]));
    expect(llmVariants, why).toHaveLength(2);
    expect(a && b, why).toBeTruthy();
    expect(session.resultOf(a.id)!.timing![0].medianMs).toBe(5);
    // 10× on the first measurement -> re-measured in a fresh process -> 2.5×, 300% apart -> rejected.
    expect(m.calls.get(GOOD_CODE_2 + '{}')).toBe(2);
    expect(session.resultOf(b.id)!.failure).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/not reproduced/) });
    expect(strategy.records().map((r) => r.reward).sort()).toEqual([0, 2]);
    // The good one dueled its exemplar (the baseline).
    const duels = session.events().filter((e) => e.type === 'duel');
    expect(duels).toHaveLength(1);
    expect(duels[0]).toMatchObject({ a: a.id, result: { verdict: 'faster' } });
    const ds = buildDataset(session).sort((x, y) => (y.reward ?? 0) - (x.reward ?? 0));
    expect(ds.map((r) => [r.reward, r.status])).toEqual([[2, 'measured'], [0, 'failed']]);
    expect(ds[0].advantage).toBeCloseTo(1);
    expect(ds[1].advantage).toBeCloseTo(-1);
    session.close();
  });

  it('remeasureIfSuspicious believes a reproduced speedup and keeps the slower measurement', async () => {
    const m = fakeMeasurer((_s, call) => (call === 1 ? 2.0 : 2.1));
    const v = { id: 'v9', source: 'x', config: {}, flags: {}, origin: 'llm', parents: [], createdAt: '' } as VariantRecord;
    const first = await m.evaluate(v);
    const r = await remeasureIfSuspicious(v, first, { measurer: m, baselineMs: 10, bestMs: 9 });
    expect(r.failure).toBeUndefined();
    expect(r.timing![0].medianMs).toBe(2.1);
    expect(r.remeasured).toMatchObject({ firstMedianMs: 2, secondMedianMs: 2.1 });
    // Below both thresholds: not re-measured.
    const m2 = fakeMeasurer(() => 8);
    const r2 = await remeasureIfSuspicious(v, await m2.evaluate(v), { measurer: m2, baselineMs: 10, bestMs: 9 });
    expect(m2.calls.get('x{}')).toBe(1);
    expect(r2.failure).toBeUndefined();
  });

  it('transport failures become failed proposals; the policy pauses after too many in a row', async () => {
    srv.handler = () => ({ type: 'status', status: 401, body: { error: { message: `bad key ${KEY}` } } });
    const m = fakeMeasurer(() => 10);
    const session = newSession();
    const strategy = new LlmStrategy({ task, session, provider: provider(), seed: 3, groupSize: 1, maxConsecutiveFailures: 2 });
    const { evaluated } = await runLoop({ session, evaluator: m, strategy, budget: 5, lookahead: 1 });
    expect(evaluated).toBe(2);
    expect(strategy.stoppedReason).toMatch(/2 model requests failed in a row/);
    const fails = session.variants().filter((v) => v.origin === 'llm').map((v) => session.resultOf(v.id)!.failure!.reason);
    expect(fails.every((f) => /^llm auth: 401/.test(f))).toBe(true);
    expect(readFileSync(join(session.dir, 'journal.jsonl'), 'utf8')).not.toContain(KEY);
    expect(buildDataset(session)).toEqual([]); // no answers, nothing to train on
    session.close();
  });

  it('mixed: alternates LLM proposals with tuning of the LLM best variant', async () => {
    let n = 0;
    srv.handler = () => {
      const i = n++;
      return { type: 'ok', text: i === 0 ? GOOD_ANSWER : answer(GOOD_CODE.replace('1.f / s', `1.f / (s + ${i}e-30f)`)) };
    };
    const m = fakeMeasurer((spec) => (spec.source === task.baselineSource ? 10 : 5 - (spec.config.BLOCK ?? 0) / 1000));
    const session = newSession();
    const llm = new LlmStrategy({ task, session, provider: provider(), seed: 4, duelExemplars: false, remeasure: false });
    const strategy = mixedStrategy({ llm, task, session, llmPerRound: 1, tunePerRound: 2, seed: 4 });
    await runLoop({ session, evaluator: m, strategy, budget: 6, lookahead: 1 });
    const origins = session.variants().filter((v) => v.origin !== 'baseline').map((v) => v.origin);
    expect(origins).toEqual(['llm', 'tune', 'tune', 'llm', 'tune', 'tune']);
    const tuned = session.variants().filter((v) => v.origin === 'tune');
    const firstLlm = session.variants().find((v) => v.origin === 'llm')!;
    expect(tuned[0].parents).toEqual([firstLlm.id]);
    expect(tuned[0].source).toBe(firstLlm.source);
    expect(Object.keys(tuned[0].config)).toEqual(['BLOCK']);
    session.close();
  });
});
