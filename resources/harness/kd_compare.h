// Comparisons on the GPU, run by the judge (a process that never runs variant code) on the
// variant's buffers mapped from the executor (CUDA IPC): every element of an output against the
// reference's (tolerance per dtype; NaN and infinities never pass), the guard region after every
// buffer, and the inputs against fresh copies (a variant must not write to its inputs).
#pragma once
#include "kd_buffers.h"

struct DevStats {
  unsigned long long bad, first, maxabs_bits, maxrel_bits;
  double num, den;
};
// Non-negative doubles order like their bit patterns, so atomicMax on the bits is a max on the values.
__device__ __forceinline__ void atomic_max_pos(unsigned long long* slot, double v) { atomicMax(slot, (unsigned long long)__double_as_longlong(v)); }

template <typename T>
__global__ void compare_kernel(const T* got, const T* exp, size_t n, double rtol, double atol, int flt, DevStats* st) {
  unsigned long long bad = 0, first = ~0ull;
  double maxabs = 0, maxrel = 0, num = 0, den = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double g = (double)got[i], e = (double)exp[i];
    double d = fabs(g - e);
    bool ok;
    if (flt) {
      bool fin = isfinite(g) && isfinite(e);
      ok = fin ? d <= atol + rtol * fabs(e) : false;
      if (fin) {
        num += d * d; den += e * e;
        maxabs = fmax(maxabs, d);
        if (fabs(e) > 0) maxrel = fmax(maxrel, d / fabs(e));
      } else {
        maxabs = INFINITY;
      }
    } else {
      ok = got[i] == exp[i] || d <= atol + rtol * fabs(e);
      num += d * d; den += e * e;
      maxabs = fmax(maxabs, d);
    }
    if (!ok) { bad++; if (i < first) first = i; }
  }
  for (int o = 16; o; o >>= 1) {
    bad += __shfl_xor_sync(0xffffffffu, bad, o);
    unsigned long long f2 = __shfl_xor_sync(0xffffffffu, first, o);
    first = f2 < first ? f2 : first;
    maxabs = fmax(maxabs, __shfl_xor_sync(0xffffffffu, maxabs, o));
    maxrel = fmax(maxrel, __shfl_xor_sync(0xffffffffu, maxrel, o));
    num += __shfl_xor_sync(0xffffffffu, num, o);
    den += __shfl_xor_sync(0xffffffffu, den, o);
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) atomicAdd(&st->bad, bad);
    if (first != ~0ull) atomicMin(&st->first, first);
    atomic_max_pos(&st->maxabs_bits, maxabs);
    atomic_max_pos(&st->maxrel_bits, maxrel);
    atomicAdd(&st->num, num);
    atomicAdd(&st->den, den);
  }
}
// Bytes of a region that differ from `byte`, and the first of them.
__global__ void guard_kernel(const unsigned char* p, size_t n, unsigned char byte, unsigned long long* count, unsigned long long* first) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    if (p[i] != byte) { atomicAdd(count, 1ull); atomicMin(first, (unsigned long long)i); }
}
// Bytes that differ between two regions, and the first of them.
__global__ void equal_kernel(const unsigned char* a, const unsigned char* b, size_t n, unsigned long long* count, unsigned long long* first) {
  size_t words = n / 8;
  const unsigned long long* wa = (const unsigned long long*)a;
  const unsigned long long* wb = (const unsigned long long*)b;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
    if (wa[i] != wb[i]) { atomicAdd(count, 1ull); atomicMin(first, (unsigned long long)(i * 8)); }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (size_t i = words * 8; i < n; i++)
      if (a[i] != b[i]) { atomicAdd(count, 1ull); atomicMin(first, (unsigned long long)i); }
}

struct CompareStats {
  size_t bad = 0;
  double maxabs = 0, maxrel = 0, num = 0, den = 0, fe = 0, fg = 0;
  long long first = -1;
};

