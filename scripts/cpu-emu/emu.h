// A small CUDA-on-CPU emulator for checking the suite kernels' logic without a GPU (issue 17).
// Every CUDA thread of a block is a fiber (ucontext to start it, then _setjmp/_longjmp to switch:
// swapcontext saves the signal mask with a system call at every switch, which was half the run
// time); blocks run one after another, and between two
// barriers the threads run one at a time in a shuffled order (so that a missing barrier shows up
// as a wrong result rather than being hidden by a fixed order). __syncthreads
// is a block barrier, __shfl_xor_sync a warp barrier plus an exchange; a barrier reached at
// different source lines by threads of one block (or warp), or reached by some threads while
// others have exited, is reported as an error (on a GPU it is undefined behaviour). __shared__
// variables become statics (one block runs at a time, so that is the block's shared memory).
// Not emulated: timing, memory ordering between blocks (the fibers never run concurrently),
// cp.async and other inline PTX (the kernels' non-PTX fallbacks are compiled instead).
// Used by scripts/cpu-emu/run.py; not part of KernelDuel.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <functional>
#include <vector>
#include <algorithm>
#include <random>
#include <setjmp.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define cudaStream_t int
#define cudaSuccess 0
using std::min;
using std::max;

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

namespace kd_emu {
enum State { RUN, BAR, WARP, DONE };
struct Fiber {
  ucontext_t ctx;
  jmp_buf jb;
  bool started = false;
  State st = RUN;
  int line = 0;
  dim3 tid;
  unsigned lin = 0;
};
inline ucontext_t sched;
inline jmp_buf sched_jb;
inline std::vector<Fiber>* fibers = nullptr;
inline Fiber* cur = nullptr;
inline dim3 blockIdx_, blockDim_, gridDim_;
inline std::function<void()> body;
inline float warp_slot_f[1024];
inline long long errors = 0;

[[noreturn]] inline void fail(const char* what, int line) {
  std::fprintf(stderr, "EMU ERROR: %s (line %d, block %u,%u)\n", what, line, blockIdx_.x, blockIdx_.y);
  std::exit(3);
}
inline void yield(State s, int line) {
  cur->st = s;
  cur->line = line;
  if (_setjmp(cur->jb) == 0) _longjmp(sched_jb, 1);
}
inline void entry() {
  body();
  cur->st = DONE;
  _longjmp(sched_jb, 1);
}
constexpr size_t kStack = 64 * 1024;
inline char* stacks = nullptr;  // 1024 fiber stacks, reused by every block
inline void run_block(dim3 b) {
  blockIdx_ = b;
  const unsigned n = blockDim_.x * blockDim_.y * blockDim_.z;
  if (!stacks) stacks = static_cast<char*>(std::malloc(kStack * 1024));
  std::vector<Fiber> fs(n);
  fibers = &fs;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = fs[i];
    f.lin = i;
    f.tid = dim3(i % blockDim_.x, (i / blockDim_.x) % blockDim_.y, i / (blockDim_.x * blockDim_.y));
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks + kStack * i;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, entry, 0);
  }
  static std::mt19937 order_rng(2026);
  std::vector<unsigned> order(n);
  for (unsigned i = 0; i < n; ++i) order[i] = i;
  for (;;) {
    std::shuffle(order.begin(), order.end(), order_rng);
    for (unsigned i : order)
      if (fs[i].st == RUN) {
        cur = &fs[i];
        if (_setjmp(sched_jb) == 0) {
          if (fs[i].started) _longjmp(fs[i].jb, 1);
          fs[i].started = true;
          swapcontext(&sched, &fs[i].ctx);  // its first run; it comes back by _longjmp
        }
      }
    bool released = false;
    // Warp barriers: all live lanes of a warp at the same shuffle.
    for (unsigned w = 0; w * 32 < n; ++w) {
      int at = 0, other = 0, line = -1;
      for (unsigned l = w * 32; l < std::min(n, w * 32 + 32); ++l) {
        if (fs[l].st == WARP) {
          if (line >= 0 && fs[l].line != line) fail("lanes of a warp at different shuffles", fs[l].line);
          line = fs[l].line;
          ++at;
        } else ++other;
      }
      if (at && other) fail("a shuffle reached by only some lanes of a warp (others exited or wait at a barrier)", line);
      if (at) {
        for (unsigned l = w * 32; l < std::min(n, w * 32 + 32); ++l) fs[l].st = RUN;
        released = true;
      }
    }
    if (released) continue;
    int bar = 0, done = 0, line = -1;
    for (auto& f : fs) {
      if (f.st == BAR) {
        if (line >= 0 && f.line != line) fail("threads of a block at different __syncthreads", f.line);
        line = f.line;
        ++bar;
      } else if (f.st == DONE) ++done;
    }
    if (done == (int)n) break;
    if (bar && done) fail("__syncthreads reached while other threads of the block have exited", line);
    if (bar == (int)n) {
      for (auto& f : fs) f.st = RUN;
      continue;
    }
    fail("no thread can run (deadlock)", line);
  }
  fibers = nullptr;
}
inline void launch(dim3 g, dim3 b, std::function<void()> fn) {
  if (b.x * b.y * b.z == 0 || b.x * b.y * b.z > 1024) fail("block size out of range", 0);
  if (g.x == 0 || g.y == 0 || g.y > 65535) fail("grid size out of range", 0);
  gridDim_ = g;
  blockDim_ = b;
  body = std::move(fn);
  for (unsigned z = 0; z < g.z; ++z)
    for (unsigned y = 0; y < g.y; ++y)
      for (unsigned x = 0; x < g.x; ++x) run_block(dim3(x, y, z));
}
// A 32-bit shuffle: every lane posts its value, then reads the one of lane `src` of its warp.
template <typename T>
inline T shfl_lane(T v, unsigned src, int line) {
  static_assert(sizeof(T) == 4, "32-bit shuffles only");
  const unsigned me = cur->lin;
  std::memcpy(&warp_slot_f[me], &v, 4);
  yield(WARP, line);
  T r;
  std::memcpy(&r, &warp_slot_f[(me & ~31u) | (src & 31u)], 4);
  yield(WARP, line);  // nobody overwrites a slot before every lane has read
  return r;
}
template <typename T>
inline T shfl_xor(T v, int o, int line) { return shfl_lane(v, (cur->lin & 31u) ^ (unsigned)o, line); }
template <typename T>
inline T shfl_idx(T v, int src, int line) { return shfl_lane(v, (unsigned)src, line); }
}  // namespace kd_emu

