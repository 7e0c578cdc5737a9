// Executor: runs ONE variant's GPU work, rebuilt from the work description and the variant's own
// device code (loaded as data with cuModuleLoadData; the variant's library is never dlopen'ed, so
// none of its host code runs here). It is started by the judge, holds only this variant's
// buffers, and answers the judge's commands over a pipe:
//   alloc <size> <sets>           <sets> fresh sets of buffers for a size (then the previous ones
//                                 are freed); answers the CUDA IPC handle of every buffer of every
//                                 set and the buffer's offset in it ("<hex>+<offset>"), so the
//                                 judge can check them from its own process
//   sample <seed> <timed> <pv> <set>
//                                 on buffer set <set>: inputs (and inout buffers) from <seed>,
//                                 outputs poisoned, guards set, workspaces and device variables
//                                 restored, L2 flushed; then the work, and if <timed> between two
//                                 events and two host-clock readings around a synchronise; answers
//                                 "ok <event ms> <wall ms>"
//   quit
// A device error ends the process after it has answered (its CUDA context is unusable).
#pragma once
#include "kd_workdesc.h"
#include "kd_driver.h"
#include "kd_fatbin.h"

// The clean flush (plan flushclean 1): reads a buffer (all zeros) through L2; the sum is written
// only if it is not zero (never), so the reads cannot be dropped.
__global__ void kd_flush_read_kernel(const uint4* __restrict__ p, size_t n, unsigned int* sink) {
  unsigned int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = p[i];
    acc |= v.x | v.y | v.z | v.w;
  }
  if (acc) *sink = acc;
}

// The gate: a one-thread kernel that holds the stream until the host has queued the whole timed
// call, so the events around the work measure the GPU's time and not how fast this process
// submits launches (which differs from process to process). It gives up after two seconds, so a
// host that never opens it cannot hang the GPU.
__global__ void kd_gate_kernel(volatile int* open) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (*open == 0 && t - t0 < 2000000000ull);
}

struct ExecKernel {
  CUfunction fn = nullptr;
};
struct ExecSize {
  std::vector<ExecKernel> kernels;  // per op (fn null for non-kernels)
  bool chain = true;                // every op waits only for the one before: run in order on one stream
};
struct Executor {
  Plan plan;
  WorkDesc w;
  std::vector<CUlibrary> modules;
  std::vector<CUdeviceptr> globals;  // per description global: its address in this process
  std::map<int, ExecSize> per_size;
  // the current buffers
  int size = -1;
  // Timed calls rotate over several sets of buffers (new physical pages each), so that no one
  // placement of the buffers in memory decides a variant's time (docs/ISOLATION.md, timing).
  std::vector<Bufs> sets;
  int cur = 0;
  std::vector<void*> scratch, scratch_pristine;
  std::vector<CUdeviceptr> gallocs;
  unsigned char* pinned_blob = nullptr;
  unsigned char* sink = nullptr;
  size_t sink_bytes = 0;
  std::vector<CUgraph> graphs;          // per buffer set (work that forks to several streams)
  std::vector<CUgraphExec> graph_execs;
  std::vector<std::vector<unsigned char>> graph_params;  // kernel parameter bytes the graph points into
  std::vector<std::vector<void*>> graph_param_ptrs;
  cudaStream_t st = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  void* flush = nullptr;
  std::vector<void*> flush_more;  // plan flushsets N: the other N - 1 flush buffers
  unsigned long long flush_turn = 0;
  void* flush_read = nullptr;  // plan flushclean 1: read after the memset (flush_read_bytes)
  size_t flush_read_bytes = 0;  // plan flushcleanbytes, else flush_bytes / 2
  unsigned int* flush_sink = nullptr;
  int* gate = nullptr;      // pinned host flag (alone in its allocation), mapped for the gate kernel
  int* gate_dev = nullptr;
  size_t flush_bytes = 0;
  int flips = 0;
};

