// The work description: what a variant's entry point asked the GPU to do for each problem size,
// as captured (CUDA stream capture) in the process that ran the variant's host code. It is written
// by that untrusted process and read by the executor, which rebuilds the same GPU work from the
// variant's own device code without running any of its host code. Everything read here is
// untrusted: the reader bounds every count, index, offset and size, and a description that does
// not hold together is refused (`constraints`) with the line that broke it.
//
// Text, one record per line:
//   kdwork 1
//   module <i> <offset> <bytes> <path>            a fat binary: <bytes> at <offset> of the .nv_fatbin of <path>
//   code <i> <bytes> <label>                      device code a library loaded at run time (reported by the
//                                                 driver through CUPTI when it was loaded; cuBLAS 13 keeps
//                                                 its kernels compressed in its own data), in <description>.code<i>
//   blob <bytes>                                  snapshot bytes, in <description>.blob
//   scratch <id> <bytes> <bloboff> <bloblen>      device memory the work uses that is not a task buffer
//                                                 (a workspace kept between calls), with its bytes
//   global <module> <bytes> <bloboff> <name>      a device variable of the variant, with its value
//   gptr <at> <kind> <id> <offset>                the global's bytes at <at> hold a pointer (scratch only)
//   size <index>                                  the work of one problem size follows
//   galloc <id> <bytes>                           memory the work allocates itself (cudaMallocAsync)
//   op <i> kernel <module> <name> <gx> <gy> <gz> <bx> <by> <bz> <shm> <cx> <cy> <cz> <coop> <maxdyn> <carveout> <sizes> <paramhex>
//   ptr <at> <kind> <id> <offset>                 the kernel parameter bytes at <at> hold a pointer into (kind, id)
//   op <i> memset <dst kind> <id> <offset> <pitch> <value> <elemsize> <width> <height>
//   op <i> memcpy <dst kind> <id> <offset> <pitch> <src kind> <id> <offset> <pitch> <widthbytes> <height>
//   op <i> empty | malloc <galloc> | free <galloc>
//   dep <from> <to>                               op <to> waits for op <from> (from < to)
//   end
// Kinds of memory: arg (a task buffer, by argument index), scratch, galloc, blob (host bytes
// captured with the description; only as a copy source), sink (host memory; only as a copy target),
// global (a device variable of the variant, by its index).
#pragma once
#include "kd_buffers.h"

enum MemKind { MK_ARG = 0, MK_SCRATCH = 1, MK_GALLOC = 2, MK_BLOB = 3, MK_SINK = 4, MK_GLOBAL = 5 };
static const char* MEMKIND_NAMES[] = {"arg", "scratch", "galloc", "blob", "sink", "global"};
static const int MEMKINDS = 6;
static bool device_kind(int k) { return k == MK_ARG || k == MK_SCRATCH || k == MK_GALLOC || k == MK_GLOBAL; }

struct Loc {
  int kind = MK_ARG;
  int id = 0;
  unsigned long long offset = 0;
  unsigned long long pitch = 0;
};
struct PtrRef {
  unsigned at;
  int kind;  // MK_ARG, MK_SCRATCH, MK_GALLOC or MK_GLOBAL
  int id;
  unsigned long long offset;
};
enum OpType { OP_KERNEL, OP_MEMSET, OP_MEMCPY, OP_EMPTY, OP_MALLOC, OP_FREE };
static const char* OP_NAMES[] = {"kernel", "memset", "memcpy", "empty", "malloc", "free"};
struct Op {
  OpType type = OP_EMPTY;
  // kernel
  int module = 0;
  std::string name;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shmem = 0, cluster[3] = {0, 0, 0};
  int coop = 0, maxdyn = 0, carveout = -1;
  std::vector<unsigned> param_sizes;  // the parameters in order; their bytes are concatenated in params at natural offsets
  std::vector<unsigned> param_offsets;
  std::vector<unsigned char> params;
  std::vector<PtrRef> ptrs;
  // memset / memcpy
  Loc dst, src;
  unsigned value = 0, elemsize = 1;
  unsigned long long width = 0, height = 1;
  // malloc / free
  int galloc = -1;
  std::vector<int> deps;
};
struct Scratch {
  int id;
  unsigned long long bytes, blob_off, blob_len;
};
struct SizeWork {
  int size = -1;
  std::vector<unsigned long long> galloc_bytes;
  std::vector<Op> ops;
};
struct ModuleRef {
  std::string path;  // the library file; for run-time code, a label (what loaded it, as far as known)
  size_t offset = 0, bytes = 0;
  bool runtime = false;               // device code loaded at run time: in <description>.code<i>
  std::vector<unsigned char> image;   // the capture's copy of run-time code (written beside the description)
};
struct GlobalVar {
  int module;
  std::string name;
  unsigned long long bytes, blob_off;
  std::vector<PtrRef> ptrs;  // words of its value that point into scratch
};
struct WorkDesc {
  std::vector<ModuleRef> modules;
  std::vector<Scratch> scratch;
  std::vector<GlobalVar> globals;
  std::vector<SizeWork> sizes;
  std::vector<unsigned char> blob;
};

