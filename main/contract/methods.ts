// The API's method and channel names as plain constants. Imported by the preload script, which runs
// sandboxed and may not load packages: keep this file dependency-free.

export const METHOD_NAMES = [
  'env.describe',
  'tasks.list',
  'tasks.get',
  'tasks.open',
  'tasks.validateManifest',
  'tasks.readFile',
  'tasks.saveFile',
  'spaces.import',
  'eval.build',
  'eval.run',
  'runs.list',
  'runs.start',
  'runs.pause',
  'runs.resume',
  'runs.stop',
  'sessions.list',
  'sessions.get',
  'sessions.baselines',
  'sessions.log',
  'sessions.confirm',
  'variants.get',
  'variants.compare',
  'variants.code',
  'export.variant',
  'export.report',
  'llm.getSettings',
  'llm.saveSettings',
  'llm.testConnection',
  'llm.previewPrompt',
] as const;

export type MethodName = (typeof METHOD_NAMES)[number];

export function isMethodName(x: unknown): x is MethodName {
  return typeof x === 'string' && (METHOD_NAMES as readonly string[]).includes(x);
}

/** Electron IPC channels (one for calls, one for pushed events, two for desktop-only dialogs). */
export const IPC_CALL = 'kernelduel:call';
export const IPC_EVENT = 'kernelduel:event';
export const IPC_SAVE_AS = 'kernelduel:save-as';
export const IPC_PICK_FOLDER = 'kernelduel:pick-folder';
