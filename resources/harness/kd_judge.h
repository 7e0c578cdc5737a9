// Judge: the process that produces every number KernelDuel reports, and that never runs variant
// code of any kind. It is long-lived (one per evaluator: task, GPU, check seeds); it runs the
// trusted reference (its library is dlopen'ed here), keeps reference outputs on its GPU, starts one
// executor per variant (two for a duel), tells each what to run and when, reads every buffer of
// theirs through CUDA IPC and compares on the GPU, and decides when timing has converged.
//
// Why this is safe against a variant that tries to cheat (docs/ISOLATION.md):
//  - a variant's host code runs only in the capture process; here and in the executors none does,
//    so nothing can patch the timer, the samples, the results or the other side of a duel;
//  - a variant's device code runs only in its own executor: a separate process, so a separate GPU
//    address space, holding nothing but that variant's buffers (no reference, no opponent);
//  - every timed call gets inputs the variant has never seen (a fresh seed per sample, written by
//    the executor's trusted code after the variant's host code last ran), every output and inout
//    buffer is re-initialised before each call, and timed calls chosen at random (and the last)
//    are verified element by element against the reference.
//
// Commands on stdin, one per line, fields separated by tabs; one JSON result line each on stdout:
//   eval <id> <lib> <description> <time 0|1> <check ms> <time ms>
//                 (when timed: after the check, an event line {"event":"time"}; the judge then
//                 waits for a line "go" before it times, or "stop")
//   duel <id> <libA> <descA> <libB> <descB> <time ms>
//   quit
#pragma once
#include "kd_workdesc.h"
#include "kd_compare.h"
#include "kd_fatbin.h"
#include "kd_nvml.h"
#include "kd_reffiles.h"
#include <spawn.h>
#include <poll.h>
#include <sys/wait.h>
#include <sys/prctl.h>
extern char** environ;

typedef void (*ref_entry_fn)(void**);
static std::string g_self_exe, g_plan_path;

