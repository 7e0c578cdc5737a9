#!/usr/bin/env node
// KernelDuel's command line. A thin front door over the engine in main/: every command is also
// available to the app through the API contract.
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { describeEnvironment } from '../host/info.js';
import { findToolchain } from '../toolchain/nvcc.js';
import { detectGpus, type GpuInfo } from '../gpu/detect.js';
import { resolveTask, builtinTaskNames } from '../task/resolve.js';
import { TaskError, type Task } from '../task/manifest.js';
import { Evaluator } from '../eval/evaluate.js';
import type { Config, EvalResult, VariantSpec } from '../common/types.js';
import { defaultConfig, enumerateSpace } from '../task/space.js';
import { createSession, listSessions, newSessionId, openSession, sessionsRoot } from '../session/store.js';
import { exportVariant } from '../export/cu.js';
import { runLoop, type LoopEvent } from '../search/loop.js';
import { randomSearch } from '../search/random.js';
import { KERNELDUEL_VERSION } from '../common/version.js';
import { describeResult, fmtMs } from './format.js';

class UsageError extends Error {}

function out(json: boolean, data: unknown, text: () => string): void {
  process.stdout.write(json ? JSON.stringify(data, null, 2) + '\n' : text() + '\n');
}

function parseConfig(s: string | undefined): Config {
  if (!s) return {};
  const c: Config = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (!k || v === undefined || !Number.isFinite(Number(v))) throw new UsageError(`--config: "${kv}" is not NAME=number`);
    c[k.trim()] = Number(v);
  }
  return c;
}

async function pickGpu(index: number | undefined, log: (s: string) => void): Promise<GpuInfo | null> {
  if (process.env.KERNELDUEL_NO_GPU === '1') return null;
  const det = await detectGpus();
  for (const p of det.problems) log(`note: ${p}`);
  const usable = det.gpus.filter((g) => g.arch);
  if (!usable.length) return null;
  if (index === undefined) return usable[0];
  const g = usable.find((x) => x.index === index);
  if (!g) throw new UsageError(`--gpu ${index}: no such GPU (have ${usable.map((x) => `${x.index}: ${x.name}`).join('; ')})`);
  return g;
}

async function makeEvaluator(task: Task, o: { gpu?: number; arch?: string; maxMs?: number }, log: (s: string) => void): Promise<Evaluator> {
  const tc = await findToolchain();
  if (!tc.nvcc) throw new UsageError(tc.problems.join(' '));
  const gpu = await pickGpu(o.gpu, log);
  if (!gpu) log(`compile-only: no usable NVIDIA GPU, so variants are built (for ${o.arch ?? 'sm_90'}) but not checked or timed`);
  return new Evaluator({ task, toolchain: tc, gpu, arch: o.arch, timing: o.maxMs ? { maxMs: o.maxMs } : undefined });
}

const program = new Command();
program.name('kernelduel').description('Make CUDA kernels faster on your own NVIDIA GPU, by contrastive comparison of variants.').version(KERNELDUEL_VERSION);

program
  .command('gpus')
  .description('list NVIDIA GPUs, the CUDA toolchain and what works on this machine')
  .option('--json', 'machine-readable output')
  .action(async (o: { json?: boolean }) => {
    const env = await describeEnvironment();
    out(!!o.json, env, () => {
      const lines = [`host: ${env.host.cpu} (${env.host.cores} cores), ${(env.host.memTotalBytes / 2 ** 30).toFixed(0)} GiB, ${env.host.os}`];
      lines.push(env.toolchain.nvcc ? `nvcc: ${env.toolchain.nvcc} (${env.toolchain.version}); targets ${env.toolchain.targets.join(' ')}` : 'nvcc: not found');
      if (!env.gpu.gpus.length) lines.push('GPUs: none');
      for (const g of env.gpu.gpus) {
        lines.push(`GPU ${g.index}: ${g.name}  cc ${g.computeCapability || '?'} (${g.arch || '?'})  ${(g.memoryTotalMiB / 1024).toFixed(0)} GiB  SM ${g.smClockMHz ?? '?'}/${g.maxSmClockMHz ?? '?'} MHz  mem ${g.memClockMHz ?? '?'}/${g.maxMemClockMHz ?? '?'} MHz  driver ${g.driverVersion}  ${g.uuid}`);
      }
      lines.push(...env.messages.map((m) => `- ${m}`));
      return lines.join('\n');
    });
  });

program
  .command('tasks')
  .description('list the built-in example tasks')
  .option('--json', 'machine-readable output')
  .action((o: { json?: boolean }) => {
    const tasks = builtinTaskNames().map((n) => {
      try {
        const t = resolveTask(n);
        let space: number | string = 0;
        try {
          space = enumerateSpace(t).length;
        } catch (e) {
          space = (e as Error).message;
        }
        return { name: n, description: t.manifest.description ?? '', dir: t.dir, space };
      } catch (e) {
        return { name: n, error: (e as Error).message };
      }
    });
    out(!!o.json, tasks, () => tasks.map((t) => ('error' in t ? `${t.name}: ERROR ${t.error}` : `${t.name.padEnd(12)} ${String(t.space).padStart(6)} configs  ${t.description}`)).join('\n'));
  });

