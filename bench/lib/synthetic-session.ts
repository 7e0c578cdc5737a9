// A synthetic session journal of N variants, each with a result (every tenth failed), written the
// way KernelDuel writes journals (v2 envelopes, sources once) or as earlier versions did (v1).
// Shared by bench/load.ts and bench/session-refresh.ts. SYNTHETIC: no GPU measured these figures.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32, formatJournalLine } from '../../main/engine/session/journal.js';
import { createSession, newSessionId, JOURNAL_FILE } from '../../main/engine/session/store.js';
import { encodeSessionEvent } from '../../main/engine/session/encoding.js';
import { SUMMARY_FILE } from '../../main/engine/session/summary.js';
import type { SessionEvent, StoredSessionEvent } from '../../main/engine/session/events.js';
import type { Task } from '../../main/engine/task/manifest.js';

export function samples(base: number, n: number, rnd: () => number): number[] {
  return Array.from({ length: n }, () => Number((base * (1 + 0.01 * rnd())).toFixed(6)));
}
export function makeSession(format: 'v2' | 'v1', sessionsDir: string, task: Task, N: number, SAMPLES: number): { id: string; bytes: number; writeMs: number; lines: number } {
  const t0 = performance.now();
  const meta = { id: newSessionId(), task: { name: 'softmax', dir: task.dir, manifestHash: task.hash }, gpu: { name: 'LOAD TEST (synthetic)', arch: 'sm_90' }, settings: { strategy: 'random', budget: N }, createdAt: new Date().toISOString(), kernelduelVersion: 'bench' };
  const s = createSession(sessionsDir, meta);
  s.close();
  let seed = 12345;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const fd = fs.openSync(path.join(s.dir, JOURNAL_FILE), 'a');
  let seq = 0;
  let bytes = 0;
  const chunk: string[] = [];
  const sources = new Set<string>();
  const write = (rec: StoredSessionEvent): void => {
    const j = JSON.stringify(rec);
    const t = new Date().toISOString();
    chunk.push(format === 'v2' ? formatJournalLine(++seq, t, j) : `{"v":1,"seq":${++seq},"t":${JSON.stringify(t)},"crc":${crc32(j)},"rec":${j}}\n`);
    if (chunk.length >= 2000) flush();
  };
  // As Session.append stores it (v2; encodeSessionEvent), or as earlier versions did (v1: the event as is).
  const put = (rec: SessionEvent): void => {
    if (format === 'v1') return write(rec);
    for (const r of encodeSessionEvent(rec, (h) => sources.has(h))) {
      if (r.type === 'source') sources.add(r.hash);
      write(r);
    }
  };
  const flush = (): void => {
    const b = Buffer.from(chunk.join(''));
    fs.writeSync(fd, b);
    bytes += b.length;
    chunk.length = 0;
  };
  for (let i = 1; i <= N; i++) {
    const id = `v${i}`;
    const config = { BLOCK: [32, 64, 128, 256, 512, 1024][i % 6], TPR: 2 ** (i % 6), VEC: [1, 2, 4][i % 3], ONLINE: i % 2 };
    put({ type: 'variant', variant: { id, source: task.baselineSource, config, flags: { opt: 3 }, origin: i === 1 ? 'baseline' : 'random', parents: i === 1 ? [] : ['v1'], createdAt: new Date().toISOString() } });
    const ms = 0.2 + rnd();
    const ev = samples(ms, SAMPLES, rnd);
    const failed = i % 10 === 0;
    put({
      type: 'result', variantId: id,
      result: failed
        ? { build: { ok: true, arch: 'sm_90', command: ['nvcc'], resources: [], log: '', durationMs: 900 }, failure: { kind: 'correctness', reason: `y[${i}]: expected 0.25 got NaN (size 1, seed 2)` }, source: { kind: 'gpu', gpu: 'LOAD TEST' } }
        : {
            build: { ok: true, arch: 'sm_90', command: ['nvcc', '-O3'], resources: [{ name: 'k', registers: 32, sharedBytes: 0, constantBytes: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0 }], log: '', durationMs: 900 },
            check: { ok: true, checks: [], durationMs: 300 },
            timing: [{ size: 0, samplesMs: ev, eventMs: ev, wallMs: samples(ms * 1.01, SAMPLES, rnd), timer: 'events', medianMs: ms, meanMs: ms, minMs: ms * 0.99, ciLowMs: ms * 0.998, ciHighMs: ms * 1.002, relNoise: 0.002, converged: true, warmupCalls: 10, l2FlushBytes: 1 << 28 }],
            source: { kind: 'gpu', gpu: 'LOAD TEST' },
          },
    } as SessionEvent);
  }
  flush();
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  // Written behind the Session's back: the summary.json its close() left describes the empty journal.
  fs.rmSync(path.join(s.dir, SUMMARY_FILE), { force: true });
  return { id: s.id, bytes, writeMs: performance.now() - t0, lines: seq };
}