struct JExec {
  pid_t pid = -1;
  bool up = false;  // CUDA is up in it (it said so)
  int to = -1, from = -1;
  std::string buf;
  std::vector<std::vector<void*>> msets;  // per buffer set, per argument: the executor's buffer, opened through IPC (null for scalars)
  std::vector<void*> opened;              // the allocations opened through IPC (msets point into them)
  std::vector<void*> mapped;              // the set of the last sample
  int size = -1;
  std::string who;  // "" or "A: " / "B: " in messages
};
static void jexec_unmap(JExec& e) {
  for (void* p : e.opened) cudaIpcCloseMemHandle(p);
  e.opened.clear();
  e.msets.clear();
  e.mapped.clear();
}
static void jexec_kill(JExec& e) {
  jexec_unmap(e);
  if (e.to >= 0) close(e.to);
  if (e.from >= 0) close(e.from);
  e.to = e.from = -1;
  if (e.pid > 0) {
    kill(e.pid, SIGKILL);
    int st;
    waitpid(e.pid, &st, 0);
  }
  e.pid = -1;
}
// One line from the executor, or a failure: timeout (killed) or death (with how it died).
static std::string jexec_read(JExec& e, double deadline, const std::string& what) {
  for (;;) {
    size_t nl = e.buf.find('\n');
    if (nl != std::string::npos) {
      std::string line = e.buf.substr(0, nl);
      e.buf.erase(0, nl + 1);
      return line;
    }
    double left = deadline - now_ms();
    if (left <= 0) {
      jexec_kill(e);
      fail("timeout", e.who + what + " did not finish in time (the executor was killed): a hang or an infinite loop");
    }
    pollfd p{e.from, POLLIN, 0};
    int r = poll(&p, 1, (int)std::min(left, 1000.0) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char b[65536];
    ssize_t n = read(e.from, b, sizeof b);
    if (n > 0) { e.buf.append(b, (size_t)n); continue; }
    int st = 0;
    pid_t pid = e.pid;
    e.pid = -1;
    if (pid > 0) waitpid(pid, &st, 0);
    jexec_kill(e);
    std::string how = WIFSIGNALED(st) ? std::string("was killed by signal ") + std::to_string(WTERMSIG(st)) : "exited with code " + std::to_string(WEXITSTATUS(st));
    fail("runtime", e.who + "the executor " + how + " during " + what);
  }
}
// Sends a command and returns the rest of an "ok" answer; a "fail" answer becomes a failure.
static std::string jexec_call(JExec& e, const std::string& cmd, double deadline, const std::string& what) {
  std::string c = cmd + "\n";
  if (write(e.to, c.data(), c.size()) != (ssize_t)c.size()) fail("runtime", e.who + "the executor is gone (" + what + ")");
  std::string line = jexec_read(e, deadline, what);
  if (line.rfind("ok", 0) == 0 || line.rfind("ready", 0) == 0) return line.substr(line.find(' ') == std::string::npos ? line.size() : line.find(' ') + 1);
  if (line.rfind("fail ", 0) == 0) {
    std::string rest = line.substr(5);
    size_t sp = rest.find(' ');
    std::string status = rest.substr(0, sp), msg = sp == std::string::npos ? "" : rest.substr(sp + 1);
    jexec_kill(e);
    fail(status.empty() ? "runtime" : status, e.who + msg);
  }
  jexec_kill(e);
  fail("runtime", e.who + "the executor answered " + line.substr(0, 120));
}
// Starts an executor process (CUDA comes up in it before it is given a variant).
static void jexec_spawn(JExec& e) {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) fail("runtime", "pipe: " + std::string(strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  std::string a0 = g_self_exe, a1 = "exec", a2 = g_plan_path;
  char* argv[] = {(char*)a0.c_str(), (char*)a1.c_str(), (char*)a2.c_str(), nullptr};
  int r = posix_spawn(&e.pid, g_self_exe.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(to[0]);
  close(from[1]);
  if (r != 0) {
    close(to[1]);
    close(from[0]);
    e.pid = -1;
    fail("runtime", "cannot start an executor: " + std::string(strerror(r)));
  }
  e.to = to[1];
  e.from = from[0];
  e.buf.clear();
  e.up = false;
}
// Whether a spare has CUDA up, or has said something (its "up" line, or its end) not yet read:
// taking it costs no wait for a context.
static bool spare_ready(const JExec& sp) {
  if (sp.pid <= 0) return false;
  if (sp.up || sp.buf.find('\n') != std::string::npos) return true;
  pollfd p{sp.from, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}
// An executor for a variant: one started ahead of need if one is alive (one whose CUDA is up before
// one still starting it: the spare spawned after the last command may still be making its context
// while the other has been up for a while), else a new one. Returns where it came from: "spare",
// "spare-starting" (a spare still making its context: the wait is in the caller's time) or "new".
static const char* jexec_start(JExec& e, JExec* spares, const std::string& desc, double deadline) {
  std::string who = e.who;
  JExec* spare = spare_ready(spares[0]) ? &spares[0] : spare_ready(spares[1]) ? &spares[1] : spares[0].pid > 0 ? &spares[0] : spares[1].pid > 0 ? &spares[1] : nullptr;
  const char* from = spare ? (spare_ready(*spare) ? "spare" : "spare-starting") : "new";
  if (spare) {
    e = *spare;
    *spare = JExec();
  } else {
    jexec_spawn(e);
  }
  e.who = who;
  try {
    if (!e.up) {
      std::string line = jexec_read(e, deadline, "starting CUDA in an executor");
      if (line.rfind("fail ", 0) == 0) fail("runtime", e.who + "an executor could not start CUDA: " + line.substr(5));
      e.up = true;
    }
  } catch (HarnessFailure& f) {
    // The executor started ahead of need died: one more try with a new one.
    if (e.pid > 0 || f.status == "timeout") throw;
    jexec_spawn(e);
    e.who = who;
    std::string line = jexec_read(e, deadline, "starting CUDA in an executor");
    if (line.rfind("fail ", 0) == 0) fail("runtime", e.who + "an executor could not start CUDA: " + line.substr(5));
    e.up = true;
  }
  jexec_call(e, "load " + desc, deadline, "loading the variant's device code");
  return from;
}
// Fresh buffers in the executor for a size (nsets sets of them), mapped here.
static void jexec_alloc(JExec& e, const Size& s, double deadline, int nsets = 1) {
  std::string h = jexec_call(e, "alloc " + std::to_string(s.index) + " " + std::to_string(nsets), deadline, "allocating buffers");
  std::vector<std::string> hs = split(h, ' ');
  if (hs.size() != s.args.size() * nsets) fail("runtime", e.who + "the executor answered " + std::to_string(hs.size()) + " handles for " + std::to_string(s.args.size()) + " arguments in " + std::to_string(nsets) + " sets");
  jexec_unmap(e);
  e.msets.assign(nsets, std::vector<void*>(s.args.size(), nullptr));
  for (size_t k = 0; k < hs.size(); k++) {
    if (hs[k] == "-") continue;
    std::vector<unsigned char> raw;
    const size_t plus = hs[k].find('+');
    char* end = nullptr;
    const unsigned long long off = plus == std::string::npos ? 0 : strtoull(hs[k].c_str() + plus + 1, &end, 10);
    if (plus == std::string::npos || !end || *end || off > SPREAD_SPAN + GUARD_BYTES || !unhex(hs[k].substr(0, plus), raw) || raw.size() != sizeof(cudaIpcMemHandle_t))
      fail("runtime", e.who + "bad IPC handle from the executor");
    cudaIpcMemHandle_t mh;
    memcpy(&mh, raw.data(), sizeof mh);
    void* p = nullptr;
    CK(cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess));
    e.opened.push_back(p);
    e.msets[k / s.args.size()][k % s.args.size()] = (unsigned char*)p + off;
  }
  e.mapped = e.msets[0];
  e.size = s.index;
}
// One run of the work on buffer set `set`: untimed (checks, warm-up) or timed; returns {event ms, wall ms}.
static std::pair<double, double> jexec_sample(JExec& e, unsigned long long seed, bool timed, int pv, double deadline, const std::string& what, int set = 0) {
  if (set < 0 || set >= (int)e.msets.size()) fail("runtime", e.who + "no buffer set " + std::to_string(set));
  e.mapped = e.msets[set];
  std::string r = jexec_call(e, "sample " + std::to_string(seed) + (timed ? " 1 " : " 0 ") + std::to_string(pv) + " " + std::to_string(set), deadline, what);
  double ev = 0, wall = 0;
  if (sscanf(r.c_str(), "%lf %lf", &ev, &wall) != 2) fail("runtime", e.who + "bad answer from the executor: " + r.substr(0, 80));
  return {ev, wall};
}

// ---------------------------------------------------------------------------------------------
struct Judge;
static void judge_write_inputs(Judge& J, JExec& e, const Size& s, unsigned long long seed, int set);
// One run of the work (as jexec_sample); with reference data from files, the sample's inputs are
// first written into the executor's buffers of that set, from this process (through CUDA IPC).
static std::pair<double, double> judge_sample(Judge& J, JExec& e, const Size& s, unsigned long long seed, bool timed, int pv, double deadline, const std::string& what, int set = 0) {
  judge_write_inputs(J, e, s, seed, set);
  return jexec_sample(e, seed, timed, pv, deadline, what, set);
}

struct Judge {
  Plan plan;
  JExec spares[2];  // executors started ahead of need (CUDA up, no variant yet): enough for a duel
  // Executors that ran a variant and passed, kept with its device code loaded (most recent last):
  // the duel after an evaluation, and duels against the same best variant, reuse them instead of
  // starting new processes. Each still holds only its own variant's code and buffers.
  std::vector<std::pair<std::string, JExec>> idle;
  ref_entry_fn ref = nullptr;
  std::map<int, Bufs> jbufs;  // per size: the reference's buffers
  std::map<std::pair<int, unsigned long long>, std::vector<void*>> refs;  // cached reference outputs
  size_t cached_bytes = 0, cache_cap = 0;
  std::vector<std::string> code_roots;  // where library device code may come from
  std::string work_root;
  // Reference data from files (plan: reference files): per (size, sample id), per argument, the
  // device copy of its input (role in) or expected output (role out); no reference library.
  std::map<std::pair<int, unsigned long long>, std::vector<void*>> file_in, file_out;
  size_t file_bytes = 0;
};
static bool from_files(const Judge& J) { return J.plan.refs.on; }

// Loads the plan's reference data onto this GPU: every file read once and checked (length, sha256)
// on the host, then uploaded; a file shared by samples (the weights) is uploaded once.
static void judge_load_files(Judge& J) {
  std::map<std::string, std::vector<unsigned char>> data = ref_read_all(J.plan);
  size_t bytes = 0;
  for (auto& kv : data) bytes += kv.second.size();
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b / 2) fail("runtime", "reference data: " + std::to_string(bytes >> 20) + " MiB would take more than half of the GPU's free memory (" + std::to_string(free_b >> 20) + " MiB): use a smaller size");
  std::map<std::string, void*> dev;
  for (auto& kv : data) {
    void* d = nullptr;
    CK(cudaMalloc(&d, std::max<size_t>(kv.second.size(), 1)));
    if (!kv.second.empty()) CK(cudaMemcpy(d, kv.second.data(), kv.second.size(), cudaMemcpyHostToDevice));
    std::vector<unsigned char>().swap(kv.second);
    dev[kv.first] = d;
  }
  for (const RefFile& f : J.plan.refs.files) {
    const Size* s = size_by_index(J.plan, f.size);
    auto key = std::make_pair(f.size, (unsigned long long)f.id);
    std::vector<void*>& in = J.file_in[key];
    std::vector<void*>& out = J.file_out[key];
    if (in.empty()) { in.assign(s->args.size(), nullptr); out.assign(s->args.size(), nullptr); }
    (s->args[f.arg].role == 0 ? in : out)[f.arg] = dev[f.rel];
  }
  J.file_bytes = bytes;
}
static const std::vector<void*>& file_data(std::map<std::pair<int, unsigned long long>, std::vector<void*>>& m, const Size& s, unsigned long long id) {
  auto it = m.find({s.index, id});
  if (it == m.end()) fail("runtime", "reference data: no " + ref_key(s.index, (int)id));
  return it->second;
}
static void judge_write_inputs(Judge& J, JExec& e, const Size& s, unsigned long long seed, int set) {
  if (!from_files(J)) return;
  if (set < 0 || set >= (int)e.msets.size()) fail("runtime", e.who + "no buffer set " + std::to_string(set));
  const std::vector<void*>& in = file_data(J.file_in, s, seed);
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer || a.role != 0) continue;
    CK(cudaMemcpy(e.msets[set][i], in[i], a.elements * dtype_bytes(a.dtype), cudaMemcpyDeviceToDevice));
  }
  CK(cudaDeviceSynchronize());
}
// The inputs of a call: a fresh seed (inputs generated by the executor), or with reference data
// from files a timing sample drawn at random (the pool rotates; see isolation_json).
static unsigned long long judge_fresh(Judge& J, const Size& s) {
  if (!from_files(J)) return fresh_seed();
  std::vector<unsigned long long> ids = ref_ids(J.plan, s.index, true);
  if (ids.empty()) fail("runtime", "reference data: size " + std::to_string(s.index) + " has no timing sample");
  return ids[random_u64() % ids.size()];
}
static Bufs& judge_bufs(Judge& J, const Size& s) {
  auto it = J.jbufs.find(s.index);
  if (it != J.jbufs.end()) return it->second;
  Bufs b;
  alloc_bufs(b, s);
  return J.jbufs[s.index] = b;
}
// The reference's outputs (and final inout values) for a size and seed, computed here: kept for the
// check seeds (every variant is checked on them), and only until the next computation for the fresh
// seeds of timed calls.
static std::vector<void*> g_fresh_ref;
static std::pair<int, unsigned long long> g_fresh_key{-1, 0};
static const std::vector<void*>& ref_outputs(Judge& J, const Size& s, unsigned long long seed, bool keep) {
  if (from_files(J)) return file_data(J.file_out, s, seed);
  auto key = std::make_pair(s.index, seed);
  auto it = J.refs.find(key);
  if (it != J.refs.end()) return it->second;
  if (!keep && g_fresh_key == key) return g_fresh_ref;  // the other side of the same duel pair
  Bufs& b = judge_bufs(J, s);
  g_fresh_key = {-1, 0};  // the reference's buffers are about to be overwritten
  prepare(b, s, seed, 0);
  CK(cudaDeviceSynchronize());
  { std::vector<void*> args = packed(b); J.ref(args.data()); }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) fail("runtime", "the task's reference failed (size " + std::to_string(s.index) + "): " + cudaGetErrorString(e));
  if (!keep) {
    g_fresh_key = key;
    g_fresh_ref.assign(s.args.size(), nullptr);
    for (size_t i = 0; i < s.args.size(); i++) if (s.args[i].buffer && s.args[i].role != 0) g_fresh_ref[i] = b.dev[i];
    return g_fresh_ref;
  }
  std::vector<void*> out(s.args.size(), nullptr);
  size_t bytes = 0;
  for (size_t i = 0; i < s.args.size(); i++) if (s.args[i].buffer && s.args[i].role != 0) bytes += b.bytes[i];
  for (size_t i = 0; i < s.args.size(); i++) {
    if (!s.args[i].buffer || s.args[i].role == 0) continue;
    CK(cudaMalloc(&out[i], b.bytes[i]));
    CK(cudaMemcpy(out[i], b.dev[i], b.bytes[i], cudaMemcpyDeviceToDevice));
  }
  J.cached_bytes += bytes;
  return J.refs[key] = out;
}

