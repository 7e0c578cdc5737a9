// One fresh process's CUDA start-up, timed in stages (bench/probes/ctx-contention/run.sh):
// context creation (cudaFree(0)), a 256 MiB allocation, a memset, a short kernel timed with
// events (median of 200 launches), the free. Prints one line: ctx_ms malloc_ms memset_ms kernel_us free_ms.
// With "hold", it creates its context and sleeps until killed (keeps the GPU initialised).
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <algorithm>
#include <vector>
static double now_ms() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 1.0f; }
#define CK(e) do { cudaError_t r_ = (e); if (r_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #e, cudaGetErrorString(r_)); return 1; } } while (0)
int main(int argc, char** argv) {
  double t0 = now_ms();
  CK(cudaFree(0));
  double t1 = now_ms();
  if (argc > 1 && !strcmp(argv[1], "hold")) { for (;;) pause(); }
  if (argc > 1 && !strcmp(argv[1], "ctx")) return 0;
  const size_t n = 64u << 20;  // 256 MiB of floats
  float* x = nullptr;
  CK(cudaMalloc(&x, n * sizeof(float)));
  double t2 = now_ms();
  CK(cudaMemset(x, 0, n * sizeof(float)));
  CK(cudaDeviceSynchronize());
  double t3 = now_ms();
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> us;
  for (int i = 0; i < 220; i++) {
    CK(cudaEventRecord(a)); scale<<<(n + 255) / 256, 256>>>(x, (int)n); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (i >= 20) us.push_back(ms * 1000.f);
  }
  std::sort(us.begin(), us.end());
  double t4 = now_ms();
  CK(cudaFree(x));
  double t5 = now_ms();
  printf("%.2f %.2f %.2f %.2f %.2f\n", t1 - t0, t2 - t1, t3 - t2, us[us.size() / 2], t5 - t4);
  return 0;
}
