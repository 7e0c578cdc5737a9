// hostile case duel_sabotage: expected duel-honest.
// On its first call looks for the kd_entry_packed of every other loaded library (dl_iterate_phdr, then dlopen with RTLD_NOLOAD and dlsym; names pasted so the screen does not see them) and patches each (mprotect, a jump at its first bytes) to spin about 2 ms before computing, to slow a duel opponent down; then computes correctly. Its host code runs only in its own capture process, where no other variant is loaded, and in a duel each side's work runs in an executor of its own that loads device code only, so there is nothing to patch: against good_control.cu (the same kernel) the duel's ratio stays within [0.8, 1.25].
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
// The loader's view of loaded objects, declared here (no <link.h>, <elf.h>: not allowed includes).
struct Phdr64 { uint32_t type, flags; uint64_t offset, vaddr, paddr, filesz, memsz, align; };
struct PhdrInfo { uint64_t addr; const char* name; const Phdr64* phdr; uint16_t phnum; };
extern "C" int dl_iterate_phdr(int (*callback)(PhdrInfo* info, unsigned long size, void* data), void* data);
extern "C" int mprotect(void* addr, unsigned long len, int prot);
extern "C" int getpagesize(void);
extern "C" void* KD_PASTE(dl, open)(const char* file, int mode);
extern "C" void* KD_PASTE(dl, sym)(void* handle, const char* name);
// What a patched opponent runs instead: 2 ms of spinning, then the work (softmax, as this task's).
void softmax(const float* x, float* y, int rows, int cols);
void sabotaged_entry(void** a) {
  timespec t0, t;
  clock_gettime(1 /* CLOCK_MONOTONIC */, &t0);
  do clock_gettime(1, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000ll + (t.tv_nsec - t0.tv_nsec) < 2000000ll);
  softmax((const float*)a[0], (float*)a[1], *(const int*)a[2], *(const int*)a[3]);
}
bool write_jump(void* at, void* to) {
  unsigned char code[16];
  uint64_t a = (uint64_t)(uintptr_t)to;
  int len;
#if defined(__aarch64__)
  const uint32_t ldr_x16 = 0x58000050u, br_x16 = 0xD61F0200u;
  memcpy(code, &ldr_x16, 4);
  memcpy(code + 4, &br_x16, 4);
  memcpy(code + 8, &a, 8);
  len = 16;
#else
  code[0] = 0x48; code[1] = 0xB8;
  memcpy(code + 2, &a, 8);
  code[10] = 0xFF; code[11] = 0xE0;
  len = 12;
#endif
  uintptr_t page = (uintptr_t)getpagesize();
  uintptr_t lo = (uintptr_t)at & ~(page - 1), hi = ((uintptr_t)at + len + page - 1) & ~(page - 1);
  if (mprotect((void*)lo, hi - lo, 1 | 2 | 4) != 0) return false;
  memcpy(at, code, len);
  __builtin___clear_cache((char*)at, (char*)at + len);
  mprotect((void*)lo, hi - lo, 1 | 4);
  return true;
}
int g_sabotaged = 0;
int sabotage_others(PhdrInfo* info, unsigned long, void*) {
  if (!info->name || !info->name[0]) return 0;  // the main program
  uintptr_t me = (uintptr_t)&sabotaged_entry;
  for (int i = 0; i < info->phnum; i++) {
    const Phdr64& p = info->phdr[i];
    if (p.type == 1 /* PT_LOAD */ && me >= info->addr + p.vaddr && me < info->addr + p.vaddr + p.memsz) return 0;  // this library
  }
  void* h = KD_PASTE(dl, open)(info->name, 2 | 4);  // RTLD_NOW | RTLD_NOLOAD: only what is loaded already
  if (!h) return 0;
  void* entry = KD_PASTE(dl, sym)(h, "kd_entry_packed");
  if (entry && write_jump(entry, (void*)&sabotaged_entry)) g_sabotaged++;
  return 0;
}
int g_looked = 0;
void softmax(const float* x, float* y, int rows, int cols) {
  if (!g_looked) {
    g_looked = 1;
    dl_iterate_phdr(sabotage_others, nullptr);
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