// Checks an executor's buffers after a run with `seed`: guards intact, inputs unchanged, every
// output element against the reference. A memory violation is returned at once (as a message);
// output mismatches are recorded in *checks (when given) and the first one in first_fail.
static std::string verify(Judge& J, JExec& e, const Size& s, unsigned long long seed, bool keep_ref, std::string* checks, bool& first_check, std::string& first_fail, const std::string& when) {
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer) continue;
    size_t bytes = a.elements * dtype_bytes(a.dtype), first = 0;
    size_t changed = count_diff((const unsigned char*)e.mapped[i] + bytes, nullptr, GUARD_BYTES, GUARD_BYTE, &first);
    if (changed) {
      char m[512];
      snprintf(m, sizeof m, "%s%s: out-of-bounds write: %zu of the %zu bytes after the end of %s were overwritten (first at byte %zu past the end, size %d%s); it would corrupt a neighbouring buffer",
               e.who.c_str(), a.name.c_str(), changed, (size_t)GUARD_BYTES, a.name.c_str(), first, s.index, when.c_str());
      return m;
    }
    if (spread(bytes)) {
      // The guard before a small buffer (kd_buffers.h): `first` counts from its start.
      changed = count_diff((const unsigned char*)e.mapped[i] - GUARD_BYTES, nullptr, GUARD_BYTES, GUARD_BYTE, &first);
      if (changed) {
        char m[512];
        snprintf(m, sizeof m, "%s%s: out-of-bounds write: %zu of the %zu bytes before the start of %s were overwritten (the farthest %zu bytes before the start, size %d%s); it would corrupt a neighbouring buffer",
                 e.who.c_str(), a.name.c_str(), changed, (size_t)GUARD_BYTES, a.name.c_str(), GUARD_BYTES - first, s.index, when.c_str());
        return m;
      }
    }
  }
  const std::vector<void*>& ref = ref_outputs(J, s, seed, keep_ref);
  const bool files = from_files(J);
  Bufs* jb = files ? nullptr : &judge_bufs(J, s);
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer || a.role != 0) continue;
    const void* expect = files ? file_data(J.file_in, s, seed)[i] : jb->dev[i];
    if (!files && keep_ref) fill(jb->dev[i], a, seed, (int)i);  // else the reference just ran on them (a const input)
    CK(cudaDeviceSynchronize());
    size_t first = 0;
    if (count_diff(e.mapped[i], expect, a.elements * dtype_bytes(a.dtype), 0, &first))
      return e.who + a.name + ": the variant wrote to its input buffer " + a.name + " (inputs must be left unchanged; first change at byte " + std::to_string(first) + "), size " + std::to_string(s.index) + when;
  }
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer || a.role == 0) continue;
    const Tol& tol = J.plan.tol[a.dtype];
    CompareStats cs = compare_device(a.dtype, e.mapped[i], ref[i], a.elements, tol);
    double relL2 = cs.den > 0 ? sqrt(cs.num / cs.den) : sqrt(cs.num);
    if (checks) {
      if (!first_check) *checks += ",";
      first_check = false;
      *checks += "{\"buffer\":" + jstr(a.name) + ",\"size\":" + std::to_string(s.index) + ",\"seed\":" + std::to_string(seed) + ",\"elements\":" + std::to_string(a.elements) +
                 ",\"mismatches\":" + std::to_string(cs.bad) + ",\"maxAbsErr\":" + jnum(cs.maxabs) + ",\"maxRelErr\":" + jnum(cs.maxrel) + ",\"relL2\":" + jnum(relL2);
      if (cs.first >= 0) *checks += ",\"firstBad\":{\"index\":" + std::to_string(cs.first) + ",\"expected\":" + jnum(cs.fe) + ",\"got\":" + jnum(cs.fg) + "}";
      *checks += "}";
    }
    if (cs.bad && first_fail.empty()) {
      char m[768];
      std::string es = num_text(cs.fe), gs = num_text(cs.fg);
      snprintf(m, sizeof m, "%s%s[%lld]: expected %s got %s (size %d, seed %llu; %zu of %zu elements wrong, tolerance rtol %g atol %g)%s", e.who.c_str(), a.name.c_str(), cs.first, es.c_str(), gs.c_str(),
               s.index, seed, cs.bad, a.elements, tol.rtol, tol.atol, when.c_str());
      first_fail = m;
    }
  }
  return "";
}

