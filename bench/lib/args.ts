// The benchmarks' command lines: node:util's parseArgs, plus `--help` (the script's usage comment
// where its source is at hand, and its options with their defaults) and, for an option it does not
// know or a value it lacks, one line saying so and the options, exit status 2, instead of a stack trace.
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options of a config as help lines: `--name <value>  (default …)`. */
export function optionLines(options: Options): string[] {
  return Object.entries(options).map(([k, o]) => `  --${k}${o.type === 'string' ? ' <value>' : ''}${o.default !== undefined ? `  (default ${JSON.stringify(o.default)})` : ''}`);
}

/** The leading `//` comment block of a source file (its usage), or null. */
export function usageComment(file: string): string | null {
  if (!file.endsWith('.ts') || !existsSync(file)) return null;
  const out: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('//')) break;
    out.push(line.replace(/^\/\/ ?/, ''));
  }
  return out.length ? out.join('\n') : null;
}

/** parseArgs with `--help` and a clear message for a bad command line (the script's name from argv[1]). */
export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const script = process.argv[1] ?? 'bench';
  const name = basename(script).replace(/\.(ts|mjs|js)$/, '');
  const argv = config.args ?? process.argv.slice(2);
  const options = config.options ?? {};
  if (argv.includes('--help') || argv.includes('-h')) {
    const usage = usageComment(script);
    process.stdout.write(`${usage ? `${usage}\n\n` : ''}bench ${name}, options:\n${optionLines(options).join('\n') || '  (none)'}\n`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS')) throw e;
    process.stderr.write(`bench ${name}: ${(e as Error).message.split('\n')[0]}\noptions:\n${optionLines(options).join('\n') || '  (none)'}\n`);
    process.exit(2);
  }
}
