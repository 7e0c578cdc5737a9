// Sum of an fp32 vector into one fp32 value: out[0] = sum_i x[i].
//
// One kernel family: each block reduces its share of x (a grid-stride loop over chunks of
// BLOCK*ITEMS vectors of VEC floats), reduces within the block (shared-memory tree or warp
// shuffles), then
//   FINAL 0: atomically adds its partial into out[0], which the entry zeroes first (a memset node
//            before the kernel, and partials added in whatever order blocks finish);
//   FINAL 1: writes its partial to a device array; the last block to finish (a counter, after a
//            __threadfence) adds the partials in block order and writes out[0]: no memset, one
//            kernel, the same result every run. Needs a bounded grid (GRID_MULT > 0); the counter
//            is reset by that last block, so every call starts from zero.
//   FINAL 2: adds its partial atomically into a device accumulator and counts itself done; the last
//            block takes the total (atomicExch, which also zeroes the accumulator) into out[0] and
//            resets the counter: no memset node and no pass over partials, one atomic chain as FINAL 0.
// LOAD (VEC 4 only) picks the vector load of the body: 0 __ldg; 1 __ldcs (ld.global.cs, evict first:
// every byte is read once); 2 ld.global.nc.L1::no_allocate.L2::256B (no L1 allocation, and L2 fetches
// 256-byte blocks, a prefetch of the lines this and the neighbouring lanes read next); 3 the same
// with an L2 evict-first cache policy (createpolicy.fractional.L2::evict_first: the streamed lines
// are the first L2 replaces, so they do not push out lines other work still holds); 4 the Hopper
// bulk copy (TMA, cp.async.bulk): thread 0 of each block streams whole chunks into a ring of
// RS_STAGES shared-memory stages, each completing on its own mbarrier, and the block sums a stage
// from shared memory while the next ones are in flight (compute capability 9.0 or newer; on older
// GPUs LOAD 4 builds the LOAD 0 body). The partial last chunk takes the plain loads.
// Defaults are the naive version: one float per thread, one block per 256 floats (GRID_MULT 0),
// shared-memory tree, one atomic per block.
#include <cuda_runtime.h>

#ifndef BLOCK
#define BLOCK 256     // threads per block: 32..1024, a power of two
#endif
#ifndef VEC
#define VEC 1         // floats per vector load: 1, 2 or 4 (unaligned head/tail handled with scalars)
#endif
#ifndef ITEMS
#define ITEMS 1       // vectors per thread per chunk (independent accumulators)
#endif
#ifndef GRID_MULT
#define GRID_MULT 0   // 0: one block per chunk of BLOCK*ITEMS vectors; k > 0: k blocks per SM, grid-stride
#endif
#ifndef SHUFFLE
#define SHUFFLE 0     // block reduction: 0 shared-memory tree, 1 warp shuffles
#endif
#ifndef FINAL
#define FINAL 0       // 0: memset + one atomicAdd per block; 1: partials + last block sums them; 2: atomic
                      // accumulator + last block takes it (1, 2: GRID_MULT > 0, SHUFFLE 1)
#endif
#ifndef LOAD
#define LOAD 0        // VEC 4 body loads: 0 __ldg; 1 __ldcs (evict first); 2 ld.global.nc.L1::no_allocate.L2::256B;
                      // 3 as 2 with an L2 evict-first cache policy; 4 bulk copies (TMA) into shared memory
#endif

#if BLOCK < 32 || BLOCK > 1024 || (BLOCK & (BLOCK - 1)) != 0
#error "reduce_sum: BLOCK must be a power of two in [32, 1024]"
#endif
#if VEC != 1 && VEC != 2 && VEC != 4
#error "reduce_sum: VEC must be 1, 2 or 4"
#endif
#if FINAL < 0 || FINAL > 2
#error "reduce_sum: FINAL is 0, 1 or 2"
#endif
#if FINAL && GRID_MULT == 0
#error "reduce_sum: FINAL 1 and 2 need a bounded grid (GRID_MULT > 0)"
#endif
#if FINAL == 2 && !SHUFFLE
#error "reduce_sum: FINAL 2 reduces the block with shuffles (SHUFFLE 1)"
#endif
#if LOAD < 0 || LOAD > 4 || (LOAD != 0 && VEC != 4)
#error "reduce_sum: LOAD is 0..4, and 1..4 need VEC 4"
#endif
#if LOAD == 4 && GRID_MULT == 0
#error "reduce_sum: LOAD 4 needs a bounded grid (GRID_MULT > 0)"
#endif
// LOAD 4: one stage holds one chunk (BLOCK * ITEMS float4); as many stages as fit in 192 KiB, 2..4.
#define RS_STAGE_BYTES (BLOCK * ITEMS * 16)
#define RS_STAGES (RS_STAGE_BYTES * 4 <= 196608 ? 4 : RS_STAGE_BYTES * 3 <= 196608 ? 3 : 2)
#if LOAD == 4 && RS_STAGE_BYTES * 2 > 196608
#error "reduce_sum: LOAD 4 needs two chunks (2 * BLOCK * ITEMS * 16 bytes) in 192 KiB of shared memory"
#endif
#if LOAD == 4 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RS_BULK 1
#else
#define RS_BULK 0
#endif
#define RS_MAX_BLOCKS 4096   // FINAL 1: the grid is capped here (the grid-stride loop covers the rest)

