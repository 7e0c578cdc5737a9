// fp32 matrix product, row-major: C[M][N] = A[M][K] * B[K][N].
//
// One kernel family. A block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C; each
// thread computes TM x TN outputs, strided by BM/TM rows and BN/TN columns (so neighbouring
// threads touch neighbouring columns: coalesced B reads and C writes, conflict-free shared reads).
//   TILED 0: no shared memory, every thread reads A and B straight from global memory.
//   TILED 1: the K loop goes in steps of BK; A (transposed, padded) and B tiles are staged in
//            shared memory, then each thread does BK rank-1 updates of its TM x TN registers.
//   TILED 2: warp-tiled, register-blocked: the block's warps each own a WM x WN piece of the tile
//            ((BM/WM) x (BN/WN) warps); a warp's 32 lanes form a (WM/TM) x (WN/TN) grid and each
//            lane owns TM x TN outputs in 4 x 4 pieces spaced 4*(WM/TM) rows / 4*(WN/TN) columns
//            apart, so every shared read is a 128-bit load that the lanes of a warp share without
//            bank conflicts. Global loads are 128-bit where aligned and inside the matrix (else
//            scalars, zero-filled past the edges); A is stored transposed through registers.
//            PIPE 0: one shared buffer (load, sync, compute, sync);
//            PIPE 1: two buffers, the next K step is loaded into registers while this one is
//                    computed (one barrier per K step);
//            PIPE 2: as 1, but B goes to shared memory with cp.async (no registers, no wait).
//            PIPE 3: three buffers, everything by cp.async (no staging registers): A element by
//                    element (4-byte copies, stored transposed; lanes along K, so whole sectors),
//                    B 16 bytes at a time; two K steps in flight while one is computed, one
//                    barrier per K step. Past the edges the copies write zeros (src-size 0).
//            MINB 2: __launch_bounds__(threads, 2): ptxas keeps registers low enough for two blocks
//                    per SM (128 registers at 256 threads), so a 128 x 128 tile with 8 x 8 per thread
//                    runs 16 warps per SM instead of 8 (146 registers without it).
//            GROUP g > 0: blocks are ordered in groups of g block rows (consecutive block ids walk
//                    down a group's g rows before moving right), so the blocks resident together
//                    share A rows and B columns in L2; 0: row-major block order.
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
#ifndef WM
#define WM 16       // rows of C per warp (TILED 2 only)
#endif
#ifndef WN
#define WN 16       // columns of C per warp (TILED 2 only)
#endif
#ifndef PIPE
#define PIPE 0      // TILED 2: 0 one buffer; 1 two buffers, next step through registers; 2 two buffers, B by cp.async;
                    // 3 three buffers, A and B by cp.async
#endif
#ifndef MINB
#define MINB 1      // TILED 2: minimum resident blocks per SM asked of ptxas (__launch_bounds__ second argument)
#endif
#ifndef GROUP
#define GROUP 0     // TILED 2: 0 row-major block order; g > 0 blocks walk g block rows at a time (L2 reuse)
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

#if TILED == 2
#if (TM % 4) != 0 || (TN % 4) != 0
#error "matmul: TILED 2 needs TM and TN multiples of 4"
#endif
#if (WM % TM) != 0 || (WN % TN) != 0 || (WM / TM) * (WN / TN) != 32
#error "matmul: TILED 2 needs (WM/TM) x (WN/TN) = 32 lanes"
#endif
#if (BM % WM) != 0 || (BN % WN) != 0
#error "matmul: TILED 2 needs WM | BM and WN | BN"
#endif
#if (BK % 4) != 0
#error "matmul: TILED 2 needs BK a multiple of 4"
#endif
#if PIPE < 0 || PIPE > 3
#error "matmul: PIPE is 0, 1, 2 or 3"
#endif
#if MINB < 1 || MINB > 2
#error "matmul: MINB is 1 or 2"
#endif
#if GROUP < 0
#error "matmul: GROUP must be >= 0"
#endif
#define MM_MINB MINB
#define MM_LN (WN / TN)                          // lanes along N
#define MM_LM (WM / TM)                          // lanes along M
#define MM_NBUF (PIPE == 3 ? 3 : PIPE ? 2 : 1)
#define MM_AE ((BM * BK + MM_NT - 1) / MM_NT)    // PIPE 3: A elements per thread
#define MM_ALD (BM + 4)                          // As row length: +4 keeps 16-byte rows, spreads the transposed stores
#define MM_AV (BM * BK / 4)                      // float4 pieces of an A tile
#define MM_BV (BK * BN / 4)                      // float4 pieces of a B tile
#define MM_ALDS ((MM_AV + MM_NT - 1) / MM_NT)    // pieces per thread
#define MM_BLDS ((MM_BV + MM_NT - 1) / MM_NT)
#if MM_NBUF * BK * (MM_ALD + BN) * 4 > 49152
#error "matmul: TILED 2 shared tiles exceed 48 KB"
#endif
#else
#if MINB != 1 || GROUP != 0
#error "matmul: MINB and GROUP are TILED 2 options"
#endif
#define MM_MINB 1
#endif

