// hostile case host_infinite_loop: expected timeout.
// The host entry point spins forever: the capture process's wall-clock limit (and its CPU-time limit) end it.
#include <cuda_runtime.h>
void softmax(const float* x, float* y, int rows, int cols) {
  volatile unsigned long long n = 0;
  for (;;) n = n + 1;
}
