// Reference: C = A * B (row-major), one thread per output element, double accumulation over k in
// ascending order, with 16x16 tiles of A and B staged through shared memory: the same additions in
// the same order as the plain loop over k (so the same result, bit for bit), without reading A and
// B from memory once per multiply-add. The judge runs the reference on fresh inputs for every
// verified timed call (1 in 8), and a reference far slower than the variants makes those runs most
// of a fast variant's timing (histogram's did, H100, 2026-12-07).
#include <cuda_runtime.h>

#define MATMUL_REF_TILE 16

__global__ void matmul_ref_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float as[MATMUL_REF_TILE][MATMUL_REF_TILE];
  __shared__ float bs[MATMUL_REF_TILE][MATMUL_REF_TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * MATMUL_REF_TILE + tx;
  const int row = blockIdx.y * MATMUL_REF_TILE + ty;
  double acc = 0.0;
  for (int k0 = 0; k0 < K; k0 += MATMUL_REF_TILE) {
    // Out of range: not loaded, and never multiplied (the loop below stops at K).
    as[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    const int kn = K - k0 < MATMUL_REF_TILE ? K - k0 : MATMUL_REF_TILE;
    for (int k = 0; k < kn; ++k) acc += (double)as[ty][k] * (double)bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = (float)acc;
}

void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(MATMUL_REF_TILE, MATMUL_REF_TILE);
  dim3 grid((N + MATMUL_REF_TILE - 1) / MATMUL_REF_TILE, (M + MATMUL_REF_TILE - 1) / MATMUL_REF_TILE);
  matmul_ref_kernel<<<grid, block, 0, 0>>>(A, B, C, M, N, K);
}