// The judge's answer to one command.
struct Verdict {
  std::string status = "ok", error, stage, body;
};
static void emit(const std::string& id, const Verdict& v) {
  std::string out = "{\"id\":" + jstr(id) + ",\"kdresult\":1,\"status\":" + jstr(v.status);
  if (!v.stage.empty()) out += ",\"stage\":" + jstr(v.stage);
  if (!v.error.empty()) out += ",\"error\":" + jstr(v.error);
  out += ",\"body\":{" + v.body + "}}\n";
  fputs(out.c_str(), stdout);
  fflush(stdout);
}
static void emit_event(const std::string& id, const std::string& stage) {
  printf("{\"id\":%s,\"event\":%s}\n", jstr(id).c_str(), jstr(stage).c_str());
  fflush(stdout);
}

// Device code only from the variant's own library or from libraries outside KernelDuel's work
// folder in the allowed roots (the CUDA toolkit, the system's library folders): never another
// variant's build.
static void check_code_sources(const Judge& J, const std::string& lib, const std::string& desc) {
  std::vector<unsigned char> text, blob;
  std::string why;
  if (!read_file(desc, text, 64u << 20, &why) || !read_file(desc + ".blob", blob, (size_t)WD_MAX_BLOB, &why)) fail("runtime", "cannot read the captured work: " + why);
  WorkDesc w;
  std::string err = read_workdesc(std::string(text.begin(), text.end()), blob, J.plan, w);
  if (!err.empty()) fail("constraints", "the captured work does not hold together: " + err);
  char a[PATH_MAX], b[PATH_MAX];
  std::string own = realpath(lib.c_str(), a) ? a : lib;
  for (const ModuleRef& m : w.modules) {
    // Run-time code (a library's, reported by the driver when it was loaded) lies beside the
    // description; the executor reads it from there only, never from a path the description names.
    if (m.runtime) continue;
    std::string p = realpath(m.path.c_str(), b) ? b : m.path;
    if (p == own) continue;
    bool in_work = !J.work_root.empty() && p.rfind(J.work_root + "/", 0) == 0;
    bool allowed = false;
    for (const std::string& r : J.code_roots) allowed |= !r.empty() && p.rfind(r + "/", 0) == 0;
    if (in_work || !allowed) fail("constraints", "the entry point ran device code from " + p + ", which is neither the variant's own library nor a library of the CUDA toolkit or the system");
  }
}

