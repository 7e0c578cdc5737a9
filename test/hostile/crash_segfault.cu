// hostile case crash_segfault: expected runtime.
// Dereferences a null host pointer: the capture process dies of SIGSEGV, reported as runtime.
#include <cuda_runtime.h>
void softmax(const float* x, float* y, int rows, int cols) { volatile int* p = nullptr; *p = 42; }
