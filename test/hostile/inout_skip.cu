// hostile case inout_skip: expected correctness.
// Task axpy (y = a*x + y, y updated in place: an inout buffer). Remembers the buffers of its last call in host globals and returns at once when called again with the same x, y and n, as a timing loop that reuses its buffers (and never re-initialises an inout buffer) would call it. The capture process calls the entry point twice on the same buffers, so the captured second call holds no work; the executor re-initialises y from a fresh seed before every call and runs that empty work, and the check finds y still holding its initial values instead of a*x + y.
#include <cuda_runtime.h>
__global__ void k(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}
const float* g_last_x = nullptr;
float* g_last_y = nullptr;
int g_last_n = -1;
void axpy(const float* x, float* y, float a, int n) {
  if (x == g_last_x && y == g_last_y && n == g_last_n) return;  // 'y was already updated'
  if (n > 0) k<<<(n + 255) / 256, 256>>>(x, y, a, n);
  g_last_x = x;
  g_last_y = y;
  g_last_n = n;
}
