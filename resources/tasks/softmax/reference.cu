// Reference: row-wise softmax, one thread per row, double precision.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_ref_kernel(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + (size_t)r * cols;
  float* yr = y + (size_t)r * cols;
  double m = xr[0];
  for (int c = 1; c < cols; ++c) m = fmax(m, (double)xr[c]);
  double s = 0.0;
  for (int c = 0; c < cols; ++c) s += exp((double)xr[c] - m);
  for (int c = 0; c < cols; ++c) yr[c] = (float)(exp((double)xr[c] - m) / s);
}

void softmax(const float* x, float* y, int rows, int cols) {
  const int block = 64;
  softmax_ref_kernel<<<(rows + block - 1) / block, block, 0, 0>>>(x, y, rows, cols);
}
