// What this machine offers, for every front door: host, GPUs (none when KERNELDUEL_NO_GPU=1), the
// CUDA toolchain, and what works here, in sentences.
import type { EnvDTO } from '../contract/api.js';
import { describeEnvironment, type EnvironmentDescription } from '../engine/platform/host/info.js';
import { STRATEGIES } from './strategies.js';

export type { EnvironmentDescription };

/** The engine's description of this machine (`kernelduel gpus`). */
export function describeMachine(env: NodeJS.ProcessEnv = process.env): Promise<EnvironmentDescription> {
  return describeEnvironment({ env });
}

/** The same for the workbench (env.describe), with the strategies it can start. */
export async function environmentDTO(env: NodeJS.ProcessEnv, mode: 'electron' | 'browser'): Promise<EnvDTO> {
  const d = await describeMachine(env);
  const noGpu = env.KERNELDUEL_NO_GPU === '1';
  return {
    host: d.host, gpus: noGpu ? [] : d.gpu.gpus, gpuSource: d.gpu.source, driverVersion: d.gpu.driverVersion,
    toolchain: { nvcc: d.toolchain.nvcc, version: d.toolchain.version, targets: d.toolchain.targets, cudaHome: d.toolchain.cudaHome },
    canCompile: d.canCompile, canRun: d.canRun && !noGpu, messages: d.messages, strategies: STRATEGIES, mode,
  };
}