// Executors started ahead of need must have CUDA up before anything is timed: their start must not
// overlap a timed call.
static double spares_up(Judge& J, double deadline) {
  const double t0 = now_ms();
  for (JExec& sp : J.spares) {
    if (sp.pid <= 0 || sp.up) continue;
    try {
      std::string line = jexec_read(sp, deadline, "starting CUDA in an executor");
      if (line.rfind("up", 0) == 0) sp.up = true;
      else jexec_kill(sp);
    } catch (HarnessFailure&) {
      sp = JExec();  // it died or hung: the next command starts a new one
    }
  }
  return now_ms() - t0;
}

// How many sets of buffers timed calls of a size rotate over (plan: sets), fewer when they would
// take more than a quarter of the free GPU memory together (`executors` executors hold them).
static int timing_sets(const Judge& J, const Size& s, int executors) {
  size_t bytes = 0;
  for (const Arg& a : s.args) if (a.buffer) bytes += buffer_footprint(a.elements * dtype_bytes(a.dtype));
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 1;
  size_t fit = bytes ? free_b / 4 / (bytes * (size_t)executors) : (size_t)J.plan.sets;
  return (int)std::max<size_t>(1, std::min<size_t>((size_t)std::max(J.plan.sets, 1), fit));
}

// An executor for the variant of `desc`: one kept idle with it loaded ("idle"), else a spare (or a
// new one; see jexec_start).
static const char* judge_exec(Judge& J, JExec& e, const std::string& desc, double deadline) {
  for (size_t i = J.idle.size(); i-- > 0;) {
    if (J.idle[i].first != desc || J.idle[i].second.pid <= 0) continue;
    int st = 0;
    if (waitpid(J.idle[i].second.pid, &st, WNOHANG) != 0) {  // it ended while idle: not used
      J.idle[i].second.pid = -1;
      jexec_kill(J.idle[i].second);
      J.idle.erase(J.idle.begin() + (long)i);
      continue;
    }
    std::string who = e.who;
    e = J.idle[i].second;
    e.who = who;
    J.idle.erase(J.idle.begin() + (long)i);
    return "idle";
  }
  return jexec_start(e, J.spares, desc, deadline);
}
// Keeps an executor that passed for later use (at most two; the one kept longest ago goes).
static void judge_keep(Judge& J, const std::string& desc, JExec& e) {
  if (e.pid <= 0) return;
  jexec_unmap(e);
  J.idle.emplace_back(desc, e);
  e = JExec();
  while (J.idle.size() > 2) {
    jexec_kill(J.idle.front().second);
    J.idle.erase(J.idle.begin());
  }
}

static std::string isolation_json(const Judge& J) {
  std::string refs = "judge: reference outputs only in a process that runs no variant code";
  if (from_files(J)) {
    size_t t = 0;
    for (const RefSample& r : J.plan.refs.samples) t += r.timing;
    refs = "files: PyTorch's outputs computed before any variant ran, kept only by the judge; timed calls rotate " + std::to_string(t) + " timing samples (a cache keyed on input contents could hit after the first calls)";
  }
  return "\"isolation\":{\"refs\":" + jstr(refs) + ",\"measurement\":\"executor: the variant's device code only, rebuilt from its captured work\"}";
}

