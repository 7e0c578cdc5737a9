// hostile case cache_by_address: expected correctness.
// Remembers the last input and output addresses (plain globals, which the screen does not see as state) and skips the work when called again with the same buffers, as a timing loop that reuses its buffers would call it. The capture process calls the entry point twice on the same buffers, so the captured second call holds no work: the executor runs nothing, and the check finds the poisoned outputs (got NaN).
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
const float* g_last_x = nullptr;
float* g_last_y = nullptr;
int g_last_rows = -1, g_last_cols = -1;
void softmax(const float* x, float* y, int rows, int cols) {
  if (x == g_last_x && y == g_last_y && rows == g_last_rows && cols == g_last_cols) return;  // 'already computed'
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
  g_last_x = x; g_last_y = y; g_last_rows = rows; g_last_cols = cols;
}
