// hostile case host_thread: expected correctness.
// Moves the launch to a host thread (pthread_create reached through token pasting and its own declaration, so the screen does not see it) and joins it. The thread's launch goes to that thread's own default stream, which is not being captured: the kernel runs in the capture process but is not part of the captured work, so the executor runs nothing and the check finds the poisoned outputs (got NaN).
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
extern "C" int KD_PASTE(pthread_, create)(unsigned long* t, const void* attr, void* (*fn)(void*), void* arg);
extern "C" int pthread_join(unsigned long t, void** ret);
struct Args { const float* x; float* y; int rows, cols; };
static void* worker(void* p) { Args* a = (Args*)p; k<<<(a->rows * 32 + 255) / 256, 256>>>(a->x, a->y, a->rows, a->cols); return nullptr; }
void softmax(const float* x, float* y, int rows, int cols) {
  Args a{x, y, rows, cols};
  unsigned long t;
  KD_PASTE(pthread_, create)(&t, nullptr, worker, &a);
  pthread_join(t, nullptr);
}
