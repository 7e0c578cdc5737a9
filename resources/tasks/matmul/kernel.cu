// fp32 matrix product, row-major: C[M][N] = A[M][K] * B[K][N].
//
// One kernel family. A block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C; each
// thread computes TM x TN outputs, strided by BM/TM rows and BN/TN columns (so neighbouring
// threads touch neighbouring columns: coalesced B reads and C writes, conflict-free shared reads).
//   TILED 0: no shared memory, every thread reads A and B straight from global memory.
//   TILED 1: the K loop goes in steps of BK; A (transposed, padded) and B tiles are staged in
//            shared memory, then each thread does BK rank-1 updates of its TM x TN registers.
// Tails (M, N, K not multiples of the tiles) are zero-filled on load and masked on store.
// Defaults are the naive version: 16x16 threads, one output per thread, no shared memory.
#include <cuda_runtime.h>

#ifndef TILED
#define TILED 0
#endif
#ifndef BM
#define BM 16       // rows of C per block
#endif
#ifndef BN
#define BN 16       // columns of C per block
#endif
#ifndef BK
#define BK 8        // K step staged in shared memory (TILED 1 only)
#endif
#ifndef TM
#define TM 1        // rows of C per thread
#endif
#ifndef TN
#define TN 1        // columns of C per thread
#endif

#if (BM % TM) != 0 || (BN % TN) != 0
#error "matmul: TM must divide BM and TN must divide BN"
#endif

#define MM_TX (BN / TN)            // threads along N
#define MM_TY (BM / TM)            // threads along M
#define MM_NT (MM_TX * MM_TY)      // threads per block

#if MM_NT > 1024
#error "matmul: too many threads per block"
#endif

namespace mm_kd {

__global__ void __launch_bounds__(MM_NT)
matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
              int M, int N, int K) {
  const int tx = threadIdx.x % MM_TX;
  const int ty = threadIdx.x / MM_TX;
  const int row0 = blockIdx.y * BM + ty;   // this thread's rows: row0 + i*MM_TY
  const int col0 = blockIdx.x * BN + tx;   // this thread's cols: col0 + j*MM_TX

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

#if TILED
  __shared__ float As[BK][BM + 1];   // As[k][m] = A[bm+m][k0+k]; +1 pad: conflict-free transposed stores
  __shared__ float Bs[BK][BN];       // Bs[k][n] = B[k0+k][bn+n]
  const int tid = threadIdx.x;
  const int bm = blockIdx.y * BM;
  const int bn = blockIdx.x * BN;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: BM x BK, consecutive threads read consecutive k (coalesced along A's rows).
#pragma unroll
    for (int e = tid; e < BM * BK; e += MM_NT) {
      const int m = e / BK, k = e % BK;
      const int gm = bm + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? __ldg(A + (size_t)gm * K + gk) : 0.f;
    }
    // B tile: BK x BN, consecutive threads read consecutive n.
#pragma unroll
    for (int e = tid; e < BK * BN; e += MM_NT) {
      const int k = e / BN, n = e % BN;
      const int gk = k0 + k, gn = bn + n;
      Bs[k][n] = (gk < K && gn < N) ? __ldg(B + (size_t)gk * N + gn) : 0.f;
    }
    __syncthreads();

#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty + i * MM_TY];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + j * MM_TX];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#else
  // Naive: every operand straight from global memory (clamped indices, masked on store).
  const float* Ar[TM];
  const float* Bc[TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = min(row0 + i * MM_TY, M - 1);
    Ar[i] = A + (size_t)r * K;
  }
#pragma unroll
  for (int j = 0; j < TN; ++j) Bc[j] = B + min(col0 + j * MM_TX, N - 1);
  for (int k = 0; k < K; ++k) {
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = __ldg(Ar[i] + k);
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = __ldg(Bc[j] + (size_t)k * N);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
#endif

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + i * MM_TY;
    if (r < M) {
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int c = col0 + j * MM_TX;
        if (c < N) C[(size_t)r * N + c] = acc[i][j];
      }
    }
  }
}

}  // namespace mm_kd

void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  mm_kd::matmul_kernel<<<grid, MM_NT, 0, 0>>>(A, B, C, M, N, K);
}
