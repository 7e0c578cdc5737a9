#include <cuda_runtime.h>
void copy(const float* x, float* y, long long n) { cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, 0); }
