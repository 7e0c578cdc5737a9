// Row-wise softmax, fp32: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r).
//
// One kernel family. A group of TPR consecutive threads owns one row; a block of BLOCK threads
// owns BLOCK/TPR rows. Group reductions use warp shuffles (TPR <= 32) or shuffles plus shared
// memory (TPR > 32, then TPR is a multiple of 32). With CACHE = 1 a row that fits in at most 64
// floats per thread is read once into registers (NV vectors per thread, a power of two, the fewest
// that hold the row, picked from cols at launch), reduced there and written from there: one read
// and one write of memory per element; longer rows, and CACHE = 0, stream every pass from memory
// (correct for any length). ONLINE picks the reductions: 0 a max then a sum of exponentials (two
// group reductions); 1 one fused (max, sum) reduction -- streamed, an online max+sum pass; cached,
// each thread's max and its sum of exponentials relative to it, combined once, then rescaled.
// Defaults are the naive version: one thread per row, scalar loads, three passes over the row,
// nothing cached.
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
#define ONLINE 0    // 0: max, then sum (streamed: three passes); 1: one fused max+sum reduction (streamed: two passes)
#endif
#ifndef CACHE
#define CACHE 0     // 1: hold rows of up to 64 * TPR columns in registers (0: stream every pass from memory)
#endif

#if (BLOCK % TPR) != 0 || (TPR > 32 && (TPR % 32) != 0) || BLOCK > 1024
#error "softmax: need TPR | BLOCK, TPR multiple of 32 when > 32, BLOCK <= 1024"
#endif
#if VEC != 1 && VEC != 2 && VEC != 4
#error "softmax: VEC must be 1, 2 or 4"
#endif
#if CACHE != 0 && CACHE != 1
#error "softmax: CACHE must be 0 or 1"
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

// NV > 0: the row is held in registers, NV vectors of VEC floats per thread (the host launches it
// only for rows of at most NV*TPR*VEC columns, so every group of the grid takes the same path).
// NV == 0: every pass streams the row from memory (any length).
template <int NV>
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

  if (NV > 0) {
    // Here nvec <= cols / VEC <= NV * TPR, so vector v = lane + j * TPR (j < NV) covers the row.
    float r[NV > 0 ? NV : 1][VEC];
    // Every load of the row first, then the arithmetic: all NV loads are in flight together.
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int v = lane + j * TPR;
      if (v < nvec) ldv(xv + (size_t)v * VEC, r[j]);
    }
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      if (lane + j * TPR < nvec) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) mx = fmaxf(mx, r[j][i]);
      }
    }
    for (int c = lane; c < head; c += TPR) mx = fmaxf(mx, __ldg(xr + c));
    for (int c = tail0 + lane; c < n; c += TPR) mx = fmaxf(mx, __ldg(xr + c));
#if !ONLINE
    mx = group_max(mx, sh_a);
#endif
    // Exponentials relative to mx: the row's max (ONLINE 0) or this thread's own (ONLINE 1).
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      if (lane + j * TPR < nvec) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) { r[j][i] = expf(r[j][i] - mx); sum += r[j][i]; }
      }
    }
    for (int c = lane; c < head; c += TPR) sum += expf(__ldg(xr + c) - mx);
    for (int c = tail0 + lane; c < n; c += TPR) sum += expf(__ldg(xr + c) - mx);
#if ONLINE
    // One fused reduction of (max, sum); this thread's values are rescaled by exp(own max - row max).
    float m = mx;
    group_online(m, sum, sh_a, sh_b);
    const float rinv = 1.f / sum;
    const float scale = mx == -INFINITY ? 0.f : expf(mx - m) * rinv;  // a thread with no elements has mx = -inf
    mx = m;
#else
    sum = group_sum(sum, sh_a);
    const float rinv = 1.f / sum;
    const float scale = rinv;
#endif
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int v = lane + j * TPR;
      if (v < nvec) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) r[j][i] *= scale;
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

template <int NV>
void sm_launch(int grid, const float* x, float* y, int rows, int cols) {
  void (*kern)(const float*, float*, int, int) = softmax_kernel<NV>;
  kern<<<grid, BLOCK, 0, 0>>>(x, y, rows, cols);
}

}  // namespace sm_kd

void softmax(const float* x, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const int grid = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
#if CACHE
  // The fewest registers that hold the row: NV vectors per thread, a power of two, NV * VEC <= 64.
  const long long nv = ((long long)cols + TPR * VEC - 1) / (TPR * VEC);
  if (nv <= 1) return sm_kd::sm_launch<1>(grid, x, y, rows, cols);
  if (nv <= 2) return sm_kd::sm_launch<2>(grid, x, y, rows, cols);
  if (nv <= 4) return sm_kd::sm_launch<4>(grid, x, y, rows, cols);
  if (nv <= 8) return sm_kd::sm_launch<8>(grid, x, y, rows, cols);
  if (nv <= 16) return sm_kd::sm_launch<16>(grid, x, y, rows, cols);
#if VEC <= 2
  if (nv <= 32) return sm_kd::sm_launch<32>(grid, x, y, rows, cols);
#endif
#if VEC == 1
  if (nv <= 64) return sm_kd::sm_launch<64>(grid, x, y, rows, cols);
#endif
#endif
  sm_kd::sm_launch<0>(grid, x, y, rows, cols);  // longer rows: streamed
}