namespace mm_kd {

#if TILED == 2
// p[0..3], where `avail` elements from p on are inside the matrix (<= 0: none); zero beyond.
__device__ __forceinline__ float4 ld4(const float* p, int avail) {
  if (avail >= 4 && (((unsigned long long)p) & 15) == 0) return __ldg(reinterpret_cast<const float4*>(p));
  float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
  if (avail > 0) r.x = __ldg(p);
  if (avail > 1) r.y = __ldg(p + 1);
  if (avail > 2) r.z = __ldg(p + 2);
  if (avail > 3) r.w = __ldg(p + 3);
  return r;
}

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
  *reinterpret_cast<float4*>(smem) = __ldg(reinterpret_cast<const float4*>(gmem));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// 4 bytes to shared memory by cp.async; ok false: src-size 0, nothing is read and a zero is written.
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(ok ? 4 : 0) : "memory");
#else
  *smem = ok ? __ldg(gmem) : 0.f;
#endif
}

// Waits until at most N of this thread's commit groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait_pending() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

struct Tiles {
  float a[MM_NBUF][BK][MM_ALD];   // a[k][m] = A[bm+m][k0+k]
  float b[MM_NBUF][BK][BN];       // b[k][n] = B[k0+k][bn+n]
};

// Piece e of the A tile at K offset k0: row m = e / (BK/4), columns kq..kq+3.
__device__ __forceinline__ float4 load_a(const float* __restrict__ A, int M, int K, int bm, int k0, int e) {
  const int m = e / (BK / 4), kq = (e % (BK / 4)) * 4;
  const int gm = bm + m, gk = k0 + kq;
  return ld4(A + (size_t)(gm < M ? gm : 0) * K + gk, gm < M ? K - gk : 0);
}
__device__ __forceinline__ void store_a(Tiles& t, int buf, int e, float4 v) {
  const int m = e / (BK / 4), kq = (e % (BK / 4)) * 4;
  t.a[buf][kq + 0][m] = v.x;
  t.a[buf][kq + 1][m] = v.y;
  t.a[buf][kq + 2][m] = v.z;
  t.a[buf][kq + 3][m] = v.w;
}
// Piece e of the B tile at K offset k0: row k = e / (BN/4), columns nq..nq+3.
__device__ __forceinline__ float4 load_b(const float* __restrict__ B, int N, int K, int bn, int k0, int e) {
  const int k = e / (BN / 4), nq = (e % (BN / 4)) * 4;
  const int gk = k0 + k, gn = bn + nq;
  return ld4(B + (size_t)(gk < K ? gk : 0) * N + gn, gk < K ? N - gn : 0);
}
__device__ __forceinline__ void store_b(Tiles& t, int buf, int e, float4 v) {
  const int k = e / (BN / 4), nq = (e % (BN / 4)) * 4;
  *reinterpret_cast<float4*>(&t.b[buf][k][nq]) = v;
}
// B piece e straight to shared memory: cp.async when the 16 bytes are aligned and inside B.
__device__ __forceinline__ void copy_b(Tiles& t, int buf, const float* __restrict__ B, int N, int K, int bn, int k0, int e) {
  const int k = e / (BN / 4), nq = (e % (BN / 4)) * 4;
  const int gk = k0 + k, gn = bn + nq;
  const float* p = B + (size_t)(gk < K ? gk : 0) * N + gn;
  if (gk < K && gn + 4 <= N && (((unsigned long long)p) & 15) == 0) cp_async16(&t.b[buf][k][nq], p);
  else *reinterpret_cast<float4*>(&t.b[buf][k][nq]) = ld4(p, gk < K ? N - gn : 0);
}

