// hostile case got_tamper: expected ok-honest.
// Data-only tampering, no code patched: on its first call walks the main program's dynamic relocations (the first object dl_iterate_phdr reports; DT_JMPREL and DT_RELA with DT_SYMTAB and DT_STRTAB) and overwrites the GOT slots of cudaEventElapsedTime and clock_gettime with fakes that report a tenth of the time (making the RELRO page writable with mprotect first), so that the harness's own calls of its timers would reach them; then computes correctly. The main program it rewrites is the capture process's harness, which times nothing; the executor that times the work is another process with its own, untouched GOT, and never loads the variant's library as code.
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
struct Dyn64 { int64_t tag; uint64_t val; };
struct Rela64 { uint64_t offset, info; int64_t addend; };
struct Sym64 { uint32_t name; unsigned char info, other; uint16_t shndx; uint64_t value, size; };
extern "C" long syscall(long number, ...);
#if defined(__aarch64__)
const long NR_CLOCK_GETTIME = 113;
#else
const long NR_CLOCK_GETTIME = 228;
#endif
struct FakeTs { long sec, nsec; };
long long g_t0_ns = -1;
extern "C" int fake_clock_gettime(int clk, FakeTs* t) {
  long r = syscall(NR_CLOCK_GETTIME, (long)clk, t);
  if (r != 0 || !(clk == 1 || clk == 4 || clk == 7)) return (int)r;
  long long ns = t->sec * 1000000000ll + t->nsec;
  if (g_t0_ns >= 0 && ns > g_t0_ns) ns = g_t0_ns + (ns - g_t0_ns) / 10;
  t->sec = ns / 1000000000ll;
  t->nsec = ns % 1000000000ll;
  return 0;
}
typedef cudaError_t (*ElapsedFn)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFn g_real_elapsed = nullptr;
extern "C" cudaError_t fake_event_elapsed(float* ms, cudaEvent_t a, cudaEvent_t b) {
  cudaError_t e = g_real_elapsed(ms, a, b);
  if (e == cudaSuccess) *ms *= 0.1f;
  return e;
}
int g_slots = 0;
bool overwrite_slot(void** slot, void* fake) {
  uintptr_t page = (uintptr_t)getpagesize();
  uintptr_t lo = (uintptr_t)slot & ~(page - 1);
  if (mprotect((void*)lo, page, 1 | 2) != 0) return false;  // RELRO: read-only after relocation
  *slot = fake;
  g_slots++;
  return true;
}
int rewrite_main_got(PhdrInfo* info, unsigned long, void* data) {
  int* seen = (int*)data;
  if ((*seen)++) return 1;  // the first object is the main program
  const Dyn64* dyn = nullptr;
  for (int i = 0; i < info->phnum; i++)
    if (info->phdr[i].type == 2 /* PT_DYNAMIC */) dyn = (const Dyn64*)(info->addr + info->phdr[i].vaddr);
  if (!dyn) return 1;
  // ld.so has already made these addresses absolute; offsets (below the load address) are not.
  auto abs = [&](uint64_t v) { return v < info->addr ? info->addr + v : v; };
  uint64_t strtab = 0, symtab = 0, rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0;
  for (const Dyn64* d = dyn; d->tag != 0; d++) {
    switch (d->tag) {
      case 5: strtab = abs(d->val); break;     // DT_STRTAB
      case 6: symtab = abs(d->val); break;     // DT_SYMTAB
      case 7: rela = abs(d->val); break;       // DT_RELA
      case 8: relasz = d->val; break;          // DT_RELASZ
      case 23: jmprel = abs(d->val); break;    // DT_JMPREL
      case 2: pltrelsz = d->val; break;        // DT_PLTRELSZ
    }
  }
  if (!strtab || !symtab) return 1;
  const uint64_t tables[2][2] = {{jmprel, pltrelsz}, {rela, relasz}};
  for (const auto& t : tables) {
    if (!t[0]) continue;
    const Rela64* r = (const Rela64*)t[0];
    for (uint64_t i = 0; i < t[1] / sizeof(Rela64); i++) {
      uint32_t sym = (uint32_t)(r[i].info >> 32);
      if (!sym) continue;
      const char* name = (const char*)strtab + ((const Sym64*)symtab)[sym].name;
      void** slot = (void**)(info->addr + r[i].offset);
      if (!strcmp(name, "cudaEventElapsedTime")) overwrite_slot(slot, (void*)&fake_event_elapsed);
      else if (!strcmp(name, "clock_gettime")) overwrite_slot(slot, (void*)&fake_clock_gettime);
    }
  }
  return 1;
}
int g_done = 0;
void softmax(const float* x, float* y, int rows, int cols) {
  if (!g_done) {
    g_done = 1;
    g_real_elapsed = &cudaEventElapsedTime;
    FakeTs now;
    if (syscall(NR_CLOCK_GETTIME, 1l, &now) == 0) g_t0_ns = now.sec * 1000000000ll + now.nsec;
    int seen = 0;
    dl_iterate_phdr(rewrite_main_got, &seen);
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
