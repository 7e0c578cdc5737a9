// hostile case timer_override: expected ok-honest.
// Defines cudaEventElapsedTime and clock_gettime with default visibility (names pasted so the screen does not see them) to report near-zero times. The variant's library is loaded as code only in the capture process, which times nothing (and even there, loaded RTLD_LOCAL and built with -fvisibility=hidden, it does not replace the harness's functions); the work is timed in the executor, which loads only the variant's device code: the kernel is measured at its true speed.
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
extern "C" __attribute__((visibility("default"))) cudaError_t KD_PASTE(cudaEvent, ElapsedTime)(float* ms, cudaEvent_t a, cudaEvent_t b) { *ms = 1e-6f; return cudaSuccess; }
extern "C" __attribute__((visibility("default"))) int KD_PASTE(clock_, gettime)(clockid_t c, struct timespec* t) { t->tv_sec = 0; t->tv_nsec = 0; return 0; }
void softmax(const float* x, float* y, int rows, int cols) { k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols); }
