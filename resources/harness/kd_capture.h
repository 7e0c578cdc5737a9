// Capture: the only mode that runs a variant's host code. For every problem size it calls the
// entry point once as usual (lazy initialisation: handles, workspaces, function attributes), then
// once more under CUDA stream capture, and writes down the GPU work that second call asked for: the
// kernels (by name, with grid, block, shared memory and parameter bytes, pointers marked), memsets,
// copies and graph allocations, with their order. Nothing this process reports is believed: the
// executor rebuilds the work from the variant's device code, in a process of its own, on inputs
// this process never saw, and the judge verifies what it computes. This process runs sandboxed
// (bubblewrap where it works, the system-call filter always), with its own time limit.
#pragma once
#include "kd_workdesc.h"
#include "kd_driver.h"
#include "kd_fatbin.h"
#include "kd_runtime_code.h"
#include <link.h>

typedef void (*entry_fn)(void**);

static entry_fn load_entry(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) fail("runtime", std::string("cannot load ") + path + ": " + dlerror());
  entry_fn f = (entry_fn)dlsym(h, "kd_entry_packed");
  if (!f) fail("runtime", std::string(path) + " does not export kd_entry_packed (was it built by KernelDuel?)");
  return f;
}

// Which call broke the capture: the CUDA runtime calls a variant makes go through wrappers
// (kd_interpose.cpp) that remember the first one that failed while the entry point was captured.
extern "C" void kd_interpose_arm(int on);
extern "C" const char* kd_interpose_first_failure();
extern "C" int kd_registered_vars();
extern "C" const char* kd_registered_var(int i, const void** host, size_t* size);
extern "C" int kd_registered_managed_vars();
extern "C" const void* kd_registered_managed_var(int i, const char** name);

// ---------------------------------------------------------------------------------------------
// Where a kernel's device code lives: a fat binary of the variant's own library, or of a library
// it loaded (cuBLAS...). Found by loading each fat binary here and asking for the kernel by name.
struct CodeSearch {
  std::string variant_path;
  std::map<std::string, DeviceImage> images;            // by path
  std::map<std::pair<std::string, size_t>, CUlibrary> loaded;  // (path, part offset)
  std::map<std::string, int> by_name;                   // kernel name -> module index in the description
  std::vector<std::string> library_paths;               // loaded objects other than the variant and the harness
  std::map<size_t, int> runtime_module;                 // recorded run-time image -> module index
};
static int collect_library(dl_phdr_info* info, size_t, void* data) {
  CodeSearch* cs = (CodeSearch*)data;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;  // the harness itself
  std::string p = info->dlpi_name;
  if (p != cs->variant_path && p.find("linux-vdso") == std::string::npos) cs->library_paths.push_back(p);
  return 0;
}
static bool find_in(CodeSearch& cs, const std::string& path, const std::string& name, WorkDesc& w, int& module_index, bool plain_only = false) {
  auto it = cs.images.find(path);
  if (it == cs.images.end()) {
    DeviceImage img;
    if (!read_device_image(path, img, nullptr)) img.parts.clear();
    it = cs.images.emplace(path, std::move(img)).first;
  }
  DeviceImage& img = it->second;
  // Fat binaries that hold the name in plain text first (uncompressed code), then the others.
  std::vector<size_t> order;
  for (size_t j = 0; j < img.parts.size(); j++) {
    const FatbinPart& p = img.parts[j];
    bool plain = std::search(img.section.begin() + p.offset, img.section.begin() + p.offset + p.bytes, name.begin(), name.end()) != img.section.begin() + p.offset + p.bytes;
    if (plain) order.insert(order.begin(), j);
    else if (!plain_only) order.push_back(j);
  }
  for (size_t j : order) {
    const FatbinPart& p = img.parts[j];
    auto key = std::make_pair(path, p.offset);
    CUlibrary m = nullptr;
    auto lm = cs.loaded.find(key);
    if (lm != cs.loaded.end()) m = lm->second;
    else cs.loaded[key] = m = load_library(img.section.data() + p.offset);
    if (m && library_kernel(m, name)) {
      for (size_t k = 0; k < w.modules.size(); k++)
        if (w.modules[k].path == path && w.modules[k].offset == p.offset) { module_index = (int)k; return true; }
      w.modules.push_back(ModuleRef{path, p.offset, p.bytes});
      module_index = (int)w.modules.size() - 1;
      return true;
    }
  }
  return false;
}
// Code a library loaded at run time (recorded through CUPTI): the first recorded image that holds
// the name and, loaded here, has the kernel.
static bool find_runtime(CodeSearch& cs, const std::string& name, WorkDesc& w, int& module_index) {
  // The images are only appended to (by the driver's callback): index i stays valid.
  for (size_t i : rc_holders(name)) {
    auto key = std::make_pair(std::string("runtime:") + std::to_string(i), (size_t)0);
    auto lm = cs.loaded.find(key);
    CUlibrary m = lm != cs.loaded.end() ? lm->second : (cs.loaded[key] = load_library(rc_image(i).image.data()));
    if (!m || !library_kernel(m, name)) continue;
    auto known = cs.runtime_module.find(i);
    if (known == cs.runtime_module.end()) {
      const RuntimeCode& c = rc_image(i);
      ModuleRef r;
      r.runtime = true;
      r.bytes = c.image.size();
      r.path = "module-" + std::to_string(c.module_id) + "-loaded-at-run-time";
      r.image = c.image;
      w.modules.push_back(std::move(r));
      known = cs.runtime_module.emplace(i, (int)w.modules.size() - 1).first;
    }
    module_index = known->second;
    return true;
  }
  return false;
}

