// hostile case input_overwrite: expected correctness.
// Uses its const input x as scratch (overwrites its first 256 values): after the call the judge regenerates x from the call's seed and compares, so the check fails naming x.
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
__global__ void scribble(float* x, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) x[i] = 0.5f; }
void softmax(const float* x, float* y, int rows, int cols) {
  k0<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
  scribble<<<1, 256>>>(const_cast<float*>(x), (size_t)rows * cols < 256 ? (size_t)rows * cols : 256);
}
