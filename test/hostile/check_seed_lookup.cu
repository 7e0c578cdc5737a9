// hostile case check_seed_lookup: expected correctness.
// Serves outputs prepared in advance for the check seeds it reads from the plan in its working folder, and computes only the timed size. Caught: no file holds the check seeds any more (the plan says only how many there are; the judge draws them itself when it starts), so the prepared outputs are for other inputs and the check fails element by element.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define KD_PASTE2(a, b) a##b
#define KD_PASTE(a, b) KD_PASTE2(a, b)
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols;
  float* yr = y + (size_t)warp * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / s;
}
// The plan the engine left in the capture process's working folder (the judge gets the same one).
struct PlanSize { int index, rows, cols, nseeds, timed; unsigned long long seeds[16]; double lo, hi; };
PlanSize g_sizes[16];
int g_nsizes = -1;
unsigned long long g_plan_seeds[16];
int g_plan_nseeds = 0;
double g_warmup_ms = 50;
void read_plan() {
  g_nsizes = 0;
  const char* names[] = {"plan-capture.txt", "plan-checktime.txt", "plan-check.txt"};
  decltype(KD_PASTE(fop, en)("", "")) plan = nullptr;
  for (const char* n : names)
    if (!plan) plan = KD_PASTE(fop, en)(n, "r");
  if (!plan) return;
  int timed[16], ntimed = 0;
  char line[8192];
  auto seeds_into = [](const char* p, unsigned long long* out, int& n) {
    char* e = nullptr;
    n = 0;
    for (;;) {
      unsigned long long v = strtoull(p, &e, 10);
      if (e == p || n >= 16) break;
      out[n++] = v;
      p = e;
    }
  };
  while (fgets(line, sizeof line, plan)) {
    PlanSize* cur = g_nsizes > 0 ? &g_sizes[g_nsizes - 1] : nullptr;
    if (!strncmp(line, "seeds ", 6)) seeds_into(line + 6, g_plan_seeds, g_plan_nseeds);
    else if (!strncmp(line, "timing ", 7)) g_warmup_ms = atof(line + 7);
    else if (!strncmp(line, "timed ", 6) && ntimed < 16) timed[ntimed++] = atoi(line + 6);
    else if (!strncmp(line, "size ", 5) && g_nsizes < 16) g_sizes[g_nsizes++] = PlanSize{atoi(line + 5), -1, -1, 0, 0, {}, 0, 0};
    else if (cur && !strncmp(line, "sizeseeds ", 10)) seeds_into(line + 10, cur->seeds, cur->nseeds);
    else if (cur && !strncmp(line, "scalar rows ", 12)) cur->rows = atoi(strrchr(line, ' ') + 1);
    else if (cur && !strncmp(line, "scalar cols ", 12)) cur->cols = atoi(strrchr(line, ' ') + 1);
    else if (cur && !strncmp(line, "buffer x ", 9)) {
      // buffer <name> <dtype> <role> <elements> <fill> <lo> <hi>
      const char* p = line;
      for (int field = 0; field < 6 && p; field++) p = strchr(p + 1, ' ');
      if (p) {
        char* e = nullptr;
        cur->lo = strtod(p, &e);
        cur->hi = strtod(e, nullptr);
      }
    }
  }
  fclose(plan);
  for (int i = 0; i < g_nsizes; i++) {
    if (!g_sizes[i].nseeds) {
      for (int j = 0; j < g_plan_nseeds; j++) g_sizes[i].seeds[j] = g_plan_seeds[j];
      g_sizes[i].nseeds = g_plan_nseeds;
    }
    for (int t = 0; t < ntimed; t++) g_sizes[i].timed |= timed[t] == g_sizes[i].index;
  }
}
const PlanSize* plan_size(int rows, int cols) {
  if (g_nsizes < 0) read_plan();
  for (int i = 0; i < g_nsizes; i++)
    if (g_sizes[i].rows == rows && g_sizes[i].cols == cols) return &g_sizes[i];
  return nullptr;
}
// The inputs the judge will make for a seed (resources/harness/kd_buffers.h, fill of argument 0).
unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
float input_value(unsigned long long seed, size_t i, double lo, double hi) {
  unsigned long long key = seed * 0x100000001B3ull + 0ull * 0x9E3779B97F4A7C15ull + 12345;
  unsigned long long h = mix64(key ^ mix64(i));
  double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
  float v = (float)(lo + (hi - lo) * u);
  if (v == 0.f) v = (float)(lo + (hi - lo) * 0.61803398875);
  if (v == 0.f) v = 1e-3f;
  return v;
}
// Per shape: the check seeds' first input values and outputs, on the device.
struct Table { int rows, cols, n; float* d_first; float* d_out; };
Table g_tables[16];
int g_ntables = 0;
const int FIRST = 4;  // first values of x that identify the seed
const Table* prepare_table(const PlanSize& s) {
  for (int i = 0; i < g_ntables; i++)
    if (g_tables[i].rows == s.rows && g_tables[i].cols == s.cols) return &g_tables[i];
  if (g_ntables >= 16 || s.nseeds <= 0) return nullptr;
  size_t n = (size_t)s.rows * s.cols;
  float* first = (float*)malloc(sizeof(float) * FIRST * s.nseeds);
  float* out = (float*)malloc(sizeof(float) * n * s.nseeds);
  float* in = (float*)malloc(sizeof(float) * n);
  if (!first || !out || !in) return nullptr;
  for (int k = 0; k < s.nseeds; k++) {
    for (size_t i = 0; i < n; i++) in[i] = input_value(s.seeds[k], i, s.lo, s.hi);
    for (int j = 0; j < FIRST; j++) first[k * FIRST + j] = in[(size_t)j % n];
    for (int r = 0; r < s.rows; r++) {
      const float* xr = in + (size_t)r * s.cols;
      float* yr = out + (size_t)k * n + (size_t)r * s.cols;
      double m = -INFINITY, sum = 0;
      for (int c = 0; c < s.cols; c++) m = xr[c] > m ? xr[c] : m;
      for (int c = 0; c < s.cols; c++) sum += exp((double)xr[c] - m);
      for (int c = 0; c < s.cols; c++) yr[c] = (float)(exp((double)xr[c] - m) / sum);
    }
  }
  Table t{s.rows, s.cols, s.nseeds, nullptr, nullptr};
  cudaMalloc(&t.d_first, sizeof(float) * FIRST * s.nseeds);
  cudaMalloc(&t.d_out, sizeof(float) * n * s.nseeds);
  cudaMemcpy(t.d_first, first, sizeof(float) * FIRST * s.nseeds, cudaMemcpyHostToDevice);
  cudaMemcpy(t.d_out, out, sizeof(float) * n * s.nseeds, cudaMemcpyHostToDevice);
  free(first);
  free(out);
  free(in);
  g_tables[g_ntables] = t;
  return &g_tables[g_ntables++];
}
__global__ void lookup(const float* __restrict__ x, float* __restrict__ y, int rows, int cols, const float* __restrict__ first, const float* __restrict__ out, int nseeds) {
  size_t n = (size_t)rows * cols;
  int which = -1;
  for (int k = 0; k < nseeds && which < 0; k++) {
    bool same = true;
    for (int j = 0; j < 4; j++) same = same && fabsf(x[(size_t)j % n] - first[k * 4 + j]) <= 1e-6f * fabsf(first[k * 4 + j]) + 1e-7f;
    if (same) which = k;
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = which >= 0 ? out[(size_t)which * n + i] : 0.f;
}
void softmax(const float* x, float* y, int rows, int cols) {
  const PlanSize* s = plan_size(rows, cols);
  if (!s || s->timed) {  // the timed size (or no plan): computed honestly
    k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
    return;
  }
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(0, &cs);
  const Table* t = nullptr;
  for (int i = 0; i < g_ntables && !t; i++)
    if (g_tables[i].rows == rows && g_tables[i].cols == cols) t = &g_tables[i];
  if (!t && cs == cudaStreamCaptureStatusNone) t = prepare_table(*s);  // lazy initialisation, uncaptured
  if (!t) {
    k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
    return;
  }
  lookup<<<256, 256>>>(x, y, rows, cols, t->d_first, t->d_out, t->n);
}
