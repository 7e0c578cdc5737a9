// Parses `nvcc -Xptxas -v` output into per-kernel resource usage.
import type { KernelResources } from '../base/types.js';

/** Best-effort Itanium demangling of the kernel name (`_Z6kernelPKfPfii` -> `kernel`). */
export function shortKernelName(mangled: string): string {
  const m = /^_Z(?:L)?(\d+)(.*)$/.exec(mangled);
  if (m) {
    const n = Number(m[1]);
    return m[2].slice(0, n);
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
    if (parts.length) return parts.join('::');
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
