// The reason a failed load_inline build gives in the CUDA-L1 audit (bench/cuda-l1-audit.ts): the
// compiler's own error lines, not torch's "Error building extension" or ninja's command lines.
import { describe, expect, it } from 'vitest';
import { buildErrorLine } from '../main/engine/pytorch/candidate.js';

const TORCH_FAILURE = [
  "RuntimeError: Error building extension 'gelu_cuda': [1/3] /opt/gcc/bin/g++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=gelu_cuda -isystem /opt/torch/include -fPIC -std=c++17 -c /tmp/x/main.cpp -o main.o",
  'FAILED: cuda.cuda.o',
  '/usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d -ccbin /opt/gcc/bin/gcc -DTORCH_EXTENSION_NAME=gelu_cuda -c /tmp/x/cuda.cu -o cuda.cuda.o',
  '/tmp/x/cuda.cu(21): error: identifier "__shfl_down" is undefined',
  '      val += __shfl_down(val, offset);',
  '/tmp/x/cuda.cu(40): error: class "at::Tensor" has no member "type"',
  '/tmp/x/cuda.cu(52): error: too few arguments in function call',
  '3 errors detected in the compilation of "/tmp/x/cuda.cu".',
  'ninja: build stopped: subcommand failed.',
].join('\n');

describe('buildErrorLine', () => {
  it("names the compiler's first two errors, not torch's wrapper or ninja's command", () => {
    const line = buildErrorLine(TORCH_FAILURE);
    expect(line).toBe('/tmp/x/cuda.cu(21): error: identifier "__shfl_down" is undefined / /tmp/x/cuda.cu(40): error: class "at::Tensor" has no member "type"');
  });

  it("finds g++'s errors (file:line:col: error:) and the linker's fatal errors", () => {
    expect(buildErrorLine("RuntimeError: Error building extension 'x'\n/tmp/main.cpp:12:5: error: 'foo' was not declared in this scope\n")).toBe("/tmp/main.cpp:12:5: error: 'foo' was not declared in this scope");
    expect(buildErrorLine('ld: fatal error: cannot find -lcublasLt_static')).toBe('ld: fatal error: cannot find -lcublasLt_static');
    expect(buildErrorLine('ptxas error   : Entry function uses too much shared data')).toBe('ptxas error   : Entry function uses too much shared data');
  });

  it('falls back to the first line when no compiler error is said (a Python error, a timeout)', () => {
    expect(buildErrorLine("TypeError: load() got an unexpected keyword argument 'code'\n  at ...")).toBe("TypeError: load() got an unexpected keyword argument 'code'");
    expect(buildErrorLine('')).toBe('');
  });
});
