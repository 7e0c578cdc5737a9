// Reference for histogram: zero the 256 bins, then one thread per element does a global atomicAdd.
#include <cuda_runtime.h>

__global__ void histogram_reference_kernel(const unsigned char* data, unsigned int* hist, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[data[i]], 1u);
}

void histogram(const unsigned char* data, unsigned int* hist, int n) {
  cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned int), 0);   // outputs arrive poisoned
  if (n <= 0) return;
  const int block = 256;
  const long long grid = ((long long)n + block - 1) / block;
  histogram_reference_kernel<<<(unsigned int)grid, block, 0, 0>>>(data, hist, n);
}