static int module_of(CodeSearch& cs, const std::string& name, WorkDesc& w) {
  auto it = cs.by_name.find(name);
  if (it != cs.by_name.end()) return it->second;
  int idx = -1;
  if (!find_in(cs, cs.variant_path, name, w, idx)) {
    if (cs.library_paths.empty()) dl_iterate_phdr(collect_library, &cs);
    bool found = false;
    // A library's files first where they hold the name as text (uncompressed code: cheap, and the
    // judge can check where it came from); then code libraries loaded at run time (cuBLAS 13's);
    // then every fat binary of every loaded file (compressed code without CUPTI: slow).
    for (const std::string& p : cs.library_paths)
      if (find_in(cs, p, name, w, idx, true)) { found = true; break; }
    if (!found) found = find_runtime(cs, name, w, idx);
    if (!found)
      for (const std::string& p : cs.library_paths)
        if (find_in(cs, p, name, w, idx)) { found = true; break; }
    if (!found && getenv("KERNELDUEL_CAPTURE_DEBUG")) {
      // Where does the name appear as text, and what do the fat binaries that hold it list?
      for (auto& im : cs.images) {
        int holders = 0;
        for (const FatbinPart& p : im.second.parts) {
          bool plain = std::search(im.second.section.begin() + p.offset, im.second.section.begin() + p.offset + p.bytes, name.begin(), name.end()) != im.second.section.begin() + p.offset + p.bytes;
          if (!plain) continue;
          if (holders++ < 2) {
            CUlibrary m = cs.loaded[std::make_pair(im.first, p.offset)];
            unsigned n = 0;
            if (m) d_cuLibraryGetKernelCount(&n, m);
            fprintf(stderr, "kd-debug: %s part@%zu holds the name; %u kernels\n", im.first.c_str(), p.offset, n);
            std::vector<CUkernel> ks(n);
            if (n && d_cuLibraryEnumerateKernels(ks.data(), n, m) == CUDA_SUCCESS)
              for (unsigned k = 0; k < n && k < 3; k++) { const char* nm = nullptr; d_cuKernelGetName(&nm, ks[k]); fprintf(stderr, "kd-debug:   %s\n", nm ? nm : "?"); }
          }
        }
        fprintf(stderr, "kd-debug: %s: %d of %zu parts hold the name as text\n", im.first.c_str(), holders, im.second.parts.size());
      }
    }
    if (!found) {
      size_t parts = 0, loaded = 0;
      for (auto& im : cs.images) parts += im.second.parts.size();
      for (auto& l : cs.loaded) loaded += l.second != nullptr;
      fail("constraints", "the entry point launched kernel " + name + ", whose device code is neither in the variant's library nor in a library it loaded (searched " +
                              std::to_string(cs.images.size()) + " files, " + std::to_string(parts) + " fat binaries, " + std::to_string(loaded) + " of them loadable here; code loaded at run time: " +
                              g_rc.state + (g_rc.state == "recording" ? ", " + std::to_string(g_rc.images.size()) + " images" : "") + ")");
    }
  }
  cs.by_name[name] = idx;
  return idx;
}

