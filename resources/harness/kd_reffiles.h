// Reference data from files (a PyTorch-reference task, docs/PYTHON-CANDIDATES.md "The CUDA entry
// point of the same task"): the plan's `reference files` folder holds, per size and sample, the
// inputs, weights and outputs PyTorch computed before any variant ran. This part needs no GPU: it
// checks that the plan's samples and files hold together, and reads every file once, checking its
// length and its sha256 against the plan (the manifest the engine kept in memory). The judge
// (kd_judge.h) then keeps the data on its GPU; `kd_harness reffiles-selftest` runs only this part.
#pragma once
#include "kd_plan.h"
#include "kd_sha256.h"
#include <thread>
#include <atomic>
#include <mutex>

static std::string ref_key(int size, int id) { return "size " + std::to_string(size) + ", sample " + std::to_string(id); }

// "" when the plan's reference data holds together, else why not (the first problem).
static std::string ref_validate(const Plan& p) {
  const RefPlan& r = p.refs;
  if (!r.on) return "";
  if (r.dir.empty() || r.dir[0] != '/') return "the reference folder must be an absolute path";
  std::map<std::pair<int, int>, bool> samples;  // -> timing
  for (const RefSample& s : r.samples) {
    if (!size_by_index(p, s.size)) return "reference sample " + std::to_string(s.id) + " names size " + std::to_string(s.size) + ", which the plan does not have";
    if (samples.count({s.size, s.id})) return "reference " + ref_key(s.size, s.id) + " is listed twice";
    samples[{s.size, s.id}] = s.timing;
  }
  std::map<std::pair<int, int>, std::vector<int>> have;  // per sample: files per argument
  for (const RefFile& f : r.files) {
    const Size* s = size_by_index(p, f.size);
    if (!samples.count({f.size, f.id})) return "reference file " + f.rel + " belongs to " + ref_key(f.size, f.id) + ", which the plan does not list (refsample)";
    if (f.arg < 0 || f.arg >= (int)s->args.size() || !s->args[f.arg].buffer) return "reference file " + f.rel + " is for argument " + std::to_string(f.arg) + ", which is not a buffer of size " + std::to_string(f.size);
    const Arg& a = s->args[f.arg];
    if (f.bytes != a.elements * dtype_bytes(a.dtype))
      return "reference file " + f.rel + " (" + a.name + ", " + ref_key(f.size, f.id) + ") has " + std::to_string(f.bytes) + " bytes, the buffer " + std::to_string(a.elements * dtype_bytes(a.dtype));
    if (f.sha256.size() != 64 || f.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) return "reference file " + f.rel + ": the sha256 is not 64 lower-case hex digits";
    if (f.rel.empty() || f.rel[0] == '/' || f.rel.find("..") != std::string::npos) return "reference file " + f.rel + ": the path must be relative to the reference folder, without ..";
    std::vector<int>& v = have[{f.size, f.id}];
    if (v.empty()) v.assign(s->args.size(), 0);
    if (v[f.arg]++) return "reference " + ref_key(f.size, f.id) + " has two files for " + a.name;
  }
  for (const Size& s : p.sizes) {
    for (const Arg& a : s.args)
      if (a.buffer && a.role == 2) return a.name + " is an inout buffer: reference data from files has inputs (in) and outputs (out) only";
    int checks = 0, timings = 0;
    for (const auto& kv : samples) {
      if (kv.first.first != s.index) continue;
      (kv.second ? timings : checks)++;
      const std::vector<int>& v = have[kv.first];
      for (size_t i = 0; i < s.args.size(); i++)
        if (s.args[i].buffer && (v.empty() || !v[i])) return "reference " + ref_key(s.index, kv.first.second) + " has no file for " + s.args[i].name + " (a sample without all of its data is refused)";
    }
    if (!checks) return "size " + std::to_string(s.index) + " has no check sample in the reference data";
    if (!timings && is_timed(p, s.index)) return "size " + std::to_string(s.index) + " is timed but has no timing sample in the reference data";
  }
  return "";
}

// The samples of a size: check ids, or timing ids.
static std::vector<unsigned long long> ref_ids(const Plan& p, int size, bool timing) {
  std::vector<unsigned long long> v;
  for (const RefSample& s : p.refs.samples) if (s.size == size && s.timing == timing) v.push_back((unsigned long long)s.id);
  return v;
}

// Reads every distinct file of the reference data once (in parallel), checking its length and its
// sha256 against the plan; fails ("runtime") naming the first file that does not match.
static std::map<std::string, std::vector<unsigned char>> ref_read_all(const Plan& p) {
  std::string why = ref_validate(p);
  if (!why.empty()) fail("runtime", "reference data: " + why);
  std::map<std::string, const RefFile*> distinct;
  for (const RefFile& f : p.refs.files) {
    auto it = distinct.find(f.rel);
    if (it != distinct.end() && (it->second->sha256 != f.sha256 || it->second->bytes != f.bytes)) fail("runtime", "reference data: " + f.rel + " is listed twice with different contents");
    distinct[f.rel] = &f;
  }
  std::vector<const RefFile*> todo;
  for (auto& kv : distinct) todo.push_back(kv.second);
  std::map<std::string, std::vector<unsigned char>> out;
  std::vector<std::vector<unsigned char>*> slots;
  for (const RefFile* f : todo) slots.push_back(&out[f->rel]);
  std::vector<std::string> errors(todo.size());
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t k; (k = next++) < todo.size();) {
      const RefFile& f = *todo[k];
      std::string path = p.refs.dir + "/" + f.rel, e;
      std::vector<unsigned char>& data = *slots[k];
      struct stat st;
      if (stat(path.c_str(), &st) == 0 && (unsigned long long)st.st_size != f.bytes) { errors[k] = path + ": " + std::to_string((unsigned long long)st.st_size) + " bytes, the plan says " + std::to_string(f.bytes); continue; }
      if (!read_file(path, data, (size_t)f.bytes, &e)) { errors[k] = e; continue; }
      if (data.size() != f.bytes) { errors[k] = path + ": " + std::to_string(data.size()) + " bytes, the plan says " + std::to_string(f.bytes); continue; }
      std::string got = sha256_hex(data.data(), data.size());
      if (got != f.sha256) errors[k] = path + ": sha256 mismatch (the plan has " + f.sha256.substr(0, 16) + "…, the file " + got.substr(0, 16) + "…): the reference data changed after PyTorch wrote it";
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < n && i < todo.size(); i++) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) if (!e.empty()) fail("runtime", "reference data: " + e);
  return out;
}

// `kd_harness reffiles-selftest <plan> <result>`: the checks above, without a GPU.
static std::string mode_reffiles_selftest(const Plan& p) {
  if (!p.refs.on) fail("runtime", "the plan has no reference files");
  std::map<std::string, std::vector<unsigned char>> data = ref_read_all(p);
  size_t bytes = 0;
  for (auto& kv : data) bytes += kv.second.size();
  size_t checks = 0, timings = 0;
  for (const RefSample& s : p.refs.samples) (s.timing ? timings : checks)++;
  return "\"files\":" + std::to_string(data.size()) + ",\"bytes\":" + std::to_string(bytes) + ",\"checkSamples\":" + std::to_string(checks) + ",\"timingSamples\":" + std::to_string(timings);
}