// Limits on what a description may ask for: workspaces kept between calls at most 256 MiB, device
// variables at most 64 MiB (what the capture carries), a size's graph allocations at most 16 GiB.
static const size_t WD_MAX_OPS = 4096, WD_MAX_PARAM_BYTES = 32764, WD_MAX_MODULES = 4096, WD_MAX_CODE = 512u << 20;
static const unsigned long long WD_MAX_SNAPSHOT = 256ull << 20, WD_MAX_VARS = 64ull << 20, WD_MAX_GALLOC = 16ull << 30, WD_MAX_BLOB = 2 * WD_MAX_SNAPSHOT + WD_MAX_VARS;

static std::string param_layout(const Op& o) {
  std::string s;
  for (size_t i = 0; i < o.param_sizes.size(); i++) s += (i ? "," : "") + std::to_string(o.param_offsets[i]) + ":" + std::to_string(o.param_sizes[i]);
  return s.empty() ? "-" : s;
}

static std::string write_workdesc(const WorkDesc& w) {
  std::string o = "kdwork 1\n";
  char b[512];
  for (size_t i = 0; i < w.modules.size(); i++) {
    const ModuleRef& m = w.modules[i];
    if (m.runtime) o += "code " + std::to_string(i) + " " + std::to_string(m.bytes) + " " + m.path + "\n";
    else o += "module " + std::to_string(i) + " " + std::to_string(m.offset) + " " + std::to_string(m.bytes) + " " + m.path + "\n";
  }
  o += "blob " + std::to_string(w.blob.size()) + "\n";
  for (const Scratch& sc : w.scratch) {
    snprintf(b, sizeof b, "scratch %d %llu %llu %llu\n", sc.id, sc.bytes, sc.blob_off, sc.blob_len);
    o += b;
  }
  for (const GlobalVar& g : w.globals) {
    o += "global " + std::to_string(g.module) + " " + std::to_string(g.bytes) + " " + std::to_string(g.blob_off) + " " + g.name + "\n";
    for (const PtrRef& p : g.ptrs) {
      snprintf(b, sizeof b, "gptr %u %s %d %llu\n", p.at, MEMKIND_NAMES[p.kind], p.id, p.offset);
      o += b;
    }
  }
  for (const SizeWork& s : w.sizes) {
    o += "size " + std::to_string(s.size) + "\n";
    for (size_t g = 0; g < s.galloc_bytes.size(); g++) o += "galloc " + std::to_string(g) + " " + std::to_string(s.galloc_bytes[g]) + "\n";
    for (size_t i = 0; i < s.ops.size(); i++) {
      const Op& op = s.ops[i];
      o += "op " + std::to_string(i) + " " + OP_NAMES[op.type];
      if (op.type == OP_KERNEL) {
        snprintf(b, sizeof b, " %d %s %u %u %u %u %u %u %u %u %u %u %d %d %d ", op.module, op.name.c_str(), op.grid[0], op.grid[1], op.grid[2], op.block[0], op.block[1], op.block[2], op.shmem,
                 op.cluster[0], op.cluster[1], op.cluster[2], op.coop, op.maxdyn, op.carveout);
        o += b + param_layout(op) + " " + (op.params.empty() ? std::string("-") : hex_of(op.params.data(), op.params.size())) + "\n";
        for (const PtrRef& p : op.ptrs) {
          snprintf(b, sizeof b, "ptr %u %s %d %llu\n", p.at, MEMKIND_NAMES[p.kind], p.id, p.offset);
          o += b;
        }
      } else if (op.type == OP_MEMSET) {
        snprintf(b, sizeof b, " %s %d %llu %llu %u %u %llu %llu\n", MEMKIND_NAMES[op.dst.kind], op.dst.id, op.dst.offset, op.dst.pitch, op.value, op.elemsize, op.width, op.height);
        o += b;
      } else if (op.type == OP_MEMCPY) {
        snprintf(b, sizeof b, " %s %d %llu %llu %s %d %llu %llu %llu %llu\n", MEMKIND_NAMES[op.dst.kind], op.dst.id, op.dst.offset, op.dst.pitch, MEMKIND_NAMES[op.src.kind], op.src.id,
                 op.src.offset, op.src.pitch, op.width, op.height);
        o += b;
      } else if (op.type == OP_MALLOC || op.type == OP_FREE) {
        o += " " + std::to_string(op.galloc) + "\n";
      } else {
        o += "\n";
      }
      for (int d : op.deps) o += "dep " + std::to_string(d) + " " + std::to_string(i) + "\n";
    }
  }
  return o + "end\n";
}

