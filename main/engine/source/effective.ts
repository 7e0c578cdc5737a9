// A variant's source as nvcc compiles it: the tunables it was built with (-D values) written where
// the template declares its defaults (`#ifndef NAME / #define NAME default / #endif`), or prepended
// where it declares none. Transforms are already in a variant's source. Text only: nothing is
// compiled here, and line numbers of the rest of the file stay where they were.
import type { Config } from '../base/types.js';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The source with each tunable's -D value in place of the template's default (pure). */
export function effectiveSource(source: string, config: Config): string {
  let out = source;
  const missing: string[] = [];
  for (const [k, v] of Object.entries(config)) {
    // `#ifndef K` … `#define K <default>` … `#endif`: the -D flag wins over the default.
    const re = new RegExp(`^([ \\t]*#[ \\t]*define[ \\t]+${escape(k)})\\b([^\\n]*)$`, 'm');
    const m = re.exec(out);
    if (m) {
      const def = m[2].replace(/\/\/.*$/, '').replace(/\/\*.*?\*\//g, '').trim();
      const note = def === String(v) ? `// -D${k}=${v} (the template's default)` : `// -D${k}=${v} (template default: ${def || 'none'})`;
      out = out.slice(0, m.index) + `${m[1]} ${v}  ${note}` + out.slice(m.index + m[0].length);
    } else missing.push(`#define ${k} ${v}  // -D${k}=${v}`);
  }
  return missing.length ? `${missing.join('\n')}\n${out}` : out;
}
