// hostile case oob_write_neighbour: expected correctness.
// Computes the right output but also writes 4096 floats past the end of y, where a neighbouring buffer would live: the guard region after every buffer, which the judge checks after every call the executor runs, catches it.
#include <cuda_runtime.h>
__global__ void k0(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols;
  float* yr = y + (size_t)warp * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / s;
}
__global__ void spill(float* y, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < 4096) y[n + i] = 1.0f; }
void softmax(const float* x, float* y, int rows, int cols) {
  k0<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
  spill<<<16, 256>>>(y, (size_t)rows * cols);
}
