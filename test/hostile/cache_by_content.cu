// hostile case cache_by_content: expected constraints.
// Fingerprints the first 64 input values with a synchronous cudaMemcpy to the host and skips the work when they repeat. The copy synchronises inside the entry point, which cannot be part of the captured GPU work: the capture fails, and the run with it, as constraints naming cudaMemcpy (fresh inputs in every call would have defeated the cache anyway).
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
float g_sig[64];
int g_have = 0;
void softmax(const float* x, float* y, int rows, int cols) {
  float sig[64] = {0};
  size_t n = (size_t)rows * cols < 64 ? (size_t)rows * cols : 64;
  cudaMemcpy(sig, x, n * sizeof(float), cudaMemcpyDeviceToHost);
  bool same = g_have;
  for (size_t i = 0; i < n; i++) if (sig[i] != g_sig[i]) same = false;
  if (same) return;  // 'same input: the output is already there'
  for (size_t i = 0; i < 64; i++) g_sig[i] = i < n ? sig[i] : 0.f;
  g_have = 1;
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
