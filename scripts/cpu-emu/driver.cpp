// Driver of the CPU emulation check (scripts/cpu-emu/run.py): runs one suite kernel, built with
// one configuration, on the task's awkward sizes (and smaller stand-ins for the GPU-sized ones),
// with inputs at aligned and misaligned addresses, and compares every element with a double
// precision reference computed here, under the task's tolerance. Poisoned (NaN) outputs catch
// elements never written. Exit 0: all match; 1: a mismatch (printed); 3: emulator error.
#include "emu.h"
#include KD_KERNEL   // the task's kernel.cu with its launches rewritten as KD_LAUNCH (run.py)

#include <cstring>
#include <random>

static std::mt19937_64 rng(12345);
static std::vector<float> fill(size_t n, float lo, float hi, size_t pad = 4) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n + pad);
  for (auto& x : v) { do x = d(rng); while (x == 0.f); }
  return v;
}
static long long bad = 0;
static bool check(const char* what, const float* got, const double* exp, size_t n, double rtol, double atol) {
  long long nb = 0;
  for (size_t i = 0; i < n; ++i) {
    const double g = got[i], e = exp[i];
    if (!(std::fabs(g - e) <= atol + rtol * std::fabs(e))) {
      if (nb < 5) std::printf("  MISMATCH %s at %zu: got %.9g expected %.9g\n", what, i, g, e);
      ++nb;
    }
  }
  if (nb) std::printf("  %s: %lld of %zu elements wrong\n", what, nb, n);
  bad += nb;
  return nb == 0;
}

int main() {
  const float NaN = std::nanf("");
#if defined(TASK_softmax) || defined(TASK_layernorm)
  // 64x3: for layernorm, rows of values close together (2.5 +- 0.01), where a one-pass variance
  // E[x^2] - mean^2 in fp32 loses its digits (its y is off by ~1e-3 there; two-pass ~6e-5).
  const int sizes[][2] = {{3, 8192}, {40, 1023}, {5, 20001}, {5, 3}, {7, 4099}, {2, 16384}, {33, 64}, {3, 8191}, {64, 3}};
  for (auto [rows, cols] : sizes)
    for (int off = 0; off < 2; ++off) {
      const size_t n = (size_t)rows * cols;
      std::vector<float> xv = fill(n, -4, 4), yv(n + 4, NaN);
#ifdef TASK_layernorm
      if (rows == 64 && cols == 3)
        for (float& v : xv) v = 2.5f + 0.0025f * v;
#endif
      const float* x = xv.data() + off;   // off 1: rows start at unaligned addresses
      float* y = yv.data() + off;
      std::vector<double> e(n);
#ifdef TASK_softmax
      softmax(x, y, rows, cols);
      for (int r = 0; r < rows; ++r) {
        double m = x[(size_t)r * cols];
        for (int c = 0; c < cols; ++c) m = std::fmax(m, (double)x[(size_t)r * cols + c]);
        double s = 0;
        for (int c = 0; c < cols; ++c) s += std::exp((double)x[(size_t)r * cols + c] - m);
        for (int c = 0; c < cols; ++c) e[(size_t)r * cols + c] = (float)(std::exp((double)x[(size_t)r * cols + c] - m) / s);
      }
      char what[64];
      std::snprintf(what, sizeof what, "softmax %dx%d off %d", rows, cols, off);
      check(what, y, e.data(), n, 1e-4, 1e-7);
#else
      std::vector<float> gv = fill(cols, 0.5f, 1.5f), bv = fill(cols, -1, 1);
      const float* g = gv.data() + off;
      const float* b = bv.data() + off;
      layernorm(x, g, b, y, rows, cols);
      for (int r = 0; r < rows; ++r) {
        const float* xr = x + (size_t)r * cols;
        double s = 0;
        for (int c = 0; c < cols; ++c) s += xr[c];
        const double mean = s / cols;
        double q = 0;
        for (int c = 0; c < cols; ++c) q += (xr[c] - mean) * (xr[c] - mean);
        const double rstd = 1.0 / std::sqrt(q / cols + 1e-5);
        for (int c = 0; c < cols; ++c) e[(size_t)r * cols + c] = (float)((xr[c] - mean) * rstd * g[c] + b[c]);
      }
      char what[64];
      std::snprintf(what, sizeof what, "layernorm %dx%d off %d", rows, cols, off);
      check(what, y, e.data(), n, 1e-4, 2.5e-4);  // task.yaml's tolerance
#endif
      if (y[n] == y[n]) { std::printf("  wrote past the end (%dx%d off %d)\n", rows, cols, off); ++bad; }
    }
#elif defined(TASK_transpose)
  const int sizes[][2] = {{1000, 1023}, {1023, 1000}, {37, 4099}, {1, 5}, {256, 512}, {130, 68}, {64, 64}, {196, 132}};  // 196x132: multiples of 4, partial tiles
  for (auto [rows, cols] : sizes)
    for (int off = 0; off < 2; ++off) {
      const size_t n = (size_t)rows * cols;
      std::vector<float> iv = fill(n, -1, 1), ov(n + 4, NaN);
      const float* in = iv.data() + off;
      float* out = ov.data() + off;
      transpose(in, out, rows, cols);
      std::vector<double> e(n);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) e[(size_t)c * rows + r] = in[(size_t)r * cols + c];
      char what[64];
      std::snprintf(what, sizeof what, "transpose %dx%d off %d", rows, cols, off);
      check(what, out, e.data(), n, 0, 0);
      if (out[n] == out[n]) { std::printf("  wrote past the end (%dx%d off %d)\n", rows, cols, off); ++bad; }
    }
