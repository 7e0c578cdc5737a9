// The baseline strategies (random search, simulated annealing, the genetic algorithm) replayed on
// the recording a REPLAY session used, for as many evaluations as the session ran: per strategy,
// the median over 5 seeds of the best-so-far speedup over the baseline variant, for the session's
// best-so-far plot. Cached per recording, its modification time, evaluation count and task.
import fs from 'node:fs';
import path from 'node:path';
import type { BaselineCurvesDTO } from '../contract/api.js';
import { resolveTaskOrSpace } from '../engine/measure/space-task.js';
import { loadSpace } from '../engine/measure/replay.js';
import { median } from '../engine/measure/stats.js';
import { replayStrategy, type StrategyName } from '../engine/search/strategies.js';
import { CoreError } from './errors.js';

const SEEDS = 5;
/** At most this many evaluations are replayed per curve. */
const MAX_EVALUATIONS = 1000;

export interface ReplaySessionInfo {
  recording: string | null;
  /** Variants the session measured besides its baseline. */
  evaluations: number;
  taskDir: string;
  /** The session's own strategy (not replayed again). */
  strategy: string;
}

export class BaselineCurves {
  private readonly cache = new Map<string, Promise<BaselineCurvesDTO>>();

  curves(info: ReplaySessionInfo): Promise<BaselineCurvesDTO> {
    const evaluations = Math.min(MAX_EVALUATIONS, info.evaluations);
    const recording = info.recording;
    if (!recording) return Promise.resolve({ recording: null, evaluations: 0, seeds: 0, curves: [], note: 'not a replay session: baseline strategies are compared on recorded spaces only' });
    let stamp: string;
    try {
      stamp = String(fs.statSync(recording).mtimeMs);
    } catch {
      return Promise.reject(new CoreError('not_found', `the recording this session replayed is gone: ${recording}`));
    }
    const key = `${recording}|${stamp}|${evaluations}|${info.taskDir}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.replay(recording, evaluations, info);
      p.catch(() => this.cache.delete(key));
      this.cache.set(key, p);
    }
    return p;
  }

  private async replay(recording: string, evaluations: number, info: ReplaySessionInfo): Promise<BaselineCurvesDTO> {
    const task = resolveTaskOrSpace(info.taskDir);
    const rec = loadSpace(recording);
    const names: StrategyName[] = (['random', 'anneal', 'genetic'] as const).filter((n) => n !== info.strategy);
    const curves: BaselineCurvesDTO['curves'] = [];
    for (const name of names) {
      const perSeed: number[][] = [];
      for (let seed = 1; seed <= SEEDS; seed++) {
        // Replays answer at once: yield often, this runs on the app's main thread / the server's.
        const { result: r } = await replayStrategy(name, task, rec, seed, evaluations, { yieldEvery: 1 });
        const baselineMs = r.baselineMs;
        if (baselineMs === null) continue;
        perSeed.push(r.steps.map((st) => (st.bestMs ? baselineMs / st.bestMs : 1)));
      }
      const points: Array<{ index: number; bestSpeedup: number }> = [];
      for (let i = 0; i < evaluations; i++) {
        const xs = perSeed.map((v) => v[Math.min(i, v.length - 1)]).filter((x) => x !== undefined);
        if (xs.length) points.push({ index: i + 1, bestSpeedup: median(xs) });
      }
      curves.push({ name, points });
    }
    return { recording, evaluations, seeds: SEEDS, curves, note: `REPLAY: each curve is the median best-so-far speedup of ${SEEDS} seeded runs of that strategy on the same recorded space (${path.basename(recording)})` };
  }
}
