// Which call broke a capture. The harness is linked with -export-dynamic, so the CUDA runtime calls
// a variant makes resolve to these wrappers first (an unversioned definition in the executable
// satisfies the variant's versioned reference); each forwards to the real function and, while the
// entry point is being captured (kd_interpose_arm), remembers the first call that failed. Only for
// the message: the capture's verdict does not depend on it. A host-only translation unit of its own
// (the device runtime's header defines some of these names inline in .cu files).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int g_armed = 0;
static char g_first[256];
extern "C" void kd_interpose_arm(int on) {
  if (on) g_first[0] = 0;
  g_armed = on;
}
extern "C" const char* kd_interpose_first_failure() { return g_first; }
static void kd_note_call(const char* name, cudaError_t r) {
  if (g_armed && r != cudaSuccess && !g_first[0]) snprintf(g_first, sizeof g_first, "%s (%s)", name, cudaGetErrorName(r));
}
#define KD_WRAP(name, params, args)                                                              \
  extern "C" __attribute__((visibility("default"))) cudaError_t name params {                     \
    static cudaError_t(*real) params = nullptr;                                                   \
    if (!real) real = (cudaError_t(*) params)dlsym(RTLD_NEXT, #name);                              \
    if (!real) return cudaErrorNotSupported;                                                      \
    cudaError_t r = real args;                                                                    \
    kd_note_call(#name, r);                                                                       \
    return r;                                                                                     \
  }
extern "C" {
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t);
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpy2D_ptds(void*, size_t, const void*, size_t, size_t, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpyToSymbol_ptds(const void*, const void*, size_t, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpyFromSymbol_ptds(void*, const void*, size_t, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemset_ptds(void*, int, size_t);
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, enum cudaMemcpyKind, cudaStream_t);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t, cudaHostFn_t, void*);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t, enum cudaStreamCaptureMode);
}
KD_WRAP(cudaDeviceSynchronize, (void), ())
KD_WRAP(cudaDeviceReset, (void), ())
KD_WRAP(cudaStreamSynchronize, (cudaStream_t s), (s))
KD_WRAP(cudaStreamSynchronize_ptsz, (cudaStream_t s), (s))
KD_WRAP(cudaEventSynchronize, (cudaEvent_t e), (e))
KD_WRAP(cudaStreamQuery, (cudaStream_t s), (s))
KD_WRAP(cudaStreamQuery_ptsz, (cudaStream_t s), (s))
KD_WRAP(cudaEventQuery, (cudaEvent_t e), (e))
KD_WRAP(cudaMemcpy, (void* d, const void* s, size_t n, enum cudaMemcpyKind k), (d, s, n, k))
KD_WRAP(cudaMemcpy_ptds, (void* d, const void* s, size_t n, enum cudaMemcpyKind k), (d, s, n, k))
KD_WRAP(cudaMemcpy2D, (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k), (d, dp, s, sp, w, h, k))
KD_WRAP(cudaMemcpy2D_ptds, (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k), (d, dp, s, sp, w, h, k))
KD_WRAP(cudaMemcpyToSymbol, (const void* sym, const void* s, size_t n, size_t o, enum cudaMemcpyKind k), (sym, s, n, o, k))
KD_WRAP(cudaMemcpyToSymbol_ptds, (const void* sym, const void* s, size_t n, size_t o, enum cudaMemcpyKind k), (sym, s, n, o, k))
KD_WRAP(cudaMemcpyFromSymbol, (void* d, const void* sym, size_t n, size_t o, enum cudaMemcpyKind k), (d, sym, n, o, k))
KD_WRAP(cudaMemcpyFromSymbol_ptds, (void* d, const void* sym, size_t n, size_t o, enum cudaMemcpyKind k), (d, sym, n, o, k))
KD_WRAP(cudaMemset, (void* d, int v, size_t n), (d, v, n))
KD_WRAP(cudaMemset_ptds, (void* d, int v, size_t n), (d, v, n))
KD_WRAP(cudaMalloc, (void** p, size_t n), (p, n))
KD_WRAP(cudaFree, (void* p), (p))
KD_WRAP(cudaMallocHost, (void** p, size_t n), (p, n))
KD_WRAP(cudaFreeHost, (void* p), (p))
KD_WRAP(cudaHostAlloc, (void** p, size_t n, unsigned int f), (p, n, f))
KD_WRAP(cudaMallocManaged, (void** p, size_t n, unsigned int f), (p, n, f))
KD_WRAP(cudaMemcpyAsync, (void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
KD_WRAP(cudaMemcpyAsync_ptsz, (void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
KD_WRAP(cudaLaunchHostFunc, (cudaStream_t st, cudaHostFn_t fn, void* u), (st, fn, u))
KD_WRAP(cudaLaunchHostFunc_ptsz, (cudaStream_t st, cudaHostFn_t fn, void* u), (st, fn, u))
KD_WRAP(cudaGraphLaunch, (cudaGraphExec_t g, cudaStream_t st), (g, st))
KD_WRAP(cudaGraphLaunch_ptsz, (cudaGraphExec_t g, cudaStream_t st), (g, st))
KD_WRAP(cudaStreamBeginCapture, (cudaStream_t st, enum cudaStreamCaptureMode m), (st, m))
KD_WRAP(cudaStreamBeginCapture_ptsz, (cudaStream_t st, enum cudaStreamCaptureMode m), (st, m))
#undef KD_WRAP

// Device variables a loaded library registers with the runtime (its __device__ and __constant__
// globals): the capture carries their values after the first call over to the executor, which
// loads the device code fresh (cudaMemcpyToSymbol of a table on the first call is allowed).
struct KdVar {
  const void* host;
  char name[512];
  size_t size;
};
static KdVar g_vars[4096];
static int g_nvars = 0;
extern "C" __attribute__((visibility("default"))) void __cudaRegisterVar(void** handle, char* hostVar, char* deviceAddress, const char* deviceName, int ext, size_t size, int constant, int global) {
  typedef void (*real_t)(void**, char*, char*, const char*, int, size_t, int, int);
  static real_t real = nullptr;
  if (!real) real = (real_t)dlsym(RTLD_NEXT, "__cudaRegisterVar");
  if (g_nvars < 4096 && deviceName && strlen(deviceName) < sizeof g_vars[0].name) {
    g_vars[g_nvars].host = hostVar;
    strcpy(g_vars[g_nvars].name, deviceName);
    g_vars[g_nvars].size = size;
    g_nvars++;
  }
  if (real) real(handle, hostVar, deviceAddress, deviceName, ext, size, constant, global);
}
extern "C" int kd_registered_vars() { return g_nvars; }
extern "C" const char* kd_registered_var(int i, const void** host, size_t* size) {
  *host = g_vars[i].host;
  *size = g_vars[i].size;
  return g_vars[i].name;
}

// Managed device variables (__managed__): recorded so the capture can refuse them.
static const void* g_managed[1024];
static char g_managed_names[1024][256];
static int g_nmanaged = 0;
extern "C" __attribute__((visibility("default"))) void __cudaRegisterManagedVar(void** handle, void** hostVarPtrAddress, char* deviceAddress, const char* deviceName, int ext, size_t size, int constant, int global) {
  typedef void (*real_t)(void**, void**, char*, const char*, int, size_t, int, int);
  static real_t real = nullptr;
  if (!real) real = (real_t)dlsym(RTLD_NEXT, "__cudaRegisterManagedVar");
  if (g_nmanaged < 1024) {
    g_managed[g_nmanaged] = hostVarPtrAddress;
    snprintf(g_managed_names[g_nmanaged], sizeof g_managed_names[0], "%s", deviceName ? deviceName : "?");
    g_nmanaged++;
  }
  if (real) real(handle, hostVarPtrAddress, deviceAddress, deviceName, ext, size, constant, global);
}
extern "C" int kd_registered_managed_vars() { return g_nmanaged; }
extern "C" const void* kd_registered_managed_var(int i, const char** name) {
  *name = g_managed_names[i];
  return g_managed[i];
}
