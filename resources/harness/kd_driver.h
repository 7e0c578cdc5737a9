// The CUDA driver API functions the harness uses, resolved through the runtime
// (cudaGetDriverEntryPointByVersion), so the harness links only libcudart and needs no libcuda
// stub at build time. Graph introspection (kernel names and parameter layouts) needs CUDA 12.4.
#pragma once
#include <cuda.h>
#include "kd_common.h"

#define KD_DRIVER_FUNCS(X)                                                                                    \
  X(cuGraphGetNodes) X(cuGraphNodeGetType) X(cuGraphKernelNodeGetParams) X(cuGraphKernelNodeGetAttribute)     \
  X(cuGraphMemsetNodeGetParams) X(cuGraphMemcpyNodeGetParams) X(cuGraphMemAllocNodeGetParams)                 \
  X(cuGraphMemFreeNodeGetParams) X(cuGraphNodeGetDependencies) X(cuFuncGetName) X(cuFuncGetParamInfo)          \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuKernelGetFunction) X(cuMemGetAddressRange)                   \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernelEx) X(cuCtxGetCurrent)          \
  X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)             \
  X(cuMemsetD2D8Async) X(cuMemsetD2D16Async) X(cuMemsetD2D32Async) X(cuMemcpy2DAsync) X(cuGraphCreate)        \
  X(cuGraphAddKernelNode) X(cuGraphAddMemsetNode) X(cuGraphAddMemcpyNode) X(cuGraphAddEmptyNode)               \
  X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuCtxResetPersistingL2Cache) \
  X(cuCtxSetLimit) X(cuGetErrorString) X(cuGraphKernelNodeSetAttribute) X(cuLibraryLoadData) X(cuLibraryUnload)        \
  X(cuLibraryGetKernel) X(cuLibraryGetKernelCount) X(cuLibraryEnumerateKernels) X(cuKernelGetName) X(cuLibraryGetGlobal)

#define KD_DECLARE(name) static decltype(&::name) d_##name = nullptr;
KD_DRIVER_FUNCS(KD_DECLARE)
#undef KD_DECLARE

static std::string g_driver_missing;
// Resolves every function once; the names that could not be found are kept for the message.
static bool load_driver() {
  static bool done = false;
  if (done) return g_driver_missing.empty();
  done = true;
#define KD_LOAD(name)                                                                                   \
  {                                                                                                    \
    cudaDriverEntryPointQueryResult q;                                                                 \
    void* p = nullptr;                                                                                 \
    if (cudaGetDriverEntryPointByVersion(#name, &p, CUDA_VERSION, cudaEnableDefault, &q) != cudaSuccess || !p) { \
      cudaGetLastError();                                                                              \
      g_driver_missing += std::string(g_driver_missing.empty() ? "" : ", ") + #name;                   \
    }                                                                                                  \
    d_##name = (decltype(d_##name))p;                                                                  \
  }
  KD_DRIVER_FUNCS(KD_LOAD)
#undef KD_LOAD
  return g_driver_missing.empty();
}
static void need_driver() {
  if (!load_driver()) fail("runtime", "the CUDA driver lacks functions the harness needs (" + g_driver_missing + "): KernelDuel needs a driver for CUDA 12.4 or newer");
}
static std::string cu_error(CUresult r) {
  const char* s = nullptr;
  if (d_cuGetErrorString) d_cuGetErrorString(r, &s);
  return s ? s : ("CUDA driver error " + std::to_string((int)r));
}
// A kernel of a loaded library by its (mangled) name: by symbol first, else by enumerating the
// library's kernels (template kernels and kernels with internal linkage are not found by symbol).
static CUkernel library_kernel(CUlibrary lib, const std::string& name) {
  CUkernel k = nullptr;
  if (d_cuLibraryGetKernel(&k, lib, name.c_str()) == CUDA_SUCCESS) return k;
  unsigned n = 0;
  if (d_cuLibraryGetKernelCount(&n, lib) != CUDA_SUCCESS || n == 0) return nullptr;
  std::vector<CUkernel> ks(n);
  if (d_cuLibraryEnumerateKernels(ks.data(), n, lib) != CUDA_SUCCESS) return nullptr;
  for (CUkernel c : ks) {
    const char* nm = nullptr;
    if (d_cuKernelGetName(&nm, c) == CUDA_SUCCESS && nm && name == nm) return c;
  }
  return nullptr;
}
static CUlibrary load_library(const unsigned char* image) {
  CUlibrary lib = nullptr;
  if (d_cuLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0) != CUDA_SUCCESS) return nullptr;
  return lib;
}
#define CU(call)                                                                             \
  do {                                                                                       \
    CUresult r_ = (call);                                                                    \
    if (r_ != CUDA_SUCCESS) fail("runtime", std::string(#call) + ": " + cu_error(r_));       \
  } while (0)
