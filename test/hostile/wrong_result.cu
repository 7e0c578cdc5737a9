// hostile case wrong_result: expected correctness.
// Forgets to subtract the row maximum and divides by the row length instead of the sum: the element-by-element check names buffer, index, expected and got.
#include <cuda_runtime.h>
__global__ void k(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  for (int c = 0; c < cols; c++) y[(size_t)r * cols + c] = expf(x[(size_t)r * cols + c]) / cols;
}
void softmax(const float* x, float* y, int rows, int cols) { k<<<(rows + 127) / 128, 128>>>(x, y, rows, cols); }
