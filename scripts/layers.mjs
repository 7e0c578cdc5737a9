// The layers of KernelDuel's code and which may import which: the one table that the lint rules
// (eslint.config.mjs, eslint-plugin-boundaries) and the import graph (scripts/import-graph.mjs) are
// both made from, and that docs/ARCHITECTURE.md describes. Bottom first: a layer may import only
// the layers in its `allow` list, all of them lower (smaller rank); `typesFrom` adds layers it may
// import types from (`import type`), never values; `only` limits what of a layer may be imported.
//
// To add a folder: give it a row here (a folder without one fails the import graph), then say in
// docs/ARCHITECTURE.md what it holds.

/** @typedef {{ name: string, path: string, rank: number, allow: string[], typesFrom?: string[], only?: Record<string, string[]>, note: string }} Layer */

const ENGINE_BELOW = (...names) => names.map((n) => `engine/${n}`);

/** @type {Layer[]} */
export const LAYERS = [
  { name: 'engine/base', path: 'main/engine/base', rank: 0, allow: [], note: 'the data types every layer shares, paths, atomic files, expressions, PRNG, version' },
  { name: 'engine/platform', path: 'main/engine/platform', rank: 1, allow: ENGINE_BELOW('base'), note: 'the machine: child processes, GPUs, nvcc, the sandbox, host facts' },
  { name: 'engine/task', path: 'main/engine/task', rank: 2, allow: ENGINE_BELOW('base'), note: 'task folders: task.yaml, the search space, configurations' },
  { name: 'engine/source', path: 'main/engine/source', rank: 3, allow: ENGINE_BELOW('task', 'base'), note: 'kernel source as text: scanning, the entry point, screening untrusted code, transforms' },
  { name: 'engine/build', path: 'main/engine/build', rank: 4, allow: ENGINE_BELOW('source', 'task', 'platform', 'base'), note: 'nvcc builds: the shim, the build cache, ptxas resources' },
  { name: 'engine/pytorch', path: 'main/engine/pytorch', rank: 4, allow: ENGINE_BELOW('task', 'platform', 'base'), note: 'PyTorch-reference tasks and Python candidates: the trusted Python scripts\' protocols and their clients (reference outputs, the sandboxed candidate runner)' },
  { name: 'engine/measure', path: 'main/engine/measure', rank: 5, allow: ENGINE_BELOW('build', 'source', 'task', 'platform', 'base'), note: 'capture, executor, judge; the evaluator, statistics, verdicts, recorded spaces' },
  { name: 'engine/session', path: 'main/engine/session', rank: 6, allow: ENGINE_BELOW('measure', 'platform', 'base'), note: 'the journal, session events, the session store and listing' },
  { name: 'engine/llm', path: 'main/engine/llm', rank: 7, allow: ENGINE_BELOW('session', 'measure', 'source', 'task', 'base'), note: 'the language model: provider, prompts, answers, exemplars, dataset' },
  { name: 'engine/search', path: 'main/engine/search', rank: 8, allow: ENGINE_BELOW('llm', 'session', 'measure', 'build', 'source', 'task', 'platform', 'base'), note: 'the loop and the strategies: contrastive, preference model, features, LLM policy' },
  { name: 'engine/export', path: 'main/engine/export', rank: 9, allow: ENGINE_BELOW('session', 'measure', 'task', 'base'), note: 'a variant as a .cu file with its provenance, and reading one back' },
  // Recorded spaces to and from other tools' formats (Kernel Tuner caches, T4 files).
  { name: 'engine/interop', path: 'main/engine/interop', rank: 9, allow: ENGINE_BELOW('measure', 'pytorch', 'source', 'task', 'platform', 'base'), note: 'recorded spaces to and from other tools\' formats; KernelBench problems as PyTorch-reference tasks' },
  {
    name: 'contract', path: 'main/contract', rank: 10, allow: ENGINE_BELOW('base', 'llm'),
    // What the renderer may see of the engine: plain data types and the LLM settings' schema (zod only).
    only: { 'engine/base': ['main/engine/base/types.ts', 'main/engine/base/pytorch-baselines.ts'], 'engine/llm': ['main/engine/llm/settings.ts'] },
    note: 'the API the renderer may import: method names, argument schemas, results, events',
  },
  {
    name: 'core', path: 'main/core', rank: 11,
    allow: ['contract', ...ENGINE_BELOW('export', 'interop', 'search', 'llm', 'session', 'measure', 'pytorch', 'build', 'source', 'task', 'platform', 'base')],
    note: 'the one core behind every front door: GPU choice, evaluators, the run lifecycle, the API handlers, the pages\' security policy',
  },
  { name: 'doors/electron', path: 'main/doors/electron', rank: 12, allow: ['core', 'contract'], note: 'the desktop app: one window, IPC' },
  { name: 'doors/web', path: 'main/doors/web', rank: 12, allow: ['core', 'contract', 'engine/base'], note: 'browser mode: static files and the WebSocket' },
  {
    name: 'doors/cli', path: 'main/doors/cli', rank: 13,
    // Reads tasks and sessions and parses LLM settings itself; measuring, GPU choice, runs and the
    // model go through the core (only their types are seen here).
    allow: ['doors/web', 'core', 'contract', ...ENGINE_BELOW('export', 'interop', 'llm', 'session', 'task', 'base')],
    only: { 'engine/llm': ['main/engine/llm/settings.ts'] },
    typesFrom: ENGINE_BELOW('search', 'measure', 'pytorch'),
    note: 'the command line (its serve command opens the web door)',
  },
  { name: 'preload', path: 'preload', rank: 14, allow: ['contract'], only: { contract: ['main/contract/methods.ts'] }, note: 'the sandboxed bridge: four functions' },
  { name: 'renderer', path: 'renderer', rank: 14, allow: ['contract'], note: 'the React workbench' },
];

/** The layer a repository-relative path belongs to (the longest matching folder), or null. */
export function layerOf(file) {
  let best = null;
  for (const l of LAYERS) {
    if ((file === l.path || file.startsWith(`${l.path}/`)) && (!best || l.path.length > best.path.length)) best = l;
  }
  return best;
}

export const layerByName = new Map(LAYERS.map((l) => [l.name, l]));