namespace rs_kd {

#if FINAL == 2
__device__ float total = 0.f;              // back to 0 at the end of every launch (atomicExch by the last block)
__device__ unsigned int blocks_done = 0;   // likewise

// Called by thread 0 of each block with the block's partial.
__device__ __forceinline__ void finish_atomic(float* __restrict__ out, float partial) {
  atomicAdd(&total, partial);
  __threadfence();                          // the add is visible before the count says so
  if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
    __threadfence();
    out[0] = atomicExch(&total, 0.f);
    blocks_done = 0;
  }
}
#elif FINAL
__device__ float partials[RS_MAX_BLOCKS];
__device__ unsigned int blocks_done = 0;   // back to 0 at the end of every launch (by the last block)

// Block sum of v (every thread calls it; the result is valid in thread 0).
__device__ __forceinline__ float block_sum(float v, float* sh) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();                         // sh may still be read by an earlier call
  if ((tid & 31) == 0) sh[tid >> 5] = v;
  __syncthreads();
  v = 0.f;
  if (tid < 32) {
    v = (tid < BLOCK / 32) ? sh[tid] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  }
  return v;
}

// Called by every thread of the block with the block's partial in thread 0.
__device__ __forceinline__ void finish(float* __restrict__ out, float partial, float* sh) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = partial;
    __threadfence();                        // the partial is visible before the count says so
    last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float v = 0.f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK) v += __ldcg(partials + i);
  v = block_sum(v, sh);
  if (threadIdx.x == 0) {
    out[0] = v;
    blocks_done = 0;
  }
}
#endif

__device__ __forceinline__ float4 ld4(const float* p) {
#if LOAD == 1
  return __ldcs(reinterpret_cast<const float4*>(p));
#elif LOAD == 2 && defined(__CUDA_ARCH__)
  float4 r;
  // Not volatile: x is read-only for the kernel, so the compiler may schedule these freely.
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];\n"
      : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
      : "l"(p));
  return r;
#elif LOAD == 3 && defined(__CUDA_ARCH__)
  unsigned long long policy;
  // Same inputs every time: the compiler may hoist it out of the loop.
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  float4 r;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4], %5;\n"
      : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
      : "l"(p), "l"(policy));
  return r;
#else
  return __ldg(reinterpret_cast<const float4*>(p));
#endif
}

__device__ __forceinline__ float ldv_sum(const float* p) {
#if VEC == 4
  float4 t = ld4(p);
  return (t.x + t.y) + (t.z + t.w);
#elif VEC == 2
  float2 t = __ldg(reinterpret_cast<const float2*>(p));
  return t.x + t.y;
#else
  return __ldg(p);
#endif
}

#if RS_BULK
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// Thread 0: stage `s` expects `bytes` and the bulk copy of them from global `src` starts.
__device__ __forceinline__ void bulk_issue(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void bulk_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}
#endif

