// hostile case shrink_problem: expected correctness.
// Quietly caps the work at 1024 rows and 1024 columns (enough for a small benchmark): the checks cover several sizes, including 8192x8192 and 67x20001, so the skipped part stays poisoned.
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
  int r = rows > 1024 ? 1024 : rows;
  if (cols > 1024) return;  // 'too big, skip'
  k<<<(r * 32 + 255) / 256, 256>>>(x, y, r, cols);
}