program
  .command('eval')
  .description('build, check and time a variant of a task (default: its baseline)')
  .argument('<task>', 'task folder or built-in task name')
  .argument('[variant]', 'a .cu file with the entry point (default: the task\'s baseline kernel)')
  .option('--duel <other>', 'also time the variant against another .cu, interleaved in one process')
  .option('--config <k=v,...>', 'tunable values (#defines)')
  .option('--fast-math', 'build with --use_fast_math')
  .option('--gpu <index>', 'GPU index', (v) => Number(v))
  .option('--arch <sm_XX>', 'nvcc architecture (default: the GPU\'s; sm_90 when compile-only)')
  .option('--max-ms <ms>', 'time cap per size for sampling', (v) => Number(v))
  .option('--json', 'machine-readable output')
  .action(async (taskArg: string, variantArg: string | undefined, o: { duel?: string; config?: string; fastMath?: boolean; gpu?: number; arch?: string; maxMs?: number; json?: boolean }) => {
    const task = resolveTask(taskArg);
    const log = (s: string): void => void process.stderr.write(s + '\n');
    const ev = await makeEvaluator(task, o, log);
    const readSrc = (p: string): string => {
      try {
        return readFileSync(resolve(p), 'utf8');
      } catch (e) {
        throw new UsageError(`cannot read ${p}: ${(e as NodeJS.ErrnoException).code ?? e}`);
      }
    };
    const spec: VariantSpec = { source: variantArg ? readSrc(variantArg) : task.baselineSource, config: { ...defaultConfig(task), ...parseConfig(o.config) }, flags: { opt: 3, fastMath: o.fastMath }, origin: variantArg ? 'user' : 'baseline' };
    if (!o.json) log(`${task.manifest.name}: ${variantArg ?? 'baseline'} on ${ev.gpu ? `GPU ${ev.gpu.index} ${ev.gpu.name}` : 'no GPU (compile-only)'}`);
    const result = await ev.evaluate(spec, { onStage: (s) => !o.json && log(`  ${s}…`) });
    let duel: Awaited<ReturnType<Evaluator['duel']>> | undefined;
    if (o.duel && !result.failure && ev.gpu) {
      const other: VariantSpec = { source: readSrc(o.duel), config: spec.config, flags: spec.flags, origin: 'user' };
      const otherRes = await ev.evaluate(other, { time: false });
      duel = otherRes.failure ? { failure: otherRes.failure } : await ev.duel(spec, other);
    }
    out(!!o.json, { task: task.manifest.name, result, duel }, () => {
      const lines = [describeResult(task, result)];
      if (duel?.failure) lines.push(`duel: the other variant failed: [${duel.failure.kind}] ${duel.failure.reason}`);
      for (const d of duel?.duels ?? []) lines.push(`duel (size ${d.size}): ${variantArg ?? 'baseline'} is ${d.verdict} — ${d.ratio.toFixed(4)}× [${d.ratioLow.toFixed(4)}, ${d.ratioHigh.toFixed(4)}] over ${d.pairs} interleaved pairs (${d.timer})`);
      return lines.join('\n');
    });
    if (result.failure) process.exitCode = 2;
  });

