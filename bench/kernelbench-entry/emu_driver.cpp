// CPU emulation check of the KernelBench entry-point baselines (bench/kernelbench-entry/emu-check.py):
// each kernel.cu, its launches rewritten for scripts/cpu-emu/emu.h, runs at small sizes (KB_*
// macros, including ones that are not multiples of the vector width) against a double-precision
// reference; outputs start as NaN. Exit 0: every element within KernelBench's tolerance (1e-4).
#include "../../scripts/cpu-emu/emu.h"
#include <cmath>
// 64-bit shuffles as two 32-bit ones (emu.h has 32-bit shuffles only).
template <typename T>
inline T kd_shfl64(T v, int o, int line) {
  if constexpr (sizeof(T) == 8) {
    uint32_t w[2];
    std::memcpy(w, &v, 8);
    w[0] = kd_emu::shfl_xor(w[0], o, line);
    w[1] = kd_emu::shfl_xor(w[1], o, line);
    std::memcpy(&v, w, 8);
    return v;
  } else {
    return kd_emu::shfl_xor(v, o, line);
  }
}
#undef __shfl_xor_sync
#define __shfl_xor_sync(mask, v, o) kd_shfl64((v), (o), __LINE__)
static void* kd_malloc(size_t n) { return std::calloc(1, n + 64); }
#define cudaMallocAsync(pp, n, s) (*(pp) = kd_malloc(n), 0)
#define cudaFreeAsync(p, s) (std::free(p), 0)
#include KD_KERNEL
#include <random>
#include <vector>

static std::mt19937_64 rng(7);
static std::vector<float> rnd(size_t n) {
  std::uniform_real_distribution<float> d(0.f, 1.f);  // torch.rand
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}
static int check(const std::vector<float>& got, const std::vector<double>& exp) {
  long long bad = 0;
  for (size_t i = 0; i < exp.size(); i++)
    if (!(std::fabs(got[i] - exp[i]) <= 1e-4 + 1e-4 * std::fabs(exp[i]))) {
      if (bad < 5) std::printf("  MISMATCH at %zu: got %.9g expected %.9g\n", i, got[i], exp[i]);
      bad++;
    }
  std::printf("%lld of %zu wrong\n", bad, exp.size());
  return bad ? 1 : 0;
}

int main() {
#if defined(KB_GELU)
  const size_t n = (size_t)KB_ROWS * KB_COLS;
  auto x = rnd(n);
  for (size_t i = 0; i < n; i += 3) x[i] = -4 * x[i];  // negative inputs too
  std::vector<float> y(n, NAN);
  model_forward(x.data(), y.data());
  std::vector<double> e(n);
  for (size_t i = 0; i < n; i++) { double v = x[i]; e[i] = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }
  return check(y, e);
#elif defined(KB_DIAG)
  auto A = rnd(KB_N), B = rnd((size_t)KB_N * KB_M);
  std::vector<float> y((size_t)KB_N * KB_M, NAN);
  model_forward(A.data(), B.data(), y.data());
  std::vector<double> e(y.size());
  for (size_t i = 0; i < (size_t)KB_N; i++) for (size_t j = 0; j < (size_t)KB_M; j++) e[i * KB_M + j] = (double)A[i] * B[i * KB_M + j];
  return check(y, e);
#elif defined(KB_LN)
  const size_t d = KB_D, n = (size_t)KB_ROWS * d;
  auto x = rnd(n), w = rnd(d), b = rnd(d);
  std::vector<float> y(n, NAN);
  model_forward(x.data(), w.data(), b.data(), y.data());
  std::vector<double> e(n);
  for (size_t r = 0; r < (size_t)KB_ROWS; r++) {
    double s = 0, q = 0;
    for (size_t j = 0; j < d; j++) s += x[r * d + j];
    const double mean = s / d;
    for (size_t j = 0; j < d; j++) q += (x[r * d + j] - mean) * (x[r * d + j] - mean);
    const double rstd = 1 / std::sqrt(q / d + 1e-5);
    for (size_t j = 0; j < d; j++) e[r * d + j] = (x[r * d + j] - mean) * rstd * w[j] + b[j];
  }
  return check(y, e);
#endif
}
