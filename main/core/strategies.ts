// The strategies a run may use, as the front doors offer them: names (the engine's), and a
// sentence each for the workbench.
import type { StrategyInfo } from '../contract/api.js';
import { RUN_STRATEGY_NAMES } from '../engine/search/strategies.js';

export { RUN_STRATEGY_NAMES, isLlmStrategyName, isRunStrategyName, type RunStrategyName } from '../engine/search/strategies.js';

const DESCRIPTIONS: Record<string, string> = {
  contrastive: 'Contrastive optimiser: learns a preference model from duels between variants and proposes the likely winners.',
  random: 'Random search over the action space (the baseline strategy).',
  anneal: 'Simulated annealing over the action space.',
  genetic: 'Genetic algorithm over the action space.',
  exhaustive: 'Every configuration, in order (small spaces).',
  llm: 'LLM policy (CUDA-L1 contrastive prompting): a language model sees earlier variants with their measured speedups, explains them and writes a faster kernel. Needs the LLM settings; not on a replay.',
  mixed: 'LLM policy alternating with tuning of the parameters of the LLM\'s best variant. Needs the LLM settings; not on a replay.',
};

export const STRATEGIES: StrategyInfo[] = RUN_STRATEGY_NAMES.map((name) => ({ name, description: DESCRIPTIONS[name] ?? name, replay: false }));