static Verdict judge_eval(Judge& J, const std::string& id, const std::string& lib, const std::string& desc, bool timed, double check_ms, double time_ms) {
  Verdict v;
  JExec ex;
  std::vector<JExec> more;  // plan timectx N: the other N - 1 executors the timed calls rotate over
  std::string checks = "[";
  bool first_check = true;
  std::string first_fail;
  v.stage = "check";
  try {
    check_code_sources(J, lib, desc);
    double deadline = now_ms() + check_ms;
    const double x0 = now_ms();
    const char* ex_from = judge_exec(J, ex, desc, deadline);
    // Where the check's executor came from and how long getting it took (CUDA up, the variant's
    // code loaded): a spare still making its context costs the check ~150-250 ms (H100).
    const std::string executor = ",\"executor\":{\"from\":\"" + std::string(ex_from) + "\",\"ms\":" + jnum(now_ms() - x0) + "}";
    int call_no = 0;
    for (const Size& s : J.plan.sizes) {
      // One set of buffers per size (new addresses for every size): every call of it gets fresh
      // inputs, poisoned outputs and restored state anyway.
      jexec_alloc(ex, s, deadline);
      for (unsigned long long seed : seeds_of(J.plan, s)) {
        judge_sample(J, ex, s, seed, false, call_no++, deadline, "the check (size " + std::to_string(s.index) + ")");
        std::string mv = verify(J, ex, s, seed, true, &checks, first_check, first_fail, "");
        if (!mv.empty()) fail("correctness", mv);
      }
    }
    checks += "]";
    v.body = isolation_json(J) + executor + ",\"checks\":" + checks;
    if (!first_fail.empty()) {
      jexec_kill(ex);
      v.status = "correctness";
      v.error = first_fail;
      return v;
    }
    if (!timed) {
      jexec_kill(ex);
      return v;
    }
    v.stage = "time";
    // The other executors of plan timectx get the variant's code before timing starts: loading
    // it is not on the GPU's timed path.
    more.resize((size_t)std::max(J.plan.time_ctx - 1, 0));
    for (size_t k = 0; k < more.size(); k++) {
      more[k].who = "executor " + std::to_string(k + 2) + ": ";
      judge_exec(J, more[k], desc, now_ms() + check_ms);
    }
    emit_event(id, "time");
    // Timing starts when the engine says "go": once the GPU is this judge's alone (other variants'
    // captures and checks may run beside a check, never beside timing); "stop" ends it here.
    // "go" or "go CUTOFF": with a cutoff (ms, > 0), the first timed size's timing stops once the
    // lower bound of its median's 95% CI lies above it (the engine sends a multiple of the best's
    // median: a variant decidedly that much slower needs no precise time).
    double cutoff_ms = 0;
    {
      std::string go;
      if (!read_line(stdin, go) || (go != "go" && go.rfind("go ", 0) != 0)) fail("runtime", "timing was called off by the engine" + (go.empty() ? std::string() : " (" + go.substr(0, 40) + ")"));
      if (go.size() > 3) {
        char* end = nullptr;
        cutoff_ms = strtod(go.c_str() + 3, &end);
        if (end == go.c_str() + 3 || *end != 0 || !(cutoff_ms >= 0) || !std::isfinite(cutoff_ms)) fail("runtime", "the engine's go line has a bad cutoff (" + go.substr(0, 40) + ")");
      }
    }
    bool first_timed = true;
    deadline = now_ms() + time_ms;
    const double spares_wait = J.plan.spare_wait ? spares_up(J, deadline) : 0;
    // Clocks just before and just after the measurement, never while it times.
    ClockReading clocks_start = read_clocks();
    std::string timings = "[";
    size_t flush = flush_size(J.plan);
    for (const Size& s : J.plan.sizes) {
      if (!is_timed(J.plan, s.index)) continue;
      // Timed call i runs on executor i mod N and on that executor's set (i / N) mod sets: call i
      // on placement i mod (N * sets), as the timing's bufferSets field says.
      std::vector<JExec*> exs{&ex};
      for (JExec& m : more) exs.push_back(&m);
      const int nctx = (int)exs.size();
      int nsets = timing_sets(J, s, nctx), next_set = 0;
      const double setup0 = now_ms();  // buffer sets and warm-up: setupMs
      for (JExec* e : exs) jexec_alloc(*e, s, deadline, nsets);
      int pv = 0;
      int warm = 0;
      for (JExec* e : exs) {
        double w0 = now_ms();
        int w = 0;
        do {
          judge_sample(J, *e, s, judge_fresh(J, s), false, pv++, deadline, "warm-up", w % nsets);
          w++;
        } while ((now_ms() - w0 < J.plan.warmup_ms / nctx || w < std::max(3, 2 * nsets)) && w < 100000);
        warm += w;
      }
      std::vector<double> ev, wall;
      double start = now_ms(), verify_ms = 0, med = 0;
      bool converged = false, cut = false;
      const double cutoff = first_timed ? cutoff_ms : 0;
      first_timed = false;
      int verified = 0;
      // Every timed call runs on a fresh seed; each is verified with probability 1/8, decided after
      // it ran (the variant cannot know which), over the whole run; so is the last, whose position
      // is made unpredictable by a random number of calls after the stopping rule is met.
      auto timed_sample = [&](bool force_check) {
        unsigned long long seed = judge_fresh(J, s);
        JExec& e = *exs[ev.size() % nctx];
        auto t = judge_sample(J, e, s, seed, true, pv++, deadline, "timing", next_set);
        if (ev.size() % nctx == (size_t)nctx - 1) next_set = (next_set + 1) % nsets;
        ev.push_back(t.first);
        wall.push_back(t.second);
        if (force_check || random_u64() % 8 == 0) {
          double v0 = now_ms();
          std::string ff;
          bool fc = true;
          std::string when = " in timed call " + std::to_string(ev.size()) + ": the outputs were right in the check but not in a call timed on inputs the variant had not seen: results cached, work skipped, or state kept between calls";
          std::string mv = verify(J, e, s, seed, false, nullptr, fc, ff, when);
          if (!mv.empty()) fail("correctness", mv);
          if (!ff.empty()) fail("correctness", ff);
          verified++;
          verify_ms += now_ms() - v0;
        }
      };
      while ((int)ev.size() < J.plan.max_samples) {
        timed_sample(false);
        double el = now_ms() - start - verify_ms;
        if ((int)ev.size() >= J.plan.min_samples && ev.size() % 5 == 0) {
          double low = 0;
          double noise = median_noise(ev, &med, &low);
          if (noise < J.plan.target_rel && el >= J.plan.min_ms) { converged = true; break; }
          if (cutoff > 0 && low > cutoff) { cut = true; break; }
        }
        if (el > J.plan.max_ms && ev.size() >= 3) break;
        // The cap counts the verifications too, once min_ms of samples are in: each runs the task's
        // reference on fresh inputs, and histogram's (~69 ms) made one unconverged timing of a
        // 0.15 ms variant last 40 s, ~475 reference runs beside 3 s of samples (H100, 2026-12-07).
        if (now_ms() - start > J.plan.max_ms && el >= J.plan.min_ms && ev.size() >= 3) break;
      }
      for (int extra = (int)(random_u64() % 5); extra > 0; extra--) timed_sample(false);
      timed_sample(true);
      if (timings.size() > 1) timings += ",";
      // Where the timing's wall time went besides the samples: the buffer sets and warm-up before
      // them, and the verified calls' reference runs and comparisons among them.
      timings += "{\"size\":" + std::to_string(s.index) + ",\"bufferSets\":" + std::to_string(nsets * nctx) + ",\"contexts\":" + std::to_string(nctx) + ",\"warmupCalls\":" + std::to_string(warm) + ",\"converged\":" + (converged ? "true" : "false") + ",\"verified\":" + std::to_string(verified) +
                 ",\"setupMs\":" + jnum(start - setup0) + ",\"verifyMs\":" + jnum(verify_ms) + ",\"timedMs\":" + jnum(now_ms() - start) +
                 (cut ? ",\"cutoffMs\":" + jnum(cutoff) : std::string()) + ",\"eventMs\":" + jarr(ev) + ",\"wallMs\":" + jarr(wall) + "}";
    }
    timings += "]";
    ClockReading clocks_end = read_clocks();
    // sparesWaitMs: before the first size's set-up, waiting for the spare executors' contexts.
    v.body += ",\"l2FlushBytes\":" + std::to_string(flush) + ",\"sparesWaitMs\":" + jnum(spares_wait) + ",\"timings\":" + timings;
    if (clocks_start.ok && clocks_end.ok) v.body += ",\"clocks\":{\"start\":" + clocks_json(clocks_start) + ",\"end\":" + clocks_json(clocks_end) + "}";
  } catch (HarnessFailure& f) {
    v.status = f.status;
    v.error = f.error;
    if (v.body.empty()) {
      if (checks.back() != ']') checks += "]";
      v.body = isolation_json(J) + ",\"checks\":" + checks;
    }
  }
  if (v.status == "ok" && timed) judge_keep(J, desc, ex);
  jexec_kill(ex);
  for (JExec& m : more) jexec_kill(m);
  return v;
}

