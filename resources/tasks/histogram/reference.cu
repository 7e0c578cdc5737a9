// Reference for histogram: zero the 256 bins; each block counts its share of the bytes into a
// shared-memory histogram (shared atomics), then adds its non-zero bins to the global one. The
// counts are exact integers, so any correct order gives the same answer; not the naive kernel (one
// global atomicAdd per byte on 256 words, ~69 ms for 2^28 bytes on an H100), because the judge runs
// the reference on fresh inputs for every verified timed call (1 in 8): with the naive kernel that
// was most of a fast variant's time stage (bench/results/README.md, 2026-12-07 21:42).
#include <cuda_runtime.h>

__global__ void histogram_reference_kernel(const unsigned char* data, unsigned int* hist, long long n) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], local[b]);
}

void histogram(const unsigned char* data, unsigned int* hist, int n) {
  cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned int), 0);   // outputs arrive poisoned
  if (n <= 0) return;
  const int block = 256;
  long long grid = ((long long)n + block - 1) / block;
  if (grid > 1024) grid = 1024;
  histogram_reference_kernel<<<(unsigned int)grid, block, 0, 0>>>(data, hist, (long long)n);
}
