// Legitimate variant shape: two kernels and a cudaMemsetAsync per call, with per-call scratch
// memory from cudaMallocAsync/cudaFreeAsync on the default stream (all of it captured as graph
// work). Kernel 1 writes each row's max and sum of exponentials; kernel 2 writes the outputs.
#include <cuda_runtime.h>
__global__ void stats_k(const float* __restrict__ x, float2* __restrict__ st, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  if (lane == 0) st[warp] = make_float2(m, s);
}
__global__ void write_k(const float* __restrict__ x, const float2* __restrict__ st, float* __restrict__ y, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  float2 ms = st[warp];
  const float* xr = x + (size_t)warp * cols;
  float* yr = y + (size_t)warp * cols;
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - ms.x) / ms.y;
}
void softmax(const float* x, float* y, int rows, int cols) {
  float2* st = nullptr;
  cudaMallocAsync(&st, rows * sizeof(float2), 0);
  cudaMemsetAsync(st, 0, rows * sizeof(float2), 0);
  int blocks = (rows * 32 + 255) / 256;
  stats_k<<<blocks, 256>>>(x, st, rows, cols);
  write_k<<<blocks, 256>>>(x, st, y, rows, cols);
  cudaFreeAsync(st, 0);
}
