// Legitimate variant shape: work forked to a second stream and joined back with events before the
// entry point returns (captured as a graph with two branches). The stream and events are created
// on the first call.
#include <cuda_runtime.h>
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int row0, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)(row0 + warp) * cols;
  float* yr = y + (size_t)(row0 + warp) * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / s;
}
void softmax(const float* x, float* y, int rows, int cols) {
  static cudaStream_t side = nullptr;
  static cudaEvent_t fork, join;
  if (!side) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&join, cudaEventDisableTiming);
  }
  int half = rows / 2;
  cudaEventRecord(fork, 0);
  cudaStreamWaitEvent(side, fork, 0);
  if (half > 0) k<<<(half * 32 + 255) / 256, 256, 0, side>>>(x, y, 0, half, cols);
  k<<<((rows - half) * 32 + 255) / 256, 256>>>(x, y, half, rows - half, cols);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(0, join, 0);
}
