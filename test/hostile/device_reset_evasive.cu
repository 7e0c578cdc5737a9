// hostile case device_reset_evasive: expected runtime.
// Calls cudaDeviceReset through token pasting (the screen does not see it) after computing: in the capture process the harness finds its device buffers gone after the first call and fails the run clearly as runtime ('the variant reset the device or destroyed the CUDA context'); the judge and the executors are other processes with contexts of their own.
#include <cuda_runtime.h>
#define KD_PASTE2(a, b) a##b
#define KD_PASTE(a, b) KD_PASTE2(a, b)
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
void softmax(const float* x, float* y, int rows, int cols) { k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols); cudaDeviceSynchronize(); KD_PASTE(cudaDevice, Reset)(); }
