// Source transforms of a kernel, found and applied on a real parse tree (tree-sitter's C++ grammar
// as WebAssembly: no native build, works in Node and Electron).
//
// CUDA qualifiers (`__global__`, `__launch_bounds__(...)`, `__restrict__`, `<<<...>>>`) are not
// C++, so the source is parsed with each of them blanked out by spaces of the same length: every
// offset in the tree is an offset in the original text, and the tree is clean C++. What is still
// unparseable shows up as ERROR nodes; a transform whose site touches one is not offered.
//
// Transforms (each has an id recorded in VariantSpec.transforms):
//   unroll@<kernel>/for<k>=<N>   `#pragma unroll N` before the k-th `for` of a __global__ function
//   restrict@<kernel>            `__restrict__` on every pointer parameter of the kernel lacking it
//   launch_bounds@<kernel>=<E>   `__launch_bounds__(E)` where E, the block size of every launch of the
//                                kernel, is a tunable or a macro of tunables (else not offered)
import { join } from 'node:path';
import { Language, Parser, type Node, type Tree } from 'web-tree-sitter';
import { resourcesDir } from '../base/paths.js';

export interface TransformSite {
  /** Dimension name in the action space (an id up to its `=`). */
  dim: string;
  kind: 'unroll' | 'restrict' | 'launch_bounds';
  kernel: string;
  /** Transform ids this site offers (mutually exclusive). */
  options: string[];
  /** 1-based line of the site in the original source. */
  line: number;
}

export interface TransformCatalog {
  /** The source the sites were found in. */
  source: string;
  sites: TransformSite[];
  /** Applies transforms by id (any order; unknown ids throw). */
  apply(ids: readonly string[]): string;
}

export interface FindOptions {
  /** Tunable names (a launch bound must be a tunable or a macro of them). */
  tunables?: string[];
  /** Unroll factors offered. */
  unrollFactors?: number[];
  /** At most this many loops per kernel (innermost first). */
  maxLoopsPerKernel?: number;
}

let parserP: Promise<Parser> | null = null;
/** The C++ parser (loaded once per process). */
export function cppParser(): Promise<Parser> {
  parserP ??= (async () => {
    await Parser.init();
    const lang = await Language.load(join(resourcesDir(), 'grammars', 'tree-sitter-cpp.wasm'));
    const p = new Parser();
    p.setLanguage(lang);
    return p;
  })();
  parserP.catch(() => (parserP = null));
  return parserP;
}

const blank = (s: string): string => s.replace(/[^\n]/g, ' ');

/** CUDA-only syntax replaced by spaces of equal length (offsets preserved). */
export function maskCuda(src: string): string {
  return src
    .replace(/__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)/g, blank)
    .replace(/<<<[\s\S]*?>>>/g, blank)
    .replace(/\b__(?:global|device|host|forceinline|noinline|restrict|shared|constant|managed|grid_constant)__\b/g, blank);
}

export async function parseCuda(src: string): Promise<Tree> {
  const p = await cppParser();
  const t = p.parse(maskCuda(src));
  if (!t) throw new Error('tree-sitter returned no tree');
  return t;
}

function descendants(n: Node, type: string, out: Node[] = []): Node[] {
  for (const c of n.namedChildren) {
    if (!c) continue;
    if (c.type === type) out.push(c);
    descendants(c, type, out);
  }
  return out;
}

function hasError(n: Node): boolean {
  return n.hasError || n.type === 'ERROR';
}

function functionDeclarator(fn: Node): Node | null {
  let d = fn.childForFieldName('declarator');
  for (let i = 0; d && i < 8; i++) {
    if (d.type === 'function_declarator') return d;
    d = d.childForFieldName('declarator');
  }
  return null;
}

