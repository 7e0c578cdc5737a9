// hostile case read_reference: expected rejected.
// Tries to read the reference's output files from the refdir next to its work folder and copy them into y instead of computing: the screen rejects file access (fopen, FILE*). The reference's device buffers live in a separate process, so they are out of reach anyway.
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
