// Reading a model's answer: the three parts the prompt demands (performance analysis, algorithm
// design, code). Whether the code defines the task's entry point is main/engine/source/entry.ts.
import { stripCode } from '../source/csource.js';

export interface AnswerParts {
  analysis: string;
  design: string;
  code: string;
  /** Parts the answer did not label (their text may then be empty or guessed). */
  missing: Array<'analysis' | 'design'>;
}

export type ParseResult = { ok: true; parts: AnswerParts } | { ok: false; reason: string; parts?: Partial<AnswerParts> };

const FENCE = /```([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;
const CODE_LANGS = new Set(['cuda', 'cu', 'cpp', 'c++', 'c', 'cc', 'cxx', 'hpp', '']);

const HEADING = (words: string): RegExp =>
  new RegExp(`^[ \\t]*(?:#{1,6}[ \\t]*|\\*\\*|__)?[ \\t]*(?:(?:part[ \\t]*)?[0-9]+[.):]?[ \\t]*)?(?:${words})\\b[^\\n]*$`, 'im');
const H_ANALYSIS = HEADING('performance[ \\t]+analysis|analysis');
const H_DESIGN = HEADING('algorithm[ \\t]+design|design|algorithm');
const H_CODE = HEADING('code|implementation|cuda[ \\t]+code');

/** Splits an answer into analysis, design and code. Fails when there is no complete code block. */
export function parseAnswer(text: string, entry?: string): ParseResult {
  const entryRe = entry ? new RegExp(`\\b${entry}\\s*\\(`) : null;
  return parseWith(text, CODE_LANGS, 'cuda', entryRe ? (body) => entryRe.test(stripCode(body)) : null);
}

const PYTHON_LANGS = new Set(['python', 'py', 'python3', '']);
const MODEL_NEW = /^\s*class\s+ModelNew\b/m;

/** The same for a Python candidate's answer: the code is one ```python block that defines class ModelNew. */
export function parsePythonAnswer(text: string): ParseResult {
  const r = parseWith(text, PYTHON_LANGS, 'python', (body) => MODEL_NEW.test(body));
  if (r.ok && !MODEL_NEW.test(r.parts.code)) return { ok: false, reason: 'the code defines no class ModelNew', parts: r.parts };
  return r;
}

function parseWith(text: string, langs: Set<string>, langName: string, defines: ((body: string) => boolean) | null): ParseResult {
  const blocks: Array<{ lang: string; body: string; start: number; closed: boolean }> = [];
  for (const m of text.matchAll(FENCE)) {
    blocks.push({ lang: m[1].toLowerCase(), body: m[2], start: m.index ?? 0, closed: m[0].trimEnd().endsWith('```') && m[0].length > 3 + m[1].length });
  }
  const codeBlocks = blocks.filter((b) => langs.has(b.lang));
  if (!codeBlocks.length) return { ok: false, reason: `the answer has no \`\`\`${langName} code block` };
  // The block that defines the entry point (ModelNew) wins; else the last one.
  const withEntry = defines ? codeBlocks.filter((b) => defines(b.body)) : [];
  const chosen = withEntry.length ? withEntry[withEntry.length - 1] : codeBlocks[codeBlocks.length - 1];
  if (!chosen.closed) return { ok: false, reason: 'the code block is not closed (the answer was cut off?)' };
  const code = chosen.body.replace(/\s+$/, '') + '\n';
  if (!code.trim()) return { ok: false, reason: 'the code block is empty' };

  const prose = text.slice(0, chosen.start);
  const ia = prose.search(H_ANALYSIS);
  const idn = prose.search(H_DESIGN);
  const ic = prose.search(H_CODE);
  const missing: AnswerParts['missing'] = [];
  const cut = (from: number, ...ends: number[]): string => {
    const after = ends.filter((e) => e > from);
    const end = after.length ? Math.min(...after) : prose.length;
    return prose.slice(from, end).replace(/^[^\n]*\n?/, '').trim();
  };
  let analysis = '';
  let design = '';
  if (ia >= 0) analysis = cut(ia, idn, ic);
  else missing.push('analysis');
  if (idn >= 0 && idn !== ia) design = cut(idn, ia > idn ? ia : -1, ic);
  else missing.push('design');
  if (ia < 0 && idn < 0) analysis = prose.trim(); // unlabelled prose: keep it as the analysis
  return { ok: true, parts: { analysis, design, code, missing } };
}
