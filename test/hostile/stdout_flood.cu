// hostile case stdout_flood: expected runtime.
// Prints endlessly from the host: the capture process's output is capped at 256 KiB and its process group is killed as soon as it passes the cap (a variant must not print).
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
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
void softmax(const float* x, float* y, int rows, int cols) {
  for (long i = 0; i < 100000000L; i++) printf("flood %ld ................................................................\n", i);
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
