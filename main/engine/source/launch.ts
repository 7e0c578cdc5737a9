// Threads per block of a variant's kernel launch, read from its source: the block argument of the
// first `<<<grid, block, …>>>` launch, with `dim3 name(x, y, z)` declarations and `#define` macros
// expanded and the tunables' values (-D, which win over the template's defaults) substituted. For
// occupancy. A manifest may state it instead (metrics.threads); null when it cannot be worked out.
import type { Config } from '../base/types.js';
import { evalExpr } from '../base/expr.js';
import { stripCode } from './csource.js';

function macros(code: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const x of code.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+)$/gm)) if (!m.has(x[1])) m.set(x[1], x[2].trim());
  return m;
}

/** Splits a comma-separated argument list at depth 0. */
function args(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(' || c === '[' || c === '{') depth++;
    if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

export interface LaunchThreads {
  threads: number;
  /** The launch's block argument as written. */
  expr: string;
}

export function launchThreads(source: string, config: Config): LaunchThreads | null {
  const code = stripCode(source);
  const launch = /<<<([^>]*?)>>>/.exec(code);
  if (!launch) return null;
  const parts = args(launch[1]);
  if (parts.length < 2) return null;
  const expr = parts[1];
  const defs = macros(code);
  const expand = (e: string, depth = 0): string =>
    depth > 8 ? e : e.replace(/\b[A-Za-z_]\w*\b/g, (id) => (id in config ? String(config[id]) : defs.has(id) ? `(${expand(defs.get(id)!, depth + 1)})` : id));
  const dims = (e: string): string[] => {
    const inline = /^dim3\s*\((.*)\)$/s.exec(e.trim());
    if (inline) return args(inline[1]);
    const name = /^[A-Za-z_]\w*$/.test(e.trim()) ? e.trim() : null;
    const decl = name ? new RegExp(`\\bdim3\\s+${name}\\s*\\(([^;]*)\\)\\s*;`).exec(code) : null;
    return decl ? args(decl[1]) : [e];
  };
  try {
    const clean = (e: string): string => expand(e).replace(/\(\s*(unsigned(\s+int)?|int|size_t)\s*\)/g, '');
    const n = dims(expr).reduce((p, d) => p * evalExpr(clean(d), {}), 1);
    return Number.isInteger(n) && n > 0 && n <= 1024 ? { threads: n, expr } : null;
  } catch {
    return null;
  }
}

/**
 * Whether every `__global__` function of the source carries `__launch_bounds__` (false when it has
 * none, or a `__noinline__` function whose own registers -maxrregcount could still cap). nvcc
 * ignores -maxrregcount for a kernel with launch bounds: its register budget comes from the bounds
 * (nvcc 13.0, `-Xptxas -v`: reduce_sum 30 registers and softmax 80 with -maxrregcount 16, 32, 64 or
 * none; test/launch-bounds.test.ts checks it on the installed nvcc), so a search of that flag over
 * such a source would only measure the same binary again. Every declaration counts: a prototype
 * without bounds makes this false (the conservative answer: the flag stays a dimension).
 */
export function everyKernelHasLaunchBounds(source: string): boolean {
  const code = stripCode(source);
  if (/\b__noinline__\b/.test(code)) return false;
  let kernels = 0;
  for (const m of code.matchAll(/\b__global__\b/g)) {
    kernels++;
    // What follows the qualifier up to the parameter list, a body or a declaration's end.
    const rest = code.slice(m.index + m[0].length);
    const stop = rest.search(/[({;]/);
    if (stop < 0) return false;
    const lead = rest.slice(0, stop);
    if (!/\b__launch_bounds__\s*$/.test(lead)) return false;
  }
  return kernels > 0;
}
