// Reading back what exportVariant (./cu.ts) wrote at the head of a .cu file: the provenance block's
// "Build:" nvcc command (the variant's compiler flags) and "Transforms:" line, so that `kernelduel
// eval` rebuilds an exported variant as it was measured. The tunables are read from the file's own
// #defines (main/engine/task/config.ts). Pure; a file without the block gives null.
import type { BuildFlags } from '../base/types.js';

export interface ExportedBuild {
  flags: BuildFlags;
  /** Source transforms already applied to the file's code. */
  transforms: string[];
}

function unquote(t: string): string {
  return t.startsWith("'") && t.endsWith("'") ? t.slice(1, -1).replace(/'\\''/g, "'") : t;
}

/** Shell-style split of a provenance line (single quotes as shellQuote writes them). */
function words(line: string): string[] {
  return (line.match(/'(?:[^']|'\\'')*'|\S+/g) ?? []).map(unquote);
}

/** The flags and transforms of a KernelDuel export's provenance block, or null when the file has none. */
export function readExportedBuild(source: string): ExportedBuild | null {
  const head = /^\/\*\n \* Exported from KernelDuel\. Provenance:\n([\s\S]*?)\n \*\//.exec(source);
  if (!head) return null;
  const field = (name: string): string | null => new RegExp(`^ \\* ${name}:[ \\t]+(.*)$`, 'm').exec(head[1])?.[1] ?? null;
  const build = field('Build');
  if (build === null) return null;
  const flags: BuildFlags = {};
  const extra: string[] = [];
  const w = words(build);
  for (let i = 1; i < w.length; i++) {
    const t = w[i];
    const o = /^-O([0-3])$/.exec(t);
    if (o) flags.opt = Number(o[1]) as BuildFlags['opt'];
    else if (t === '-Xptxas' && /^-O[0-3]$/.test(w[i + 1] ?? '')) i++; // the device -O follows the host's
    else if (t === '-Xptxas' && /^-dlcm=(ca|cg)$/.test(w[i + 1] ?? '')) flags.dlcm = w[++i].slice(6) as 'ca' | 'cg';
    else if (t === '--use_fast_math') flags.fastMath = true;
    else if (/^-maxrregcount=\d+$/.test(t)) flags.maxrregcount = Number(t.split('=')[1]);
    else if (/^-arch=/.test(t) || /^-D/.test(t)) continue; // the target is eval's; tunables are #defines in the file
    else if (t === '-c') i++; // -c <file> ends the command
    else extra.push(t);
  }
  if (extra.length) flags.extra = extra;
  const tr = field('Transforms');
  return { flags, transforms: tr ? tr.split(',').map((x) => x.trim()).filter(Boolean) : [] };
}