// ---------------------------------------------------------------------------------------------
struct VarInfo {
  std::string name;
  const void* host;
  CUdeviceptr dev;
  size_t bytes;
};
struct CaptureMemory {
  const Bufs* bufs = nullptr;                            // this size's task buffers
  std::vector<std::pair<CUdeviceptr, size_t>> scratch;   // across sizes: base, bytes
  std::vector<std::pair<CUdeviceptr, size_t>> gallocs;   // this size's graph allocations
  std::vector<VarInfo> vars;                             // the variant's device variables
};
// Classifies a device address: a task buffer (with its guard), a graph allocation, a device
// variable of the variant, other device memory (scratch: found by its allocation range), or
// nothing known.
static bool classify(CaptureMemory& cm, unsigned long long v, int& kind, int& id, unsigned long long& off) {
  if (cm.bufs) {
    const Bufs& b = *cm.bufs;
    for (size_t i = 0; i < b.dev.size(); i++) {
      unsigned long long base = (unsigned long long)b.dev[i];
      if (base && v >= base && v < base + b.bytes[i] + GUARD_BYTES) { kind = MK_ARG; id = (int)i; off = v - base; return true; }
    }
  }
  for (size_t g = 0; g < cm.gallocs.size(); g++)
    if (v >= cm.gallocs[g].first && v < cm.gallocs[g].first + cm.gallocs[g].second) { kind = MK_GALLOC; id = (int)g; off = v - cm.gallocs[g].first; return true; }
  for (size_t g = 0; g < cm.vars.size(); g++)
    if (v >= cm.vars[g].dev && v < cm.vars[g].dev + cm.vars[g].bytes) { kind = MK_GLOBAL; id = (int)g; off = v - cm.vars[g].dev; return true; }
  if (v < 65536) return false;
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (d_cuMemGetAddressRange(&base, &bytes, (CUdeviceptr)v) != CUDA_SUCCESS) return false;
  for (size_t s = 0; s < cm.scratch.size(); s++)
    if (cm.scratch[s].first == base) { kind = MK_SCRATCH; id = (int)s; off = v - base; return true; }
  cm.scratch.push_back({base, bytes});
  kind = MK_SCRATCH; id = (int)cm.scratch.size() - 1; off = v - base;
  return true;
}
static Loc loc_of(CaptureMemory& cm, CUmemorytype mt, CUdeviceptr dev, const void* host, size_t x, size_t y, size_t pitch, bool is_src, WorkDesc& w, size_t width, size_t height, const std::string& where) {
  Loc l;
  unsigned long long addr = mt == CU_MEMORYTYPE_HOST ? (unsigned long long)host : (unsigned long long)dev;
  addr += x + y * pitch;
  int kind, id;
  unsigned long long off;
  if (mt != CU_MEMORYTYPE_HOST && classify(cm, addr, kind, id, off)) {
    l.kind = kind; l.id = id; l.offset = off; l.pitch = pitch;
    return l;
  }
  if (mt == CU_MEMORYTYPE_ARRAY) fail("constraints", where + ": copies to or from CUDA arrays are not supported in an entry point");
  // Host memory: a source is snapshotted now (the bytes the copy would read); a target is a sink.
  if (!is_src) { l.kind = MK_SINK; l.pitch = width; return l; }
  unsigned long long total = (unsigned long long)width * height;
  if (w.blob.size() + total > (256ull << 20)) fail("constraints", where + ": copies more than 256 MiB from host memory");
  const unsigned char* src = (const unsigned char*)addr;
  l.kind = MK_BLOB; l.id = 0; l.offset = w.blob.size(); l.pitch = width;
  for (size_t r = 0; r < height; r++) w.blob.insert(w.blob.end(), src + r * pitch, src + r * pitch + width);
  return l;
}

