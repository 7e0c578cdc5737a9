// Device buffers of one problem size: inputs generated on the device from (seed, argument, index)
// with a hash, so every process that needs the same inputs (the executor that runs a variant, the
// judge that runs the reference) makes identical ones without shipping gigabytes between them;
// outputs poisoned (NaN, or 0xFF/0xA5 bytes for integers); a guard region after every buffer.
#pragma once
#include "kd_plan.h"

__host__ __device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
template <typename T>
__global__ void fill_kernel(T* p, size_t n, unsigned long long key, double lo, double hi, int is_int) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long h = mix64(key ^ mix64(i));
    if (is_int) {
      // lo + floor(h * span / 2^64): uniform on [lo, hi] (bias below span / 2^64). Not h % span: a
      // 64-bit remainder by a run-time divisor is a long instruction sequence on the GPU, done then
      // for each of the 2^28 bytes of fresh input every histogram sample gets (a sample of that
      // 0.12 ms kernel took ~2 ms, bench/results/h200-timing-stability-7fcdb26.json). Measured on an
      // H100 (bench/results/README.md, the row of 2026-12-07 18:04): 88-95 samples a process in the
      // default timing instead of 56-112 (median 67), ~1.1 ms a sample instead of ~1.5. Bytes have
      // their own fill since (fill_u8_kernel below): the two hashes of each byte were most of what
      // was left.
      unsigned long long span = (unsigned long long)((long long)hi - (long long)lo) + 1ull;
      p[i] = (T)((long long)lo + (long long)(span ? __umul64hi(h, span) : h));
    } else {
      double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
      T v = (T)(lo + (hi - lo) * u);
      if (v == (T)0) v = (T)(lo + (hi - lo) * 0.61803398875);  // never zeros
      if (v == (T)0) v = (T)1e-3;
      p[i] = v;
    }
  }
}
// Bytes (u8: histogram's 2^28 of them get fresh values for every timed call) four from one hash,
// 16 bits each: lo + floor(v16 * span / 2^16), uniform on [lo, hi] (bias below span / 2^16; none for
// the 0-255 of a byte, whose value is then v16's high byte), stored as one 32-bit word where the
// buffer is aligned. The per-element fill above spends two hashes and a byte store on every byte,
// most of a histogram sample's time (~1.1 ms of it for a 0.12 ms kernel on an H100, 2026-12-07).
// Group g is bytes 4g..4g+3; the last group stops at n. Host and device, so a CPU test can check it.
__host__ __device__ __forceinline__ unsigned fill_u8_word(unsigned long long key, unsigned long long g, long long lo, unsigned long long span) {
  unsigned long long h = mix64(key ^ mix64(g));
  unsigned w = 0;
  for (int k = 0; k < 4; k++) {
    unsigned long long v16 = (h >> (16 * k)) & 0xFFFFull;
    unsigned long long v = (unsigned long long)lo + (span ? (v16 * span) >> 16 : v16);
    w |= (unsigned)(v & 0xFFull) << (8 * k);
  }
  return w;
}
__host__ __device__ __forceinline__ void fill_u8_group(unsigned char* p, size_t n, size_t g, unsigned long long key, long long lo, unsigned long long span) {
  unsigned w = fill_u8_word(key, g, lo, span);
  size_t i = 4 * g;
  if (i + 4 <= n && ((unsigned long long)(size_t)(p + i) & 3ull) == 0) *(unsigned*)(p + i) = w;
  else for (int k = 0; k < 4 && i + k < n; k++) p[i + k] = (unsigned char)(w >> (8 * k));
}
__global__ void fill_u8_kernel(unsigned char* p, size_t n, unsigned long long key, long long lo, unsigned long long span) {
  size_t groups = (n + 3) / 4;
  for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < groups; g += (size_t)gridDim.x * blockDim.x) fill_u8_group(p, n, g, key, lo, span);
}
static unsigned long long fill_span(double lo, double hi) {
  return (unsigned long long)((long long)hi - (long long)lo) + 1ull;
}

