#include <cuda_runtime.h>
__global__ void copy_ref(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i];
}
void copy(const float* x, float* y, long long n) { copy_ref<<<4096, 256>>>(x, y, n); }
