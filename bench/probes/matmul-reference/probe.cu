// Issue 17: what the judge pays for each verified timed call of a matmul variant. The task's
// reference (resources/tasks/matmul/reference.cu, included as is) against the plain form it must
// equal bit for bit: one thread per output, the double accumulation over k in ascending order read
// straight from global memory (and its first tiled form, timed only). For each size: every output
// of the two compared (memcmp; a size is "identical" only if all are), then each timed with CUDA
// events, REPS calls, median and min.
//   nvcc -O3 -arch=native -std=c++17 -o probe probe.cu && ./probe [REPS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "../../../resources/tasks/matmul/reference.cu"

__global__ void plain_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)A[(size_t)row * K + k] * (double)B[(size_t)k * N + col];
  C[(size_t)row * N + col] = (float)acc;
}
static void plain(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
  plain_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
// The reference's first tiled form (e0ece13, 2026-12-08): 16x16 outputs a block, one a thread,
// two shared-memory reads per multiply-add. Timed beside it for the record.
__global__ void tiled16_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float as[16][16], bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y, col = blockIdx.x * 16 + tx, row = blockIdx.y * 16 + ty;
  double acc = 0.0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    as[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    const int kn = K - k0 < 16 ? K - k0 : 16;
    for (int k = 0; k < kn; ++k) acc += (double)as[ty][k] * (double)bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = (float)acc;
}
static void tiled16(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
  tiled16_kernel<<<grid, block>>>(A, B, C, M, N, K);
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

typedef void (*Fn)(const float*, const float*, float*, int, int, int);
static void timeit(const char* name, Fn f, const float* A, const float* B, float* C, int M, int N, int K, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(A, B, C, M, N, K); CK(cudaDeviceSynchronize());  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a)); f(A, B, C, M, N, K); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  printf("  %-9s %dx%dx%d: median %.3f ms, min %.3f ms over %d calls (%.1f GFLOP/s in double)\n", name, M, N, K,
         ms[ms.size() / 2], ms[0], reps, 2.0 * M * N * K / (ms[ms.size() / 2] * 1e6));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 5;
  const int sizes[][3] = {{4096, 4096, 4096}, {1000, 1001, 999}, {67, 33, 129}, {3, 5, 7}};
  int bad = 0;
  for (auto& s : sizes) {
    const int M = s[0], N = s[1], K = s[2];
    std::vector<float> hA((size_t)M * K), hB((size_t)K * N);
    unsigned x = 12345u;
    auto u = [&] { x = x * 1664525u + 1013904223u; return (float)((x >> 8) * (2.0 / 16777216.0) - 1.0); };
    for (auto& v : hA) v = u();
    for (auto& v : hB) v = u();
    float *A, *B, *C1, *C2;
    CK(cudaMalloc(&A, hA.size() * 4)); CK(cudaMalloc(&B, hB.size() * 4));
    CK(cudaMalloc(&C1, (size_t)M * N * 4)); CK(cudaMalloc(&C2, (size_t)M * N * 4));
    CK(cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(C1, 0xff, (size_t)M * N * 4)); CK(cudaMemset(C2, 0x7f, (size_t)M * N * 4));
    matmul(A, B, C1, M, N, K); plain(A, B, C2, M, N, K);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<float> h1((size_t)M * N), h2((size_t)M * N);
    CK(cudaMemcpy(h1.data(), C1, h1.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2.data(), C2, h2.size() * 4, cudaMemcpyDeviceToHost));
    size_t diff = 0;
    for (size_t i = 0; i < h1.size(); ++i) diff += memcmp(&h1[i], &h2[i], 4) != 0;
    printf("%dx%dx%d: reference and plain loop %s (%zu of %zu outputs differ)\n", M, N, K, diff ? "DIFFER" : "identical", diff, h1.size());
    bad += diff != 0;
    if (M * (size_t)N >= 1000000) {
      timeit("reference", matmul, A, B, C1, M, N, K, reps);
      timeit("tiled16", tiled16, A, B, C2, M, N, K, reps);
      timeit("plain", plain, A, B, C2, M, N, K, reps);
    }
    cudaFree(A); cudaFree(B); cudaFree(C1); cudaFree(C2);
  }
  printf("%s\n", bad ? "FAIL: the reference differs from the plain loop" : "ok: the reference equals the plain loop bit for bit at every size");
  return bad != 0;
}