#if PIPE == 3
// The A tile of K offset k0 into buffer buf, element by element, transposed (a[k][m]); lanes run along k.
__device__ __forceinline__ void copy_a_async(Tiles& t, int buf, const float* __restrict__ A, int M, int K, int bm, int k0, int tid) {
#pragma unroll
  for (int l = 0; l < MM_AE; ++l) {
    const int f = tid + l * MM_NT;
    if (f < BM * BK) {
      const int m = f / BK, k = f % BK;
      const int gm = bm + m, gk = k0 + k;
      const bool ok = gm < M && gk < K;
      cp_async4(&t.a[buf][k][m], ok ? A + (size_t)gm * K + gk : A, ok);
    }
  }
}
// B piece e: 16 bytes by cp.async when aligned and inside B, else four 4-byte copies (zeros past the edges).
__device__ __forceinline__ void copy_b_async(Tiles& t, int buf, const float* __restrict__ B, int N, int K, int bn, int k0, int e) {
  const int k = e / (BN / 4), nq = (e % (BN / 4)) * 4;
  const int gk = k0 + k, gn = bn + nq;
  const float* p = B + (size_t)(gk < K ? gk : 0) * N + gn;
  if (gk < K && gn + 4 <= N && (((unsigned long long)p) & 15) == 0) {
    cp_async16(&t.b[buf][k][nq], p);
  } else {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const bool ok = gk < K && gn + q < N;
      cp_async4(&t.b[buf][k][nq + q], ok ? p + q : B, ok);
    }
  }
}
// Issues the copies of K step s into buffer buf (every thread; the caller commits the group).
__device__ __forceinline__ void issue_step(Tiles& t, int buf, const float* __restrict__ A, const float* __restrict__ B,
                                           int M, int N, int K, int bm, int bn, int s, int tid) {
  copy_a_async(t, buf, A, M, K, bm, s * BK, tid);
#pragma unroll
  for (int l = 0; l < MM_BLDS; ++l)
    if (tid + l * MM_NT < MM_BV) copy_b_async(t, buf, B, N, K, bn, s * BK, tid + l * MM_NT);
}
#endif
#endif

// The second bound only for MINB 2: written as __launch_bounds__(threads, 1) it is not a no-op, ptxas
// then plans for one block per SM and takes more registers (TILED 1, 128 x 128 tiles of 8 x 4:
// 80 registers instead of 64, one 512-thread block per SM instead of two: 6.31 ms instead of 5.17
// on the H200, bench/results/h200-timing-stability-db7293b.md against h200-timing-stability.md).
#if MM_MINB > 1
__global__ void __launch_bounds__(MM_NT, MM_MINB)
#else
__global__ void __launch_bounds__(MM_NT)
#endif
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

#if TILED == 2
  __shared__ __align__(16) Tiles t;
  const int tid = threadIdx.x;
#if GROUP > 0
  // Grouped order: block id pid walks GROUP block rows (top to bottom) before the next block column.
  // The same in every lane; taken through __shfl_sync from lane 0 because so written ptxas keeps
  // it in registers (computed plainly it spilled 36-48 B at MINB 2, nvcc 13.0, sm_90).
  const int pid = blockIdx.y * gridDim.x + blockIdx.x;
  const int width = GROUP * gridDim.x;                  // blocks per group of GROUP block rows
  const int first = (pid / width) * GROUP;                // the group's first block row
  const int rows_in = min((int)gridDim.y - first, GROUP);
  const int bm = __shfl_sync(0xffffffffu, (first + (pid % width) % rows_in) * BM, 0);
  const int bn = __shfl_sync(0xffffffffu, ((pid % width) / rows_in) * BN, 0);
#else
  const int bm = blockIdx.y * BM;
  const int bn = blockIdx.x * BN;
#endif
  const int warp = tid / 32, lane = tid % 32;
  const int a_off = (warp / (BN / WN)) * WM + (lane / MM_LN) * 4;   // this lane's first row in the tile
  const int b_off = (warp % (BN / WN)) * WN + (lane % MM_LN) * 4;   // this lane's first column in the tile
  const int nk = (K + BK - 1) / BK;
  (void)row0; (void)col0;

#if PIPE == 3
  // Prologue: K steps 0 .. NBUF-2 in flight, one commit group per step (empty groups past the end,
  // so that "all but the newest NBUF-2 groups done" always means "step kt done").