static std::string exec_load(Executor& x, const std::string& desc_path) {
  std::vector<unsigned char> text, blob;
  std::string why;
  if (!read_file(desc_path, text, 64u << 20, &why)) fail("runtime", "cannot read the work description: " + why);
  if (!read_file(desc_path + ".blob", blob, (size_t)WD_MAX_BLOB, &why)) fail("runtime", "cannot read the work description's blob: " + why);
  std::string err = read_workdesc(std::string(text.begin(), text.end()), blob, x.plan, x.w);
  if (!err.empty()) fail("constraints", "the captured work does not hold together: " + err);
  // Device code: exactly the fat binaries the description names, read from their files as data.
  std::map<std::string, DeviceImage> images;
  for (size_t mi = 0; mi < x.w.modules.size(); mi++) {
    const ModuleRef& m = x.w.modules[mi];
    if (m.runtime) {
      // Code a library loaded at run time, as the driver reported it to the capture process. It is
      // device code only (it runs with this variant's buffers alone, like the variant's own kernels).
      std::vector<unsigned char> code;
      if (!read_code(desc_path, mi, m, code, why)) fail("constraints", "device code: " + why);
      CUlibrary lib = load_library(code.data());
      if (!lib) fail("constraints", "device code: run-time code " + std::to_string(mi) + " (" + m.path + ") does not load on this GPU");
      x.modules.push_back(lib);
      continue;
    }
    auto it = images.find(m.path);
    if (it == images.end()) {
      DeviceImage img;
      if (!read_device_image(m.path, img, &why)) fail("constraints", "device code: " + why);
      it = images.emplace(m.path, std::move(img)).first;
    }
    const DeviceImage& img = it->second;
    bool known = false;
    for (const FatbinPart& p : img.parts) known |= p.offset == m.offset && p.bytes == m.bytes;
    if (!known) fail("constraints", "device code: " + m.path + " has no fat binary of " + std::to_string(m.bytes) + " bytes at offset " + std::to_string(m.offset));
    CUlibrary lib = load_library(img.section.data() + m.offset);
    if (!lib) fail("constraints", "device code: the fat binary at offset " + std::to_string(m.offset) + " of " + m.path + " does not load on this GPU");
    x.modules.push_back(lib);
  }
  for (const SizeWork& sw : x.w.sizes) {
    ExecSize es;
    es.kernels.resize(sw.ops.size());
    for (size_t i = 0; i < sw.ops.size(); i++) {
      const Op& op = sw.ops[i];
      if (i > 0 && !(op.deps.size() == 1 && op.deps[0] == (int)i - 1)) es.chain = false;
      if (i == 0 && !op.deps.empty()) es.chain = false;
      if (op.type != OP_KERNEL) continue;
      CUkernel k = library_kernel(x.modules[op.module], op.name);
      if (!k) fail("constraints", "kernel " + op.name + " is not in " + (x.w.modules[op.module].runtime ? "run-time code " + std::to_string(op.module) + " (" + x.w.modules[op.module].path + ")" : x.w.modules[op.module].path));
      CUfunction fn = nullptr;
      CU(d_cuKernelGetFunction(&fn, k));
      // The parameter layout must be the function's own.
      std::vector<unsigned> offs, sizes;
      for (size_t p = 0;; p++) {
        size_t o = 0, s = 0;
        if (d_cuFuncGetParamInfo(fn, p, &o, &s) != CUDA_SUCCESS) break;
        offs.push_back((unsigned)o);
        sizes.push_back((unsigned)s);
      }
      if (offs != op.param_offsets || sizes != op.param_sizes) fail("constraints", "kernel " + op.name + ": the captured parameters do not match its parameter layout");
      int dyn = (int)std::max<unsigned>(op.shmem, (unsigned)std::max(op.maxdyn, 0));
      if (dyn > 48 * 1024) CU(d_cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn));
      if (op.carveout >= 0) d_cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, op.carveout);
      es.kernels[i].fn = fn;
    }
    bool has_galloc = false;
    for (const Op& op : sw.ops) has_galloc |= op.type == OP_MALLOC || op.type == OP_FREE;
    if (!es.chain && has_galloc) fail("constraints", "size " + std::to_string(sw.size) + ": graph allocations (cudaMallocAsync) in work that forks to several streams are not supported");
    x.per_size[sw.size] = es;
  }
  if (!x.w.blob.empty()) {
    CK(cudaMallocHost((void**)&x.pinned_blob, x.w.blob.size()));
    memcpy(x.pinned_blob, x.w.blob.data(), x.w.blob.size());
  }
  // Workspaces kept between calls: allocated once, restored from a pristine copy before every call.
  for (const Scratch& sc : x.w.scratch) {
    void* p = nullptr;
    void* q = nullptr;
    CK(cudaMalloc(&p, sc.bytes));
    CK(cudaMalloc(&q, sc.bytes));
    if (sc.blob_len) CK(cudaMemcpy(q, x.pinned_blob + sc.blob_off, sc.bytes, cudaMemcpyHostToDevice));
    else CK(cudaMemset(q, 0xFF, sc.bytes));
    x.scratch.push_back(p);
    x.scratch_pristine.push_back(q);
  }
  // The variant's device variables, restored before every call (pointers into workspaces moved to ours).
  for (const GlobalVar& g : x.w.globals) {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    if (d_cuLibraryGetGlobal(&p, &bytes, x.modules[g.module], g.name.c_str()) != CUDA_SUCCESS || bytes != g.bytes)
      fail("constraints", "device variable " + g.name + " of the variant's library cannot be carried over (not found, or of another size)");
    for (const PtrRef& r : g.ptrs) {
      CUdeviceptr a = (CUdeviceptr)x.scratch[r.id] + r.offset;
      memcpy(x.pinned_blob + g.blob_off + r.at, &a, 8);
    }
    x.globals.push_back(p);
  }
  CK(cudaStreamCreateWithFlags(&x.st, cudaStreamNonBlocking));
  CK(cudaEventCreate(&x.e0));
  CK(cudaEventCreate(&x.e1));
  x.flush_bytes = flush_size(x.plan);
  CK(cudaHostAlloc((void**)&x.gate, sizeof(int), cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer((void**)&x.gate_dev, x.gate, 0));
  CK(cudaMalloc(&x.flush, x.flush_bytes));
  for (int k = 1; k < x.plan.flush_sets; k++) {
    void* f = nullptr;
    CK(cudaMalloc(&f, x.flush_bytes));
    x.flush_more.push_back(f);
  }
  if (x.plan.flush_clean) {
    x.flush_read_bytes = x.plan.flush_clean_bytes ? (size_t)x.plan.flush_clean_bytes : x.flush_bytes / 2 / 16 * 16;
    CK(cudaMalloc(&x.flush_read, x.flush_read_bytes));
    CK(cudaMemset(x.flush_read, 0, x.flush_read_bytes));
    CK(cudaMalloc((void**)&x.flush_sink, sizeof(unsigned int)));
  }
  // The timed context never keeps lines in L2 between samples on purpose.
  d_cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
  size_t kernels = 0;
  for (const SizeWork& sw : x.w.sizes) for (const Op& op : sw.ops) kernels += op.type == OP_KERNEL;
  return "{\"modules\":" + std::to_string(x.modules.size()) + ",\"kernels\":" + std::to_string(kernels) + "}";
}

