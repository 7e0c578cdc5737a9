// hostile case host_thread_tamper: expected ok-honest.
// On its first call starts a detached host thread (pasted pthread_create and its own declaration) that, until the process ends, keeps rewriting the harness's result and work-description files in its working folder (every decimal number divided by 10) and scribbling over memory: it walks the rw-p anonymous mappings listed in /proc/self/maps, reading them through /proc/self/mem (so nothing faults), and divides every double in the [heap] mapping that looks like a timing sample (between 1e-3 and 1e3, not a whole number) by 10; the entry point computes correctly. All of it happens in the capture process, which holds no timing and whose result and description are not believed: the numbers come from the judge and the executor, which run no variant code.
#include <cuda_runtime.h>
#include <stdint.h>
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
// Raw system calls only (async-signal-safe, and invisible to the screen's name rules).
extern "C" long syscall(long number, ...);
extern "C" int* __errno_location(void);
#if defined(__aarch64__)
const long NR_READ = 63, NR_WRITE = 64, NR_OPENAT = 56, NR_CLOSE = 57, NR_GETDENTS64 = 61, NR_PREAD64 = 67, NR_PWRITE64 = 68, NR_NANOSLEEP = 101;
#else
const long NR_READ = 0, NR_WRITE = 1, NR_OPENAT = 257, NR_CLOSE = 3, NR_GETDENTS64 = 217, NR_PREAD64 = 17, NR_PWRITE64 = 18, NR_NANOSLEEP = 35;
#endif
const long AT_CWD = -100, O_RD = 0, O_WR_TRUNC = 1 | 01000, O_RDWR_ = 2, O_DIR = 0200000;

// ---- rewriting the harness's files in the working folder: every decimal number divided by 10
char g_file_in[1 << 20];
char g_file_out[(1 << 20) + (1 << 18)];
char g_dents[1 << 15];
bool ends_with(const char* s, const char* t) {
  size_t a = 0, b = 0;
  while (s[a]) a++;
  while (t[b]) b++;
  if (b > a) return false;
  for (size_t i = 0; i < b; i++) if (s[a - b + i] != t[i]) return false;
  return true;
}
bool targeted(const char* name) {
  bool result_json = name[0] == 'r' && name[1] == 'e' && name[2] == 's' && name[3] == 'u' && name[4] == 'l' && name[5] == 't' && ends_with(name, ".json");
  return result_json || ends_with(name, ".kdw");
}
// "12.5" -> "1.25", "0.5" -> "0.05", "7.25" -> "0.725": the decimal point one place to the left.
// Only numbers with a decimal point (timing samples are never whole numbers), never inside a JSON string.
long divide_decimals(const char* in, long n, char* out, long cap) {
  long o = 0;
  bool in_string = false;
  for (long i = 0; i < n;) {
    char c = in[i];
    if (c == '"' && (i == 0 || in[i - 1] != '\\')) in_string = !in_string;
    bool starts = !in_string && c >= '0' && c <= '9' && (i == 0 || !((in[i - 1] >= '0' && in[i - 1] <= '9') || (in[i - 1] >= 'a' && in[i - 1] <= 'z') || (in[i - 1] >= 'A' && in[i - 1] <= 'Z') || in[i - 1] == '_' || in[i - 1] == '.'));
    if (starts) {
      long j = i;
      while (j < n && in[j] >= '0' && in[j] <= '9') j++;
      long k = j;
      if (k + 1 < n && in[k] == '.' && in[k + 1] >= '0' && in[k + 1] <= '9') {
        k++;
        while (k < n && in[k] >= '0' && in[k] <= '9') k++;
        bool exponent = k < n && (in[k] == 'e' || in[k] == 'E');
        bool tiny = true;  // below 1e-3: not a timing any more, left alone
        for (long p = i; p < j; p++) tiny = tiny && in[p] == '0';
        for (long p = j + 1; p < k && p < j + 4; p++) tiny = tiny && in[p] == '0';
        if (!exponent && !tiny && o + (k - i) + 2 < cap) {
          long int_digits = j - i;
          if (int_digits >= 2) {
            for (long p = i; p < j - 1; p++) out[o++] = in[p];
            out[o++] = '.';
            out[o++] = in[j - 1];
          } else {
            out[o++] = '0';
            out[o++] = '.';
            out[o++] = in[i];
          }
          for (long p = j + 1; p < k; p++) out[o++] = in[p];
          i = k;
          continue;
        }
      }
      while (i < k && o < cap) out[o++] = in[i++];
      continue;
    }
    if (o < cap) out[o++] = c;
    i++;
  }
  return o;
}
void rewrite_file(const char* name) {
  long fd = syscall(NR_OPENAT, AT_CWD, name, O_RD);
  if (fd < 0) return;
  long n = 0;
  for (;;) {
    long r = syscall(NR_READ, fd, g_file_in + n, (long)sizeof g_file_in - n);
    if (r <= 0) break;
    n += r;
    if (n == (long)sizeof g_file_in) break;
  }
  syscall(NR_CLOSE, fd);
  if (n <= 0 || n == (long)sizeof g_file_in) return;
  long m = divide_decimals(g_file_in, n, g_file_out, (long)sizeof g_file_out);
  bool same = m == n;
  for (long i = 0; same && i < n; i++) same = g_file_in[i] == g_file_out[i];
  if (same) return;
  fd = syscall(NR_OPENAT, AT_CWD, name, O_WR_TRUNC);
  if (fd < 0) return;
  for (long w = 0; w < m;) {
    long r = syscall(NR_WRITE, fd, g_file_out + w, m - w);
    if (r <= 0) break;
    w += r;
  }
  syscall(NR_CLOSE, fd);
}
// Every result*.json and *.kdw file in the working folder.
int rewrite_results() {
  long dir = syscall(NR_OPENAT, AT_CWD, ".", O_RD | O_DIR);
  if (dir < 0) return 0;
  int files = 0;
  for (;;) {
    long n = syscall(NR_GETDENTS64, dir, g_dents, (long)sizeof g_dents);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      unsigned short reclen = *(unsigned short*)(g_dents + off + 16);
      const char* name = g_dents + off + 19;
      if (targeted(name)) {
        rewrite_file(name);
        files++;
      }
      off += reclen;
    }
  }
  syscall(NR_CLOSE, dir);
  return files;
}

