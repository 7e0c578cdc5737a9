// How a benchmark or GPU test was started, for the `command` field of its results file. The GPU
// bundle's launchers (scripts/bundle-gpu.mjs) export KERNELDUEL_INVOKED (their own command line,
// e.g. `./bench contrastive-live --tasks softmax`) and KERNELDUEL_BUNDLE (version and commit of the
// bundle); run from the repository, the npm form the caller names is what was run.

/** The command line that started this run: the bundle launcher's where it ran from the GPU bundle, else `npmForm`. */
export function invokedAs(npmForm: string, env: NodeJS.ProcessEnv = process.env): string {
  const inv = env.KERNELDUEL_INVOKED?.trim();
  if (!inv) return npmForm;
  const bundle = env.KERNELDUEL_BUNDLE?.trim();
  return `${inv} (GPU bundle${bundle ? ` ${bundle}` : ''})`;
}
