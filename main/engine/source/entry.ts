// The task's entry point as C source sees it: the signature task.yaml's args give it, and whether a
// source (a user's file, a model's answer) defines it with that signature. Used before a build (the
// screen, the LLM policy) and after one fails in the shim (main/engine/build/signature.ts). Pure.
import { CTYPE, type Task } from '../task/manifest.js';
import { findFunctionDefs, paramType, splitParams, stripCode } from './csource.js';

/** `void softmax(const float* x, float* y, int n)`: the entry point task.yaml's args describe. */
export function entrySignature(task: Task): string {
  const m = task.manifest;
  const params = m.args.map((a) => (a.kind === 'buffer' ? `${a.role === 'in' ? 'const ' : ''}${CTYPE[a.dtype]}* ${a.name}` : `${CTYPE[a.dtype]} ${a.name}`));
  return `void ${m.entry}(${params.join(', ')})`;
}

export interface EntryCheck {
  ok: boolean;
  reason?: string;
  line?: number;
}

function expectedParams(task: Task): Array<{ name: string; base: string; pointer: number; constPointee: boolean }> {
  return task.manifest.args.map((a) =>
    a.kind === 'buffer' ? { name: a.name, base: CTYPE[a.dtype], pointer: 1, constPointee: a.role === 'in' } : { name: a.name, base: CTYPE[a.dtype], pointer: 0, constPointee: false },
  );
}

/** The code defines the task's entry point, returning void, with the manifest's parameter count and types. */
export function checkEntryPoint(code: string, task: Task): EntryCheck {
  const entry = task.manifest.entry;
  const stripped = stripCode(code);
  const defs = findFunctionDefs(stripped, entry).filter((d) => !/(::|\.|->)\s*$/.test(d.prefix));
  if (!defs.length) return { ok: false, reason: `the code does not define the entry point ${entry}(...)` };
  const want = expectedParams(task);
  const problems: string[] = [];
  for (const d of defs) {
    if (/\b(__global__|__device__)\b/.test(d.prefix) && !/\b__host__\b/.test(d.prefix)) {
      problems.push(`line ${d.line}: ${entry} must be a host function, not ${/__global__/.test(d.prefix) ? '__global__' : '__device__'}`);
      continue;
    }
    if (/\btemplate\b/.test(d.prefix)) {
      problems.push(`line ${d.line}: ${entry} must not be a template`);
      continue;
    }
    const ret = d.prefix.replace(/\b(static|inline|extern|__host__|__forceinline__|__noinline__)\b|"C"/g, ' ').trim();
    if (!/^void$/.test(ret.replace(/\s+/g, ' '))) {
      problems.push(`line ${d.line}: ${entry} must return void (got "${ret || '?'}")`);
      continue;
    }
    const got = splitParams(d.params).map(paramType);
    if (got.length !== want.length) {
      problems.push(`line ${d.line}: ${entry} takes ${got.length} parameters; the task needs ${want.length} (${want.map((w) => w.name).join(', ')})`);
      continue;
    }
    const bad: string[] = [];
    got.forEach((g, i) => {
      const w = want[i];
      const wantS = `${w.constPointee ? 'const ' : ''}${w.base}${w.pointer ? '*' : ''}`;
      if (g.base !== w.base || g.pointer !== w.pointer || (w.pointer > 0 && g.constPointee !== w.constPointee)) bad.push(`parameter ${i + 1} (${w.name}) is "${g.raw}", expected ${wantS}`);
    });
    if (bad.length) {
      problems.push(`line ${d.line}: ${bad.join('; ')}`);
      continue;
    }
    return { ok: true, line: d.line };
  }
  return { ok: false, reason: `the entry point does not match the task's signature: ${problems.join(' | ')}`, line: defs[0].line };
}
