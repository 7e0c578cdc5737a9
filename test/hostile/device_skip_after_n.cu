// hostile case device_skip_after_n: expected constraints.
// A call counter in a __managed__ variable (keyword pasted past the screen), incremented by a one-thread kernel launched first in every call, lets the main kernel compute in the first 20 calls of a process and return at once after that. A plain __device__ counter would never get there (the executor restores the variant's device variables before every call); managed memory lives outside any one process's device memory, so the capture refuses it by name before any work is rebuilt. Were the counter kept elsewhere, every timed call is verified with probability 1/8 and the last one, after a random number of extra calls, always.
#include <cuda_runtime.h>
#define KD_PASTE2(a, b) a##b
#define KD_PASTE(a, b) KD_PASTE2(a, b)
KD_PASTE(__man, aged__) unsigned int g_calls = 0;
__global__ void count_call() { g_calls++; }
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  if (g_calls > 20) return;  // 'enough calls for any check: nobody looks any more'
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
  count_call<<<1, 1>>>();
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