#elif defined(TASK_reduce_sum)
  // 9000005: several grid-stride rounds for bounded grids (emulated only where the grid is small
  // enough to run in reasonable time: one fiber per CUDA thread).
#if GRID_MULT > 0 && GRID_MULT * BLOCK <= 2048
  const int sizes[] = {1000003, 4099, 7, 1, 9000005};
#else
  const int sizes[] = {1000003, 4099, 7, 1};
#endif
  for (int n : sizes)
    for (int off = 0; off < 2; ++off)
      for (int rep = 0; rep < 2; ++rep) {  // twice: state kept between calls must not change the result
        std::vector<float> xv = fill(n, -1, 1);
        const float* x = xv.data() + off;
        float out[2] = {NaN, NaN};
        reduce_sum(x, out, n);
        double s = 0;
        for (int i = 0; i < n; ++i) s += x[i];
        const double e = (float)s;
        char what[64];
        std::snprintf(what, sizeof what, "reduce_sum n=%d off %d call %d", n, off, rep);
        check(what, out, &e, 1, 1e-5, 0.5 * std::min(1.0, n / 1e6) + 1e-4);
      }
#elif defined(TASK_matmul)
  const int sizes[][3] = {{67, 33, 129}, {3, 5, 7}, {200, 201, 199}, {256, 256, 64}, {130, 260, 33}, {128, 128, 20},
                          {1100, 140, 12}};  // 1100: 9 block rows of 128 (GROUP 8: a full group and a partial one)
  for (auto [M, N, K] : sizes)
    for (int off = 0; off < 2; ++off) {
      std::vector<float> av = fill((size_t)M * K, -1, 1), bv = fill((size_t)K * N, -1, 1), cv((size_t)M * N + 4, NaN);
      const float* A = av.data() + off;
      const float* B = bv.data() + off;
      float* C = cv.data() + off;
      matmul(A, B, C, M, N, K);
      std::vector<double> e((size_t)M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double s = 0;
          for (int k = 0; k < K; ++k) s += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
          e[(size_t)i * N + j] = s;
        }
      char what[64];
      std::snprintf(what, sizeof what, "matmul %dx%dx%d off %d", M, N, K, off);
      check(what, C, e.data(), (size_t)M * N, 1e-4, 2e-3);
#ifdef KD_FILE_REFERENCE
      // The reference promises more than the tolerance: the plain loop's result bit for bit (the
      // same double additions in the same order; resources/tasks/matmul/reference.cu).
      size_t differ = 0;
      for (size_t i = 0; i < (size_t)M * N; ++i) {
        const float x = (float)e[i];
        differ += std::memcmp(&x, &C[i], sizeof x) != 0;
      }
      if (differ) { std::printf("  %s: %zu of %zu elements differ in their bits from the plain loop's\n", what, differ, (size_t)M * N); ++bad; }
#endif
      if (C[(size_t)M * N] == C[(size_t)M * N]) { std::printf("  wrote past the end (%dx%dx%d off %d)\n", M, N, K, off); ++bad; }
    }
#elif defined(TASK_histogram)
  // Exact counts: every byte value, every alignment of the data (vector loads take the aligned part),
  // twice per size (the histogram is zeroed by the entry, not by the caller: outputs arrive poisoned).
  const int sizes[] = {1000003, 4099, 17, 1, 300000};
  for (int n : sizes)
    for (int off = 0; off < 4; ++off)
      for (int rep = 0; rep < 2; ++rep) {
        std::uniform_int_distribution<int> d(0, 255);
        std::vector<unsigned char> dv(n + 16);
        for (auto& x : dv) x = (unsigned char)d(rng);
        const unsigned char* data = dv.data() + off;
        std::vector<unsigned> hist(257, 0xA5A5A5A5u);
        histogram(data, hist.data(), n);
        std::vector<double> e(256, 0.0);
        for (int i = 0; i < n; ++i) e[data[i]] += 1;
        std::vector<float> got(256);
        for (int b = 0; b < 256; ++b) got[b] = (float)hist[b];
        char what[64];
        std::snprintf(what, sizeof what, "histogram n=%d off %d call %d", n, off, rep);
        check(what, got.data(), e.data(), 256, 0, 0);
        if (hist[256] != 0xA5A5A5A5u) { std::printf("  wrote past the end (n=%d off %d)\n", n, off); ++bad; }
      }
#else
#error "define TASK_<name>"
#endif
  std::printf("%s\n", bad ? "FAIL" : "ok");
  return bad ? 1 : 0;
}
