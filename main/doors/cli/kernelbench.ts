// `kernelduel import kernelbench <file-or-folder> [-o DIR]`: KernelBench problems become
// PyTorch-reference task folders (main/engine/interop/kernelbench.ts). This file only parses arguments and
// prints; it adds `kernelbench` under the `import` command (made here when no other file made it).
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { findPython } from '../../core/pytorch.js';
import { importKernelBench, type ImportedProblem } from '../../engine/interop/kernelbench.js';

interface Flags {
  out: string;
  runLimitMs: number;
  force?: boolean;
  json?: boolean;
}

function line(r: ImportedProblem): string {
  if (r.failure) return `FAILED ${r.name}: [${r.failure.kind}] ${r.failure.message.split('\n')[0]}`;
  const warn = r.warnings.length ? `\n    warning: ${r.warnings.join('\n    warning: ')}` : '';
  return `${r.name}: shapes ${r.shapesNote ?? r.shapesFrom}${warn}`;
}

export function registerKernelBenchImport(program: Command): void {
  const importCmd = program.commands.find((c) => c.name() === 'import') ?? program.command('import').description('bring tasks or recorded results from other tools into KernelDuel');
  importCmd
    .command('kernelbench')
    .description('turn KernelBench problem files (class Model, get_inputs, get_init_inputs) into PyTorch-reference task folders')
    .argument('<file-or-folder>', 'a problem file, or a folder of them (e.g. KernelBench/level1)')
    .option('-o, --out <dir>', 'where the task folders go (one per problem)', 'kernelbench-tasks')
    .option('--run-limit-ms <ms>', 'time a CPU forward may take to confirm the shapes (past it, the meta device\'s shapes are kept)', (v) => Number(v), 5000)
    .option('--force', 'overwrite task folders that exist')
    .option('--json', 'machine-readable output (one JSON object per problem, then a summary)')
    .action(async (source: string, o: Flags) => {
      const py = await findPython();
      if (!py.python || !py.can.cpuReference) {
        throw new Error(`importing KernelBench problems runs them with PyTorch: ${py.problems.join(' ')}`);
      }
      if (!Number.isFinite(o.runLimitMs) || o.runLimitMs < 0) throw new Error('--run-limit-ms must be a number of milliseconds');
      const command = ['kernelduel import kernelbench', source, '-o', o.out].join(' ');
      if (!o.json) process.stderr.write(`importing with ${py.python} (torch ${py.torch}, ${py.cuda ? 'CUDA' : 'CPU only'}) into ${resolve(o.out)}\n`);
      const results = await importKernelBench(source, {
        python: py.python, outDir: o.out, runLimitMs: o.runLimitMs, force: o.force, command,
        onResult: (r) => process.stdout.write((o.json ? JSON.stringify(r) : line(r)) + '\n'),
      });
      const ok = results.filter((r) => !r.failure);
      const by = (f: string): number => ok.filter((r) => r.shapesFrom === f).length;
      const summary = { imported: ok.length, failed: results.length - ok.length, problems: results.length, shapesFrom: { cpu: by('cpu'), meta: by('meta'), scaled: by('scaled') }, outDir: resolve(o.out) };
      if (o.json) process.stdout.write(JSON.stringify({ summary }) + '\n');
      else {
        process.stdout.write(`imported ${ok.length} of ${results.length} problems into ${summary.outDir} (shapes from a CPU forward: ${by('cpu')}, the meta device: ${by('meta')}, extrapolated: ${by('scaled')})${summary.failed ? `; ${summary.failed} failed (above)` : ''}\n`);
        if (ok.length) process.stdout.write(`each task's kernel.cu is a placeholder: write the CUDA baseline there (the entry point is explained at its top)\n`);
      }
      if (summary.failed) process.exitCode = 2;
    });
}
