// Small, dependable views of C/CUDA source text for parsing and screening: comments and string or
// character literals blanked out (newlines and offsets kept, so positions map back to lines),
// function definitions found by brace matching, and parameter lists split and normalised.

/** Source with comments, string and char literals replaced by spaces (same length, same newlines).
 * `#include "..."` keeps its quoted name so include screening still sees it. */
export function stripCode(src: string): string {
  const out = src.split('');
  const n = src.length;
  let i = 0;
  const blank = (a: number, b: number): void => {
    for (let k = a; k < b && k < n; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  let lineStart = true;
  let inInclude = false;
  while (i < n) {
    const c = src[i];
    if (c === '\n') {
      lineStart = true;
      inInclude = false;
      i++;
      continue;
    }
    if (lineStart && /\s/.test(c)) {
      i++;
      continue;
    }
    if (lineStart) {
      lineStart = false;
      if (c === '#' && /^#\s*include\b/.test(src.slice(i, i + 40))) inInclude = true;
    }
    if (c === '/' && src[i + 1] === '/') {
      let j = i;
      while (j < n && src[j] !== '\n') j++;
      blank(i, j);
      i = j;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const j = end < 0 ? n : end + 2;
      blank(i, j);
      i = j;
      continue;
    }
    if (c === '"' || (c === "'" && !/[0-9A-Fa-f]/.test(src[i - 1] ?? ''))) {
      let j = i + 1;
      while (j < n && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      if (!(inInclude && c === '"')) blank(i + 1, Math.min(j, n));
      i = j + 1;
      continue;
    }
    i++;
  }
  return out.join('');
}

export function lineAt(text: string, index: number): number {
  let l = 1;
  for (let k = 0; k < index && k < text.length; k++) if (text.charCodeAt(k) === 10) l++;
  return l;
}

/** Index of the bracket matching the one at `open` (for ( [ {), or -1. */
export function matchBracket(text: string, open: number): number {
  const o = text[open];
  const c = o === '(' ? ')' : o === '[' ? ']' : o === '{' ? '}' : '';
  if (!c) return -1;
  let d = 0;
  for (let k = open; k < text.length; k++) {
    if (text[k] === o) d++;
    else if (text[k] === c && --d === 0) return k;
  }
  return -1;
}

export interface FunctionDef {
  name: string;
  /** Text from the start of the declaration (after the previous ; } or {) up to the name. */
  prefix: string;
  params: string;
  /** Offsets of the body braces in the stripped text. */
  bodyStart: number;
  bodyEnd: number;
  line: number;
}

/** Function definitions named `name` (or every function when name is omitted) in stripped source. */
export function findFunctionDefs(stripped: string, name?: string): FunctionDef[] {
  const out: FunctionDef[] = [];
  const re = name ? new RegExp(`\\b${name}\\s*\\(`, 'g') : /\b([A-Za-z_]\w*)\s*\(/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(stripped))) {
    const fname = name ?? m[1];
    if (/^(if|for|while|switch|return|sizeof|decltype|catch|alignof|__launch_bounds__|__attribute__|__declspec|asm|__asm__|defined)$/.test(fname)) continue;
    const open = m.index + m[0].length - 1;
    const close = matchBracket(stripped, open);
    if (close < 0) continue;
    // After the parameter list: qualifiers, then a body.
    const after = /^\s*(?:const\s*|noexcept\s*|override\s*|final\s*|->\s*[\w:<>*& ]+)*\{/.exec(stripped.slice(close + 1, close + 200));
    if (!after) continue;
    const bodyStart = close + after[0].length;
    const bodyEnd = matchBracket(stripped, bodyStart);
    if (bodyEnd < 0) continue;
    let s = m.index - 1;
    while (s >= 0 && !';{}'.includes(stripped[s])) s--;
    let prefix = stripped.slice(s + 1, m.index);
    // Drop preprocessor lines that sit between the previous statement and this definition.
    prefix = prefix.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
    out.push({ name: fname, prefix: prefix.trim(), params: stripped.slice(open + 1, close), bodyStart, bodyEnd, line: lineAt(stripped, m.index) });
    if (!name) re.lastIndex = bodyEnd;
  }
  return out;
}

/** Splits a parameter list at top-level commas. */
export function splitParams(params: string): string[] {
  const parts: string[] = [];
  let d = 0;
  let cur = '';
  for (const ch of params) {
    if ('([{<'.includes(ch)) d++;
    else if (')]}>'.includes(ch)) d--;
    if (ch === ',' && d === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() || parts.length) parts.push(cur);
  const list = parts.map((p) => p.replace(/\s+/g, ' ').trim());
  return list.length === 1 && (list[0] === '' || list[0] === 'void') ? [] : list;
}

const TYPE_ALIASES: Array<[RegExp, string]> = [
  [/\bunsigned\s+long\s+long(\s+int)?\b|\buint64_t\b/g, 'unsigned long long'],
  [/\blong\s+long(\s+int)?\b|\bsigned\s+long\s+long\b|\bint64_t\b/g, 'long long'],
  [/\bunsigned\s+char\b|\buint8_t\b/g, 'unsigned char'],
  [/\bunsigned\s+int\b|\buint32_t\b|\bunsigned\b(?!\s+(char|long|short))/g, 'unsigned int'],
  [/\bsigned\s+int\b|\bint32_t\b/g, 'int'],
];

export interface ParamType {
  /** Base type, e.g. `float`, `unsigned int`. */
  base: string;
  pointer: number;
  /** const applies to the pointee (for pointers). */
  constPointee: boolean;
  raw: string;
}

/** Normalises one parameter declaration (`const float* __restrict__ x`) to its type. */
export function paramType(decl: string): ParamType {
  let s = ` ${decl.replace(/=.*$/, '')} `
    .replace(/\b(__restrict__|__restrict|restrict|register|volatile)\b/g, ' ')
    .replace(/\[\s*\]/g, '*');
  const pointer = (s.match(/\*/g) ?? []).length;
  // const before the first '*' (either side of the base type) applies to the pointee.
  const star = s.indexOf('*');
  const head = star >= 0 ? s.slice(0, star) : s;
  const constPointee = pointer > 0 && /\bconst\b/.test(head);
  s = head.replace(/\bconst\b/g, ' ');
  for (const [re, to] of TYPE_ALIASES) s = s.replace(re, to);
  let words = s.trim().split(/\s+/).filter(Boolean);
  // Drop the parameter name (the last identifier) when there is one beyond the type.
  const typeWords = new Set(['unsigned', 'signed', 'long', 'short', 'int', 'char', 'float', 'double', 'bool', 'void', 'size_t']);
  if (pointer === 0 && words.length > 1 && !typeWords.has(words[words.length - 1])) words = words.slice(0, -1);
  if (pointer > 0) {
    // the name follows the '*'
  }
  const base = words.join(' ').replace(/\bunsigned int unsigned int\b/, 'unsigned int');
  return { base, pointer, constPointee, raw: decl.trim() };
}
