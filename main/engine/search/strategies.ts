// The strategies by name, and the action space each runs on (a recording's, or the task's with
// compiler flags and the source transforms found in its baseline).
import type { Strategy } from './loop.js';
import type { Task } from '../task/manifest.js';
import type { Config } from '../base/types.js';
import { ActionSpace, defaultFlagChoices } from './actions.js';
import { ReplayMeasurer, type RecordedSpace } from '../measure/replay.js';
import { simulate, type SimResult, type SimulateOptions } from './simulate.js';
import type { Measurer } from '../measure/measurer.js';
import { findTransforms } from '../source/transforms.js';
import { randomSearch } from './random.js';
import { simulatedAnnealing } from './anneal.js';
import { geneticAlgorithm } from './genetic.js';
import { exhaustiveSearch } from './exhaustive.js';
import { contrastiveSearch, type ContrastiveOptions } from './contrastive.js';

export const STRATEGY_NAMES = ['contrastive', 'random', 'anneal', 'genetic', 'exhaustive'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export function isStrategyName(s: string): s is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(s);
}

/** Policies that ask a language model for new code (main/engine/search/llm.ts): they need the task, the session and a provider. */
export const LLM_STRATEGY_NAMES = ['llm', 'mixed'] as const;
export type LlmStrategyName = (typeof LLM_STRATEGY_NAMES)[number];
/** Every strategy a run can use. */
export const RUN_STRATEGY_NAMES = [...STRATEGY_NAMES, ...LLM_STRATEGY_NAMES] as const;
export type RunStrategyName = StrategyName | LlmStrategyName;

export function isLlmStrategyName(s: string): s is LlmStrategyName {
  return (LLM_STRATEGY_NAMES as readonly string[]).includes(s);
}

export function isRunStrategyName(s: string): s is RunStrategyName {
  return isStrategyName(s) || isLlmStrategyName(s);
}

export interface SpaceChoice {
  /** Vary compiler flags (GPU runs; a recording decides for itself). Default true. */
  flags?: boolean;
  /** Vary source transforms of the baseline. Default true. */
  transforms?: boolean;
  /** Tunables held at these values instead of searched (an older recording's predated tunables, as ActionSpace's `fixed`). */
  fixed?: Config;
}

/** The action space for a task on a backend: a replay's recording decides its own dimensions. */
export async function actionSpaceFor(task: Task, m: Measurer, c: SpaceChoice = {}): Promise<ActionSpace> {
  if (m instanceof ReplayMeasurer) return ActionSpace.fromRecording(task, m);
  return liveActionSpace(task, c);
}

/** The source transforms of a task's baseline (its tunables' macros left alone): what a variant's `transforms` name. */
export function baselineTransforms(task: Task): ReturnType<typeof findTransforms> {
  return findTransforms(task.baselineSource, { tunables: Object.keys(task.manifest.tunables ?? {}) });
}

/** The action space of a live run: the tunables, the compiler flags and the baseline's transform sites. */
export async function liveActionSpace(task: Task, c: SpaceChoice = {}): Promise<ActionSpace> {
  const transforms = c.transforms === false ? undefined : await baselineTransforms(task).catch(() => undefined);
  return new ActionSpace(task, { flags: c.flags === false ? false : defaultFlagChoices(task), transforms, fixed: c.fixed });
}

export function makeStrategy(name: StrategyName, space: ActionSpace, seed: number, o: { contrastive?: ContrastiveOptions } = {}): Strategy {
  switch (name) {
    case 'contrastive':
      return contrastiveSearch(space, seed, o.contrastive);
    case 'random':
      return randomSearch(space.task, seed, space);
    case 'anneal':
      return simulatedAnnealing(space, seed);
    case 'genetic':
      return geneticAlgorithm(space, seed);
    case 'exhaustive':
      return exhaustiveSearch(space);
  }
}

/** One seeded run of a strategy on a recorded space, in memory (the strategies benchmark, the workbench's baseline curves). */
export async function replayStrategy(
  name: StrategyName, task: Task, rec: RecordedSpace, seed: number, budget: number, o: SimulateOptions = {},
): Promise<{ result: SimResult; strategy: Strategy; space: ActionSpace; measurer: ReplayMeasurer }> {
  const measurer = new ReplayMeasurer(task, rec, { seed });
  const space = ActionSpace.fromRecording(task, measurer);
  const strategy = makeStrategy(name, space, seed);
  return { result: await simulate(strategy, measurer, budget, o), strategy, space, measurer };
}
