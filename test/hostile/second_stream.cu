// hostile case second_stream: expected correctness.
// Launches the (correct) kernel on a non-blocking stream it creates through token pasting, so the screen does not see cudaStreamCreate, and returns without waiting. Only work issued to the captured stream (or joined back to it) is part of the entry point's captured work: the kernel on the other stream runs in the capture process but is not captured, so the executor runs nothing and the check finds the poisoned outputs (got NaN).
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
void softmax(const float* x, float* y, int rows, int cols) {
  cudaStream_t s;
  KD_PASTE(cudaStream, CreateWithFlags)(&s, 0x01 /* non-blocking */);
  k<<<(rows * 32 + 255) / 256, 256, 0, s>>>(x, y, rows, cols);
  cudaStreamDestroy(s);  // returns at once; the work goes on
}
