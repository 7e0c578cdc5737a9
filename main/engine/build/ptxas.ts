// Parses `nvcc -Xptxas -v` output into per-kernel resource usage.
import type { KernelResources } from '../base/types.js';

const BUILTIN: Record<string, string> = {
  v: 'void', b: 'bool', c: 'char', a: 'signed char', h: 'unsigned char', s: 'short', t: 'unsigned short', i: 'int', j: 'unsigned int',
  l: 'long', m: 'unsigned long', x: 'long long', y: 'unsigned long long', f: 'float', d: 'double', Dh: '__half',
};

/**
 * Template arguments at the start of `s` (`I...E`, Itanium): integer and bool literals, builtin
 * and length-prefixed type names. Returns the `<...>` text and what follows, or null if an
 * argument is something else (the caller then writes `<…>`).
 */
function templateArgs(s: string): { text: string; rest: string } | null {
  if (!s.startsWith('I')) return null;
  let rest = s.slice(1);
  const args: string[] = [];
  while (rest && !rest.startsWith('E')) {
    const lit = /^L([a-z])(n?)(\d+)E/.exec(rest);
    if (lit) {
      args.push(lit[1] === 'b' ? (lit[3] === '0' ? 'false' : 'true') : `${lit[2] ? '-' : ''}${lit[3]}${lit[1] === 'j' || lit[1] === 'm' || lit[1] === 'y' ? 'u' : ''}`);
      rest = rest.slice(lit[0].length);
      continue;
    }
    const builtin = /^(Dh|[vbcahstijlmxyfd])/.exec(rest);
    if (builtin) {
      args.push(BUILTIN[builtin[1]]);
      rest = rest.slice(builtin[1].length);
      continue;
    }
    const named = /^(\d+)/.exec(rest);
    if (named) {
      const n = Number(named[1]);
      args.push(rest.slice(named[1].length, named[1].length + n));
      rest = rest.slice(named[1].length + n);
      continue;
    }
    return null;
  }
  if (!rest.startsWith('E')) return null;
  return { text: `<${args.join(', ')}>`, rest: rest.slice(1) };
}

/**
 * Best-effort Itanium demangling of the kernel name (`_Z6kernelPKfPfii` -> `kernel`), with simple
 * template arguments (`_ZN5ln_kd16layernorm_kernelILi8EEEvPKf...` -> `ln_kd::layernorm_kernel<8>`),
 * so that the instantiations of one kernel template are told apart.
 */
export function shortKernelName(mangled: string): string {
  const withArgs = (name: string, rest: string): string => {
    if (!rest.startsWith('I')) return name;
    return name + (templateArgs(rest)?.text ?? '<…>');
  };
  const m = /^_Z(?:L)?(\d+)(.*)$/.exec(mangled);
  if (m) {
    const n = Number(m[1]);
    return withArgs(m[2].slice(0, n), m[2].slice(n));
  }
  const nested = /^_ZN(.*)$/.exec(mangled);
  if (nested) {
    let rest = nested[1];
    const parts: string[] = [];
    for (;;) {
      const p = /^(\d+)(.*)$/.exec(rest);
      if (!p) break;
      const n = Number(p[1]);
      parts.push(p[2].slice(0, n));
      rest = p[2].slice(n);
    }
    if (parts.length) return withArgs(parts.join('::'), rest);
  }
  return mangled;
}

export function parsePtxas(log: string): KernelResources[] {
  const out = new Map<string, KernelResources>();
  let current: KernelResources | null = null;
  const get = (mangled: string): KernelResources => {
    let k = out.get(mangled);
    if (!k) {
      k = { name: shortKernelName(mangled), registers: 0, sharedBytes: 0, constantBytes: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0 };
      out.set(mangled, k);
    }
    return k;
  };
  for (const line of log.split('\n')) {
    let m = /Compiling entry function '([^']+)'/.exec(line);
    if (m) {
      current = get(m[1]);
      continue;
    }
    m = /Function properties for (\S+)/.exec(line);
    if (m) {
      current = out.get(m[1]) ?? null;
      continue;
    }
    if (!current) continue;
    m = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (m) {
      current.stackBytes = Number(m[1]);
      current.spillStoreBytes = Number(m[2]);
      current.spillLoadBytes = Number(m[3]);
      continue;
    }
    m = /Used (\d+) registers/.exec(line);
    if (m) {
      current.registers = Number(m[1]);
      const smem = /(\d+) bytes smem/.exec(line);
      if (smem) current.sharedBytes = Number(smem[1]);
      const cmem = /(\d+) bytes cmem\[0\]/.exec(line);
      if (cmem) current.constantBytes = Number(cmem[1]);
    }
  }
  return [...out.values()];
}
