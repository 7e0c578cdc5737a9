// axpy: y = a*x + y (fp32, y in place), one tunable kernel family.
//
//   BLOCK      threads per block
//   ITEMS      vectors per thread per tile: a block owns a tile of BLOCK*ITEMS vectors, thread t takes
//              vectors t, t+BLOCK, ... (coalesced); all loads of a tile are issued before any FMA/store
//   VEC        floats per memory access: 1 (float), 2 (float2), 4 (float4). Used only when x and y are
//              both VEC*4-byte aligned; otherwise the scalar instantiation runs. The n % VEC tail is
//              done with scalar accesses by block 0.
//   GRID_MULT  0: one block per tile (grid = #tiles); k > 0: grid = min(#tiles, k * #SMs) blocks that
//              grid-stride over the tiles
//
// Naive default: BLOCK=32, ITEMS=1, VEC=1, GRID_MULT=0 (one scalar element per thread, tiny blocks).
#include <cuda_runtime.h>
#include <stdint.h>

#ifndef BLOCK
#define BLOCK 32
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef GRID_MULT
#define GRID_MULT 0
#endif

#if VEC != 1 && VEC != 2 && VEC != 4
#error "VEC must be 1, 2 or 4"
#endif
#if BLOCK < 32 || BLOCK > 1024 || (BLOCK % 32) != 0
#error "BLOCK must be a multiple of 32 in [32, 1024]"
#endif

namespace axpy_detail {

template <int V> struct Vec;
template <> struct Vec<1> { typedef float T; };
template <> struct Vec<2> { typedef float2 T; };
template <> struct Vec<4> { typedef float4 T; };

__device__ __forceinline__ float  fma_v(float a, float x, float y)   { return fmaf(a, x, y); }
__device__ __forceinline__ float2 fma_v(float a, float2 x, float2 y) { return make_float2(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y)); }
__device__ __forceinline__ float4 fma_v(float a, float4 x, float4 y) {
  return make_float4(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y), fmaf(a, x.z, y.z), fmaf(a, x.w, y.w));
}

template <int V>
__global__ void __launch_bounds__(BLOCK) axpy_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                     float a, long long n) {
  typedef typename Vec<V>::T VT;
  const VT* __restrict__ xv = reinterpret_cast<const VT*>(x);
  VT* __restrict__ yv = reinterpret_cast<VT*>(y);
  const long long nv = n / V;                          // number of whole vectors
  const long long tile = (long long)BLOCK * ITEMS;     // vectors per tile
  const long long num_tiles = (nv + tile - 1) / tile;

  for (long long t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    const long long base = t * tile + threadIdx.x;
    VT xr[ITEMS], yr[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const long long idx = base + (long long)i * BLOCK;
      if (idx < nv) { xr[i] = xv[idx]; yr[i] = yv[idx]; }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const long long idx = base + (long long)i * BLOCK;
      if (idx < nv) yv[idx] = fma_v(a, xr[i], yr[i]);
    }
  }

  // Scalar tail: the last n % V elements (fewer than 4 <= BLOCK), done by block 0.
  if (V > 1 && blockIdx.x == 0) {
    const long long i = nv * V + threadIdx.x;
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
  }
}

template <int V>
static void launch(const float* x, float* y, float a, long long n) {
  const long long nv = n / V;
  const long long tile = (long long)BLOCK * ITEMS;
  long long grid = (nv + tile - 1) / tile;
#if GRID_MULT > 0
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const long long cap = (long long)GRID_MULT * sms;
  if (grid > cap) grid = cap;
#endif
  if (grid < 1) grid = 1;                  // n < V: the tail still needs block 0
  if (grid > 2147483647LL) grid = 2147483647LL;  // kernel grid-strides over any remaining tiles
  axpy_kernel<V><<<(unsigned int)grid, BLOCK, 0, 0>>>(x, y, a, n);
}

}  // namespace axpy_detail

void axpy(const float* x, float* y, float a, int n) {
  if (n <= 0) return;
  const bool aligned = ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % (VEC * sizeof(float))) == 0;
  if (VEC > 1 && aligned) axpy_detail::launch<VEC>(x, y, a, (long long)n);
  else                    axpy_detail::launch<1>(x, y, a, (long long)n);
}
