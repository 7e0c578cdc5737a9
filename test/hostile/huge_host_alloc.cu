// hostile case huge_host_alloc: expected runtime.
// Allocates and touches host memory in 1 GiB pieces (up to 1 TiB) and uses the result without checking: the capture process's RLIMIT_DATA makes malloc fail long before the machine runs out, and the write through NULL kills the process (runtime), instead of the OOM killer picking a victim.
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
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
  for (int i = 0; i < 1024; i++) { char* p = (char*)malloc(1ull << 30); memset(p, 1, 1ull << 30); }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
