// Device code that libraries load at run time. cuBLAS 13 keeps its kernels compressed in its own
// data and hands them to the driver when it first needs them, so they are in no `.nv_fatbin` of
// any file (measured on the H200, 2026-12-01: none of the 2,977 fat binaries of the 13 loaded
// files held the kernel). The driver reports every module it loads to CUPTI's resource callback,
// with the image it loaded (an ELF cubin); the capture process keeps a copy of each, and the
// executor loads the one that holds a captured kernel from a file beside the work description.
// CUPTI is opened at run time (dlopen): without it the capture works as before and only says why
// a library kernel cannot be found. The types below are CUPTI's ABI (cupti_callbacks.h, stable
// since CUDA 4); the static_asserts check them where the header is available.
#pragma once
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <vector>
#include <deque>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstddef>

namespace kdrc {
enum { DOMAIN_RESOURCE = 3, CBID_MODULE_LOADED = 6 };
struct ResourceData { void* context; union { void* context; void* stream; } handle; void* descriptor; };
struct ModuleData { uint32_t moduleId; size_t cubinSize; const char* pCubin; };
typedef void (*Callback)(void* userdata, int domain, unsigned cbid, const void* data);
typedef int (*SubscribeFn)(void** subscriber, Callback cb, void* userdata);
typedef int (*EnableCallbackFn)(uint32_t enable, void* subscriber, int domain, unsigned cbid);
}  // namespace kdrc
#if defined(__has_include)
#if __has_include(<cupti_callbacks.h>)
#include <cupti_callbacks.h>
static_assert((int)CUPTI_CB_DOMAIN_RESOURCE == kdrc::DOMAIN_RESOURCE, "CUPTI ABI");
static_assert((int)CUPTI_CBID_RESOURCE_MODULE_LOADED == kdrc::CBID_MODULE_LOADED, "CUPTI ABI");
static_assert(sizeof(CUpti_ModuleResourceData) == sizeof(kdrc::ModuleData) && offsetof(CUpti_ModuleResourceData, pCubin) == offsetof(kdrc::ModuleData, pCubin), "CUPTI ABI");
static_assert(offsetof(CUpti_ResourceData, resourceDescriptor) == offsetof(kdrc::ResourceData, descriptor), "CUPTI ABI");
#endif
#endif

struct RuntimeCode {
  uint32_t module_id;
  std::vector<unsigned char> image;
};
struct RuntimeCodeLog {
  std::mutex mu;
  std::deque<RuntimeCode> images;  // a deque: references stay valid while modules are appended
  size_t bytes = 0;
  size_t dropped = 0;    // images not kept (over the limit)
  std::string state = "not started";
};
static RuntimeCodeLog g_rc;
static const size_t RC_MAX_BYTES = 2048ull << 20;  // what the capture process keeps in all

static void rc_callback(void*, int domain, unsigned cbid, const void* data) {
  if (domain != kdrc::DOMAIN_RESOURCE || cbid != kdrc::CBID_MODULE_LOADED || !data) return;
  const kdrc::ResourceData* rd = (const kdrc::ResourceData*)data;
  const kdrc::ModuleData* md = (const kdrc::ModuleData*)rd->descriptor;
  if (!md || !md->pCubin || md->cubinSize == 0) return;
  std::lock_guard<std::mutex> g(g_rc.mu);
  if (g_rc.bytes + md->cubinSize > RC_MAX_BYTES) { g_rc.dropped++; return; }
  RuntimeCode c;
  c.module_id = md->moduleId;
  c.image.assign((const unsigned char*)md->pCubin, (const unsigned char*)md->pCubin + md->cubinSize);
  g_rc.bytes += md->cubinSize;
  g_rc.images.push_back(std::move(c));
}

// Starts recording (before the variant's library is loaded). KERNELDUEL_CUPTI names the library;
// otherwise the usual names, then the CUDA runtime's own folder (and the toolkit's extras/CUPTI).
static void rc_start(const void* cudart_symbol) {
  if (const char* off = getenv("KERNELDUEL_RUNTIME_CODE")) {
    if (strcmp(off, "off") == 0) { g_rc.state = "off (KERNELDUEL_RUNTIME_CODE=off)"; return; }
  }
  std::vector<std::string> names;
  if (const char* e = getenv("KERNELDUEL_CUPTI")) if (*e) names.push_back(e);
  names.push_back("libcupti.so");
  for (int v = 13; v >= 12; v--) names.push_back("libcupti.so." + std::to_string(v));
  Dl_info di;
  if (cudart_symbol && dladdr(cudart_symbol, &di) && di.dli_fname) {
    std::string dir = di.dli_fname;
    dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
    if (!dir.empty()) {
      for (const char* n : {"/libcupti.so", "/libcupti.so.13", "/libcupti.so.12", "/../extras/CUPTI/lib64/libcupti.so"}) names.push_back(dir + n);
    }
  }
  void* h = nullptr;
  std::string tried;
  for (const std::string& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) break;
    tried += (tried.empty() ? "" : ", ") + n;
  }
  if (!h) { g_rc.state = "unavailable: no CUPTI library (tried " + tried + "; set KERNELDUEL_CUPTI)"; return; }
  kdrc::SubscribeFn sub = (kdrc::SubscribeFn)dlsym(h, "cuptiSubscribe");
  kdrc::EnableCallbackFn en = (kdrc::EnableCallbackFn)dlsym(h, "cuptiEnableCallback");
  if (!sub || !en) { g_rc.state = "unavailable: the CUPTI library lacks cuptiSubscribe/cuptiEnableCallback"; return; }
  void* subscriber = nullptr;
  int r = sub(&subscriber, rc_callback, nullptr);
  if (r != 0) { g_rc.state = "unavailable: cuptiSubscribe failed (CUPTI error " + std::to_string(r) + "; another profiler attached?)"; return; }
  r = en(1, subscriber, kdrc::DOMAIN_RESOURCE, kdrc::CBID_MODULE_LOADED);
  if (r != 0) { g_rc.state = "unavailable: cuptiEnableCallback failed (CUPTI error " + std::to_string(r) + ")"; return; }
  g_rc.state = "recording";
}

// Indexes of the recorded images that hold <name> as text (a cubin's symbol table is plain).
static std::vector<size_t> rc_holders(const std::string& name) {
  std::vector<size_t> out;
  std::lock_guard<std::mutex> g(g_rc.mu);
  for (size_t i = 0; i < g_rc.images.size(); i++) {
    const std::vector<unsigned char>& b = g_rc.images[i].image;
    if (std::search(b.begin(), b.end(), name.begin(), name.end()) != b.end()) out.push_back(i);
  }
  return out;
}

// Recorded image i (taken under the lock: the driver may report another module meanwhile).
static const RuntimeCode& rc_image(size_t i) {
  std::lock_guard<std::mutex> g(g_rc.mu);
  return g_rc.images[i];
}