static void fill(void* d, const Arg& a, unsigned long long seed, int arg_index, cudaStream_t st = 0) {
  unsigned long long key = seed * 0x100000001B3ull + (unsigned long long)arg_index * 0x9E3779B97F4A7C15ull + 12345;
  int blocks = 1024, threads = 256;
  switch (a.dtype) {
    case F32: fill_kernel<<<blocks, threads, 0, st>>>((float*)d, a.elements, key, a.lo, a.hi, a.fill_int); break;
    case F64: fill_kernel<<<blocks, threads, 0, st>>>((double*)d, a.elements, key, a.lo, a.hi, a.fill_int); break;
    case I32: fill_kernel<<<blocks, threads, 0, st>>>((int*)d, a.elements, key, a.lo, a.hi, 1); break;
    case U32: fill_kernel<<<blocks, threads, 0, st>>>((unsigned*)d, a.elements, key, a.lo, a.hi, 1); break;
    case I64: fill_kernel<<<blocks, threads, 0, st>>>((long long*)d, a.elements, key, a.lo, a.hi, 1); break;
    case U8: fill_u8_kernel<<<blocks, threads, 0, st>>>((unsigned char*)d, a.elements, key, (long long)a.lo, fill_span(a.lo, a.hi)); break;
  }
  CK(cudaGetLastError());
}

// Every buffer is followed by a guard region filled with GUARD_BYTE before each call: a variant
// that writes past the end of a buffer (into what would be its neighbour) is caught by the check.
// A buffer of less than SPREAD_BELOW bytes is also preceded by one (see alloc_bufs).
static const size_t GUARD_BYTES = 256 << 10;
static const int GUARD_BYTE = 0xCD;
// Small buffers (a histogram's 1 KiB of bins, a result word) each get an allocation of their own
// with SPREAD_SPAN spare bytes, and sit at a random 256-byte-aligned offset in it: where a few
// cache lines land in L2 (slice, partition) can change the time of a kernel that hammers them with
// atomics by ~0.5%, and small cudaMalloc blocks of one process sit side by side, so every buffer
// set of a process would share one placement and the rotation over sets (DEFAULT_TIMING) could
// not average it out. Large buffers too (plan spreadlarge 1, the default timing's since 2026-12-07):
// at the start of their allocations, an input's and an output's relative places repeated set after
// set, and on an H100 a placement-sensitive softmax configuration ran 2.5% faster on the first set
// a process allocated than on all the others; in a duel the side that allocated first was slower
// in 30 of 30 self duels, the other side first faster in 30 of 30. With every buffer at a random
// offset, all its sets ran within ~1% of the fast time and 100 of 100 self duels said same
// (bench/results/README.md, 2026-12-07 08:41).
static const size_t SPREAD_BELOW = 2u << 20;
static const size_t SPREAD_SPAN = 2u << 20;
// plan spreadlarge 1: large buffers spread too. Set once from the plan in main(), before any
// buffer exists, so the judge and its executors agree on the layout.
static bool g_spread_large = false;
static bool spread(size_t bytes) { return bytes < SPREAD_BELOW || g_spread_large; }
/** Device memory one buffer of `bytes` takes, guards and spare bytes included. */
static size_t buffer_footprint(size_t bytes) { return bytes + GUARD_BYTES + (spread(bytes) ? SPREAD_SPAN + GUARD_BYTES : 0); }

