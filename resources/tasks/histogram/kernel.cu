// histogram: 256-bin histogram of n bytes into u32 counts. One tunable kernel family.
//
//   USE_SMEM   0: every element does atomicAdd on the global histogram (the naive kernel: all blocks
//              contend on 256 words in a handful of L2 slices); 1: each block counts into shared-memory
//              histograms and merges them into the global one at the end (one atomicAdd per non-zero bin)
//   REPL       shared histogram replicas per block (warp w counts into replica w % REPL) to spread
//              shared-atomic contention; must be 1 when USE_SMEM=0
//   BLOCK      threads per block
//   ITEMS      vectors per thread per tile: a block owns a tile of BLOCK*ITEMS vectors, thread t takes
//              vectors t, t+BLOCK, ... (coalesced); all loads of a tile are issued before any atomic
//   VEC        bytes per load: 1 (u8), 4 (u32), 16 (uint4). Used only when `data` is VEC-aligned, else the
//              byte instantiation runs; the n % VEC tail is counted byte by byte by block 0
//   GRID_MULT  0: one block per tile; k > 0: grid = min(#tiles, k * #SMs) blocks that grid-stride
// The entry zeroes the histogram (cudaMemsetAsync on stream 0) before the kernel.
// Naive default: USE_SMEM=0, REPL=1, BLOCK=256, ITEMS=1, VEC=1, GRID_MULT=0.
#include <cuda_runtime.h>
#include <stdint.h>

#ifndef USE_SMEM
#define USE_SMEM 0
#endif
#ifndef REPL
#define REPL 1
#endif
#ifndef BLOCK
#define BLOCK 256
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

#define HIST_BINS 256

#if VEC != 1 && VEC != 4 && VEC != 16
#error "VEC must be 1, 4 or 16"
#endif
#if BLOCK < 32 || BLOCK > 1024 || (BLOCK % 32) != 0
#error "BLOCK must be a multiple of 32 in [32, 1024]"
#endif
#if REPL < 1 || REPL * 32 > BLOCK
#error "REPL must be in [1, BLOCK/32]"
#endif
#if USE_SMEM && (REPL * HIST_BINS * 4 > 49152)
#error "shared histograms exceed 48 KB"
#endif

namespace hist_detail {

template <int V> struct Vec;
template <> struct Vec<1>  { typedef unsigned char T; };
template <> struct Vec<4>  { typedef unsigned int T; };
template <> struct Vec<16> { typedef uint4 T; };

__device__ __forceinline__ void count_word(unsigned int* h, unsigned int w) {
  atomicAdd(h + (w & 0xFFu), 1u);
  atomicAdd(h + ((w >> 8) & 0xFFu), 1u);
  atomicAdd(h + ((w >> 16) & 0xFFu), 1u);
  atomicAdd(h + (w >> 24), 1u);
}
__device__ __forceinline__ void count(unsigned int* h, unsigned char v) { atomicAdd(h + v, 1u); }
__device__ __forceinline__ void count(unsigned int* h, unsigned int v)  { count_word(h, v); }
__device__ __forceinline__ void count(unsigned int* h, uint4 v) {
  count_word(h, v.x); count_word(h, v.y); count_word(h, v.z); count_word(h, v.w);
}

template <int V>
__global__ void __launch_bounds__(BLOCK)
histogram_kernel(const unsigned char* __restrict__ data, unsigned int* __restrict__ hist, long long n) {
#if USE_SMEM
  __shared__ unsigned int sh[REPL * HIST_BINS];
  for (int i = threadIdx.x; i < REPL * HIST_BINS; i += BLOCK) sh[i] = 0u;
  __syncthreads();
  unsigned int* h = sh + ((threadIdx.x >> 5) % REPL) * HIST_BINS;
#else
  unsigned int* h = hist;
#endif

  typedef typename Vec<V>::T VT;
  const VT* __restrict__ dv = reinterpret_cast<const VT*>(data);
  const long long nv = n / V;                          // whole vectors
  const long long tile = (long long)BLOCK * ITEMS;     // vectors per tile
  const long long num_tiles = (nv + tile - 1) / tile;

  for (long long t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    const long long base = t * tile + threadIdx.x;
    VT r[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const long long idx = base + (long long)i * BLOCK;
      if (idx < nv) r[i] = dv[idx];
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const long long idx = base + (long long)i * BLOCK;
      if (idx < nv) count(h, r[i]);
    }
  }

  // Byte tail: the last n % V bytes (at most 15 < BLOCK), counted by block 0.
  if (V > 1 && blockIdx.x == 0) {
    const long long i = nv * V + threadIdx.x;
    if (i < n) count(h, data[i]);
  }

#if USE_SMEM
  __syncthreads();
  for (int b = threadIdx.x; b < HIST_BINS; b += BLOCK) {
    unsigned int s = 0;
#pragma unroll
    for (int k = 0; k < REPL; ++k) s += sh[k * HIST_BINS + b];
    if (s) atomicAdd(&hist[b], s);
  }
#endif
}

template <int V>
static void launch(const unsigned char* data, unsigned int* hist, long long n) {
  const long long nv = n / V;
  const long long tile = (long long)BLOCK * ITEMS;
  long long grid = (nv + tile - 1) / tile;
#if GRID_MULT > 0
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const long long cap = (long long)GRID_MULT * sms;
  if (grid > cap) grid = cap;
#endif
  if (grid < 1) grid = 1;                                  // n < V: the tail still needs block 0
  if (grid > 2147483647LL) grid = 2147483647LL;            // kernel grid-strides over any remaining tiles
  histogram_kernel<V><<<(unsigned int)grid, BLOCK, 0, 0>>>(data, hist, n);
}

}  // namespace hist_detail

void histogram(const unsigned char* data, unsigned int* hist, int n) {
  cudaMemsetAsync(hist, 0, HIST_BINS * sizeof(unsigned int), 0);   // outputs arrive poisoned
  if (n <= 0) return;
  if (VEC > 1 && (reinterpret_cast<uintptr_t>(data) % VEC) == 0) hist_detail::launch<VEC>(data, hist, (long long)n);
  else                                                           hist_detail::launch<1>(data, hist, (long long)n);
}