static DevStats* g_stats = nullptr;  // one slot, reused (the judge compares one thing at a time)
static DevStats* stats_slot() {
  if (!g_stats) CK(cudaMalloc(&g_stats, sizeof(DevStats)));
  DevStats z{0, ~0ull, 0, 0, 0, 0};
  CK(cudaMemcpy(g_stats, &z, sizeof z, cudaMemcpyHostToDevice));
  return g_stats;
}
template <typename T>
static double element_at(const void* p, size_t i) {
  T v;
  CK(cudaMemcpy(&v, (const T*)p + i, sizeof(T), cudaMemcpyDeviceToHost));
  return (double)v;
}
static double element(Dtype dt, const void* p, size_t i) {
  switch (dt) {
    case F32: return element_at<float>(p, i);
    case F64: return element_at<double>(p, i);
    case I32: return element_at<int>(p, i);
    case U32: return element_at<unsigned>(p, i);
    case I64: return element_at<long long>(p, i);
    case U8: return element_at<unsigned char>(p, i);
  }
  return NAN;
}
// Every element of `got` (device memory, possibly mapped from another process) against `exp`.
static CompareStats compare_device(Dtype dt, const void* got, const void* exp, size_t n, const Tol& tol) {
  DevStats* st = stats_slot();
  int blocks = 2048, threads = 256;
  bool flt = is_float(dt);
  switch (dt) {
    case F32: compare_kernel<<<blocks, threads>>>((const float*)got, (const float*)exp, n, tol.rtol, tol.atol, flt, st); break;
    case F64: compare_kernel<<<blocks, threads>>>((const double*)got, (const double*)exp, n, tol.rtol, tol.atol, flt, st); break;
    case I32: compare_kernel<<<blocks, threads>>>((const int*)got, (const int*)exp, n, tol.rtol, tol.atol, flt, st); break;
    case U32: compare_kernel<<<blocks, threads>>>((const unsigned*)got, (const unsigned*)exp, n, tol.rtol, tol.atol, flt, st); break;
    case I64: compare_kernel<<<blocks, threads>>>((const long long*)got, (const long long*)exp, n, tol.rtol, tol.atol, flt, st); break;
    case U8: compare_kernel<<<blocks, threads>>>((const unsigned char*)got, (const unsigned char*)exp, n, tol.rtol, tol.atol, flt, st); break;
  }
  CK(cudaGetLastError());
  DevStats h;
  CK(cudaMemcpy(&h, st, sizeof h, cudaMemcpyDeviceToHost));
  CompareStats c;
  c.bad = h.bad;
  memcpy(&c.maxabs, &h.maxabs_bits, 8);
  memcpy(&c.maxrel, &h.maxrel_bits, 8);
  c.num = h.num;
  c.den = h.den;
  if (h.bad) {
    c.first = (long long)h.first;
    c.fe = element(dt, exp, h.first);
    c.fg = element(dt, got, h.first);
  }
  return c;
}
// How many bytes of [p, p+n) differ from `byte` (a guard) or from [q, q+n) (a copy); first at *first.
static size_t count_diff(const void* p, const void* q, size_t n, int byte, size_t* first) {
  unsigned long long* slot = (unsigned long long*)stats_slot();
  unsigned long long init[2] = {0, ~0ull};
  CK(cudaMemcpy(slot, init, sizeof init, cudaMemcpyHostToDevice));
  if (q) equal_kernel<<<1024, 256>>>((const unsigned char*)p, (const unsigned char*)q, n, slot, slot + 1);
  else guard_kernel<<<256, 256>>>((const unsigned char*)p, n, (unsigned char)byte, slot, slot + 1);
  CK(cudaGetLastError());
  unsigned long long h[2];
  CK(cudaMemcpy(h, slot, sizeof h, cudaMemcpyDeviceToHost));
  if (first) *first = (size_t)h[1];
  return (size_t)h[0];
}
