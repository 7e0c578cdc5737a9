// hostile case oob_write_before_small: expected correctness.
// Counts the right histogram but also writes 64 words just before the start of hist, a 1 KiB
// buffer: a small buffer sits at a random offset in an allocation of its own, with a guard region
// before it as well as after, which the judge checks after every call the executor runs.
#include <cuda_runtime.h>
__global__ void count(const unsigned char* __restrict__ data, unsigned int* hist, int n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) atomicAdd(hist + data[i], 1u);
}
__global__ void spill(unsigned int* hist) { if (threadIdx.x < 64) hist[-1 - (int)threadIdx.x] = 7u; }
void histogram(const unsigned char* data, unsigned int* hist, int n) {
  cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned int), 0);
  count<<<1024, 256>>>(data, hist, n);
  spill<<<1, 64>>>(hist);
}