struct Bufs {
  std::vector<void*> dev;            // per arg (nullptr for scalars)
  std::vector<void*> base;           // per arg: the allocation dev lies in
  std::vector<size_t> offset;        // per arg: dev - base
  std::vector<unsigned char> scal;   // scalar storage, 8 bytes per arg
  std::vector<size_t> bytes;         // per arg: buffer bytes (without the guard)
  std::vector<int> role;             // per arg: 0 in, 1 out, 2 inout, -1 scalar
};
static void scalar_bytes(const Arg& a, void* slot) {
  switch (a.dtype) {
    case F32: *(float*)slot = (float)a.scalar; break;
    case F64: *(double*)slot = a.scalar; break;
    case I32: *(int*)slot = (int)a.scalar; break;
    case U32: *(unsigned*)slot = (unsigned)a.scalar; break;
    case I64: *(long long*)slot = (long long)a.scalar; break;
    case U8: *(unsigned char*)slot = (unsigned char)a.scalar; break;
  }
}
// What kd_entry_packed receives: built on use, so a moved or copied Bufs never hands out
// pointers into another copy's scalar storage.
static std::vector<void*> packed(Bufs& b) {
  std::vector<void*> p(b.dev.size());
  for (size_t i = 0; i < p.size(); i++) p[i] = b.dev[i] ? b.dev[i] : (void*)&b.scal[8 * i];
  return p;
}
static void alloc_bufs(Bufs& b, const Size& s) {
  size_t n = s.args.size();
  b.dev.assign(n, nullptr);
  b.base.assign(n, nullptr);
  b.offset.assign(n, 0);
  b.scal.assign(8 * n, 0);
  b.bytes.assign(n, 0);
  b.role.assign(n, -1);
  for (size_t i = 0; i < n; i++) {
    const Arg& a = s.args[i];
    if (a.buffer) {
      b.bytes[i] = a.elements * dtype_bytes(a.dtype);
      b.role[i] = a.role;
      const size_t off = spread(b.bytes[i]) ? GUARD_BYTES + 256 * (size_t)(random_u64() % (SPREAD_SPAN / 256)) : 0;
      CK(cudaMalloc(&b.base[i], buffer_footprint(b.bytes[i])));
      b.offset[i] = off;
      b.dev[i] = (unsigned char*)b.base[i] + off;
    } else {
      scalar_bytes(a, &b.scal[8 * i]);
    }
  }
}
static void free_bufs(Bufs& b) {
  for (void* p : b.base) if (p) cudaFree(p);
  b.dev.clear();
  b.base.clear();
  b.offset.clear();
}
// Inputs and inout buffers from the seed (except those the judge writes from reference-data files),
// outputs poisoned, guards set (asynchronously on st).
static void prepare(Bufs& b, const Size& s, unsigned long long seed, int poison_variant, cudaStream_t st = 0) {
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer) continue;
    if (a.from_file) {
      // Written by the judge from the reference-data files before this call (kd_judge.h).
    } else if (a.role == 1) {
      int byte = is_float(a.dtype) ? 0xFF : (poison_variant & 1 ? 0xA5 : 0xFF);
      CK(cudaMemsetAsync(b.dev[i], byte, b.bytes[i], st));
    } else {
      fill(b.dev[i], a, seed, (int)i, st);
    }
    CK(cudaMemsetAsync((unsigned char*)b.dev[i] + b.bytes[i], GUARD_BYTE, GUARD_BYTES, st));
    if (spread(b.bytes[i])) CK(cudaMemsetAsync((unsigned char*)b.dev[i] - GUARD_BYTES, GUARD_BYTE, GUARD_BYTES, st));
  }
}

// Size of the buffer that flushes L2 before every timed sample: four times the L2, at least 64 MiB.
static size_t flush_size(const Plan& p) {
  if (p.flush_bytes) return p.flush_bytes;
  int dev = 0, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  size_t b = (size_t)l2 * 4;
  return b < (64u << 20) ? (64u << 20) : b;
}

// Relative half-width of the 95% CI of the median (order statistics), as main/engine/measure/stats.ts
// medianCI; with `low`, that interval's lower bound too (the judge's cutoff rule).
static double median_noise(std::vector<double> v, double* med, double* low = nullptr) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double h = 0.98 * sqrt((double)n);
  long lo = (long)floor(n / 2.0 - h), hi = (long)ceil(n / 2.0 + h);
  if (lo < 0) lo = 0;
  if (hi > (long)n - 1) hi = (long)n - 1;
  if (low) *low = v[lo];
  return *med > 0 ? (v[hi] - v[lo]) / (2 * *med) : INFINITY;
}
