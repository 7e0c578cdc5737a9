// The CLI's commands for recorded spaces in other tuners' formats: `import` (a Kernel Tuner cache
// or T4 file becomes a KernelDuel recorded space, REPLAY only) and `export-space` (a recorded space
// becomes a Kernel Tuner cache or T4 file). The formats are in main/engine/interop; this file only parses
// arguments and prints.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import type { Config } from '../../engine/base/types.js';
import { defaultImportPath, EXPORT_FORMATS, exportSpaceFile, IMPORT_FORMATS, importSpaceFile, writeJsonFile, type ExportFormat, type ImportFormat } from '../../engine/interop/files.js';

function parseBaseline(s: string): Config {
  const c: Config = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (!k || v === undefined || !Number.isFinite(Number(v))) throw new Error(`--baseline: "${kv}" is not NAME=number`);
    c[k.trim()] = Number(v);
  }
  return c;
}

function importFormat(importCmd: Command, format: ImportFormat): void {
  importCmd
    .command(format)
    .description(format === 'kernel-tuner'
      ? 'a Kernel Tuner cache (.json or .json.gz) as a KernelDuel recorded space (REPLAY only: it has no kernel source)'
      : 'a T4 results file as a KernelDuel recorded space (REPLAY only: it has no kernel source)')
    .argument('<file>', 'the file to import')
    .option('--name <name>', 'the space\'s name, which is its task name (default: from the file name)')
    .option('--baseline <k=v,...>', 'the configuration a run starts from (default: the first recorded one that did not fail)')
    .option('--gpu-name <name>', 'the GPU a T4 file was measured on (T4 does not say)')
    .option('-o, --out <space.json>', 'where to write the space (default: $KERNELDUEL_HOME/spaces/<gpu>/<name>.json, where the workbench looks)')
    .option('--json', 'machine-readable output')
    .action((file: string, o: { name?: string; baseline?: string; gpuName?: string; out?: string; json?: boolean }) => {
      const command = ['kernelduel import', format, file, ...(o.name ? ['--name', o.name] : []), ...(o.baseline ? ['--baseline', o.baseline] : [])].join(' ');
      const r = importSpaceFile(resolve(file), { format, name: o.name, gpuName: o.gpuName, command, ...(o.baseline ? { baseline: parseBaseline(o.baseline) } : {}) });
      const s = r.space;
      const path = resolve(o.out ?? defaultImportPath(s));
      writeJsonFile(path, s);
      const failed = s.entries.filter((e) => e.failure).length;
      const summary = { path, name: s.task, format: r.format, gpu: s.gpu.name, configurations: s.entries.length, failed, tunables: s.tunables, baseline: s.baseline, date: s.date, warnings: r.warnings };
      if (o.json) {
        process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
        return;
      }
      for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(
        [
          `imported ${file} (${r.format}): ${s.entries.length} configurations (${failed} failed), ${Object.keys(s.tunables ?? {}).length} tunables, ${s.gpu.name}, recorded ${s.date}`,
          `wrote ${path}`,
          `replay it (REPLAY: answers come from the recording, no GPU): kernelduel optimize ${s.task} --replay ${path} --strategy contrastive --budget 200`,
        ].join('\n') + '\n',
      );
    });
}

export function registerSpaceCommands(program: Command): void {
  // `import` is shared with other importers (kernelbench): each format is a subcommand of it.
  const importCmd = program.commands.find((c) => c.name() === 'import') ?? program.command('import').description('bring tasks or recorded results from other tools into KernelDuel');
  for (const fmt of IMPORT_FORMATS) importFormat(importCmd, fmt);

  program
    .command('export-space')
    .description('write a KernelDuel recorded space as a Kernel Tuner cache or a T4 results file, for Kernel Tuner\'s simulation mode')
    .addArgument(program.createArgument('<format>', 'kernel-tuner or t4').choices([...EXPORT_FORMATS]))
    .argument('<space>', 'a recorded space (kernelduel-space/1 JSON)')
    .requiredOption('-o, --out <file>', 'output file (.json, or .json.gz to compress)')
    .addOption(new Option('--json', 'machine-readable output'))
    .action((format: ExportFormat, space: string, o: { out: string; json?: boolean }) => {
      const r = exportSpaceFile(resolve(space), format);
      writeJsonFile(o.out, r.data);
      if (o.json) process.stdout.write(JSON.stringify({ path: resolve(o.out), format, warnings: r.warnings }, null, 2) + '\n');
      else {
        for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
        process.stdout.write(`wrote ${resolve(o.out)} (${format === 't4' ? 'T4 results' : 'Kernel Tuner cache'})\n`);
      }
    });
}
