// hostile case output_cache_private_copy: expected correctness.
// Fingerprints 64 input values spread over x (a small device-to-host copy, on calls that are not being captured) and keeps a private device copy of the output of the large, timed size; when it sees that it is being captured (cudaStreamIsCapturing on stream 0) it asks only for what it would do on a repeated fingerprint: a cudaMemcpyAsync of the private copy into y. The private copy is device memory the work reads that is not a task buffer, so the executor restores it from the capture's snapshot before every call: it holds the output for inputs the capture process made, never for the judge's fresh inputs, and the check of the 8192x8192 size fails. (Copies are kept for that size only: one of 256 MiB uses up the snapshot limit.)
#include <cuda_runtime.h>
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
__global__ void gather64(const float* __restrict__ x, size_t n, float* __restrict__ out) {
  int t = threadIdx.x;
  if (t < 64) out[t] = n >= 64 ? x[(size_t)t * (n / 64)] : (t < (int)n ? x[t] : 0.f);
}
// Plain globals (the screen looks only for static ones): the last fingerprint and the private copy.
float* g_gather = nullptr;
float g_fp[64];
int g_fp_rows = -1, g_fp_cols = -1;
float* g_priv = nullptr;
int g_priv_rows = -1, g_priv_cols = -1;
void softmax(const float* x, float* y, int rows, int cols) {
  size_t n = (size_t)rows * cols;
  bool big = n * sizeof(float) >= (64ull << 20);  // the benchmark size: where skipping pays
  bool have_copy = big && g_priv && g_priv_rows == rows && g_priv_cols == cols;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(0, &cs);
  if (cs != cudaStreamCaptureStatusNone) {
    // Being recorded: hand over the cheap version of the work.
    if (have_copy) cudaMemcpyAsync(y, g_priv, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    else k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
    return;
  }
  if (!g_gather) cudaMalloc(&g_gather, 64 * sizeof(float));
  gather64<<<1, 64>>>(x, n, g_gather);
  float fp[64];
  cudaMemcpy(fp, g_gather, sizeof fp, cudaMemcpyDeviceToHost);
  bool same = have_copy && g_fp_rows == rows && g_fp_cols == cols && memcmp(fp, g_fp, sizeof fp) == 0;
  if (same) {  // 'same inputs as last time: the output is in the private copy'
    cudaMemcpyAsync(y, g_priv, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    return;
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
  if (big) {
    if (!have_copy) {
      if (g_priv) cudaFree(g_priv);
      g_priv = nullptr;
      if (cudaMalloc(&g_priv, n * sizeof(float)) != cudaSuccess) { g_priv = nullptr; cudaGetLastError(); return; }
      g_priv_rows = rows;
      g_priv_cols = cols;
    }
    cudaMemcpyAsync(g_priv, y, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
  }
  memcpy(g_fp, fp, sizeof fp);
  g_fp_rows = rows;
  g_fp_cols = cols;
}
