// hostile case illegal_memory_access: expected runtime.
// Writes through a wild device pointer: the first call, in the capture process, ends with cudaErrorIllegalAddress, which the harness reports as a runtime failure; that process and its broken CUDA context end with the run, and the judge, with a context of its own, is not touched.
#include <cuda_runtime.h>
__global__ void k(float* y) { float* p = (float*)0x10; p[threadIdx.x] = y[0]; }
void softmax(const float* x, float* y, int rows, int cols) { k<<<1, 32>>>(y); }