#pragma unroll
  for (int s = 0; s < MM_NBUF - 1; ++s) {
    if (s < nk) issue_step(t, s, A, B, M, N, K, bm, bn, s, tid);
    cp_async_commit();
  }
  for (int kt = 0; kt < nk; ++kt) {
    cp_async_wait_pending<MM_NBUF - 2>();   // this thread's copies of step kt have landed
    __syncthreads();                        // everyone's have, and everyone is done computing step kt-1
    {
      const int nx = kt + MM_NBUF - 1;      // goes to the buffer of step kt-1
      if (nx < nk) issue_step(t, nx % MM_NBUF, A, B, M, N, K, bm, bn, nx, tid);
      cp_async_commit();
    }
    const int cur = kt % MM_NBUF;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(&t.a[cur][k][a_off + i * MM_LM * 4]);
        a[4 * i + 0] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(&t.b[cur][k][b_off + j * MM_LN * 4]);
        b[4 * j + 0] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
#else
  float4 ra[MM_ALDS];
#if PIPE != 2
  float4 rb[MM_BLDS];
#endif
  // Stage 0.
#pragma unroll
  for (int l = 0; l < MM_ALDS; ++l)
    if (tid + l * MM_NT < MM_AV) store_a(t, 0, tid + l * MM_NT, load_a(A, M, K, bm, 0, tid + l * MM_NT));
#pragma unroll
  for (int l = 0; l < MM_BLDS; ++l)
    if (tid + l * MM_NT < MM_BV) {
#if PIPE == 2
      copy_b(t, 0, B, N, K, bn, 0, tid + l * MM_NT);
#else
      store_b(t, 0, tid + l * MM_NT, load_b(B, N, K, bn, 0, tid + l * MM_NT));
#endif
    }
#if PIPE == 2
  cp_async_commit();
  cp_async_wait_all();
#endif
  __syncthreads();

  for (int kt = 0; kt < nk; ++kt) {
    const int cur = PIPE ? (kt & 1) : 0;
    const bool next = kt + 1 < nk;
    const int k1 = (kt + 1) * BK;
#if PIPE
    // Start the next K step's loads before computing this one.
    if (next) {
#pragma unroll
      for (int l = 0; l < MM_ALDS; ++l)
        if (tid + l * MM_NT < MM_AV) ra[l] = load_a(A, M, K, bm, k1, tid + l * MM_NT);
#pragma unroll
      for (int l = 0; l < MM_BLDS; ++l)
        if (tid + l * MM_NT < MM_BV) {
#if PIPE == 2
          copy_b(t, cur ^ 1, B, N, K, bn, k1, tid + l * MM_NT);
#else
          rb[l] = load_b(B, N, K, bn, k1, tid + l * MM_NT);
#endif
        }
#if PIPE == 2
      cp_async_commit();
#endif
    }
#endif

#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(&t.a[cur][k][a_off + i * MM_LM * 4]);
        a[4 * i + 0] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(&t.b[cur][k][b_off + j * MM_LN * 4]);
        b[4 * j + 0] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }

#if PIPE
    if (next) {
#pragma unroll
      for (int l = 0; l < MM_ALDS; ++l)
        if (tid + l * MM_NT < MM_AV) store_a(t, cur ^ 1, tid + l * MM_NT, ra[l]);
#if PIPE == 2
      cp_async_wait_all();
#else
#pragma unroll
      for (int l = 0; l < MM_BLDS; ++l)
        if (tid + l * MM_NT < MM_BV) store_b(t, cur ^ 1, tid + l * MM_NT, rb[l]);
#endif
    }
    __syncthreads();
#else
    __syncthreads();   // everyone is done reading the buffer
    if (next) {
#pragma unroll
      for (int l = 0; l < MM_ALDS; ++l)
        if (tid + l * MM_NT < MM_AV) ra[l] = load_a(A, M, K, bm, k1, tid + l * MM_NT);
#pragma unroll
      for (int l = 0; l < MM_BLDS; ++l)
        if (tid + l * MM_NT < MM_BV) rb[l] = load_b(B, N, K, bn, k1, tid + l * MM_NT);
#pragma unroll
      for (int l = 0; l < MM_ALDS; ++l)
        if (tid + l * MM_NT < MM_AV) store_a(t, 0, tid + l * MM_NT, ra[l]);
#pragma unroll
      for (int l = 0; l < MM_BLDS; ++l)
        if (tid + l * MM_NT < MM_BV) store_b(t, 0, tid + l * MM_NT, rb[l]);
    }
    __syncthreads();
#endif
  }
#endif

  // Store: acc[4i+q][4j+p] is C[bm + a_off + i*4*LM + q][bn + b_off + j*4*LN + p].
#pragma unroll
  for (int i = 0; i < TM / 4; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int r = bm + a_off + i * MM_LM * 4 + q;
      if (r >= M) continue;
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const int c = bn + b_off + j * MM_LN * 4;
        float* p = C + (size_t)r * N + c;
        const float* v = &acc[4 * i + q][4 * j];
        if (c + 4 <= N && (((unsigned long long)p) & 15) == 0) {
          *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (c + e < N) p[e] = v[e];
        }
      }
    }
  return;
#elif TILED
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
