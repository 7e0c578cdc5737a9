// Screening untrusted (model-written) code before it is built. Each rule names what it caught and
// why it is not allowed; matching runs on the source with comments and string literals blanked,
// so a comment that mentions cudaStreamCreate is not a violation.
import type { Task } from '../task/manifest.js';
import { checkEntryPoint } from './entry.js';
import { findFunctionDefs, lineAt, stripCode } from './csource.js';

export type ScreenRule =
  | 'stream-or-thread'
  | 'device-state'
  | 'timer'
  | 'host-io'
  | 'host-asm'
  | 'include'
  | 'sizes'
  | 'entry-signature'
  | 'precision'
  | 'state';

export interface ScreenViolation {
  rule: ScreenRule;
  reason: string;
  line: number;
  match: string;
}

export interface ScreenResult {
  ok: boolean;
  violations: ScreenViolation[];
  /** One line: the first violation, for the failure record. */
  reason?: string;
}

/** Headers a variant may include (CUDA runtime and device headers, the C/C++ numeric basics). */
export const ALLOWED_INCLUDES: ReadonlyArray<string | RegExp> = [
  'cuda_runtime.h', 'cuda_runtime_api.h', 'device_launch_parameters.h', 'device_functions.h', 'vector_types.h', 'vector_functions.h',
  'cuda_fp16.h', 'cuda_bf16.h', 'cuda_fp8.h', 'mma.h', 'math_constants.h', 'cooperative_groups.h', /^cooperative_groups\/[\w./]+$/,
  'cuda_pipeline.h', 'cuda_pipeline_primitives.h', 'cuda_awbarrier.h', 'cuda_awbarrier_primitives.h', /^cuda\/(pipeline|barrier|annotated_ptr|std\/[\w/]+)$/,
  /^cub\/[\w./]+$/, 'cub/cub.cuh', /^sm_\d+_intrinsics\.h$/, 'crt/math_functions.h',
  'math.h', 'cmath', 'float.h', 'cfloat', 'limits.h', 'climits', 'limits', 'stdint.h', 'cstdint', 'stddef.h', 'cstddef', 'stdbool.h',
  'stdio.h', 'cstdio', 'stdlib.h', 'cstdlib', 'string.h', 'cstring', 'assert.h', 'cassert',
  'type_traits', 'utility', 'algorithm', 'array', 'numeric', 'tuple', 'cstdarg', 'initializer_list',
];

function includeAllowed(name: string): boolean {
  return ALLOWED_INCLUDES.some((a) => (typeof a === 'string' ? a === name : a.test(name)));
}

interface PatternRule {
  rule: ScreenRule;
  re: RegExp;
  why: string;
}

