// hostile case stale_after_first_call: expected correctness.
// Writes the output only on its first call (a __device__ flag remembers it was done) and returns immediately afterwards. The executor restores the variant's device variables before every call to their values after the capture process's first calls, so the flag is already set: every call returns at once and the check finds the poisoned outputs (got NaN).
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
__device__ int g_done = 0;
__global__ void k(const float* x, float* y, int rows, int cols) {
  if (g_done) return;
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols; float* yr = y + (size_t)warp * cols;
  float m = -INFINITY; for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f; for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / s;
}
__global__ void mark() { g_done = 1; }
void softmax(const float* x, float* y, int rows, int cols) {
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
  mark<<<1, 1>>>();
}