static const SizeWork& exec_work(const Executor& x) {
  for (const SizeWork& sw : x.w.sizes) if (sw.size == x.size) return sw;
  fail("runtime", "no work for size " + std::to_string(x.size));
}
static CUdeviceptr exec_addr(const Executor& x, int kind, int id, unsigned long long off) {
  switch (kind) {
    case MK_ARG: return (CUdeviceptr)x.sets[x.cur].dev[id] + off;
    case MK_SCRATCH: return (CUdeviceptr)x.scratch[id] + off;
    case MK_GALLOC: return x.gallocs[id] + off;
    case MK_GLOBAL: return x.globals[id] + off;
  }
  fail("runtime", "bad memory kind");
}
static void patch_params(const Executor& x, const Op& op, std::vector<unsigned char>& p, std::vector<void*>& ptrs) {
  p = op.params;
  for (const PtrRef& r : op.ptrs) {
    CUdeviceptr a = exec_addr(x, r.kind, r.id, r.offset);
    memcpy(p.data() + r.at, &a, 8);
  }
  ptrs.resize(op.param_offsets.size());
  for (size_t i = 0; i < ptrs.size(); i++) ptrs[i] = p.data() + op.param_offsets[i];
}
static CUDA_MEMCPY2D copy_params(const Executor& x, const Op& op) {
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  auto side = [&](const Loc& l, CUmemorytype& mt, CUdeviceptr& dev, const void*& host, size_t& pitch) {
    if (l.kind == MK_BLOB) { mt = CU_MEMORYTYPE_HOST; host = x.pinned_blob + l.offset; }
    else if (l.kind == MK_SINK) { mt = CU_MEMORYTYPE_HOST; host = x.sink; }
    else { mt = CU_MEMORYTYPE_DEVICE; dev = exec_addr(x, l.kind, l.id, l.offset); }
    pitch = l.pitch ? l.pitch : op.width;
  };
  const void* h = nullptr;
  side(op.src, c.srcMemoryType, c.srcDevice, h, c.srcPitch);
  c.srcHost = h;
  const void* hd = nullptr;
  side(op.dst, c.dstMemoryType, c.dstDevice, hd, c.dstPitch);
  c.dstHost = (void*)hd;
  c.WidthInBytes = op.width;
  c.Height = op.height;
  return c;
}
static void launch_kernel(const Executor& x, const Op& op, CUfunction fn, std::vector<unsigned char>& p, std::vector<void*>& ptrs) {
  patch_params(x, op, p, ptrs);
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = op.grid[0]; cfg.gridDimY = op.grid[1]; cfg.gridDimZ = op.grid[2];
  cfg.blockDimX = op.block[0]; cfg.blockDimY = op.block[1]; cfg.blockDimZ = op.block[2];
  cfg.sharedMemBytes = op.shmem;
  cfg.hStream = (CUstream)x.st;
  CUlaunchAttribute attrs[2];
  memset(attrs, 0, sizeof attrs);
  unsigned na = 0;
  if (op.cluster[0]) {
    attrs[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[na].value.clusterDim.x = op.cluster[0]; attrs[na].value.clusterDim.y = op.cluster[1]; attrs[na].value.clusterDim.z = op.cluster[2];
    na++;
  }
  if (op.coop) { attrs[na].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE; attrs[na].value.cooperative = 1; na++; }
  cfg.attrs = na ? attrs : nullptr;
  cfg.numAttrs = na;
  CU(d_cuLaunchKernelEx(&cfg, fn, ptrs.empty() ? nullptr : ptrs.data(), nullptr));
}
static void memset_op(const Executor& x, const Op& op) {
  CUdeviceptr d = exec_addr(x, op.dst.kind, op.dst.id, op.dst.offset);
  CUstream s = (CUstream)x.st;
  if (op.height > 1) {
    if (op.elemsize == 1) CU(d_cuMemsetD2D8Async(d, op.dst.pitch, (unsigned char)op.value, op.width, op.height, s));
    else if (op.elemsize == 2) CU(d_cuMemsetD2D16Async(d, op.dst.pitch, (unsigned short)op.value, op.width, op.height, s));
    else CU(d_cuMemsetD2D32Async(d, op.dst.pitch, op.value, op.width, op.height, s));
  } else {
    if (op.elemsize == 1) CU(d_cuMemsetD8Async(d, (unsigned char)op.value, op.width, s));
    else if (op.elemsize == 2) CU(d_cuMemsetD16Async(d, (unsigned short)op.value, op.width, s));
    else CU(d_cuMemsetD32Async(d, op.value, op.width, s));
  }
}

// The work as one graph (for work that forks to several streams), built once per buffer set (x.cur).
static void build_graph(Executor& x, const SizeWork& sw, const ExecSize& es) {
  CUgraph graph = nullptr;
  CUgraphExec graph_exec = nullptr;
  CU(d_cuGraphCreate(&graph, 0));
  CUcontext ctx = nullptr;
  CU(d_cuCtxGetCurrent(&ctx));
  std::vector<CUgraphNode> nodes(sw.ops.size());
  x.graph_params.assign(sw.ops.size(), {});
  x.graph_param_ptrs.assign(sw.ops.size(), {});
  for (size_t i = 0; i < sw.ops.size(); i++) {
    const Op& op = sw.ops[i];
    std::vector<CUgraphNode> deps;
    for (int d : op.deps) deps.push_back(nodes[d]);
    CUgraphNode* dp = deps.empty() ? nullptr : deps.data();
    if (op.type == OP_KERNEL) {
      patch_params(x, op, x.graph_params[i], x.graph_param_ptrs[i]);
      CUDA_KERNEL_NODE_PARAMS kp;
      memset(&kp, 0, sizeof kp);
      kp.func = es.kernels[i].fn;
      kp.gridDimX = op.grid[0]; kp.gridDimY = op.grid[1]; kp.gridDimZ = op.grid[2];
      kp.blockDimX = op.block[0]; kp.blockDimY = op.block[1]; kp.blockDimZ = op.block[2];
      kp.sharedMemBytes = op.shmem;
      kp.kernelParams = x.graph_param_ptrs[i].empty() ? nullptr : x.graph_param_ptrs[i].data();
      CU(d_cuGraphAddKernelNode(&nodes[i], graph, dp, deps.size(), &kp));
      if (op.cluster[0]) {
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        v.clusterDim.x = op.cluster[0]; v.clusterDim.y = op.cluster[1]; v.clusterDim.z = op.cluster[2];
        CU(d_cuGraphKernelNodeSetAttribute(nodes[i], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v));
      }
      if (op.coop) {
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        v.cooperative = 1;
        CU(d_cuGraphKernelNodeSetAttribute(nodes[i], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
      }
    } else if (op.type == OP_MEMSET) {
      CUDA_MEMSET_NODE_PARAMS mp;
      memset(&mp, 0, sizeof mp);
      mp.dst = exec_addr(x, op.dst.kind, op.dst.id, op.dst.offset);
      mp.pitch = op.dst.pitch;
      mp.value = op.value;
      mp.elementSize = op.elemsize;
      mp.width = op.width;
      mp.height = op.height;
      CU(d_cuGraphAddMemsetNode(&nodes[i], graph, dp, deps.size(), &mp, ctx));
    } else if (op.type == OP_MEMCPY) {
      CUDA_MEMCPY2D c2 = copy_params(x, op);
      CUDA_MEMCPY3D c;
      memset(&c, 0, sizeof c);
      c.srcMemoryType = c2.srcMemoryType; c.srcHost = c2.srcHost; c.srcDevice = c2.srcDevice; c.srcPitch = c2.srcPitch; c.srcHeight = op.height;
      c.dstMemoryType = c2.dstMemoryType; c.dstHost = c2.dstHost; c.dstDevice = c2.dstDevice; c.dstPitch = c2.dstPitch; c.dstHeight = op.height;
      c.WidthInBytes = op.width; c.Height = op.height; c.Depth = 1;
      CU(d_cuGraphAddMemcpyNode(&nodes[i], graph, dp, deps.size(), &c, ctx));
    } else {
      CU(d_cuGraphAddEmptyNode(&nodes[i], graph, dp, deps.size()));
    }
  }
  CU(d_cuGraphInstantiateWithFlags(&graph_exec, graph, 0));
  x.graphs.push_back(graph);
  x.graph_execs.push_back(graph_exec);
}

static void run_work(Executor& x) {
  const SizeWork& sw = exec_work(x);
  const ExecSize& es = x.per_size.at(x.size);
  if (!es.chain) {
    CU(d_cuGraphLaunch(x.graph_execs.at(x.cur), (CUstream)x.st));
    return;
  }
  std::vector<unsigned char> p;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < sw.ops.size(); i++) {
    const Op& op = sw.ops[i];
    switch (op.type) {
      case OP_KERNEL: launch_kernel(x, op, es.kernels[i].fn, p, ptrs); break;
      case OP_MEMSET: memset_op(x, op); break;
      case OP_MEMCPY: {
        CUDA_MEMCPY2D c = copy_params(x, op);
        CU(d_cuMemcpy2DAsync(&c, (CUstream)x.st));
        break;
      }
      case OP_MALLOC: CU(d_cuMemAllocAsync(&x.gallocs[op.galloc], sw.galloc_bytes[op.galloc], (CUstream)x.st)); break;
      case OP_FREE: CU(d_cuMemFreeAsync(x.gallocs[op.galloc], (CUstream)x.st)); x.gallocs[op.galloc] = 0; break;
      case OP_EMPTY: break;
    }
  }
}

static void exec_release(Executor& x) {
  for (CUgraphExec g : x.graph_execs) d_cuGraphExecDestroy(g);
  for (CUgraph g : x.graphs) d_cuGraphDestroy(g);
  x.graph_execs.clear();
  x.graphs.clear();
}

static std::string exec_alloc(Executor& x, int size, int nsets) {
  const Size* s = size_by_index(x.plan, size);
  if (!s || !x.per_size.count(size)) fail("runtime", "no such size " + std::to_string(size));
  if (nsets < 1 || nsets > 64) fail("runtime", "bad number of buffer sets " + std::to_string(nsets));
  // New buffers before the old ones go: every set has addresses the last ones did not.
  std::vector<Bufs> fresh(nsets);
  for (Bufs& b : fresh) alloc_bufs(b, *s);
  for (Bufs& b : x.sets) free_bufs(b);
  exec_release(x);
  x.sets = fresh;
  x.cur = 0;
  x.size = size;
  const SizeWork& sw = exec_work(x);
  x.gallocs.assign(sw.galloc_bytes.size(), 0);
  size_t sink = 0;
  for (const Op& op : sw.ops) if (op.type == OP_MEMCPY && op.dst.kind == MK_SINK) sink = std::max<size_t>(sink, op.width * op.height);
  if (sink > x.sink_bytes) {
    if (x.sink) cudaFreeHost(x.sink);
    CK(cudaMallocHost((void**)&x.sink, sink));
    x.sink_bytes = sink;
  }
  if (!x.per_size.at(size).chain) {
    for (x.cur = 0; x.cur < nsets; x.cur++) build_graph(x, sw, x.per_size.at(size));
    x.cur = 0;
  }
  std::string handles;
  for (const Bufs& b : x.sets) {
    for (size_t i = 0; i < s->args.size(); i++) {
      if (!b.dev[i]) { handles += " -"; continue; }
      cudaIpcMemHandle_t h;
      CK(cudaIpcGetMemHandle(&h, b.base[i]));
      handles += " " + hex_of(&h, sizeof h) + "+" + std::to_string(b.offset[i]);
    }
  }
  CK(cudaDeviceSynchronize());
  return handles;
}

static std::string exec_sample(Executor& x, unsigned long long seed, bool timed, int poison_variant, int set) {
  if (x.size < 0) fail("runtime", "sample before alloc");
  if (set < 0 || set >= (int)x.sets.size()) fail("runtime", "no buffer set " + std::to_string(set));
  x.cur = set;
  const Size& s = *size_by_index(x.plan, x.size);
  prepare(x.sets[set], s, seed, poison_variant, x.st);
  for (size_t k = 0; k < x.scratch.size(); k++) CK(cudaMemcpyAsync(x.scratch[k], x.scratch_pristine[k], x.w.scratch[k].bytes, cudaMemcpyDeviceToDevice, x.st));
  for (size_t k = 0; k < x.globals.size(); k++) CK(cudaMemcpyAsync((void*)x.globals[k], x.pinned_blob + x.w.globals[k].blob_off, x.w.globals[k].bytes, cudaMemcpyHostToDevice, x.st));
  // Every call, timed or not, starts after an L2 flush: nothing tells a timed call from another.
  void* flush = x.flush;
  if (!x.flush_more.empty()) {
    const size_t k = (size_t)(x.flush_turn++ % (1 + x.flush_more.size()));
    if (k) flush = x.flush_more[k - 1];
  }
  CK(cudaMemsetAsync(flush, (x.flips++) & 1, x.flush_bytes, x.st));
  if (x.flush_read) {
    kd_flush_read_kernel<<<1024, 256, 0, x.st>>>((const uint4*)x.flush_read, x.flush_read_bytes / sizeof(uint4), x.flush_sink);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  d_cuCtxResetPersistingL2Cache();
  double ev = 0, wall = 0;
  if (timed) {
    *(volatile int*)x.gate = 0;
    __sync_synchronize();
    double t0 = now_ms();
    kd_gate_kernel<<<1, 1, 0, x.st>>>(x.gate_dev);
    CK(cudaEventRecord(x.e0, x.st));
    run_work(x);
    CK(cudaEventRecord(x.e1, x.st));
    __sync_synchronize();
    *(volatile int*)x.gate = 1;  // everything is queued: let the GPU go
    cudaError_t e = cudaDeviceSynchronize();
    double t1 = now_ms();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) fail("runtime", std::string("during timing: ") + cudaGetErrorString(e));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, x.e0, x.e1));
    ev = ms;
    wall = t1 - t0;
  } else {
    run_work(x);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) fail("runtime", std::string("variant: ") + cudaGetErrorString(e));
  }
  char b[96];
  snprintf(b, sizeof b, " %.9g %.9g", ev, wall);
  return b;
}