program
  .command('optimize')
  .description('search for faster variants of a task and keep every measurement in a session')
  .argument('<task>', 'task folder or built-in task name')
  .addOption(new Option('--strategy <name>', 'search strategy').choices(['random']).default('random'))
  .option('--budget <n>', 'variants to measure besides the baseline', (v) => Number(v), 50)
  .option('--seed <n>', 'random seed of the strategy', (v) => Number(v), 1)
  .option('--resume <session>', 'continue a session that was stopped or killed')
  .option('--gpu <index>', 'GPU index', (v) => Number(v))
  .option('--arch <sm_XX>', 'nvcc architecture')
  .option('--max-ms <ms>', 'time cap per size for sampling', (v) => Number(v))
  .option('--json', 'machine-readable output (one JSON event per line)')
  .action(async (taskArg: string, o: { strategy: string; budget: number; seed: number; resume?: string; gpu?: number; arch?: string; maxMs?: number; json?: boolean }) => {
    if (!Number.isInteger(o.budget) || o.budget < 0) throw new UsageError('--budget must be a non-negative integer');
    const log = (s: string): void => void process.stderr.write(s + '\n');
    const root = sessionsRoot();
    let session;
    let task: Task;
    if (o.resume) {
      session = openSession(root, o.resume);
      task = resolveTask(session.meta.task.dir);
      if (task.hash !== session.meta.task.manifestHash) log(`warning: task ${task.manifest.name} changed since session ${session.meta.id} started`);
    } else {
      task = resolveTask(taskArg);
    }
    const ev = await makeEvaluator(task, o, log);
    session ??= createSession(root, {
      id: newSessionId(), task: { name: task.manifest.name, dir: task.dir, manifestHash: task.hash },
      gpu: ev.gpu ? { name: ev.gpu.name, uuid: ev.gpu.uuid, arch: ev.env.arch } : null,
      settings: { strategy: o.strategy, budget: o.budget, seed: o.seed, seeds: ev.seeds }, createdAt: new Date().toISOString(), kernelduelVersion: KERNELDUEL_VERSION,
    });
    const strategy = randomSearch(task, o.seed);
    const bar = !o.json && process.stderr.isTTY ? new cliProgress.SingleBar({ format: ' {bar} {value}/{total} | ETA {eta_formatted} | best {best}', stream: process.stderr }, cliProgress.Presets.shades_classic) : null;
    if (!o.json) log(`session ${session.meta.id} (${session.dir}): ${task.manifest.name}, ${o.strategy}, budget ${o.budget}, ${ev.gpu ? ev.gpu.name : 'compile-only'}`);
    bar?.start(o.budget, 0, { best: '-' });
    const ac = new AbortController();
    const stop = (): void => {
      log('\nstopping after the current measurement (Ctrl-C again to kill; the session keeps everything measured so far)');
      ac.abort();
      process.once('SIGINT', () => process.exit(130));
    };
    process.once('SIGINT', stop);
    const started = Date.now();
    const onEvent = (e: LoopEvent): void => {
      if (o.json) {
        process.stdout.write(JSON.stringify(e.type === 'result' ? { ...e, result: { failure: e.result.failure, medianMs: e.result.timing?.[0]?.medianMs } } : e) + '\n');
        return;
      }
      if (e.type === 'result') {
        const best = e.bestSpeedup ? `${e.bestSpeedup.toFixed(2)}× (${fmtMs(e.bestMs)})` : '-';
        if (bar) bar.update(e.index, { best });
        else {
          const eta = e.index > 0 ? ((Date.now() - started) / e.index) * (e.budget - e.index) / 1000 : NaN;
          const what = e.result.failure ? `${e.result.failure.kind}: ${e.result.failure.reason.slice(0, 100)}` : e.result.compileOnly ? 'built (compile-only)' : `${fmtMs(e.result.timing?.[0]?.medianMs ?? null)}${e.speedup ? ` ${e.speedup.toFixed(2)}×` : ''}`;
          log(`[${e.index}/${e.budget}] ${e.variantId} ${what} | best ${best}${Number.isFinite(eta) ? ` | ETA ${eta.toFixed(0)} s` : ''}`);
        }
      }
    };
    try {
      await runLoop({ session, evaluator: ev, strategy, budget: o.budget, signal: ac.signal, onEvent });
    } finally {
      bar?.stop();
      process.removeListener('SIGINT', stop);
    }
    const best = session.best();
    if (!o.json) {
      log(best ? `best: ${best.variant.id} ${fmtMs(best.medianMs)}${best.speedup ? `, ${best.speedup.toFixed(2)}× the baseline` : ''}; config ${JSON.stringify(best.variant.config)}` : 'no variant was timed (compile-only or all failed)');
      log(`export it with: kernelduel export ${session.meta.id} --best -o ${task.manifest.name}-best.cu`);
    }
    session.close();
  });

program
  .command('sessions')
  .description('list sessions')
  .option('--json', 'machine-readable output')
  .action((o: { json?: boolean }) => {
    const list = listSessions(sessionsRoot());
    out(!!o.json, list, () =>
      list.length ? list.map((s) => `${s.id}  ${s.meta?.task.name ?? '?'}  ${s.results} results  ${s.status ?? ''}${s.best ? `  best ${fmtMs(s.best.medianMs)}${s.best.speedup ? ` ${s.best.speedup.toFixed(2)}×` : ''}` : ''}${s.error ? `  ERROR ${s.error}` : ''}`).join('\n') : `no sessions in ${sessionsRoot()}`,
    );
  });

program
  .command('export')
  .description('write a variant of a session to a .cu file with its provenance')
  .argument('<session>', 'session id or folder')
  .option('--best', 'the fastest correct variant (default)')
  .option('--variant <id>', 'a specific variant')
  .requiredOption('-o, --out <file>', 'output .cu file')
  .option('--json', 'machine-readable output')
  .action((sid: string, o: { best?: boolean; variant?: string; out: string; json?: boolean }) => {
    const session = sid.includes('/') ? openSession(sid) : openSession(sessionsRoot(), sid);
    const r = exportVariant(session, o.variant ?? 'best', resolve(o.out));
    out(!!o.json, r, () => `wrote ${r.path} (variant ${r.variantId}${r.speedup ? `, ${r.speedup.toFixed(2)}× the baseline` : ''})`);
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof TaskError || e instanceof UsageError) process.stderr.write(`kernelduel: ${e.message}\n`);
  else process.stderr.write(`kernelduel: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});

export type { EvalResult };
