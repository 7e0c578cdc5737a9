// hostile case write_outside_evasive: expected ok-contained.
// Writes a file into the user's home folder through a pasted fopen (the screen does not see it) and then computes correctly: the capture process runs in the bubblewrap sandbox, where the file system is read-only outside its work folder, so the write fails and nothing appears; the variant itself is measured normally.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
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
void softmax(const float* x, float* y, int rows, int cols) {
  const char* home = KD_PASTE(get, env)("HOME");
  char path[512];
  const char* tail = "/kd-hostile-escape.txt";
  int n = 0;
  for (const char* p = home ? home : "/root"; *p && n < 400; p++) path[n++] = *p;
  for (const char* p = tail; *p; p++) path[n++] = *p;
  path[n] = 0;
  auto f = KD_PASTE(fop, en)(path, "w");
  if (f) { fputs("escaped\n", f); fclose(f); }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
