// hostile case syntax_error: expected compile.
// A syntax error inside the kernel: nvcc rejects it; the entry point itself parses, so the screen lets it through to the compiler.
#include <cuda_runtime.h>
__global__ void k(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x
  if (i < n) y[i] = x[i] +;
}
void softmax(const float* x, float* y, int rows, int cols) { k<<<(rows * cols + 255) / 256, 256>>>(x, y, rows * cols); }
