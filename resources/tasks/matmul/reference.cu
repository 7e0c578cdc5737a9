// Reference: C = A * B (row-major), one thread per output element, double accumulation.
#include <cuda_runtime.h>

__global__ void matmul_ref_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)A[(size_t)row * K + k] * (double)B[(size_t)k * N + col];
  C[(size_t)row * N + col] = (float)acc;
}

void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_ref_kernel<<<grid, block, 0, 0>>>(A, B, C, M, N, K);
}
