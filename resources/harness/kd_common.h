// Shared by every mode of the harness: includes, dtypes, JSON text, failures, clocks, randomness.
// Nothing here touches the GPU beyond the CK() error macro.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <string>
#include <vector>
#include <algorithm>
#include <map>

enum Dtype { F32, F64, I32, U32, I64, U8 };
static const char* DTYPE_NAMES[] = {"f32", "f64", "i32", "u32", "i64", "u8"};
static inline size_t dtype_bytes(Dtype d) { return d == F64 || d == I64 ? 8 : d == U8 ? 1 : 4; }
static inline bool is_float(Dtype d) { return d == F32 || d == F64; }

// ---------------------------------------------------------------------------------------------
// JSON text (the harness writes JSON, it never parses it)
static std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += (char)c;
  }
  return o + "\"";
}
static std::string jnum(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char b[64];
  snprintf(b, sizeof b, "%.9g", v);
  return b;
}
// NaN and infinities spelled the same on every libc ("NaN", "Inf", "-Inf").
static std::string num_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char b[64];
  snprintf(b, sizeof b, "%.9g", v);
  return b;
}
static std::string jarr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) { if (i) s += ","; s += jnum(v[i]); }
  return s + "]";
}

// ---------------------------------------------------------------------------------------------
// Failures unwind to the caller of a mode (or of one command of a long-lived mode), which reports
// them. status is the engine's vocabulary: runtime, correctness, constraints, timeout.
struct HarnessFailure {
  std::string status, error;
};
[[noreturn]] static void fail(const std::string& status, const std::string& error) {
  throw HarnessFailure{status, error};
}
#define CK(call)                                                                            \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) fail("runtime", std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

static double now_ms() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// Wall-clock time (ms since the epoch), comparable with the engine's clock: the capture process
// reports when its phases ended so the engine can split its time (diagnostic only: the variant's
// host code runs in that process and could misreport them; nothing is decided on them).
static double epoch_ms() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static double g_t_main = 0;     // when main() began
static double g_t_context = 0;  // when lock_down() had the CUDA context
static double g_t_locked = 0;   // when the capture process's filter and write restriction were in place
static std::string jepoch(double v) {  // jnum's 9 digits would round an epoch time to 10 s
  char b[32];
  snprintf(b, sizeof b, "%.3f", v);
  return b;
}

// Seeds and keys from the kernel's random source (never from anything a variant could predict).
static uint64_t random_u64() {
  uint64_t v = 0;
  FILE* f = fopen("/dev/urandom", "rb");
  if (!f || fread(&v, sizeof v, 1, f) != 1) v = (uint64_t)(now_ms() * 1e6) ^ ((uint64_t)getpid() << 32);
  if (f) fclose(f);
  return v;
}
// Seeds for generated inputs: positive and below 2^53 so they survive a trip through JSON.
static unsigned long long fresh_seed() { return (random_u64() >> 12) | 1ull; }

static std::string hex_of(const void* p, size_t n) {
  static const char* H = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) { s += H[b[i] >> 4]; s += H[b[i] & 15]; }
  return s;
}
static bool unhex(const std::string& s, std::vector<unsigned char>& out) {
  if (s.size() % 2) return false;
  out.resize(s.size() / 2);
  for (size_t i = 0; i < out.size(); i++) {
    int v = 0;
    for (int k = 0; k < 2; k++) {
      char c = s[2 * i + k];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    out[i] = (unsigned char)v;
  }
  return true;
}

// Whole file into memory (bounded); false with a reason when it cannot be read.
static bool read_file(const std::string& path, std::vector<unsigned char>& out, size_t max_bytes, std::string* why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) { if (why) *why = path + ": " + strerror(errno); return false; }
  if (!S_ISREG(st.st_mode)) { if (why) *why = path + ": not a regular file"; return false; }
  if ((size_t)st.st_size > max_bytes) { if (why) *why = path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB"; return false; }
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) { if (why) *why = path + ": " + strerror(errno); return false; }
  out.resize((size_t)st.st_size);
  size_t got = out.empty() ? 0 : fread(out.data(), 1, out.size(), f);
  fclose(f);
  if (got != out.size()) { if (why) *why = path + ": short read"; return false; }
  return true;
}

// Result files are written atomically (tmp + rename, fsync'd): a reader sees all of it or none.
static void write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) { perror("kd_harness: result"); exit(71); }
  fwrite(text.data(), 1, text.size(), f);
  fflush(f);
  fsync(fileno(f));
  fclose(f);
  rename(tmp.c_str(), path.c_str());
}

// Lines of text over a pipe (judge <-> executor, engine <-> judge).
static bool read_line(FILE* f, std::string& line) {
  line.clear();
  int c;
  while ((c = fgetc(f)) != EOF) {
    if (c == '\n') return true;
    line += (char)c;
    if (line.size() > (64u << 20)) return false;
  }
  return !line.empty();
}
static std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t i = 0;
  for (;;) {
    size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}
