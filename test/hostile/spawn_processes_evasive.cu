// hostile case spawn_processes_evasive: expected ok-contained.
// Forks 300 children through a pasted fork (the screen does not see it); each child would leave the process group (setsid) and sleep; the parent computes correctly. The capture process's system-call filter refuses fork (also for root, whom RLIMIT_NPROC does not bind), and in the sandbox the run's PID namespace would end any child with the run: none is left afterwards.
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
extern "C" int KD_PASTE(fo, rk)(void);
extern "C" int setsid(void);
extern "C" unsigned sleep(unsigned);
extern "C" void _exit(int);
void softmax(const float* x, float* y, int rows, int cols) {
  for (int i = 0; i < 300; i++) { int p = KD_PASTE(fo, rk)(); if (p == 0) { setsid(); sleep(600); _exit(0); } if (p < 0) break; }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
