// hostile case huge_device_alloc: expected runtime.
// Grabs all device memory in 1 GiB pieces and never frees it: the failed cudaMalloc leaves cudaErrorMemoryAllocation, which the capture process reads after the first call (runtime); the memory goes with the process.
#include <cuda_runtime.h>
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
  for (int i = 0; i < 4096; i++) { void* p = nullptr; if (cudaMalloc(&p, 1ull << 30) != cudaSuccess) break; }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