static int memkind_of(const std::string& s) {
  for (int k = 0; k < MEMKINDS; k++) if (s == MEMKIND_NAMES[k]) return k;
  return -1;
}

// Parses and validates a description against the plan. Returns "" or what is wrong (with the line).
static std::string read_workdesc(const std::string& text, const std::vector<unsigned char>& blob, const Plan& plan, WorkDesc& w) {
  w = WorkDesc();
  w.blob = blob;
  std::vector<std::string> lines = split(text, '\n');
  if (lines.empty() || lines[0] != "kdwork 1") return "not a work description (first line " + (lines.empty() ? std::string("missing") : lines[0].substr(0, 40)) + ")";
  bool ended = false;
  size_t declared_blob = 0;
  SizeWork* cur = nullptr;
  for (size_t ln = 1; ln < lines.size(); ln++) {
    const std::string& L = lines[ln];
    if (L.empty()) continue;
    if (ended) return "line " + std::to_string(ln + 1) + ": text after end";
    std::vector<std::string> f = split(L, ' ');
    auto err = [&](const std::string& m) { return "line " + std::to_string(ln + 1) + " (" + L.substr(0, 80) + "): " + m; };
    auto num = [&](size_t i, unsigned long long& v) -> bool {
      if (i >= f.size() || f[i].empty()) return false;
      char* e = nullptr;
      errno = 0;
      v = strtoull(f[i].c_str(), &e, 10);
      return *e == 0 && errno == 0 && f[i][0] != '-';
    };
    auto inum = [&](size_t i, long long& v) -> bool {
      if (i >= f.size() || f[i].empty()) return false;
      char* e = nullptr;
      errno = 0;
      v = strtoll(f[i].c_str(), &e, 10);
      return *e == 0 && errno == 0;
    };
    const std::string& k = f[0];
    if (k == "end") { ended = true; continue; }
    if (k == "module") {
      unsigned long long idx, off, bytes;
      if (f.size() < 5 || !num(1, idx) || !num(2, off) || !num(3, bytes) || idx != w.modules.size()) return err("bad module line");
      if (w.modules.size() >= WD_MAX_MODULES) return err("too many modules");
      ModuleRef m;
      m.offset = off; m.bytes = bytes;
      m.path = L.substr(L.find(' ', L.find(' ', L.find(' ', L.find(' ') + 1) + 1) + 1) + 1);
      w.modules.push_back(m);
    } else if (k == "code") {
      unsigned long long idx, bytes;
      if (f.size() < 4 || !num(1, idx) || !num(2, bytes) || idx != w.modules.size()) return err("bad code line");
      if (w.modules.size() >= WD_MAX_MODULES) return err("too many modules");
      if (bytes == 0 || bytes > WD_MAX_CODE) return err("run-time code of " + std::to_string(bytes) + " bytes (at most " + std::to_string(WD_MAX_CODE >> 20) + " MiB)");
      ModuleRef m;
      m.runtime = true; m.bytes = bytes;
      m.path = L.substr(L.find(' ', L.find(' ', L.find(' ') + 1) + 1) + 1);
      w.modules.push_back(m);
    } else if (k == "blob") {
      unsigned long long n;
      if (!num(1, n) || n != blob.size()) return err("the blob file has " + std::to_string(blob.size()) + " bytes");
      declared_blob = n;
    } else if (k == "scratch" && !cur) {
      unsigned long long id, bytes, bo, bl;
      if (!num(1, id) || !num(2, bytes) || !num(3, bo) || !num(4, bl) || id != w.scratch.size()) return err("bad scratch line");
      if (bytes == 0 || bytes > WD_MAX_SNAPSHOT) return err("scratch size out of range");
      if (bl && (bl != bytes || bo > declared_blob || bl > declared_blob - bo)) return err("scratch contents lie outside the blob");
      w.scratch.push_back(Scratch{(int)id, bytes, bo, bl});
    } else if (k == "global" && !cur) {
      unsigned long long mod, bytes, off;
      if (f.size() != 5 || !num(1, mod) || !num(2, bytes) || !num(3, off) || mod >= w.modules.size()) return err("bad global line");
      if (bytes == 0 || bytes > (64ull << 20) || off > declared_blob || bytes > declared_blob - off) return err("the global's value lies outside the blob");
      w.globals.push_back(GlobalVar{(int)mod, f[4], bytes, off, {}});
    } else if (k == "gptr" && !cur) {
      unsigned long long at, id, off;
      int kind = f.size() > 2 ? memkind_of(f[2]) : -1;
      if (w.globals.empty() || f.size() != 5 || !num(1, at) || kind != MK_SCRATCH || !num(3, id) || !num(4, off)) return err("bad gptr line (a global may point into scratch only)");
      GlobalVar& g = w.globals.back();
      if (at + 8 > g.bytes || id >= w.scratch.size() || off >= w.scratch[id].bytes) return err("gptr outside its global or its scratch");
      g.ptrs.push_back(PtrRef{(unsigned)at, kind, (int)id, off});
    } else if (k == "size") {
      long long s;
      if (!inum(1, s) || !size_by_index(plan, (int)s)) return err("no such size in the plan");
      for (const SizeWork& x : w.sizes) if (x.size == s) return err("size given twice");
      w.sizes.push_back(SizeWork());
      cur = &w.sizes.back();
      cur->size = (int)s;
    } else if (!cur) {
      return err("a record before the first size");
    } else if (k == "galloc") {
      unsigned long long id, bytes;
      if (!num(1, id) || !num(2, bytes) || id != cur->galloc_bytes.size() || bytes == 0 || bytes > WD_MAX_GALLOC) return err("bad galloc line");
      cur->galloc_bytes.push_back(bytes);
    } else if (k == "op") {
      unsigned long long idx;
      if (f.size() < 3 || !num(1, idx) || idx != cur->ops.size()) return err("ops must be numbered in order");
      if (cur->ops.size() >= WD_MAX_OPS) return err("more than " + std::to_string(WD_MAX_OPS) + " operations");
      Op op;
      const std::string& t = f[2];
      auto loc = [&](size_t i, Loc& l) -> bool {
        unsigned long long id, off, pitch;
        int kind = i < f.size() ? memkind_of(f[i]) : -1;
        if (kind < 0 || !num(i + 1, id) || !num(i + 2, off) || !num(i + 3, pitch)) return false;
        l.kind = kind; l.id = (int)id; l.offset = off; l.pitch = pitch;
        return true;
      };
      if (t == "kernel") {
        op.type = OP_KERNEL;
        unsigned long long v[13];
        long long carve;
        if (f.size() != 20) return err("a kernel needs 20 fields");
        for (int i = 0; i < 13; i++) {
          size_t fi = i == 0 ? 3 : (size_t)(i + 4);
          if (!num(fi, v[i])) return err("bad number in a kernel line");
        }
        if (!inum(17, carve)) return err("bad carveout");
        op.module = (int)v[0];
        op.name = f[4];
        for (int d = 0; d < 3; d++) { op.grid[d] = (unsigned)v[1 + d]; op.block[d] = (unsigned)v[4 + d]; op.cluster[d] = (unsigned)v[8 + d]; }
        op.shmem = (unsigned)v[7];
        op.coop = (int)v[11];
        op.maxdyn = (int)v[12];
        op.carveout = (int)carve;
        if ((size_t)op.module >= w.modules.size()) return err("kernel of an unknown module");
        if (op.name.empty() || op.name.size() > 4096) return err("bad kernel name");
        for (int d = 0; d < 3; d++) if (!op.grid[d] || !op.block[d]) return err("a zero grid or block dimension");
        if (f[18] != "-") {
          for (const std::string& pl : split(f[18], ',')) {
            size_t c = pl.find(':');
            if (c == std::string::npos) return err("bad parameter layout");
            op.param_offsets.push_back((unsigned)strtoul(pl.substr(0, c).c_str(), nullptr, 10));
            op.param_sizes.push_back((unsigned)strtoul(pl.substr(c + 1).c_str(), nullptr, 10));
          }
        }
        if (f[19] != "-" && !unhex(f[19], op.params)) return err("bad parameter bytes");
        if (op.params.size() > WD_MAX_PARAM_BYTES) return err("parameters over " + std::to_string(WD_MAX_PARAM_BYTES) + " bytes");
        for (size_t i = 0; i < op.param_sizes.size(); i++)
          if ((size_t)op.param_offsets[i] + op.param_sizes[i] > op.params.size() || op.param_sizes[i] == 0) return err("a parameter lies outside the parameter bytes");
      } else if (t == "memset") {
        op.type = OP_MEMSET;
        unsigned long long val, es, width, height;
        if (f.size() != 11 || !loc(3, op.dst) || !num(7, val) || !num(8, es) || !num(9, width) || !num(10, height)) return err("bad memset line");
        if (es != 1 && es != 2 && es != 4) return err("memset element size must be 1, 2 or 4");
        if (!device_kind(op.dst.kind)) return err("memset of host memory");
        op.value = (unsigned)val; op.elemsize = (unsigned)es; op.width = width; op.height = height ? height : 1;
      } else if (t == "memcpy") {
        op.type = OP_MEMCPY;
        unsigned long long width, height;
        if (f.size() != 13 || !loc(3, op.dst) || !loc(7, op.src) || !num(11, width) || !num(12, height)) return err("bad memcpy line");
        if (op.dst.kind == MK_BLOB || op.src.kind == MK_SINK) return err("blob memory is only a copy source, sink memory only a target");
        op.width = width; op.height = height ? height : 1;
      } else if (t == "empty") {
        op.type = OP_EMPTY;
      } else if (t == "malloc" || t == "free") {
        op.type = t == "malloc" ? OP_MALLOC : OP_FREE;
        unsigned long long g;
        if (!num(3, g) || g >= cur->galloc_bytes.size()) return err("unknown graph allocation");
        op.galloc = (int)g;
      } else {
        return err("unknown operation " + t);
      }
      cur->ops.push_back(op);
    } else if (k == "ptr") {
      if (cur->ops.empty() || cur->ops.back().type != OP_KERNEL) return err("a pointer outside a kernel");
      Op& op = cur->ops.back();
      unsigned long long at, id, off;
      int kind = f.size() > 2 ? memkind_of(f[2]) : -1;
      if (f.size() != 5 || !num(1, at) || kind < 0 || !device_kind(kind) || !num(3, id) || !num(4, off)) return err("bad ptr line");
      if (at + 8 > op.params.size()) return err("pointer outside the parameter bytes");
      op.ptrs.push_back(PtrRef{(unsigned)at, kind, (int)id, off});
    } else if (k == "dep") {
      unsigned long long a, b;
      if (!num(1, a) || !num(2, b) || b >= cur->ops.size() || a >= b) return err("bad dependency (ops are in topological order: from < to)");
      cur->ops[b].deps.push_back((int)a);
    } else {
      return err("unknown record " + k);
    }
  }
  if (!ended) return "the description is cut off (no end line)";
  unsigned long long scratch = 0, vars = 0;
  for (const Scratch& sc : w.scratch) scratch += sc.bytes;
  for (const GlobalVar& g : w.globals) vars += g.bytes;
  if (scratch > WD_MAX_SNAPSHOT || vars > WD_MAX_VARS) return "more than 256 MiB of workspaces or 64 MiB of device variables to carry over";
  // Every size of the plan must be there, and every reference must name memory that exists.
  for (const Size& s : plan.sizes) {
    const SizeWork* sw = nullptr;
    for (const SizeWork& x : w.sizes) if (x.size == s.index) sw = &x;
    if (!sw) return "no work for size " + std::to_string(s.index);
    unsigned long long galloc_total = 0;
    for (unsigned long long g : sw->galloc_bytes) galloc_total += g;
    if (galloc_total > WD_MAX_GALLOC) return "size " + std::to_string(s.index) + ": more than 16 GiB of graph allocations";
    auto extent_ok = [&](const Loc& l, unsigned long long bytes_needed, bool for_ptr) -> std::string {
      unsigned long long cap = 0;
      if (l.kind == MK_ARG) {
        if (l.id < 0 || (size_t)l.id >= s.args.size() || !s.args[l.id].buffer) return "argument " + std::to_string(l.id) + " is not a buffer";
        cap = s.args[l.id].elements * dtype_bytes(s.args[l.id].dtype) + (for_ptr ? GUARD_BYTES : 0);
      } else if (l.kind == MK_SCRATCH) {
        if (l.id < 0 || (size_t)l.id >= w.scratch.size()) return "unknown scratch " + std::to_string(l.id);
        cap = w.scratch[l.id].bytes;
      } else if (l.kind == MK_GLOBAL) {
        if (l.id < 0 || (size_t)l.id >= w.globals.size()) return "unknown global " + std::to_string(l.id);
        cap = w.globals[l.id].bytes;
      } else if (l.kind == MK_GALLOC) {
        if ((size_t)l.id >= sw->galloc_bytes.size()) return "unknown graph allocation " + std::to_string(l.id);
        cap = sw->galloc_bytes[l.id];
      } else if (l.kind == MK_BLOB) {
        cap = w.blob.size();
      } else {
        return "";  // sink: host memory of the executor's own, sized on use
      }
      if (l.offset > cap || bytes_needed > cap - l.offset) return std::string(MEMKIND_NAMES[l.kind]) + " " + std::to_string(l.id) + ": " + std::to_string(bytes_needed) + " bytes at offset " + std::to_string(l.offset) + " lie outside its " + std::to_string(cap) + " bytes";
      return "";
    };
    for (size_t i = 0; i < sw->ops.size(); i++) {
      const Op& op = sw->ops[i];
      std::string where = "size " + std::to_string(s.index) + ", op " + std::to_string(i) + " (" + OP_NAMES[op.type] + "): ";
      std::string e;
      if (op.type == OP_KERNEL) {
        for (const PtrRef& p : op.ptrs) {
          Loc l; l.kind = p.kind; l.id = p.id; l.offset = p.offset;
          if (!(e = extent_ok(l, 0, true)).empty()) return where + e;
        }
      } else if (op.type == OP_MEMSET) {
        unsigned long long rowb = op.width * op.elemsize;
        unsigned long long need = op.height > 1 ? op.dst.pitch * (op.height - 1) + rowb : rowb;
        if (op.height > 1 && op.dst.pitch < rowb) return where + "pitch smaller than a row";
        if (!(e = extent_ok(op.dst, need, false)).empty()) return where + e;
      } else if (op.type == OP_MEMCPY) {
        unsigned long long nd = op.height > 1 ? op.dst.pitch * (op.height - 1) + op.width : op.width;
        unsigned long long ns = op.height > 1 ? op.src.pitch * (op.height - 1) + op.width : op.width;
        if (op.height > 1 && (op.dst.pitch < op.width || op.src.pitch < op.width)) return where + "pitch smaller than a row";
        if (!(e = extent_ok(op.dst, nd, false)).empty() || !(e = extent_ok(op.src, ns, false)).empty()) return where + e;
        if (op.dst.kind == MK_SINK && nd > (1ull << 30)) return where + "a copy of more than 1 GiB to host memory";
      }
    }
  }
  return "";
}

// The file that holds run-time code module <i> of the description at <desc>: always beside the
// description (the path is never taken from the description itself).
static std::string code_path(const std::string& desc, size_t i) { return desc + ".code" + std::to_string(i); }

// Reads run-time code module <i> of the description at <desc> (its size must be the declared one, and
// it must be an ELF image: a cubin as the driver loaded it). False with a reason otherwise.
static bool read_code(const std::string& desc, size_t i, const ModuleRef& m, std::vector<unsigned char>& out, std::string& why) {
  std::string p = code_path(desc, i);
  if (!read_file(p, out, WD_MAX_CODE, &why)) { why = "run-time code " + std::to_string(i) + ": " + why; return false; }
  if (out.size() != m.bytes) { why = "run-time code " + std::to_string(i) + ": " + p + " has " + std::to_string(out.size()) + " bytes, the description says " + std::to_string(m.bytes); return false; }
  if (out.size() < 64 || memcmp(out.data(), "\x7f" "ELF", 4) != 0) { why = "run-time code " + std::to_string(i) + ": " + p + " is not a device code image (no ELF header)"; return false; }
  return true;
}
