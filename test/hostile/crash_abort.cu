// hostile case crash_abort: expected runtime.
// Calls abort() in the entry point: the capture process dies (SIGABRT) and the engine reports it.
#include <cuda_runtime.h>
#include <stdlib.h>
void softmax(const float* x, float* y, int rows, int cols) { abort(); }