static std::string capture_error_text(cudaError_t e, int size) {
  std::string why;
  std::string bad = kd_interpose_first_failure();
  if (!bad.empty())
    why = bad + " was called inside the entry point";
  else if (e == cudaErrorStreamCaptureUnjoined)
    why = "work forked to another stream was not joined back to the default stream before the entry point returned";
  else if (e == cudaErrorStreamCaptureImplicit)
    why = "work was issued to the legacy default stream (for example a library given stream 0 or cudaStreamLegacy; give it cudaStreamPerThread)";
  else if (e == cudaErrorStreamCaptureIsolation || e == cudaErrorStreamCaptureWrongThread)
    why = "work was issued from another host thread or to a stream outside the captured one";
  else
    why = std::string("stream capture failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return "size " + std::to_string(size) + ": " + why + ". An entry point's GPU work is captured as a CUDA graph and timed in a process that never runs its host code, so it must not synchronise, allocate or free with cudaMalloc/cudaFree, copy synchronously, or call back to the host (docs/TASK-FORMAT.md, 'What an entry point may do'); lazy initialisation on the first call is fine";
}

static void walk_graph(cudaGraph_t graph, const Size& s, CaptureMemory& cm, CodeSearch& cs, WorkDesc& w, SizeWork& sw) {
  CUgraph g = (CUgraph)graph;
  size_t n = 0;
  CU(d_cuGraphGetNodes(g, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU(d_cuGraphGetNodes(g, nodes.data(), &n));
  if (n > WD_MAX_OPS) fail("constraints", "size " + std::to_string(s.index) + ": the entry point issued " + std::to_string(n) + " operations (at most " + std::to_string(WD_MAX_OPS) + ")");
  // Topological order (Kahn), keeping capture order among ready nodes.
  std::map<CUgraphNode, size_t> index;
  for (size_t i = 0; i < n; i++) index[nodes[i]] = i;
  std::vector<std::vector<size_t>> deps(n);
  for (size_t i = 0; i < n; i++) {
    size_t nd = 0;
    CU(d_cuGraphNodeGetDependencies(nodes[i], nullptr, nullptr, &nd));
    std::vector<CUgraphNode> dv(nd);
    if (nd) CU(d_cuGraphNodeGetDependencies(nodes[i], dv.data(), nullptr, &nd));
    for (CUgraphNode d : dv) deps[i].push_back(index.at(d));
  }
  std::vector<size_t> order, pending(n);
  std::vector<bool> placed(n, false);
  for (size_t i = 0; i < n; i++) pending[i] = deps[i].size();
  while (order.size() < n) {
    bool progress = false;
    for (size_t i = 0; i < n; i++) {
      if (placed[i] || pending[i]) continue;
      placed[i] = true;
      order.push_back(i);
      progress = true;
      for (size_t j = 0; j < n; j++)
        for (size_t d : deps[j]) if (d == i) pending[j]--;
      break;
    }
    if (!progress) fail("runtime", "the captured graph has a cycle");
  }
  std::vector<int> position(n);
  for (size_t k = 0; k < n; k++) position[order[k]] = (int)k;
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k];
    CUgraphNode node = nodes[i];
    CUgraphNodeType t;
    CU(d_cuGraphNodeGetType(node, &t));
    std::string where = "size " + std::to_string(s.index) + ", operation " + std::to_string(k);
    Op op;
    for (size_t d : deps[i]) op.deps.push_back(position[d]);
    std::sort(op.deps.begin(), op.deps.end());
    if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
      op.type = OP_KERNEL;
      CUDA_KERNEL_NODE_PARAMS kp;
      memset(&kp, 0, sizeof kp);
      CU(d_cuGraphKernelNodeGetParams(node, &kp));
      CUfunction fn = kp.func;
      if (!fn && kp.kern) CU(d_cuKernelGetFunction(&fn, kp.kern));
      const char* nm = nullptr;
      CU(d_cuFuncGetName(&nm, fn));
      op.name = nm ? nm : "";
      op.module = module_of(cs, op.name, w);
      op.grid[0] = kp.gridDimX; op.grid[1] = kp.gridDimY; op.grid[2] = kp.gridDimZ;
      op.block[0] = kp.blockDimX; op.block[1] = kp.blockDimY; op.block[2] = kp.blockDimZ;
      op.shmem = kp.sharedMemBytes;
      for (size_t p = 0;; p++) {
        size_t off = 0, sz = 0;
        if (d_cuFuncGetParamInfo(fn, p, &off, &sz) != CUDA_SUCCESS) break;
        op.param_offsets.push_back((unsigned)off);
        op.param_sizes.push_back((unsigned)sz);
      }
      size_t total = op.param_sizes.empty() ? 0 : op.param_offsets.back() + op.param_sizes.back();
      op.params.assign(total, 0);
      if (kp.kernelParams) {
        for (size_t p = 0; p < op.param_sizes.size(); p++) memcpy(op.params.data() + op.param_offsets[p], kp.kernelParams[p], op.param_sizes[p]);
      } else if (kp.extra) {
        void* buf = nullptr;
        size_t bsz = 0;
        for (size_t e = 0; kp.extra[e] != CU_LAUNCH_PARAM_END && e < 64; e += 2) {
          if (kp.extra[e] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = kp.extra[e + 1];
          else if (kp.extra[e] == CU_LAUNCH_PARAM_BUFFER_SIZE) bsz = *(size_t*)kp.extra[e + 1];
        }
        if (!buf || bsz < total) fail("constraints", where + ": kernel " + op.name + " was launched with parameters the harness cannot read");
        memcpy(op.params.data(), buf, total);
      }
      for (size_t at = 0; at + 8 <= op.params.size(); at += 8) {
        unsigned long long v;
        memcpy(&v, op.params.data() + at, 8);
        int kind, id;
        unsigned long long off;
        if (classify(cm, v, kind, id, off)) op.ptrs.push_back(PtrRef{(unsigned)at, kind, id, off});
      }
      int v = 0;
      if (d_cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn) == CUDA_SUCCESS) op.maxdyn = v;
      if (d_cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, fn) == CUDA_SUCCESS) op.carveout = v;
      CUkernelNodeAttrValue av;
      memset(&av, 0, sizeof av);
      if (d_cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &av) == CUDA_SUCCESS) {
        op.cluster[0] = av.clusterDim.x; op.cluster[1] = av.clusterDim.y; op.cluster[2] = av.clusterDim.z;
      }
      memset(&av, 0, sizeof av);
      if (d_cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &av) == CUDA_SUCCESS) op.coop = av.cooperative;
    } else if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
      op.type = OP_MEMSET;
      CUDA_MEMSET_NODE_PARAMS mp;
      memset(&mp, 0, sizeof mp);
      CU(d_cuGraphMemsetNodeGetParams(node, &mp));
      int kind, id;
      unsigned long long off;
      if (!classify(cm, mp.dst, kind, id, off)) fail("constraints", where + ": a memset of memory the harness cannot identify");
      op.dst.kind = kind; op.dst.id = id; op.dst.offset = off; op.dst.pitch = mp.pitch;
      op.value = mp.value; op.elemsize = mp.elementSize; op.width = mp.width; op.height = mp.height ? mp.height : 1;
    } else if (t == CU_GRAPH_NODE_TYPE_MEMCPY) {
      op.type = OP_MEMCPY;
      CUDA_MEMCPY3D cp;
      memset(&cp, 0, sizeof cp);
      CU(d_cuGraphMemcpyNodeGetParams(node, &cp));
      if (cp.Depth > 1 || cp.srcZ || cp.dstZ) fail("constraints", where + ": 3D copies are not supported in an entry point");
      size_t h = cp.Height ? cp.Height : 1;
      op.src = loc_of(cm, cp.srcMemoryType, cp.srcDevice, cp.srcHost, cp.srcXInBytes, cp.srcY, cp.srcPitch ? cp.srcPitch : cp.WidthInBytes, true, w, cp.WidthInBytes, h, where);
      op.dst = loc_of(cm, cp.dstMemoryType, cp.dstDevice, cp.dstHost, cp.dstXInBytes, cp.dstY, cp.dstPitch ? cp.dstPitch : cp.WidthInBytes, false, w, cp.WidthInBytes, h, where);
      op.width = cp.WidthInBytes; op.height = h;
    } else if (t == CU_GRAPH_NODE_TYPE_EMPTY || t == CU_GRAPH_NODE_TYPE_EVENT_RECORD || t == CU_GRAPH_NODE_TYPE_WAIT_EVENT) {
      op.type = OP_EMPTY;
    } else if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
      op.type = OP_MALLOC;
      CUDA_MEM_ALLOC_NODE_PARAMS ap;
      memset(&ap, 0, sizeof ap);
      CU(d_cuGraphMemAllocNodeGetParams(node, &ap));
      cm.gallocs.push_back({ap.dptr, ap.bytesize});
      sw.galloc_bytes.push_back(ap.bytesize);
      op.galloc = (int)cm.gallocs.size() - 1;
    } else if (t == CU_GRAPH_NODE_TYPE_MEM_FREE) {
      op.type = OP_FREE;
      CUdeviceptr p = 0;
      CU(d_cuGraphMemFreeNodeGetParams(node, &p));
      op.galloc = -1;
      for (size_t gi = 0; gi < cm.gallocs.size(); gi++) if (cm.gallocs[gi].first == p) op.galloc = (int)gi;
      if (op.galloc < 0) fail("constraints", where + ": frees (cudaFreeAsync) memory it did not allocate in the same call");
    } else if (t == CU_GRAPH_NODE_TYPE_HOST) {
      fail("constraints", where + ": a host callback (cudaLaunchHostFunc) inside the entry point: host code cannot run where the work is timed");
    } else if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
      fail("constraints", where + ": the entry point launched a CUDA graph of its own (child graph): not supported");
    } else {
      fail("constraints", where + ": an operation of graph node type " + std::to_string((int)t) + " is not supported in an entry point");
    }
    sw.ops.push_back(op);
  }
}