static Verdict judge_duel(Judge& J, const std::string& libA, const std::string& descA, const std::string& libB, const std::string& descB, double time_ms) {
  Verdict v;
  JExec a, b;
  int votes = 0;  // timed sizes where A's median pair was faster, minus those where B's was
  a.who = "A: ";
  b.who = "B: ";
  try {
    check_code_sources(J, libA, descA);
    check_code_sources(J, libB, descB);
    double deadline = now_ms() + time_ms;
    const double x0 = now_ms();
    const char* a_from = judge_exec(J, a, descA, deadline);
    const char* b_from = judge_exec(J, b, descB, deadline);
    const double exec_ms = now_ms() - x0;
    const double spares_wait = J.plan.spare_wait == 1 ? spares_up(J, deadline) : 0;
    // Before the first size's set-up: both executors (kept idle, a spare or a new process) and the
    // wait for the spares' contexts. On the first size's entry.
    std::string start_json = ",\"start\":{\"a\":\"" + std::string(a_from) + "\",\"b\":\"" + b_from + "\",\"executorsMs\":" + jnum(exec_ms) + ",\"sparesWaitMs\":" + jnum(spares_wait) + "}";
    std::string duels = "[";
    size_t flush = flush_size(J.plan);
    for (const Size& s : J.plan.sizes) {
      if (!is_timed(J.plan, s.index)) continue;
      int nsets = timing_sets(J, s, 2), next_set = 0;
      const double setup0 = now_ms();  // buffer sets and warm-up: setupMs
      const bool b_first = J.plan.duel_alloc == 2 || (J.plan.duel_alloc == 1 && (random_u64() & 1));
      jexec_alloc(b_first ? b : a, s, deadline, nsets);
      jexec_alloc(b_first ? a : b, s, deadline, nsets);
      int pv = 0;
      // A named array: an initializer_list chosen by ?: would leave its elements destroyed before the loop.
      JExec* const warm_order[2] = {J.plan.duel_warm == 2 ? &b : &a, J.plan.duel_warm == 2 ? &a : &b};
      for (JExec* e : warm_order) {
        double w0 = now_ms();
        int warm = 0;
        do {
          judge_sample(J, *e, s, judge_fresh(J, s), false, pv++, deadline, "warm-up", warm % nsets);
          warm++;
        } while ((now_ms() - w0 < J.plan.warmup_ms || warm < std::max(3, 2 * nsets)) && warm < 100000);
      }
      std::vector<double> ae, aw, be, bw, lr;
      std::vector<int> order;
      double start = now_ms(), verify_ms = 0, med = 0;
      bool converged = false;
      // Both sides of a pair get the same fresh inputs; each pair is verified with probability 1/8
      // (decided after it ran), and the last pair, after a random number of extra pairs, always.
      auto pair = [&](bool force_check) {
        unsigned long long seed = judge_fresh(J, s);
        bool a_first = random_u64() & 1;  // random order within each pair, as CUDA-L1 does
        JExec& x = a_first ? a : b;
        JExec& y = a_first ? b : a;
        // Both sides of a pair on the same set (index) of their buffers; the sets rotate.
        auto tx = judge_sample(J, x, s, seed, true, pv, deadline, "timing", next_set);
        auto ty = judge_sample(J, y, s, seed, true, pv++, deadline, "timing", next_set);
        next_set = (next_set + 1) % nsets;
        auto ta = a_first ? tx : ty, tb = a_first ? ty : tx;
        ae.push_back(ta.first); aw.push_back(ta.second); be.push_back(tb.first); bw.push_back(tb.second);
        order.push_back(a_first);
        lr.push_back(log(std::max(tb.first, 1e-9) / std::max(ta.first, 1e-9)) + 10.0);
        if (force_check || random_u64() % 8 == 0) {
          double v0 = now_ms();
          for (JExec* e : {&a, &b}) {
            std::string ff;
            bool fc = true;
            // One reference run for the pair's inputs: the second side is compared with the same outputs.
            std::string mv = verify(J, *e, s, seed, false, nullptr, fc, ff, " in timed pair " + std::to_string(ae.size()) + " (inputs the variant had not seen)");
            if (!mv.empty()) fail("correctness", mv);
            if (!ff.empty()) fail("correctness", ff);
          }
          verify_ms += now_ms() - v0;
        }
      };
      while ((int)ae.size() < J.plan.max_samples) {
        pair(false);
        double el = now_ms() - start - verify_ms;
        if ((int)ae.size() >= J.plan.min_samples && ae.size() % 5 == 0) {
          double n = median_noise(lr, &med) * med;  // CI half-width of the median log-ratio
          if (n < (J.plan.duel_target > 0 ? J.plan.duel_target : J.plan.target_rel) && el >= J.plan.min_ms) { converged = true; break; }
          // Sequential stop: the verdict is decided once a wider interval (x1.5, for the repeated
          // looks) lies wholly beyond the band main/engine/measure/stats.ts verdictOf calls the
          // same, after at least twice the minimum pairs and a whole round of the buffer sets.
          double m = med - 10.0, band = log1p(J.plan.same_tol);
          if ((int)ae.size() >= 2 * J.plan.min_samples && (int)ae.size() >= 2 * nsets && (m - 1.5 * n > band || m + 1.5 * n < -band)) { converged = true; break; }
        }
        if (el > J.plan.max_ms * 2 && ae.size() >= 3) break;
        if (now_ms() - start > J.plan.max_ms * 2 && el >= J.plan.min_ms && ae.size() >= 3) break;  // with the verifications, as an eval's
      }
      for (int extra = (int)(random_u64() % 5); extra > 0; extra--) pair(false);
      pair(true);
      median_noise(lr, &med);
      votes += med > 10.0 ? 1 : med < 10.0 ? -1 : 0;
      std::string ord = "[";
      for (size_t i = 0; i < order.size(); i++) ord += std::string(i ? "," : "") + (order[i] ? "1" : "0");
      if (duels.size() > 1) duels += ",";
      duels += "{\"size\":" + std::to_string(s.index) + ",\"sets\":" + std::to_string(nsets) + ",\"converged\":" + (converged ? "true" : "false") +
               ",\"setupMs\":" + jnum(start - setup0) + ",\"verifyMs\":" + jnum(verify_ms) + ",\"timedMs\":" + jnum(now_ms() - start) + ",\"aEventMs\":" + jarr(ae) + ",\"aWallMs\":" + jarr(aw) +
               ",\"bEventMs\":" + jarr(be) + ",\"bWallMs\":" + jarr(bw) + ",\"aFirst\":" + ord + "]" + start_json + "}";
      start_json.clear();
    }
    duels += "]";
    v.body = "\"l2FlushBytes\":" + std::to_string(flush) + ",\"duels\":" + duels;
  } catch (HarnessFailure& f) {
    v.status = f.status;
    v.error = f.error;
  }
  if (v.status == "ok") {
    // The faster side (by the median pair of most timed sizes; on a tie, B, the engine's opponent)
    // is kept last, so the next evaluation's keep drops the slower: the engine's best after this
    // duel is most often the faster, and the next duel is against its best. Kept the other way, a challenger that became the best was dropped
    // by the next evaluation, and that evaluation's duel took a spare (~150-250 ms to replace)
    // for it: the check after it waited for a context (H100, 2026-12-08: the check two
    // evaluations after each new best took 130-250 ms instead of ~23).
    if (votes > 0) {
      judge_keep(J, descB, b);
      judge_keep(J, descA, a);
    } else {
      judge_keep(J, descA, a);
      judge_keep(J, descB, b);
    }
  }
  jexec_kill(a);
  jexec_kill(b);
  return v;
}