// x + head is VEC-aligned; nvec vectors start there; `head` scalars before, `tail` scalars after.
__global__ void __launch_bounds__(BLOCK)
reduce_kernel(const float* __restrict__ x, float* __restrict__ out, long long nvec, int head, int tail) {
  const int tid = threadIdx.x;
  const float* xv = x + head;
  float acc[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) acc[j] = 0.f;

  // Scalars outside the vector body, taken by the first threads of the grid.
  const long long gtid = (long long)blockIdx.x * BLOCK + tid;
  if (gtid < head) acc[0] += __ldg(x + gtid);
  if (gtid < tail) acc[0] += __ldg(xv + nvec * VEC + gtid);

  const long long chunk = (long long)BLOCK * ITEMS;
  const long long stride = (long long)gridDim.x * chunk;
#if RS_BULK
  // Whole chunks through the ring of stages (chunk c goes to block c % gridDim.x, as below).
  extern __shared__ __align__(128) float4 stages[];   // RS_STAGES * BLOCK * ITEMS
  __shared__ __align__(8) unsigned long long bars[RS_STAGES];
  const long long nfull = nvec / chunk;
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < RS_STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(smem_addr(&bars[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#pragma unroll
    for (int s = 0; s < RS_STAGES; ++s) {
      const long long c = blockIdx.x + (long long)s * gridDim.x;
      if (c < nfull) bulk_issue(smem_addr(stages + s * chunk), xv + c * chunk * 4, RS_STAGE_BYTES, smem_addr(&bars[s]));
    }
  }
  __syncthreads();
  {
    int s = 0;
    unsigned parity = 0;
    for (long long c = blockIdx.x; c < nfull; c += gridDim.x) {
      bulk_wait(smem_addr(&bars[s]), parity);
      const float4* st = stages + s * chunk;
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const float4 t = st[j * BLOCK + tid];
        acc[j] += (t.x + t.y) + (t.z + t.w);
      }
      __syncthreads();                       // every thread has read stage s before it is refilled
      const long long cn = c + (long long)RS_STAGES * gridDim.x;
      if (tid == 0 && cn < nfull) bulk_issue(smem_addr(stages + s * chunk), xv + cn * chunk * 4, RS_STAGE_BYTES, smem_addr(&bars[s]));
      if (++s == RS_STAGES) {
        s = 0;
        parity ^= 1u;
      }
    }
  }
  // The partial last chunk, if any, with plain loads by the block that owns it.
  for (long long base = nfull * chunk + (long long)blockIdx.x * chunk; base < nvec; base += stride) {
#else
  for (long long base = (long long)blockIdx.x * chunk; base < nvec; base += stride) {
#endif
    if (base + chunk <= nvec) {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) acc[j] += ldv_sum(xv + (base + (long long)j * BLOCK + tid) * VEC);
    } else {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const long long i = base + (long long)j * BLOCK + tid;
        if (i < nvec) acc[j] += ldv_sum(xv + i * VEC);
      }
    }
  }
  float v = acc[0];
#pragma unroll
  for (int j = 1; j < ITEMS; ++j) v += acc[j];

#if SHUFFLE
  __shared__ float warp_sums[BLOCK / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((tid & 31) == 0) warp_sums[tid >> 5] = v;
  __syncthreads();
  if (tid < 32) {
    v = (tid < BLOCK / 32) ? warp_sums[tid] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#if FINAL == 0
    if (tid == 0) atomicAdd(out, v);
#elif FINAL == 2
    if (tid == 0) finish_atomic(out, v);
#endif
  }
#if FINAL == 1
  finish(out, v, warp_sums);
#endif
#else
  __shared__ float sdata[BLOCK];
  sdata[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
#if FINAL
  finish(out, sdata[0], sdata);
#else
  if (tid == 0) atomicAdd(out, sdata[0]);
#endif
#endif
}

}  // namespace rs_kd

void reduce_sum(const float* x, float* out, int n) {
#if FINAL
  if (n <= 0) {
    cudaMemsetAsync(out, 0, sizeof(float), 0);
    return;
  }
#else
  cudaMemsetAsync(out, 0, sizeof(float), 0);
  if (n <= 0) return;
#endif
  int head = 0;
#if VEC > 1
  {
    const int mis = (int)(((unsigned long long)x / sizeof(float)) % VEC);
    head = mis ? VEC - mis : 0;
    if (head > n) head = n;
  }
#endif
  const long long nvec = (long long)(n - head) / VEC;
  const int tail = (int)((long long)(n - head) - nvec * VEC);
  const long long chunk = (long long)BLOCK * ITEMS;
  long long blocks = (nvec + chunk - 1) / chunk;
#if GRID_MULT > 0
  int dev = 0, sms = 132;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (blocks > (long long)GRID_MULT * sms) blocks = (long long)GRID_MULT * sms;
#endif
#if FINAL == 1
  if (blocks > RS_MAX_BLOCKS) blocks = RS_MAX_BLOCKS;
#endif
  if (blocks < 1) blocks = 1;  // head/tail scalars still need threads (n < VEC)
#if LOAD == 4
  // The ring of stages is dynamic shared memory (above the 48 KiB a launch gets without asking).
  // On a GPU older than compute capability 9.0 the kernel builds the LOAD 0 body and asks for none.
  // Raised on the first call only (lazy initialisation, allowed before the captured call): later
  // calls find the kernel's limit already high enough and ask nothing of the runtime but a query.
  int dyn = 0;
  {
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major >= 9) {
      dyn = RS_STAGES * RS_STAGE_BYTES;
      cudaFuncAttributes fa;
      if (cudaFuncGetAttributes(&fa, rs_kd::reduce_kernel) != cudaSuccess || fa.maxDynamicSharedSizeBytes < dyn)
        cudaFuncSetAttribute(rs_kd::reduce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn);
    }
  }
  rs_kd::reduce_kernel<<<(unsigned)blocks, BLOCK, (size_t)dyn, 0>>>(x, out, nvec, head, tail);
#else
  rs_kd::reduce_kernel<<<(unsigned)blocks, BLOCK, 0, 0>>>(x, out, nvec, head, tail);
#endif
}