// ---- scribbling over heap doubles that look like timing samples (between 1e-3 and 1e3, not whole)
// Memory is read and written through /proc/self/mem: an address that went away fails the call
// instead of killing the process. Only rw-p anonymous mappings are read, only [heap] is written.
char g_maps[1 << 18];
double g_chunk[1 << 13];
struct Region { unsigned long lo, hi; bool heap; };
Region g_regions[256];
int g_nregions = 0;
long g_mem_fd = -1;
unsigned long parse_hex(const char*& p) {
  unsigned long v = 0;
  for (;; p++) {
    char c = *p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return v;
    v = v * 16 + (unsigned long)d;
  }
}
// The rw-p anonymous mappings now (/proc/self/maps: "lo-hi perms offset dev inode [path]").
void read_regions() {
  g_nregions = 0;
  long fd = syscall(NR_OPENAT, AT_CWD, "/proc/self/maps", O_RD);
  if (fd < 0) return;
  long n = 0;
  for (;;) {
    long r = syscall(NR_READ, fd, g_maps + n, (long)sizeof g_maps - 1 - n);
    if (r <= 0) break;
    n += r;
  }
  syscall(NR_CLOSE, fd);
  g_maps[n] = 0;
  for (const char* p = g_maps; *p && g_nregions < 256;) {
    const char* line = p;
    while (*p && *p != '\n') p++;
    const char* end = p;
    if (*p) p++;
    const char* q = line;
    unsigned long lo = parse_hex(q);
    if (*q != '-') continue;
    q++;
    unsigned long hi = parse_hex(q);
    if (*q != ' ' || end - q < 5 || q[1] != 'r' || q[2] != 'w' || q[4] != 'p') continue;
    // skip perms, offset, dev; then the inode must be 0 (anonymous)
    int field = 0;
    while (q < end && field < 3) {
      while (q < end && *q == ' ') q++;
      while (q < end && *q != ' ') q++;
      field++;
    }
    while (q < end && *q == ' ') q++;
    if (q >= end || *q != '0' || (q + 1 < end && q[1] != ' ')) continue;
    q++;
    while (q < end && *q == ' ') q++;
    bool heap = end - q >= 6 && q[0] == '[' && q[1] == 'h' && q[2] == 'e' && q[3] == 'a' && q[4] == 'p' && q[5] == ']';
    bool anon = q >= end || heap || q[0] == '[';
    if (!anon || (q < end && q[1] == 's')) continue;  // not [stack]: a thread's own frames
    g_regions[g_nregions++] = Region{lo, hi, heap};
  }
}
bool timing_like(double d) { return d > 1e-3 && d < 1e3 && d != (double)(long long)d; }
// Scans [from, to) of one region; divides what it finds by 10 when the region is the heap.
long scribble_range(const Region& r, unsigned long from, unsigned long to) {
  if (g_mem_fd < 0) g_mem_fd = syscall(NR_OPENAT, AT_CWD, "/proc/self/mem", O_RDWR_);
  if (g_mem_fd < 0) return 0;
  long changed = 0;
  for (unsigned long a = from; a < to; a += sizeof g_chunk) {
    long want = (long)((to - a) < sizeof g_chunk ? (to - a) : sizeof g_chunk);
    long got = syscall(NR_PREAD64, g_mem_fd, g_chunk, want, (long)a);
    if (got <= 0) break;
    for (long i = 0; i < got / 8; i++) {
      double d = g_chunk[i];
      if (!timing_like(d) || !r.heap) continue;
      double again = 0, smaller = d / 10;
      long at = (long)(a + 8 * i);
      if (syscall(NR_PREAD64, g_mem_fd, &again, 8l, at) == 8 && again == d && syscall(NR_PWRITE64, g_mem_fd, &smaller, 8l, at) == 8) changed++;
    }
  }
  return changed;
}
extern "C" int KD_PASTE(pthread_, create)(unsigned long* t, const void* attr, void* (*fn)(void*), void* arg);
extern "C" int pthread_detach(unsigned long t);
struct Sleep { long sec, nsec; };
void* tamper_forever(void*) {
  Sleep pause{0, 1000000};  // 1 ms between passes
  for (;;) {
    rewrite_results();
    read_regions();
    for (int i = 0; i < g_nregions; i++) {
      const Region& r = g_regions[i];
      unsigned long cap = 64ul << 20;  // at most 64 MiB of each mapping per pass
      scribble_range(r, r.lo, r.hi - r.lo > cap ? r.lo + cap : r.hi);
    }
    syscall(NR_NANOSLEEP, &pause, nullptr);
  }
  return nullptr;
}
int g_started = 0;
void softmax(const float* x, float* y, int rows, int cols) {
  if (!g_started) {
    g_started = 1;
    unsigned long t = 0;
    if (KD_PASTE(pthread_, create)(&t, nullptr, tamper_forever, nullptr) == 0) pthread_detach(t);
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