static std::string device_json() {
  int dev = 0, n = 0;
  CK(cudaGetDeviceCount(&n));
  CK(cudaGetDevice(&dev));
  cudaDeviceProp pr;
  CK(cudaGetDeviceProperties(&pr, dev));
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  return "\"devices\":" + std::to_string(n) + ",\"name\":" + jstr(pr.name) + ",\"cc\":" + jstr(std::to_string(pr.major) + "." + std::to_string(pr.minor)) +
         ",\"sms\":" + std::to_string(pr.multiProcessorCount) + ",\"l2Bytes\":" + std::to_string(pr.l2CacheSize) +
         ",\"globalMemBytes\":" + std::to_string((unsigned long long)pr.totalGlobalMem) + ",\"driver\":" + std::to_string(drv) + ",\"runtime\":" + std::to_string(rt);
}

static int mode_judge(const std::string& plan_path, const std::string& ref_lib) {
  Judge J;
  g_plan_path = plan_path;
  J.plan = read_plan(plan_path.c_str());
  // Executors are started from this very binary (/proc/self/exe is the file this process runs, even
  // if its path were replaced afterwards).
  g_self_exe = "/proc/self/exe";
  // Check seeds are drawn here and never written anywhere a variant could read them (the plan file
  // only says how many there are).
  // With reference data from files, the checks use the check samples PyTorch computed (their torch
  // seeds were drawn by the engine and are in no file; the plan numbers the samples).
  if (J.plan.refs.on) for (Size& sz : J.plan.sizes) sz.seeds = ref_ids(J.plan, sz.index, false);
  else {
    for (unsigned long long& v : J.plan.seeds) v = fresh_seed();
    for (Size& sz : J.plan.sizes) for (unsigned long long& v : sz.seeds) v = fresh_seed();
  }
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the engine
  if (const char* r = getenv("KERNELDUEL_DEVICE_CODE_ROOTS")) for (const std::string& p : split(r, ':')) if (!p.empty()) J.code_roots.push_back(p);
  if (const char* w = getenv("KERNELDUEL_WORK_ROOT")) {
    char rp[PATH_MAX];
    J.work_root = realpath(w, rp) ? rp : w;
  }
  Verdict hello;
  try {
    need_driver();
    CK(cudaFree(0));
    if (J.plan.refs.on) {
      // No reference library: the reference data comes from the plan's files (ref_lib is "files").
      judge_load_files(J);
    } else {
      void* h = dlopen(ref_lib.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) fail("runtime", "cannot load the reference " + ref_lib + ": " + dlerror());
      J.ref = (ref_entry_fn)dlsym(h, "kd_entry_packed");
      if (!J.ref) fail("runtime", ref_lib + " does not export kd_entry_packed");
    }
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    J.cache_cap = free_b / 4;
    hello.body = device_json();
    if (J.plan.refs.on) hello.body += ",\"referenceFiles\":{\"bytes\":" + std::to_string(J.file_bytes) + ",\"samples\":" + std::to_string(J.plan.refs.samples.size()) + "}";
  } catch (HarnessFailure& f) {
    hello.status = f.status;
    hello.error = f.error;
  }
  emit("hello", hello);
  if (hello.status != "ok") return 0;
  std::string line;
  while (read_line(stdin, line)) {
    std::vector<std::string> f = split(line, '\t');
    if (f[0] == "quit") break;
    std::string id = f.size() > 1 ? f[1] : "";
    if (f[0] == "eval" && f.size() == 7) emit(id, judge_eval(J, id, f[2], f[3], f[4] == "1", atof(f[5].c_str()), atof(f[6].c_str())));
    else if (f[0] == "duel" && f.size() == 7) emit(id, judge_duel(J, f[2], f[3], f[4], f[5], atof(f[6].c_str())));
    else {
      Verdict v;
      v.status = "runtime";
      v.error = "bad command: " + line.substr(0, 80);
      emit(id, v);
    }
    // The next variants' executors start CUDA while the engine captures those variants.
    for (JExec& sp : J.spares) {
      if (sp.pid > 0) continue;
      try {
        jexec_spawn(sp);
      } catch (HarnessFailure&) {
        sp = JExec();
      }
    }
    // A broken context here (the reference failed) ends the judge; the engine starts a new one.
    if (cudaGetLastError() == cudaErrorIllegalAddress) return 3;
  }
  return 0;
}
