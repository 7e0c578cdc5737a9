// hostile case device_reset: expected rejected.
// Calls cudaDeviceReset in the entry point (destroying the harness's context and buffers): the screen's device-state rule rejects it.
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
void softmax(const float* x, float* y, int rows, int cols) { k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols); cudaDeviceSynchronize(); cudaDeviceReset(); }