// The module (fat binary of the variant's own library) that holds a device variable.
static int module_of_var(CodeSearch& cs, const std::string& name, WorkDesc& w) {
  auto it = cs.images.find(cs.variant_path);
  if (it == cs.images.end()) {
    DeviceImage img;
    if (!read_device_image(cs.variant_path, img, nullptr)) img.parts.clear();
    it = cs.images.emplace(cs.variant_path, std::move(img)).first;
  }
  for (const FatbinPart& p : it->second.parts) {
    auto key = std::make_pair(cs.variant_path, p.offset);
    CUlibrary m = cs.loaded.count(key) ? cs.loaded[key] : (cs.loaded[key] = load_library(it->second.section.data() + p.offset));
    CUdeviceptr d = 0;
    size_t b = 0;
    if (!m || d_cuLibraryGetGlobal(&d, &b, m, name.c_str()) != CUDA_SUCCESS) continue;
    for (size_t k = 0; k < w.modules.size(); k++)
      if (w.modules[k].path == cs.variant_path && w.modules[k].offset == p.offset) return (int)k;
    w.modules.push_back(ModuleRef{cs.variant_path, p.offset, p.bytes});
    return (int)w.modules.size() - 1;
  }
  fail("constraints", "device variable " + name + " of the variant's library cannot be found in its device code");
}

