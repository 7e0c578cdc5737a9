// Why a variant's build failed in the generated shim (main/engine/build/shim.ts), in the task's terms: the
// shim calls the entry point with task.yaml's exact signature, so an error there means the variant's
// entry point differs from it. nvcc says `shim.cu(5): error: argument of type "const float *" is
// incompatible…` about a file the user never wrote; this says which signature was expected and
// which argument differs. Pure.
import type { Task } from '../task/manifest.js';
import { entrySignature, checkEntryPoint } from '../source/entry.js';

/** The argument of the shim's call that nvcc's caret (the line after the call) points at, or null. */
function caretArgument(task: Task, log: string): number | null {
  const lines = log.split('\n');
  const entry = task.manifest.entry;
  for (let i = 0; i + 2 < lines.length; i++) {
    if (!/^shim\.cu\(\d+\).*error/.test(lines[i])) continue;
    const call = lines[i + 1];
    const caret = lines[i + 2].indexOf('^');
    const open = call.indexOf(`${entry}(`);
    if (caret < 0 || open < 0 || caret <= open) continue;
    let depth = 0;
    let arg = 0;
    for (let k = open + entry.length; k < caret && k < call.length; k++) {
      if (call[k] === '(') depth++;
      else if (call[k] === ')') depth--;
      else if (call[k] === ',' && depth === 1) arg++;
    }
    return arg < task.manifest.args.length ? arg : null;
  }
  return null;
}

/**
 * For a failed build: the expected signature and the argument that differs when nvcc's errors are
 * in the shim (the variant's entry point does not fit the task), else null.
 */
export function explainShimErrors(task: Task, source: string, log: string): string | null {
  if (!/^shim\.cu\(\d+\).*error/m.test(log)) return null;
  const want = `expected ${entrySignature(task)} (the args of task.yaml)`;
  const e = checkEntryPoint(source, task);
  const entry = task.manifest.entry;
  if (!e.ok && /does not define the entry point/.test(e.reason ?? '')) return `the variant defines no function "${entry}", the task's entry point: ${want}`;
  if (!e.ok) return `the entry point does not match the task's signature: ${want}; ${(e.reason ?? '').replace(/^the entry point does not match the task's signature: /, '')}`;
  const i = caretArgument(task, log);
  const nvcc = log.split('\n').find((l) => /^shim\.cu\(\d+\).*error/.test(l))!.replace(/^shim\.cu\(\d+\):\s*(error:\s*)?/, '');
  const a = i === null ? null : task.manifest.args[i];
  return `the entry point does not match the task's signature: ${want}${a ? `; argument ${i! + 1} (${a.name}) differs` : ''} (nvcc: ${nvcc})`;
}