#define threadIdx (kd_emu::cur->tid)
#define blockIdx (kd_emu::blockIdx_)
#define blockDim (kd_emu::blockDim_)
#define gridDim (kd_emu::gridDim_)
#define __syncthreads() kd_emu::yield(kd_emu::BAR, __LINE__)
#define __shfl_xor_sync(mask, v, o) kd_emu::shfl_xor((v), (o), __LINE__)
#define __shfl_sync(mask, v, src) kd_emu::shfl_idx((v), (src), __LINE__)
#define __threadfence() ((void)0)
#define KD_LAUNCH(g, b, call) kd_emu::launch(dim3(g), dim3(b), [&]() { call; })

template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline T __ldcg(const T* p) { return *p; }
template <typename T> inline T __ldcs(const T* p) { return *p; }
template <typename T> inline void __stcs(T* p, T v) { *p = v; }
inline float atomicAdd(float* p, float v) { float o = *p; *p += v; return o; }
inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
inline float atomicExch(float* p, float v) { float o = *p; *p = v; return o; }
inline int cudaMemsetAsync(void* p, int v, size_t n, int = 0) { std::memset(p, v, n); return 0; }
inline int cudaGetDevice(int* d) { *d = 0; return 0; }
enum { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };
// An H200's figures: 132 SMs, compute capability 9.x.
inline int cudaDeviceGetAttribute(int* v, int a, int) { *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : 132; return 0; }
enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename F> inline int cudaFuncSetAttribute(F, int, int) { return 0; }
struct cudaFuncAttributes { int maxDynamicSharedSizeBytes = 0; };
template <typename F> inline int cudaFuncGetAttributes(cudaFuncAttributes* a, F) { a->maxDynamicSharedSizeBytes = 48 << 10; return 0; }