// Things a variant has no business doing. Each `why` completes "… is not allowed: <why>".
const PATTERNS: PatternRule[] = [
  { rule: 'stream-or-thread', re: /\bcudaStreamCreate\w*\s*\(/g, why: 'variants must not create streams (work must run on the default stream so it is timed)' },
  { rule: 'stream-or-thread', re: /\bcuStreamCreate\w*\s*\(/g, why: 'variants must not create streams' },
  { rule: 'stream-or-thread', re: /\bcudaStreamPerThread\b|\bcudaStreamNonBlocking\b|\bCU_STREAM_PER_THREAD\b/g, why: 'work must run on the legacy default stream' },
  { rule: 'stream-or-thread', re: /\bcudaEventCreate\w*\s*\(|\bcudaEventElapsedTime\s*\(|\bcudaEventRecord\w*\s*\(/g, why: 'variants must not create, record or time events (the harness owns timing)' },
  { rule: 'stream-or-thread', re: /\bstd\s*::\s*(thread|jthread|async)\b|\bpthread_create\s*\(|\bthrd_create\s*\(|#\s*pragma\s+omp\b|\bomp_set_num_threads\b/g, why: 'variants must not start host threads' },
  { rule: 'stream-or-thread', re: /\b(v?fork|popen|system|posix_spawnp?|execl|execlp|execle|execv|execvp|execvpe|execve|clone|daemon)\s*\(/g, why: 'variants must not start processes' },
  { rule: 'device-state', re: /\b(cudaDeviceReset|cudaDeviceSetLimit|cudaSetDevice|cudaSetDeviceFlags|cudaDeviceSetMemPool|cudaSetValidDevices|cudaProfilerStart|cudaProfilerStop|cudaGraphLaunch|cudaStreamBeginCapture\w*|cuCtxCreate\w*|cuDevicePrimaryCtxReset\w*)\s*\(/g, why: 'variants must not reset or reconfigure the device, switch devices or capture/launch graphs' },
  { rule: 'device-state', re: /\bnvml\w*/g, why: 'variants must not call NVML (clocks, power limits)' },
  { rule: 'timer', re: /#\s*define\s+(cudaEvent\w+|cudaDeviceSynchronize|cudaStreamSynchronize|cudaMemcpy\w*|cudaMemset\w*|cudaGetLastError|cudaPeekAtLastError|clock_gettime|gettimeofday|clock|time|kd_\w+|main)\b/g, why: 'variants must not redefine timing, synchronisation or harness functions' },
  { rule: 'timer', re: /\b(clock_settime|settimeofday|adjtime|adjtimex|dlsym|dlopen|dlclose|LD_PRELOAD|__cxa_atexit|atexit|at_quick_exit|sigaction|signal|setitimer|kd_entry_packed|kd_\w+)\s*\(/g, why: 'variants must not touch clocks, symbols, signals or the harness' },
  { rule: 'host-io', re: /\b(fopen|freopen|fdopen|open|openat|creat|unlink|unlinkat|mkdir|rmdir|socket|connect|bind|listen|accept|send|sendto|recv|recvfrom|getaddrinfo|gethostbyname|mmap|shm_open|ioctl|ptrace|getenv|setenv|putenv|chdir|chmod|truncate|ftruncate)\s*\(/g, why: 'variants must not use files, the network, the environment or the OS' },
  { rule: 'host-io', re: /\bstd\s*::\s*(ofstream|ifstream|fstream|filesystem)\b|\bcurl_\w+|\bCURL\b|\bFILE\s*\*/g, why: 'variants must not use files or the network' },
];

const PRECISION: PatternRule[] = [
  { rule: 'precision', re: /\b(__half2?|half2?|__nv_bfloat162?|nv_bfloat162?|__nv_fp8\w*)\b/g, why: 'this task does not allow lowering precision (half/bfloat16/fp8 types)' },
  { rule: 'precision', re: /\b(__float2half\w*|__float2bfloat16\w*|__float_to_tf32|wmma\s*::\s*precision\s*::\s*tf32)\b|\btf32\b/g, why: 'this task does not allow lowering precision (half/bf16/tf32 conversions)' },
  { rule: 'precision', re: /\b(__expf|__exp10f|__logf|__log2f|__log10f|__powf|__sinf|__cosf|__tanf|__sincosf|__fdividef|__frcp_rn|__fsqrt_rn|__saturatef)\s*\(/g, why: 'this task does not allow fast-math intrinsics (fast_math is false)' },
  { rule: 'precision', re: /#\s*pragma\s+(nv_)?(fast_?math|fp_contract|float_control)\b|use_fast_math|-ftz|\bftz\b/g, why: 'this task does not allow fast math' },
];

/** Screens a variant's source. `task` enables the entry-signature, sizes and precision rules. */
export function screenSource(source: string, task?: Task): ScreenResult {
  const s = stripCode(source);
  const v: ScreenViolation[] = [];
  const add = (rule: ScreenRule, index: number, match: string, reason: string): void => void v.push({ rule, reason, line: lineAt(s, index), match: match.trim() });

  // #include: allow-list only, no local files.
  for (const m of s.matchAll(/^[ \t]*#[ \t]*include[ \t]*(<([^>\n]*)>|"([^"\n]*)"|[^\n]*)/gm)) {
    const name = (m[2] ?? m[3] ?? '').trim();
    if (m[3] !== undefined) add('include', m.index ?? 0, m[0], `#include "${name}" is not allowed: a variant is one self-contained file`);
    else if (m[2] === undefined) add('include', m.index ?? 0, m[0], `"${m[0].trim()}" is not allowed: include only CUDA and standard numeric headers by name`);
    else if (!includeAllowed(name)) add('include', m.index ?? 0, m[0], `#include <${name}> is not allowed: only CUDA runtime/device headers and standard numeric C/C++ headers may be included`);
  }
  for (const m of s.matchAll(/^[ \t]*#[ \t]*(import|include_next|embed)\b[^\n]*/gm)) add('include', m.index ?? 0, m[0], `"${m[0].trim()}" is not allowed`);

  const rules = [...PATTERNS, ...(task && task.manifest.fast_math !== true ? PRECISION : [])];
  for (const r of rules) {
    for (const m of s.matchAll(r.re)) add(r.rule, m.index ?? 0, m[0], `${m[0].replace(/\s*\($/, '').trim()} is not allowed: ${r.why}`);
  }

  // Inline assembly only inside __device__ / __global__ functions.
  const fns = findFunctionDefs(s);
  for (const m of s.matchAll(/\b(asm|__asm__|__asm)\b\s*(volatile|__volatile__)?\s*(\(|\{)/g)) {
    const at = m.index ?? 0;
    const fn = fns.find((f) => f.bodyStart < at && at < f.bodyEnd);
    if (!fn || !/\b(__device__|__global__)\b/.test(fn.prefix)) {
      add('host-asm', at, m[0], `inline assembly ${fn ? `in host function ${fn.name}` : 'outside any function'} is not allowed: only device code may use asm`);
    }
  }

  // Host functions must not keep state between calls (cached results): no static mutable variables.
  for (const m of s.matchAll(/\bstatic\s+([^;(){}=]*?)\b([A-Za-z_]\w*)\s*(=|;|\[|\{)/g)) {
    const type = m[1];
    if (/\b(constexpr|__device__|__global__|__host__|__constant__|__shared__|__forceinline__|inline|struct|class|enum|void|_Thread_local)\b/.test(type) || !type.trim()) continue;
    const lastStar = type.lastIndexOf('*');
    const immutable = lastStar >= 0 ? /\bconst\b/.test(type.slice(lastStar)) : /\bconst\b/.test(type);
    if (immutable) continue;
    add('state', m.index ?? 0, m[0], `static variable "${m[2]}" is not allowed: the entry point must not keep state (or cached results) between calls`);
  }
  for (const m of s.matchAll(/\b__managed__\b/g)) add('state', m.index ?? 0, m[0], '__managed__ memory is not allowed: it keeps state between calls outside the harness\'s buffers');

  if (task) {
    const m0 = task.manifest;
    const protectedNames = new Set<string>([m0.entry, ...m0.args.map((a) => a.name), ...Object.keys(m0.sizes[0] ?? {})]);
    for (const m of s.matchAll(/^[ \t]*#[ \t]*(define|undef)[ \t]+([A-Za-z_]\w*)/gm)) {
      if (protectedNames.has(m[2])) add('sizes', m.index ?? 0, m[0], `#${m[1]} ${m[2]} is not allowed: sizes, argument names and the entry point come from the task, not the variant`);
    }
    const e = checkEntryPoint(source, task);
    if (!e.ok) v.push({ rule: 'entry-signature', reason: e.reason ?? 'entry point mismatch', line: e.line ?? 1, match: m0.entry });
  }

  v.sort((a, b) => a.line - b.line);
  return v.length ? { ok: false, violations: v, reason: `line ${v[0].line}: ${v[0].reason}${v.length > 1 ? ` (and ${v.length - 1} more)` : ''}` } : { ok: true, violations: [] };
}