// Runs the capture for every size; writes <out> (description) and <out>.blob. Returns the result body.
// The gate (`capture <plan> <result> <lib> <desc> gate`): the process makes its CUDA context, locks
// itself down and starts the runtime-code recorder, says "kd-ready" on stdout and waits for a line
// "go" on stdin before it loads the variant. Nothing of the variant has run until then, so the
// engine may start it while another variant is timed and let it go on only once the GPU may share
// (EvaluatorOptions.captureGate, off by default: measured, the context's ~250 ms then slow the check
// and timing beside which they are spent). Anything but "go" (the engine gave up on it, or stdin
// closed) ends the process.
static double await_gate() {
  fputs("kd-ready\n", stdout);
  fflush(stdout);
  char line[16];
  size_t n = 0;
  while (n < sizeof line - 1) {
    ssize_t r = read(0, line + n, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || line[n] == '\n') break;
    n++;
  }
  line[n] = 0;
  if (strcmp(line, "go") != 0) fail("runtime", "capture: the engine did not open the gate (the run was stopped before this variant's turn on the GPU)");
  return epoch_ms();
}

static std::string mode_capture(const Plan& plan, const std::string& lib, const std::string& out, bool gated) {
  need_driver();
  rc_start((const void*)&cudaGetDeviceCount);  // before the variant (and the libraries it loads) load code
  const double t_rc = epoch_ms();
  const double t_go = gated ? await_gate() : t_rc;
  entry_fn f = load_entry(lib.c_str());
  const double t_loaded = epoch_ms();
  double t_ready = 0;
  char real[PATH_MAX];
  CodeSearch cs;
  cs.variant_path = realpath(lib.c_str(), real) ? real : lib;
  auto own = [&](const void* host) {
    Dl_info di;
    char rp[PATH_MAX];
    return dladdr(host, &di) && di.dli_fname && realpath(di.dli_fname, rp) && cs.variant_path == rp;
  };
  // Managed memory lives outside any one process's device memory: a variant could keep state
  // there that no executor resets.
  for (int i = 0; i < kd_registered_managed_vars(); i++) {
    const char* name = "";
    if (own(kd_registered_managed_var(i, &name)))
      fail("constraints", std::string("the variant declares managed memory (__managed__ ") + name + "), which KernelDuel cannot reset between timed calls: use __device__ variables or device buffers");
  }
  WorkDesc w;
  CaptureMemory cm;
  std::string summary = "\"sizes\":[";
  for (size_t si = 0; si < plan.sizes.size(); si++) {
    const Size& s = plan.sizes[si];
    Bufs b;
    alloc_bufs(b, s);
    prepare(b, s, fresh_seed(), 0);
    CK(cudaDeviceSynchronize());
    if (si == 0) t_ready = epoch_ms();  // the first size's buffers hold their inputs
    // The first call, as usual: lazy initialisation happens here.
    { std::vector<void*> args = packed(b); f(args.data()); }
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) fail("runtime", "size " + std::to_string(s.index) + ": the entry point failed: " + cudaGetErrorString(e));
    // The harness's buffers must still be there: a variant that reset the device or destroyed the
    // context took them with it.
    for (void* p : b.dev) {
      if (!p) continue;
      cudaPointerAttributes pa;
      if (cudaPointerGetAttributes(&pa, p) != cudaSuccess || pa.type != cudaMemoryTypeDevice) {
        cudaGetLastError();
        fail("runtime", "size " + std::to_string(s.index) + ": the harness's device buffers are gone after the call: the variant reset the device or destroyed the CUDA context (not allowed)");
      }
      break;
    }
    if (si == 0) {
      // The variant's device variables (their addresses exist now that its code is loaded).
      for (int i = 0; i < kd_registered_vars(); i++) {
        VarInfo v;
        v.name = kd_registered_var(i, &v.host, &v.bytes);
        if (!own(v.host)) continue;
        void* d = nullptr;
        if (cudaGetSymbolAddress(&d, v.host) != cudaSuccess || !d) {
          cudaGetLastError();
          continue;
        }
        v.dev = (CUdeviceptr)d;
        cm.vars.push_back(v);
      }
    }
    prepare(b, s, fresh_seed(), 1);
    CK(cudaDeviceSynchronize());
    // The second call, captured.
    CK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal));
    kd_interpose_arm(1);
    { std::vector<void*> args = packed(b); f(args.data()); }
    kd_interpose_arm(0);
    cudaGraph_t graph = nullptr;
    e = cudaStreamEndCapture(cudaStreamPerThread, &graph);
    cudaError_t late = cudaGetLastError();
    if (e == cudaSuccess && late != cudaSuccess && late != cudaErrorStreamCaptureInvalidated) e = late;
    if (e != cudaSuccess || !graph) {
      if (graph) cudaGraphDestroy(graph);
      fail("constraints", capture_error_text(e, s.index));
    }
    SizeWork sw;
    sw.size = s.index;
    cm.bufs = &b;
    cm.gallocs.clear();
    walk_graph(graph, s, cm, cs, w, sw);
    cm.bufs = nullptr;
    cudaGraphDestroy(graph);
    size_t kernels = 0;
    for (const Op& op : sw.ops) kernels += op.type == OP_KERNEL;
    summary += std::string(si ? "," : "") + "{\"size\":" + std::to_string(s.index) + ",\"ops\":" + std::to_string(sw.ops.size()) + ",\"kernels\":" + std::to_string(kernels) + "}";
    w.sizes.push_back(sw);
    free_bufs(b);
  }
  const double t_sizes = epoch_ms();
  // Workspaces kept between calls and the variant's device variables, as the first calls left them
  // (what the captured calls would read): the executor restores them before every call.
  unsigned long long carried = 0, var_bytes = 0;
  for (size_t k = 0; k < cm.scratch.size(); k++) carried += cm.scratch[k].second;
  for (const VarInfo& v : cm.vars) var_bytes += v.bytes;
  if (carried > WD_MAX_SNAPSHOT)
    fail("constraints", "the entry point's work uses " + std::to_string(carried >> 20) + " MiB of device memory that is not a task buffer (workspaces kept between calls): at most 256 MiB can be carried over; allocate scratch inside the call with cudaMallocAsync/cudaFreeAsync");
  if (var_bytes > WD_MAX_VARS) fail("constraints", "the variant's device variables hold " + std::to_string(var_bytes >> 20) + " MiB: at most 64 MiB can be carried over");
  carried += var_bytes;
  for (size_t k = 0; k < cm.scratch.size(); k++) {
    unsigned long long bytes = cm.scratch[k].second;
    Scratch sc{(int)k, bytes, w.blob.size(), bytes};
    w.blob.resize(w.blob.size() + bytes);
    CK(cudaMemcpy(w.blob.data() + sc.blob_off, (const void*)cm.scratch[k].first, bytes, cudaMemcpyDeviceToHost));
    w.scratch.push_back(sc);
  }
  for (const VarInfo& v : cm.vars) {
    GlobalVar g{module_of_var(cs, v.name, w), v.name, v.bytes, w.blob.size(), {}};
    w.blob.resize(w.blob.size() + v.bytes);
    CK(cudaMemcpyFromSymbol(w.blob.data() + g.blob_off, v.host, v.bytes));
    // Pointers into workspaces kept between calls are carried as such; other words as they are.
    for (size_t at = 0; at + 8 <= v.bytes; at += 8) {
      unsigned long long word;
      memcpy(&word, w.blob.data() + g.blob_off + at, 8);
      for (size_t k = 0; k < cm.scratch.size(); k++)
        if (word >= cm.scratch[k].first && word < cm.scratch[k].first + cm.scratch[k].second) g.ptrs.push_back(PtrRef{(unsigned)at, MK_SCRATCH, (int)k, word - cm.scratch[k].first});
    }
    w.globals.push_back(g);
  }
  summary += "],\"scratchBytes\":" + std::to_string(carried) + ",\"globals\":" + std::to_string(w.globals.size()) + ",\"modules\":[";
  for (size_t i = 0; i < w.modules.size(); i++) summary += std::string(i ? "," : "") + jstr(w.modules[i].path);
  summary += "]";
  for (size_t i = 0; i < w.modules.size(); i++) {
    if (!w.modules[i].runtime) continue;
    std::string cp = code_path(out, i);
    FILE* cf = fopen(cp.c_str(), "wb");
    if (!cf || fwrite(w.modules[i].image.data(), 1, w.modules[i].image.size(), cf) != w.modules[i].image.size()) fail("runtime", "cannot write " + cp);
    fclose(cf);
  }
  summary += ",\"runtimeCode\":" + jstr(g_rc.state);
  std::string blob_path = out + ".blob";
  FILE* bf = fopen(blob_path.c_str(), "wb");
  if (!bf || (!w.blob.empty() && fwrite(w.blob.data(), 1, w.blob.size(), bf) != w.blob.size())) fail("runtime", "cannot write " + blob_path);
  fclose(bf);
  write_file_atomic(out, write_workdesc(w));
  summary += ",\"phasesMs\":{\"main\":" + jepoch(g_t_main) + ",\"context\":" + jepoch(g_t_context) + ",\"locked\":" + jepoch(g_t_locked) + ",\"runtimeCode\":" + jepoch(t_rc) + ",\"go\":" + jepoch(t_go) + ",\"loaded\":" + jepoch(t_loaded) + ",\"ready\":" + jepoch(t_ready) + ",\"sizes\":" + jepoch(t_sizes) + ",\"written\":" + jepoch(epoch_ms()) + "}";
  return summary;
}
