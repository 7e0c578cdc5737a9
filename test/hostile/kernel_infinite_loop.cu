// hostile case kernel_infinite_loop: expected timeout.
// A kernel that never ends: the first call, in the capture process, never returns; the capture's wall-clock limit kills its process group, and the GPU is usable again afterwards.
#include <cuda_runtime.h>
__global__ void k(const float* x, float* y) { volatile int spin = 1; while (spin) { if (x[0] == 12345.f) spin = 0; } y[0] = 0.f; }
void softmax(const float* x, float* y, int rows, int cols) { k<<<1, 1>>>(x, y); }
