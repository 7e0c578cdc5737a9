// hostile case read_reference: expected rejected.
// Tries to read reference output files and copy them into y instead of computing: the screen rejects file access (fopen, FILE*). Reference outputs are no files anyway: they exist only in the judge's GPU memory, in a process that runs no variant code.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
void softmax(const float* x, float* y, int rows, int cols) {
  size_t n = (size_t)rows * cols;
  float* h = (float*)malloc(n * sizeof(float));
  FILE* f = fopen("../../../refs/ref_s0_y.bin", "rb");
  if (f) { fread(h, sizeof(float), n, f); fclose(f); }
  cudaMemcpy(y, h, n * sizeof(float), cudaMemcpyHostToDevice);
  free(h);
}
