// The plan file the engine writes (main/engine/measure/harness.ts renderPlan): buffers and scalars of every
// size, check seeds, tolerances and timing settings. One line per item, parsed strictly: a line
// that does not parse stops the harness with a message naming it.
#pragma once
#include "kd_common.h"

struct Arg {
  bool buffer;
  std::string name;
  Dtype dtype;
  int role;  // 0 in, 1 out, 2 inout
  size_t elements;
  bool fill_int;
  double lo, hi;
  double scalar;
  // The buffer's contents come from the reference-data files of the plan (role in), written into
  // the executor's buffers by the judge: prepare() leaves it as it is (guards only).
  bool from_file = false;
};
struct Size {
  int index;
  std::vector<Arg> args;
  std::vector<unsigned long long> seeds;  // empty: the plan's seeds
};
struct Tol { double rtol, atol; };
// Reference data computed by PyTorch before any variant ran (a PyTorch-reference task; the engine's
// main/engine/pytorch/reference-data.ts): per size, samples (check or timing), each a file per buffer
// argument (inputs and weights as `in` buffers, outputs as `out`), with its bytes and sha256.
// Samples are numbered, never named by their torch seeds: the seeds are in no file.
struct RefSample { int size, id; bool timing; };
struct RefFile { int size, id, arg; unsigned long long bytes; std::string sha256, rel; };
struct RefPlan {
  bool on = false;
  std::string dir;
  std::vector<RefSample> samples;
  std::vector<RefFile> files;
};
struct Plan {
  std::string nonce;  // echoed in result files of one-shot modes (the engine checks it)
  std::vector<Size> sizes;
  std::vector<unsigned long long> seeds;
  Tol tol[6];
  double warmup_ms = 50, target_rel = 0.005, max_ms = 3000, min_ms = 100;
  int min_samples = 10, max_samples = 5000;
  size_t flush_bytes = 0;
  // 1: after the L2 flush's memset, a read of a second buffer of half its size replaces the dirty
  // lines the memset left in L2 with clean ones (written back before the call, not during it).
  int flush_clean = 0;
  unsigned long long flush_clean_bytes = 0;  // flushclean 1: bytes read after the memset (0: half the flush buffer)
  // N > 1 (plan flushsets N): N flush buffers, each call's memset goes to the next one, so that no one
  // placement of the flush buffer (fixed for a whole process with one buffer) decides its times.
  int flush_sets = 1;
  // A duel's own noise target (plan: dueltarget); 0: target_rel.
  double duel_target = 0;
  // Which side of a duel allocates its buffers first (plan: duelalloc): 0 A (the default), 1 a coin
  // toss per duel, 2 B. A diagnostic: with large buffers at fixed places (spreadlarge 0) the side
  // that allocated first lost every self duel of a placement-sensitive softmax configuration on an
  // H100, and won every one with B first (bench/results/README.md, 2026-12-07 08:41).
  int duel_alloc = 0;
  // Which side of a duel warms up first (plan: duelwarm): 0 A (the default), 2 B. A diagnostic too.
  int duel_warm = 0;
  // Large buffers spread too (plan: spreadlarge 1, which the default timing writes since
  // 2026-12-07): every buffer, not only those under 2 MiB, at a random 256-byte-aligned offset in
  // 2 MiB of spare bytes (kd_buffers.h). Without the line (older plans) only small ones are.
  bool spread_large = false;
  // 0 (plan sparewait 0; an experiment of issue 17, off by default): timing does not wait for the
  // executors started ahead of need to have CUDA up, so their contexts' creation (~150-250 ms, in
  // other processes) may overlap timed calls. 1 (the default): it waits (kd_judge.h spares_up),
  // and that wait is on every variant's path (the check or the duel after a result). 2 (plan
  // sparewait 2; an experiment, 2026-12-08): evaluations wait, duels do not (captures already run
  // beside duels, whose pairs are interleaved: a context made beside one lands on both sides).
  int spare_wait = 1;
  // N > 1 (plan timectx N): a variant's timed calls rotate over N executors of it (N CUDA contexts,
  // each with its own buffer sets), so that no one process's offset decides its time.
  int time_ctx = 1;
  std::vector<int> timed;
  // Timed samples verified against the reference, chosen at random after they ran, besides the last.
  int verify_samples = 3;
  // Buffer sets timed calls rotate over (fewer when memory is short), and the relative difference
  // within which a duel says "same" (main/engine/measure/stats.ts verdictOf).
  int sets = 1;
  double same_tol = 0.01;
  RefPlan refs;
};

