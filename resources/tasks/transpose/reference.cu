// Reference for transpose: one thread per element, out[c][r] = in[r][c].
#include <cuda_runtime.h>

__global__ void transpose_reference_kernel(const float* in, float* out, int rows, int cols) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;   // linear index into in
  long long total = (long long)rows * cols;
  if (i < total) {
    long long r = i / cols, c = i % cols;
    out[c * rows + r] = in[i];
  }
}

void transpose(const float* in, float* out, int rows, int cols) {
  long long total = (long long)rows * cols;
  if (total <= 0) return;
  const int block = 256;
  const long long grid = (total + block - 1) / block;
  transpose_reference_kernel<<<(unsigned int)grid, block, 0, 0>>>(in, out, rows, cols);
}