// The executor's command loop on stdin/stdout (pipes from the judge). It starts CUDA before it is
// given a variant ("up"), so the judge can keep one started ahead of need: `load <description>`
// then brings in the variant's device code ("ready").
static int mode_exec(const Plan& plan) {
  Executor x;
  x.plan = plan;
  std::string line;
  auto reply = [](const std::string& s) { fputs(s.c_str(), stdout); fputc('\n', stdout); fflush(stdout); };
  try {
    need_driver();
    CK(cudaFree(0));
    // Graph allocations (cudaMallocAsync in the captured work) come from the device's default pool;
    // it keeps its memory between calls, as a long-running program's pool would, instead of
    // returning it to the driver at every synchronise and mapping it again in the next timed call.
    int dev = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
      unsigned long long keep = ~0ull;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
  } catch (HarnessFailure& f) {
    reply("fail " + f.status + " " + f.error);
    return 0;
  }
  reply("up");
  bool loaded = false;
  while (read_line(stdin, line)) {
    std::vector<std::string> a = split(line, ' ');
    try {
      if (a[0] == "load" && a.size() >= 2 && !loaded) {
        reply("ready " + exec_load(x, line.substr(5)));
        loaded = true;
      } else if (a[0] == "alloc" && a.size() == 3 && loaded) reply("ok" + exec_alloc(x, atoi(a[1].c_str()), atoi(a[2].c_str())));
      else if (a[0] == "sample" && a.size() == 5 && loaded) reply("ok" + exec_sample(x, strtoull(a[1].c_str(), nullptr, 10), a[2] == "1", atoi(a[3].c_str()), atoi(a[4].c_str())));
      else if (a[0] == "quit") return 0;
      else reply("fail runtime bad command " + line.substr(0, 60));
    } catch (HarnessFailure& f) {
      reply("fail " + f.status + " " + f.error);
      return 0;  // the context may be broken: the judge starts a new executor if it needs one
    }
  }
  return 0;
}
