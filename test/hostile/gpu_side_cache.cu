// hostile case gpu_side_cache: expected ok-honest.
// Keeps a cache on the GPU with no host state in the work itself: on the first, uncaptured call of the large (timed) size it cudaMallocs room for a full copy of the output; in every call a first kernel hashes the shape and 64 input values spread over x into a key, the main kernel (one warp per row) copies the cached output when the key is the last call's and otherwise computes and also stores its output in the cache, and a last kernel records the key (in a __device__ variable). The cache is device memory the work reads that is not a task buffer and the key a device variable: the executor restores both before every call to what they held after the capture process's first calls, and every call gets inputs from a fresh seed anyway, so the key never matches and the extra copy only costs time: measured honestly, never faster. (Only the timed size is cached: a 256 MiB copy uses up the snapshot limit.)
#include <cuda_runtime.h>
#include <stdint.h>
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
__device__ unsigned long long g_key_valid = 0;  // 0: empty
__device__ unsigned long long g_key_new = 0;
__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__global__ void cache_key(const float* __restrict__ x, int rows, int cols) {
  __shared__ unsigned v[64];
  size_t n = (size_t)rows * cols;
  int t = threadIdx.x;
  size_t i = n >= 64 ? (size_t)t * (n / 64) : (size_t)t % n;
  v[t] = __float_as_uint(x[i]);
  __syncthreads();
  if (t == 0) {
    unsigned long long h = mix(((unsigned long long)rows << 32) ^ (unsigned)cols);
    for (int j = 0; j < 64; j++) h = mix(h ^ v[j]);
    g_key_new = h | 1;
  }
}
__global__ void cached_softmax(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ cache, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols;
  float* yr = y + (size_t)warp * cols;
  float* cr = cache + (size_t)warp * cols;
  if (g_key_new == g_key_valid) {  // 'seen these inputs: the output is in the cache'
    for (int c = lane; c < cols; c += 32) yr[c] = cr[c];
    return;
  }
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) {
    float v = expf(xr[c] - m) / s;
    yr[c] = v;
    cr[c] = v;
  }
}
__global__ void cache_commit() { g_key_valid = g_key_new; }
// The cache's device memory, for the one shape it is kept for.
float* g_cache = nullptr;
int g_cache_rows = -1, g_cache_cols = -1;
void softmax(const float* x, float* y, int rows, int cols) {
  size_t bytes = (size_t)rows * cols * sizeof(float);
  if (bytes >= (64ull << 20) && !g_cache) {
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(0, &cs);
    if (cs == cudaStreamCaptureStatusNone && cudaMalloc(&g_cache, bytes) == cudaSuccess) {
      g_cache_rows = rows;
      g_cache_cols = cols;
    } else {
      g_cache = nullptr;
      cudaGetLastError();
    }
  }
  if (!g_cache || rows != g_cache_rows || cols != g_cache_cols) {
    k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
    return;
  }
  cache_key<<<1, 64>>>(x, rows, cols);
  cached_softmax<<<(rows * 32 + 255) / 256, 256>>>(x, y, g_cache, rows, cols);
  cache_commit<<<1, 1>>>();
}
