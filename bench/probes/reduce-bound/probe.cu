// Issue 17: how fast can anything read 256 MiB once under the suite's L2 flush? One process, one GPU,
// the same flush as KernelDuel's executor (a memset of 4x the L2 before every call, alternating
// bytes; kd_exec.h) and, for comparison, the "clean" flush (the memset, then a read of 2x the L2 of
// clean data, so no dirty line is left for the timed call to write back). Every candidate is timed
// with CUDA events around the call only, in round-robin order, REPS times per flush; medians.
// Candidates:
//   copy1g     cudaMemcpyAsync of 1 GiB (the suite's copy-bandwidth yardstick: 2 GiB of traffic)
//   copy128m   cudaMemcpyAsync of 128 MiB (256 MiB of traffic, reduce_sum's)
//   kd         reduce_sum's kernel.cu with the -D defines this file was built with (its entry as called)
//   cub        cub::DeviceReduce::Sum (temporary storage allocated once, outside the timing)
//   read-*     pure reads: float4 loads, an xor of the bits per thread, one store per block only
//              if the xor hits a magic value (never, but the compiler cannot know): an upper bound for
//              any kernel that must read every byte; block 512, grid SMs x G, load __ldg or __ldcs
// Prints a table: candidate, flush, median us, TB/s of its traffic, % of copy1g's TB/s under the same flush.
// Nothing here changes any setting of the GPU.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>
#include "../../../resources/tasks/reduce_sum/kernel.cu"

#define CK(e) do { cudaError_t r_ = (e); if (r_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #e, cudaGetErrorString(r_)); exit(1); } } while (0)

__global__ void fill(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u;
    h ^= h >> 15;
    x[i] = (h & 0xffff) / 65536.0f;
  }
}

template <int LDCS>
__global__ void __launch_bounds__(512) read_only(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a, b, c, d;
    if (LDCS) { a = __ldcs(p + i); b = __ldcs(p + i + stride); c = __ldcs(p + i + 2 * stride); d = __ldcs(p + i + 3 * stride); }
    else { a = __ldg(p + i); b = __ldg(p + i + stride); c = __ldg(p + i + 2 * stride); d = __ldg(p + i + 3 * stride); }
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) { uint4 a = __ldg(p + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }
  if (acc == 0x9e3779b9u) sink[blockIdx.x & 1023] = acc;
}

__global__ void flush_read(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 a = __ldcg(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 200;
  int dev = 0, l2 = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  const size_t n = (size_t)1 << 26;  // reduce_sum's timed size: 2^26 floats, 256 MiB
  const size_t bytes = n * sizeof(float);
  const size_t flush_bytes = std::max((size_t)l2 * 4, (size_t)64 << 20), clean_bytes = (size_t)l2 * 2 / 16 * 16;
  float *x, *out, *src, *dst;
  void *flush, *clean, *temp = nullptr;
  unsigned* sink;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&out, sizeof(float) * 2));
  CK(cudaMalloc(&src, (size_t)1 << 30));
  CK(cudaMalloc(&dst, (size_t)1 << 30));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&clean, clean_bytes));
  CK(cudaMalloc(&sink, 4096));
  CK(cudaMemset(src, 1, (size_t)1 << 30));
  CK(cudaMemset(clean, 0, clean_bytes));
  fill<<<4096, 256>>>(x, n);
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, x, out + 1, (int)n));
  CK(cudaMalloc(&temp, temp_bytes));
  CK(cudaDeviceSynchronize());

  // Results agree: the task's kernel and CUB sum the same vector.
  reduce_sum(x, out, (int)n);
  CK(cub::DeviceReduce::Sum(temp, temp_bytes, x, out + 1, (int)n));
  float sums[2];
  CK(cudaMemcpy(sums, out, sizeof sums, cudaMemcpyDeviceToHost));
  const double rel = fabs((double)sums[0] - sums[1]) / fabs((double)sums[1]);
  printf("# %s, %d SMs, L2 %d MiB; flush %zu MiB memset (clean: then a read of %zu MiB); %d reps per candidate and flush\n",
         prop.name, sms, l2 >> 20, flush_bytes >> 20, clean_bytes >> 20, reps);
  printf("# sums: kd %.6g, cub %.6g, relative difference %.2g%s\n", sums[0], sums[1], rel, rel < 1e-4 ? "" : "  DIFFER");

  struct Cand { std::string name; double traffic; std::function<void()> run; };
  std::vector<Cand> cands;
  cands.push_back({"copy1g", 2.0 * (1 << 30), [&] { cudaMemcpyAsync(dst, src, (size_t)1 << 30, cudaMemcpyDeviceToDevice, 0); }});
  cands.push_back({"copy128m", 2.0 * (128 << 20), [&] { cudaMemcpyAsync(dst, src, (size_t)128 << 20, cudaMemcpyDeviceToDevice, 0); }});
  cands.push_back({"kd", (double)bytes, [&] { reduce_sum(x, out, (int)n); }});
  cands.push_back({"cub", (double)bytes, [&] { cub::DeviceReduce::Sum(temp, temp_bytes, x, out + 1, (int)n, 0); }});
  for (int g : {2, 4, 8, 16}) {
    cands.push_back({"read-ldg-g" + std::to_string(g), (double)bytes, [&, g] { read_only<0><<<sms * g, 512>>>((const uint4*)x, n / 4, sink); }});
    cands.push_back({"read-ldcs-g" + std::to_string(g), (double)bytes, [&, g] { read_only<1><<<sms * g, 512>>>((const uint4*)x, n / 4, sink); }});
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  unsigned flips = 0;
  for (int clean_flush = 0; clean_flush < 2; clean_flush++) {
    std::vector<std::vector<float>> t(cands.size());
    for (int r = -3; r < reps; r++) {  // 3 warm-up rounds
      for (size_t c = 0; c < cands.size(); c++) {
        CK(cudaMemsetAsync(flush, (flips++) & 1, flush_bytes, 0));
        if (clean_flush) flush_read<<<1024, 256>>>((const uint4*)clean, clean_bytes / 16, sink);
        CK(cudaEventRecord(a, 0));
        cands[c].run();
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) t[c].push_back(ms);
      }
    }
    CK(cudaGetLastError());
    double copy_tbs = 0;
    for (size_t c = 0; c < cands.size(); c++) {
      std::sort(t[c].begin(), t[c].end());
      const double med = t[c][t[c].size() / 2], p10 = t[c][t[c].size() / 10], p90 = t[c][t[c].size() * 9 / 10];
      const double tbs = cands[c].traffic / (med * 1e-3) / 1e12;
      if (c == 0) copy_tbs = tbs;
      printf("%-14s %-6s median %8.2f us  (p10 %8.2f, p90 %8.2f)  %6.3f TB/s  %6.1f%% of copy1g\n", cands[c].name.c_str(),
             clean_flush ? "clean" : "memset", med * 1e3, p10 * 1e3, p90 * 1e3, tbs, 100.0 * tbs / copy_tbs);
    }
  }
  return 0;
}
