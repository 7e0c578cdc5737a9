// Row-wise softmax, fp32: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r).
//
// One kernel family. A group of TPR consecutive threads owns one row; a block of BLOCK threads
// owns BLOCK/TPR rows. Group reductions use warp shuffles (TPR <= 32) or shuffles plus shared
// memory (TPR > 32, then TPR is a multiple of 32). With CACHE > 0 a row of up to
// CACHE*TPR*VEC columns is read once into registers (CACHE vectors per thread), reduced there and
// written from there: one read and one write of memory per element; longer rows take the
// streaming path below (correct for any length). Defaults are the naive version: one thread per
// row, scalar loads, three passes over the row, nothing cached.
#include <cuda_runtime.h>
#include <math.h>

#ifndef BLOCK
#define BLOCK 128   // threads per block: 32..1024, a power of two
#endif
#ifndef TPR
#define TPR 1       // threads per row: 1..1024, a power of two, <= BLOCK
#endif
#ifndef VEC
#define VEC 1       // floats per vector load: 1, 2 or 4 (unaligned head/tail handled with scalars)
#endif
#ifndef ONLINE
#define ONLINE 0    // 0: three passes (max, sum, write); 1: two passes (online max+sum, write)
#endif
#ifndef CACHE
#define CACHE 0     // vectors of VEC floats per thread kept in registers (0: stream every pass from memory)
#endif

#if (BLOCK % TPR) != 0 || (TPR > 32 && (TPR % 32) != 0) || BLOCK > 1024
#error "softmax: need TPR | BLOCK, TPR multiple of 32 when > 32, BLOCK <= 1024"
#endif
#if VEC != 1 && VEC != 2 && VEC != 4
#error "softmax: VEC must be 1, 2 or 4"
#endif
#if CACHE < 0 || CACHE * VEC > 64
#error "softmax: CACHE * VEC must be in [0, 64] (registers per thread)"
#endif

#define ROWS_PER_BLOCK (BLOCK / TPR)
#define NWARPS ((BLOCK + 31) / 32)

namespace sm_kd {

__device__ __forceinline__ void ldv(const float* p, float (&r)[VEC]) {
#if VEC == 4
  float4 t = __ldg(reinterpret_cast<const float4*>(p));
  r[0] = t.x; r[1] = t.y; r[2] = t.z; r[3] = t.w;
#elif VEC == 2
  float2 t = __ldg(reinterpret_cast<const float2*>(p));
  r[0] = t.x; r[1] = t.y;
#else
  r[0] = __ldg(p);
#endif
}

__device__ __forceinline__ void stv(float* p, const float (&r)[VEC]) {
#if VEC == 4
  *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
#elif VEC == 2
  *reinterpret_cast<float2*>(p) = make_float2(r[0], r[1]);
#else
  p[0] = r[0];
#endif
}

// Combine two (max, sum-of-exp relative to max) pairs.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
  float mn = fmaxf(m, m2);
  if (mn == -INFINITY) { m = mn; s = 0.f; return; }
  s = s * expf(m - mn) + s2 * expf(m2 - mn);
  m = mn;
}

// Reductions over the TPR threads of a group. Every thread of the block must call these
// (they contain full-warp shuffles and, for TPR > 32, __syncthreads).
__device__ __forceinline__ float group_max(float v, float* sh) {
#if TPR > 1
#pragma unroll
  for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
#endif
#if TPR > 32
  const int warp = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) sh[warp] = v;
  __syncthreads();
  const int w0 = (threadIdx.x / TPR) * (TPR / 32);
  v = sh[w0];
  for (int i = 1; i < TPR / 32; ++i) v = fmaxf(v, sh[w0 + i]);
  __syncthreads();
#endif
  return v;
}

__device__ __forceinline__ float group_sum(float v, float* sh) {
#if TPR > 1
#pragma unroll
  for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
#endif
#if TPR > 32
  const int warp = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) sh[warp] = v;
  __syncthreads();
  const int w0 = (threadIdx.x / TPR) * (TPR / 32);
  v = sh[w0];
  for (int i = 1; i < TPR / 32; ++i) v += sh[w0 + i];
  __syncthreads();
#endif
  return v;
}

__device__ __forceinline__ void group_online(float& m, float& s, float* shm, float* shs) {
#if TPR > 1
#pragma unroll
  for (int o = (TPR < 32 ? TPR : 32) / 2; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    combine(m, s, m2, s2);
  }
#endif
#if TPR > 32
  const int warp = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) { shm[warp] = m; shs[warp] = s; }
  __syncthreads();
  const int w0 = (threadIdx.x / TPR) * (TPR / 32);
  m = shm[w0]; s = shs[w0];
  for (int i = 1; i < TPR / 32; ++i) combine(m, s, shm[w0 + i], shs[w0 + i]);
  __syncthreads();
#endif
}

__global__ void __launch_bounds__(BLOCK)
softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  __shared__ float sh_a[NWARPS];
#if ONLINE
  __shared__ float sh_b[NWARPS];
#endif

  const int lane = threadIdx.x % TPR;
  const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TPR;
  const bool valid = row < rows;
  // Threads of a row past the end still take part in the group reductions, with no elements.
  const int n = valid ? cols : 0;
  const size_t off = valid ? (size_t)row * (size_t)cols : 0;
  const float* xr = x + off;
  float* yr = y + off;

  // Split the row: `head` scalars until xr is VEC-aligned, `nvec` vectors, then scalar tail.
  int head = 0;
