// hostile case timer_patch_procmem: expected ok-honest.
// On its first call overwrites the first bytes of the real cudaEventElapsedTime (libcudart) and of libc's clock_gettime with a jump to fakes that report a tenth of the elapsed time (the real clock read by a raw system call, the real event time from the driver, so events and wall clock would still agree), writing through /proc/self/mem (which ignores page protections; opened by a raw system call, loader names pasted, so the screen sees none of it); then computes correctly. It patches the capture process, the only one that runs its host code, and that process times nothing: the work is timed in the executor, which loads only the variant's device code (never its library as code), with its own untouched libcudart and libc, so the kernel is measured at its true speed.
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
extern "C" long syscall(long number, ...);
extern "C" void* KD_PASTE(dl, open)(const char* file, int mode);
extern "C" void* KD_PASTE(dl, sym)(void* handle, const char* name);
#if defined(__aarch64__)
const long NR_CLOCK_GETTIME = 113;
#else
const long NR_CLOCK_GETTIME = 228;
#endif
struct FakeTs { long sec, nsec; };
// The fakes. Time runs at a tenth of its speed from the moment of the patch (it never goes back).
long long g_t0_ns = -1;
extern "C" int fake_clock_gettime(int clk, FakeTs* t) {
  long r = syscall(NR_CLOCK_GETTIME, (long)clk, t);
  if (r != 0 || !(clk == 1 || clk == 4 || clk == 7)) return (int)r;  // only the monotonic clocks a timer uses
  long long ns = t->sec * 1000000000ll + t->nsec;
  if (g_t0_ns >= 0 && ns > g_t0_ns) ns = g_t0_ns + (ns - g_t0_ns) / 10;
  t->sec = ns / 1000000000ll;
  t->nsec = ns % 1000000000ll;
  return 0;
}
typedef int (*DrvElapsed)(float*, void*, void*);
DrvElapsed g_drv_elapsed = nullptr;
extern "C" cudaError_t fake_event_elapsed(float* ms, cudaEvent_t a, cudaEvent_t b) {
  float v = 0.f;
  if (!g_drv_elapsed || g_drv_elapsed(&v, (void*)a, (void*)b) != 0) return cudaErrorInvalidResourceHandle;
  *ms = v * 0.1f;
  return cudaSuccess;
}
// A jump to 'to' in the first bytes of 'at'.
int jump_code(unsigned char* code, void* to) {
  uint64_t a = (uint64_t)(uintptr_t)to;
#if defined(__aarch64__)
  const uint32_t ldr_x16 = 0x58000050u, br_x16 = 0xD61F0200u;  // ldr x16, #8; br x16; .quad to
  memcpy(code, &ldr_x16, 4);
  memcpy(code + 4, &br_x16, 4);
  memcpy(code + 8, &a, 8);
  return 16;
#else
  code[0] = 0x48; code[1] = 0xB8;  // movabs rax, to
  memcpy(code + 2, &a, 8);
  code[10] = 0xFF; code[11] = 0xE0;  // jmp rax
  return 12;
#endif
}
#if defined(__aarch64__)
const long NR_OPENAT = 56, NR_PWRITE64 = 68, NR_CLOSE = 57;
#else
const long NR_OPENAT = 257, NR_PWRITE64 = 18, NR_CLOSE = 3;
#endif
// Writes through /proc/self/mem: the kernel writes read-only code pages for us (no mprotect).
bool patch_with_procmem(void* at, void* to) {
  unsigned char code[16];
  int len = jump_code(code, to);
  long fd = syscall(NR_OPENAT, -100l /* AT_FDCWD */, "/proc/self/mem", 2l /* O_RDWR */);
  if (fd < 0) return false;
  bool ok = true;
#if defined(__x86_64__)
  // A thread entering the function meanwhile spins on a 2-byte jump-to-self until the rest is in place.
  const unsigned char spin[2] = {0xEB, 0xFE};
  ok = syscall(NR_PWRITE64, fd, spin, 2l, (long)(uintptr_t)at) == 2 &&
       syscall(NR_PWRITE64, fd, code + 2, (long)(len - 2), (long)(uintptr_t)at + 2) == len - 2 &&
       syscall(NR_PWRITE64, fd, code, 2l, (long)(uintptr_t)at) == 2;
#else
  ok = syscall(NR_PWRITE64, fd, code, (long)len, (long)(uintptr_t)at) == len;
#endif
  syscall(NR_CLOSE, fd);
  __builtin___clear_cache((char*)at, (char*)at + len);
  return ok;
}
int g_patched = 0;
void patch_timers() {
  void* cuda = KD_PASTE(dl, open)("libcuda.so.1", 2 | 4);  // RTLD_NOW | RTLD_NOLOAD: the driver the runtime loaded
  if (cuda) {
    g_drv_elapsed = (DrvElapsed)KD_PASTE(dl, sym)(cuda, "cuEventElapsedTime_v2");
    if (!g_drv_elapsed) g_drv_elapsed = (DrvElapsed)KD_PASTE(dl, sym)(cuda, "cuEventElapsedTime");
  }
  FakeTs now;
  if (syscall(NR_CLOCK_GETTIME, 1l, &now) == 0) g_t0_ns = now.sec * 1000000000ll + now.nsec;
  // The functions every caller in the process reaches: their addresses in libcudart and libc.
  if (g_drv_elapsed) patch_with_procmem((void*)&cudaEventElapsedTime, (void*)&fake_event_elapsed);
  patch_with_procmem((void*)&clock_gettime, (void*)&fake_clock_gettime);
}
void softmax(const float* x, float* y, int rows, int cols) {
  if (!g_patched) {
    g_patched = 1;
    patch_timers();
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
