// Reference: C = A * B (row-major). Every output element is a double accumulation over k in
// ascending order, starting from 0: the same additions in the same order as the plain loop over k,
// so the same result bit for bit (a product of two floats is exact in double, so a fused
// multiply-add gives the same sum as a multiply and an add). The judge runs the reference on fresh
// inputs for every verified timed call (1 in 8), and a reference far slower than the variants makes
// those runs most of a fast variant's timing (histogram's did, H100, 2026-12-07; this kernel's
// first tiled form, 16x16 outputs a block with two shared-memory reads per multiply-add, took
// ~37 ms a call at 4096^3 on an H100 against the variants' ~3.2 ms, 2026-12-08). So a block of
// 16x16 threads computes 64x64 outputs, 4x4 a thread: 16 k steps of A's and B's 64-wide strips
// staged through shared memory, half a shared-memory read per multiply-add; double arithmetic
// bounds it (~8 ms on an H100).
#include <cuda_runtime.h>

#define MATMUL_REF_K 16    // k step staged in shared memory; also threads per block side
#define MATMUL_REF_R 4     // outputs per thread per side
#define MATMUL_REF_W (MATMUL_REF_K * MATMUL_REF_R)  // 64: rows and columns of C per block

__global__ void __launch_bounds__(MATMUL_REF_K * MATMUL_REF_K)
matmul_ref_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float as[MATMUL_REF_K][MATMUL_REF_W + 1];  // as[k][r] = A[row0 + r][k0 + k]; +1: no bank conflicts on the store
  __shared__ float bs[MATMUL_REF_K][MATMUL_REF_W];      // bs[k][c] = B[k0 + k][col0 + c]
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * MATMUL_REF_K + tx;
  const int row0 = blockIdx.y * MATMUL_REF_W, col0 = blockIdx.x * MATMUL_REF_W;
  double acc[MATMUL_REF_R][MATMUL_REF_R];
  for (int i = 0; i < MATMUL_REF_R; ++i)
    for (int j = 0; j < MATMUL_REF_R; ++j) acc[i][j] = 0.0;
  for (int k0 = 0; k0 < K; k0 += MATMUL_REF_K) {
    // 64x16 of A and 16x64 of B, four elements of each per thread, consecutive threads on
    // consecutive addresses. Out of range: stored as 0 and never used (rows and columns past M and
    // N are not written out, and the loop below stops at K).
    for (int e = t; e < MATMUL_REF_K * MATMUL_REF_W; e += MATMUL_REF_K * MATMUL_REF_K) {
      const int ar = e / MATMUL_REF_K, ak = e % MATMUL_REF_K;
      as[ak][ar] = (row0 + ar < M && k0 + ak < K) ? A[(size_t)(row0 + ar) * K + k0 + ak] : 0.0f;
      const int bk = e / MATMUL_REF_W, bc = e % MATMUL_REF_W;
      bs[bk][bc] = (k0 + bk < K && col0 + bc < N) ? B[(size_t)(k0 + bk) * N + col0 + bc] : 0.0f;
    }
    __syncthreads();
    const int kn = K - k0 < MATMUL_REF_K ? K - k0 : MATMUL_REF_K;
    for (int k = 0; k < kn; ++k) {
      double a[MATMUL_REF_R], b[MATMUL_REF_R];
      for (int i = 0; i < MATMUL_REF_R; ++i) a[i] = (double)as[k][ty + i * MATMUL_REF_K];
      for (int j = 0; j < MATMUL_REF_R; ++j) b[j] = (double)bs[k][tx + j * MATMUL_REF_K];
      for (int i = 0; i < MATMUL_REF_R; ++i)
        for (int j = 0; j < MATMUL_REF_R; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  // Thread (tx, ty) owns rows ty + 16i and columns tx + 16j: a warp writes 16 consecutive columns of two rows.
  for (int i = 0; i < MATMUL_REF_R; ++i) {
    const int row = row0 + ty + i * MATMUL_REF_K;
    if (row >= M) continue;
    for (int j = 0; j < MATMUL_REF_R; ++j) {
      const int col = col0 + tx + j * MATMUL_REF_K;
      if (col < N) C[(size_t)row * N + col] = (float)acc[i][j];
    }
  }
}

void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(MATMUL_REF_K, MATMUL_REF_K);
  dim3 grid((N + MATMUL_REF_W - 1) / MATMUL_REF_W, (M + MATMUL_REF_W - 1) / MATMUL_REF_W);
  matmul_ref_kernel<<<grid, block, 0, 0>>>(A, B, C, M, N, K);
}
