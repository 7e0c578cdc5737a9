// hostile case inf_output: expected correctness.
// Computes exp without the max subtraction and without normalising: overflows to +Inf for large inputs (and is wrong elsewhere): caught as correctness.
#include <cuda_runtime.h>
__global__ void k(const float* x, float* y, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] > 0.f ? INFINITY : expf(x[i]); }
void softmax(const float* x, float* y, int rows, int cols) { size_t n = (size_t)rows * cols; k<<<(unsigned)((n + 255) / 256), 256>>>(x, y, n); }