function lineStart(src: string, i: number): number {
  return src.lastIndexOf('\n', i - 1) + 1;
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    if (ch === ')' || ch === ']' || ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

interface Edit {
  pos: number;
  text: string;
}

/** Finds the transform sites of a CUDA source. Never throws for unusual code: it offers less. */
export async function findTransforms(src: string, o: FindOptions = {}): Promise<TransformCatalog> {
  const tree = await parseCuda(src);
  const root = tree.rootNode;
  const tunables = new Set(o.tunables ?? []);
  const factors = o.unrollFactors ?? [2, 4, 8];
  const maxLoops = o.maxLoopsPerKernel ?? 4;
  const edits = new Map<string, Edit[]>();
  const sites: TransformSite[] = [];

  // Macros that are compile-time functions of tunables (a launch bound may use them).
  const macros = new Map<string, string>();
  for (const d of descendants(root, 'preproc_def')) {
    const name = d.childForFieldName('name')?.text;
    const value = d.childForFieldName('value')?.text;
    if (name && value) macros.set(name, value.trim());
  }
  const staticOf = (expr: string, depth = 0): boolean => {
    if (depth > 8) return false;
    const ids = expr.match(/[A-Za-z_]\w*/g) ?? [];
    if (!/^[\w\s()+\-*/%<>=!?:&|]+$/.test(expr)) return false;
    return ids.every((id) => tunables.has(id) || (macros.has(id) && staticOf(macros.get(id)!, depth + 1)));
  };

  const kernels = descendants(root, 'function_definition').filter((fn) => {
    const body = fn.childForFieldName('body');
    // Qualifiers before the return type were blanked: look from the end of what precedes the function.
    const from = fn.previousSibling?.endIndex ?? fn.parent?.startIndex ?? fn.startIndex;
    return !!body && /\b__global__\b/.test(src.slice(from, body.startIndex));
  });
  for (const fn of kernels) {
    const fd = functionDeclarator(fn);
    const body = fn.childForFieldName('body');
    const nameNode = fd?.childForFieldName('declarator');
    if (!fd || !body || !nameNode) continue;
    const kernel = nameNode.text.split('::').pop()!;
    if (!/^[A-Za-z_]\w*$/.test(kernel)) continue;
    const header = src.slice(fn.previousSibling?.endIndex ?? fn.parent?.startIndex ?? fn.startIndex, body.startIndex);
    const line = fn.startPosition.row + 1;

    // __restrict__ on pointer parameters.
    const params = fd.childForFieldName('parameters');
    if (params && !hasError(params)) {
      const ins: Edit[] = [];
      for (const p of params.namedChildren) {
        if (!p || p.type !== 'parameter_declaration') continue;
        const decl = p.childForFieldName('declarator');
        if (!decl || decl.type !== 'pointer_declarator') continue;
        if (src.slice(p.startIndex, p.endIndex).includes('__restrict__')) continue;
        const inner = decl.childForFieldName('declarator');
        if (!inner) continue;
        ins.push({ pos: inner.startIndex, text: '__restrict__ ' });
      }
      if (ins.length) {
        const id = `restrict@${kernel}`;
        edits.set(id, ins);
        sites.push({ dim: id, kind: 'restrict', kernel, options: [id], line });
      }
    }

    // __launch_bounds__(block size) when every launch's block size is a static function of tunables.
    if (!header.includes('__launch_bounds__') && !hasError(fd)) {
      const re = new RegExp(`\\b${kernel}\\s*(?:<[^<>;]*>)?\\s*<<<([\\s\\S]*?)>>>`, 'g');
      const blocks = new Set<string>();
      for (const m of src.matchAll(re)) blocks.add(splitTopLevel(m[1])[1] ?? '');
      const [b] = [...blocks];
      if (blocks.size === 1 && b && staticOf(b) && /[A-Za-z_]/.test(b)) {
        const id = `launch_bounds@${kernel}=${b.replace(/\s+/g, '')}`;
        edits.set(id, [{ pos: nameNode.startIndex, text: `__launch_bounds__(${b}) ` }]);
        sites.push({ dim: `launch_bounds@${kernel}`, kind: 'launch_bounds', kernel, options: [id], line });
      }
    }

    // #pragma unroll N on loops of the kernel that begin their line and are not unrolled already.
    const loops = descendants(body, 'for_statement');
    const candidates: Array<{ node: Node; k: number; inner: boolean }> = [];
    loops.forEach((node, k) => {
      if (hasError(node)) return;
      const ls = lineStart(src, node.startIndex);
      if (src.slice(ls, node.startIndex).trim() !== '') return;
      const prevEnd = ls - 1;
      const prevStart = prevEnd > 0 ? lineStart(src, prevEnd) : 0;
      if (/^\s*#\s*pragma\s+unroll/.test(src.slice(prevStart, Math.max(prevStart, prevEnd)))) return;
      candidates.push({ node, k, inner: descendants(node, 'for_statement').length === 0 });
    });
    candidates.sort((a, b) => Number(b.inner) - Number(a.inner) || a.k - b.k);
    for (const c of candidates.slice(0, maxLoops).sort((a, b) => a.k - b.k)) {
      const ls = lineStart(src, c.node.startIndex);
      const indent = src.slice(ls, c.node.startIndex);
      const dim = `unroll@${kernel}/for${c.k}`;
      const options = factors.map((f) => `${dim}=${f}`);
      for (const [i, id] of options.entries()) edits.set(id, [{ pos: ls, text: `${indent}#pragma unroll ${factors[i]}\n` }]);
      sites.push({ dim, kind: 'unroll', kernel, options, line: c.node.startPosition.row + 1 });
    }
  }
  tree.delete();

  return {
    source: src,
    sites,
    apply(ids) {
      const all: Edit[] = [];
      const dims = new Set<string>();
      for (const id of ids) {
        const e = edits.get(id);
        if (!e) throw new Error(`unknown transform "${id}" for this source (offered: ${[...edits.keys()].join(', ') || 'none'})`);
        const dim = id.includes('=') && id.startsWith('unroll@') ? id.slice(0, id.indexOf('=')) : id;
        if (dims.has(dim)) throw new Error(`transforms ${ids.join(', ')} apply twice at ${dim}`);
        dims.add(dim);
        all.push(...e);
      }
      // Later positions first, so earlier offsets stay valid.
      all.sort((a, b) => b.pos - a.pos);
      let out = src;
      for (const e of all) out = out.slice(0, e.pos) + e.text + out.slice(e.pos);
      return out;
    },
  };
}
