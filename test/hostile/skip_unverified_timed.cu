// hostile case skip_unverified_timed: expected constraints.
// Skips the work in most timed calls and computes in the ones it predicts the judge verifies (reading the plan for the check count and warm-up time, and counting calls in a __managed__ variable). Caught twice over: the capture refuses managed memory by name; and the judge no longer verifies a capped set of early calls and a predictable last one: every timed call is verified with probability 1/8, decided after it ran, and the last one, after a random number of extra calls past the stopping rule, always.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define KD_PASTE2(a, b) a##b
#define KD_PASTE(a, b) KD_PASTE2(a, b)
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
// Kept in managed memory (keyword pasted): the executor restores __device__ variables before every
// call, but not managed ones, so these count its calls.
KD_PASTE(__man, aged__) unsigned int g_calls = 0;  // calls of the timed size in this process
KD_PASTE(__man, aged__) int g_skip = 0;
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ void spin_ns(long long ns) {
  unsigned long long t0 = now_ns();
  while ((long long)(now_ns() - t0) < ns) {
  }
}
// First in every call: counts, decides, and paces the call.
__global__ void pace(int timed, int ncheck, long long warmup_spin_ns) {
  if (!timed) {
    g_skip = 0;
    return;
  }
  int c = (int)++g_calls;
  int t = c - ncheck - 3;  // the timed call's number (1, 2, ...); <= 0: check or warm-up
  if (c == ncheck + 1) spin_ns(warmup_spin_ns);  // the warm-up ends after exactly 3 calls
  int skip = t > 48 && t % 5 != 1;
  g_skip = skip;
  if (skip) spin_ns(40000);
}
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  if (g_skip) return;
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
void softmax(const float* x, float* y, int rows, int cols) {
  const PlanSize* s = plan_size(rows, cols);
  int timed = s && s->timed;
  pace<<<1, 1>>>(timed, s ? s->nseeds : 0, (long long)((g_warmup_ms + 20) * 1e6));
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