#if VEC > 1
  {
    const int mis = (int)(((unsigned long long)xr / sizeof(float)) % VEC);
    head = mis ? VEC - mis : 0;
    if (head > n) head = n;
  }
#endif
  const int nvec = (n - head) / VEC;
  const int tail0 = head + nvec * VEC;
  const float* xv = xr + head;
  // Vector stores only when y has the same alignment as x (true for cudaMalloc'd buffers).
  const bool y_vec_ok = (((unsigned long long)(yr + head)) % (VEC * sizeof(float))) == 0;

#if CACHE > 0
  // Row held in registers. The test depends on cols only, so every group of the block takes the
  // same path (the group reductions hold __syncthreads when TPR > 32). Here nvec <= cols / VEC <=
  // CACHE * TPR, so vector v = lane + j * TPR (j < CACHE) covers every vector of the row.
  if (cols <= CACHE * TPR * VEC) {
    float r[CACHE][VEC];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
      const int v = lane + j * TPR;
      if (v < nvec) {
        ldv(xv + (size_t)v * VEC, r[j]);
#pragma unroll
        for (int i = 0; i < VEC; ++i) mx = fmaxf(mx, r[j][i]);
      }
    }
    for (int c = lane; c < head; c += TPR) mx = fmaxf(mx, __ldg(xr + c));
    for (int c = tail0 + lane; c < n; c += TPR) mx = fmaxf(mx, __ldg(xr + c));
    mx = group_max(mx, sh_a);

    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
      if (lane + j * TPR < nvec) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) { r[j][i] = expf(r[j][i] - mx); sum += r[j][i]; }
      }
    }
    for (int c = lane; c < head; c += TPR) sum += expf(__ldg(xr + c) - mx);
    for (int c = tail0 + lane; c < n; c += TPR) sum += expf(__ldg(xr + c) - mx);
    sum = group_sum(sum, sh_a);

    const float rinv = 1.f / sum;
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
      const int v = lane + j * TPR;
      if (v < nvec) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) r[j][i] *= rinv;
        float* yp = yr + head + (size_t)v * VEC;
        if (y_vec_ok) stv(yp, r[j]);
        else {
#pragma unroll
          for (int i = 0; i < VEC; ++i) yp[i] = r[j][i];
        }
      }
    }
    for (int c = lane; c < head; c += TPR) yr[c] = expf(__ldg(xr + c) - mx) * rinv;
    for (int c = tail0 + lane; c < n; c += TPR) yr[c] = expf(__ldg(xr + c) - mx) * rinv;
    return;
  }
#endif

  float m, s;
#if ONLINE
  m = -INFINITY; s = 0.f;
  for (int c = lane; c < head; c += TPR) combine(m, s, __ldg(xr + c), 1.f);
  for (int v = lane; v < nvec; v += TPR) {
    float r[VEC];
    ldv(xv + (size_t)v * VEC, r);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
      if (r[i] > m) { s = s * expf(m - r[i]) + 1.f; m = r[i]; }
      else s += expf(r[i] - m);
    }
  }
  for (int c = tail0 + lane; c < n; c += TPR) {
    const float t = __ldg(xr + c);
    if (t > m) { s = s * expf(m - t) + 1.f; m = t; }
    else s += expf(t - m);
  }
  group_online(m, s, sh_a, sh_b);
#else
  m = -INFINITY;
  for (int c = lane; c < head; c += TPR) m = fmaxf(m, __ldg(xr + c));
  for (int v = lane; v < nvec; v += TPR) {
    float r[VEC];
    ldv(xv + (size_t)v * VEC, r);
#pragma unroll
    for (int i = 0; i < VEC; ++i) m = fmaxf(m, r[i]);
  }
  for (int c = tail0 + lane; c < n; c += TPR) m = fmaxf(m, __ldg(xr + c));
  m = group_max(m, sh_a);

  s = 0.f;
  for (int c = lane; c < head; c += TPR) s += expf(__ldg(xr + c) - m);
  for (int v = lane; v < nvec; v += TPR) {
    float r[VEC];
    ldv(xv + (size_t)v * VEC, r);
#pragma unroll
    for (int i = 0; i < VEC; ++i) s += expf(r[i] - m);
  }
  for (int c = tail0 + lane; c < n; c += TPR) s += expf(__ldg(xr + c) - m);
  s = group_sum(s, sh_a);
#endif

  const float inv = 1.f / s;
  for (int c = lane; c < head; c += TPR) yr[c] = expf(__ldg(xr + c) - m) * inv;
  for (int v = lane; v < nvec; v += TPR) {
    float r[VEC];
    ldv(xv + (size_t)v * VEC, r);
#pragma unroll
    for (int i = 0; i < VEC; ++i) r[i] = expf(r[i] - m) * inv;
    float* yp = yr + head + (size_t)v * VEC;
    if (y_vec_ok) stv(yp, r);
    else {
#pragma unroll
      for (int i = 0; i < VEC; ++i) yp[i] = r[i];
    }
  }
  for (int c = tail0 + lane; c < n; c += TPR) yr[c] = expf(__ldg(xr + c) - m) * inv;
}

}  // namespace sm_kd

void softmax(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int grid = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
  sm_kd::softmax_kernel<<<grid, BLOCK, 0, 0>>>(x, y, rows, cols);
}