static Dtype parse_dtype(const char* s) {
  for (int i = 0; i < 6; i++) if (!strcmp(s, DTYPE_NAMES[i])) return (Dtype)i;
  fprintf(stderr, "kd_harness: unknown dtype %s\n", s);
  exit(70);
}

static Plan read_plan(const char* path) {
  Plan p;
  for (int i = 0; i < 6; i++) p.tol[i] = Tol{is_float((Dtype)i) ? 1e-4 : 0, is_float((Dtype)i) ? 1e-6 : 0};
  FILE* f = fopen(path, "r");
  if (!f) { fprintf(stderr, "kd_harness: cannot open plan %s\n", path); exit(70); }
  char line[8192];
  auto bad = [&](const char* l) { fprintf(stderr, "kd_harness: bad plan line: %s\n", l); exit(70); };
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    char key[64] = {0};
    int off = 0;
    if (sscanf(line, "%63s %n", key, &off) < 1) continue;
    const char* rest = line + off;
    if (!strcmp(key, "nonce")) p.nonce = rest;
    else if (!strcmp(key, "seeds") || !strcmp(key, "sizeseeds")) {
      if (!strcmp(key, "sizeseeds") && p.sizes.empty()) bad(line);
      std::vector<unsigned long long>& into = !strcmp(key, "seeds") ? p.seeds : p.sizes.back().seeds;
      char* s = (char*)rest; char* e;
      for (;;) { unsigned long long v = strtoull(s, &e, 10); if (e == s) break; into.push_back(v); s = e; }
    } else if (!strcmp(key, "size")) {
      Size s; s.index = atoi(rest); p.sizes.push_back(s);
    } else if (!strcmp(key, "buffer")) {
      if (p.sizes.empty()) bad(line);
      Arg a; char name[256], dt[16], role[16], fk[16];
      unsigned long long el;
      if (sscanf(rest, "%255s %15s %15s %llu %15s %lf %lf", name, dt, role, &el, fk, &a.lo, &a.hi) != 7) bad(line);
      a.buffer = true; a.name = name; a.dtype = parse_dtype(dt);
      a.role = !strcmp(role, "in") ? 0 : !strcmp(role, "out") ? 1 : 2;
      a.elements = el; a.fill_int = !strcmp(fk, "int"); a.scalar = 0;
      p.sizes.back().args.push_back(a);
    } else if (!strcmp(key, "scalar")) {
      if (p.sizes.empty()) bad(line);
      Arg a; char name[256], dt[16];
      if (sscanf(rest, "%255s %15s %lf", name, dt, &a.scalar) != 3) bad(line);
      a.buffer = false; a.name = name; a.dtype = parse_dtype(dt); a.elements = 0; a.role = 0; a.fill_int = false; a.lo = a.hi = 0;
      p.sizes.back().args.push_back(a);
    } else if (!strcmp(key, "tol")) {
      char dt[16]; double r, at;
      if (sscanf(rest, "%15s %lf %lf", dt, &r, &at) == 3) p.tol[parse_dtype(dt)] = Tol{r, at};
    } else if (!strcmp(key, "timing")) {
      unsigned long long fb = 0;
      sscanf(rest, "%lf %d %d %lf %lf %lf %llu", &p.warmup_ms, &p.min_samples, &p.max_samples, &p.target_rel, &p.min_ms, &p.max_ms, &fb);
      p.flush_bytes = fb;
    } else if (!strcmp(key, "dueltarget")) {
      p.duel_target = atof(rest);
      if (!(p.duel_target > 0 && p.duel_target <= 0.05)) bad(line);
    } else if (!strcmp(key, "timectx")) {
      p.time_ctx = atoi(rest);
      if (p.time_ctx < 1 || p.time_ctx > 4) bad(line);
    } else if (!strcmp(key, "duelalloc")) {
      p.duel_alloc = atoi(rest);
      if (p.duel_alloc < 0 || p.duel_alloc > 2) bad(line);
    } else if (!strcmp(key, "duelwarm")) {
      p.duel_warm = atoi(rest);
      if (p.duel_warm != 0 && p.duel_warm != 2) bad(line);
    } else if (!strcmp(key, "sparewait")) {
      const int v = atoi(rest);
      if (v != 0 && v != 1 && v != 2) bad(line);
      p.spare_wait = v;
    } else if (!strcmp(key, "spreadlarge")) {
      const int v = atoi(rest);
      if (v != 0 && v != 1) bad(line);
      p.spread_large = v == 1;
    } else if (!strcmp(key, "flushsets")) {
      p.flush_sets = atoi(rest);
      if (p.flush_sets < 1 || p.flush_sets > 16) bad(line);
    } else if (!strcmp(key, "flushclean")) {
      p.flush_clean = atoi(rest);
      if (p.flush_clean < 0 || p.flush_clean > 1) bad(line);
    } else if (!strcmp(key, "flushcleanbytes")) {
      p.flush_clean_bytes = strtoull(rest, nullptr, 10);
      if (p.flush_clean_bytes < 16 || p.flush_clean_bytes % 16 || p.flush_clean_bytes > (1ull << 34)) bad(line);
    } else if (!strcmp(key, "timed")) {
      p.timed.push_back(atoi(rest));
    } else if (!strcmp(key, "verify")) {
      p.verify_samples = atoi(rest);
    } else if (!strcmp(key, "sets")) {
      p.sets = atoi(rest);
      if (p.sets < 1 || p.sets > 64) bad(line);
    } else if (!strcmp(key, "sametol")) {
      p.same_tol = atof(rest);
    } else if (!strcmp(key, "reference")) {
      // reference files <absolute folder>
      char kind[16];
      int o2 = 0;
      if (sscanf(rest, "%15s %n", kind, &o2) < 1 || strcmp(kind, "files") || !rest[o2] || rest[o2] != '/') bad(line);
      p.refs.on = true;
      p.refs.dir = rest + o2;
    } else if (!strcmp(key, "refsample")) {
      // refsample <size> <id> check|timing
      RefSample r; char kind[16];
      if (sscanf(rest, "%d %d %15s", &r.size, &r.id, kind) != 3 || (strcmp(kind, "check") && strcmp(kind, "timing")) || r.id < 0) bad(line);
      r.timing = !strcmp(kind, "timing");
      p.refs.samples.push_back(r);
    } else if (!strcmp(key, "reffile")) {
      // reffile <size> <id> <arg index> <bytes> <sha256> <path relative to the folder>
      RefFile r; char sha[80], rel[1024];
      if (sscanf(rest, "%d %d %d %llu %79s %1023s", &r.size, &r.id, &r.arg, &r.bytes, sha, rel) != 6) bad(line);
      r.sha256 = sha; r.rel = rel;
      p.refs.files.push_back(r);
    }
  }
  fclose(f);
  if (p.refs.on)
    for (Size& s : p.sizes)
      for (Arg& a : s.args) a.from_file = a.buffer && a.role == 0;
  return p;
}

static const std::vector<unsigned long long>& seeds_of(const Plan& p, const Size& s) { return s.seeds.empty() ? p.seeds : s.seeds; }
static const Size* size_by_index(const Plan& p, int index) {
  for (const Size& s : p.sizes) if (s.index == index) return &s;
  return nullptr;
}
static bool is_timed(const Plan& p, int index) { return std::find(p.timed.begin(), p.timed.end(), index) != p.timed.end(); }
