// KernelDuel measurement harness. Generic: it knows nothing of any task. The engine writes a plan
// file (buffers, scalars, seeds, tolerances, timing settings) and the harness dlopen()s variant
// libraries that export `kd_entry_packed(void**)` (a shim generated from the task's signature).
//
//   kd_harness probe  <plan> <result.json>
//   kd_harness ref    <plan> <result.json> <reference.so>   writes reference outputs to refdir
//   kd_harness check  <plan> <result.json> <variant.so>     checks every element against refdir
//   kd_harness time   <plan> <result.json> <variant.so>     timing samples (events + wall)
//   kd_harness checktime <plan> <result.json> <variant.so>  check, then time, in one process
//   kd_harness duel   <plan> <result.json> <a.so> <b.so>    interleaved A/B timing
//
// Results are written to <result.json> (atomically: tmp + rename), never to stdout, so a variant
// that floods stdout cannot forge them. Exit code 0 also for a failed check: the result says why.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif
#include <string>
#include <vector>
#include <algorithm>
#include <random>
#include <map>
#include <thread>
#include <atomic>

typedef void (*entry_fn)(void**);

enum Dtype { F32, F64, I32, U32, I64, U8 };
static const char* DTYPE_NAMES[] = {"f32", "f64", "i32", "u32", "i64", "u8"};
static size_t dtype_bytes(Dtype d) { return d == F64 || d == I64 ? 8 : d == U8 ? 1 : 4; }
static bool is_float(Dtype d) { return d == F32 || d == F64; }
static Dtype parse_dtype(const char* s) {
  for (int i = 0; i < 6; i++) if (!strcmp(s, DTYPE_NAMES[i])) return (Dtype)i;
  fprintf(stderr, "kd_harness: unknown dtype %s\n", s);
  exit(70);
}

struct Arg {
  bool buffer;
  std::string name;
  Dtype dtype;
  int role;  // 0 in, 1 out, 2 inout
  size_t elements;
  bool fill_int;
  double lo, hi;
  double scalar;
};
struct Size {
  int index;
  std::vector<Arg> args;
  std::vector<unsigned long long> seeds;  // empty: the plan's seeds
};
struct Tol { double rtol, atol; };
struct Plan {
  std::string nonce, refdir;
  std::vector<Size> sizes;
  std::vector<unsigned long long> seeds;
  Tol tol[6];
  double warmup_ms = 50, target_rel = 0.005, max_ms = 3000, min_ms = 100;
  int min_samples = 10, max_samples = 5000;
  size_t flush_bytes = 0;
  std::vector<int> timed;
};

// ---------------------------------------------------------------------------------------------
// result output
static std::string g_result_path, g_json;
static Plan g_plan;
// Reference outputs read into memory (see ref_bytes; all of them before the folder is hidden).
// Kept XOR-masked with a per-process random key, unmasked element by element while comparing: a
// variant scanning the process's memory for the expected outputs does not find them as floats.
static uint64_t g_ref_key = 0;
static inline uint64_t kd_mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static void mask_bytes(unsigned char* b, size_t n, uint64_t key) {
  if (!key) return;
  for (size_t w = 0; w * 8 < n; w++) {
    uint64_t m = kd_mix(key ^ w);
    for (size_t k = 0; k < 8 && w * 8 + k < n; k++) b[w * 8 + k] ^= (unsigned char)(m >> (8 * k));
  }
}
template <typename T>
static inline T unmask(const T* p, size_t i, uint64_t key) {
  if (!key) return *p;
  size_t o = i * sizeof(T);
  uint64_t m = kd_mix(key ^ (o >> 3)) >> ((o & 7) * 8);
  T v;
  memcpy(&v, p, sizeof(T));
  unsigned char* b = (unsigned char*)&v;
  for (size_t k = 0; k < sizeof(T); k++) b[k] ^= (unsigned char)(m >> (8 * k));
  return v;
}
static std::map<std::string, std::vector<unsigned char>> g_refs;
static bool g_cache_refs = false;
static std::vector<unsigned char> g_ref_scratch;
static void jraw(const std::string& s) { g_json += s; }
static std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
    else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += (char)c;
  }
  return o + "\"";
}
static std::string jnum(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char b[64];
  snprintf(b, sizeof b, "%.9g", v);
  return b;
}
// NaN and infinities spelled the same on every libc ("NaN", "Inf", "-Inf").
static std::string num_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char b[64];
  snprintf(b, sizeof b, "%.9g", v);
  return b;
}
static std::string g_stage;  // checktime: "check" or "time", the stage a result (or failure) comes from
static void write_result(const std::string& status, const std::string& error) {
  std::string out = "{\"kdresult\":1,\"nonce\":" + jstr(g_plan.nonce) + ",\"status\":" + jstr(status);
  if (!g_stage.empty()) out += ",\"stage\":" + jstr(g_stage);
  if (!error.empty()) out += ",\"error\":" + jstr(error);
  out += ",\"body\":{" + g_json + "}}\n";
  std::string tmp = g_result_path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) { perror("kd_harness: result"); exit(71); }
  fwrite(out.data(), 1, out.size(), f);
  fflush(f);
  fsync(fileno(f));
  fclose(f);
  rename(tmp.c_str(), g_result_path.c_str());
}
// A failure unwinds to the mode's caller: one-shot modes write it as their result; the sweep
// records it for the library at hand and goes on (unless the CUDA context is broken).
struct HarnessFailure {
  std::string status, error;
};
[[noreturn]] static void fail(const std::string& status, const std::string& error) {
  throw HarnessFailure{status, error};
}
#define CK(call)                                                                            \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) fail("runtime", std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

// ---------------------------------------------------------------------------------------------
// System-call filter (seccomp), installed before any variant library is loaded and after CUDA is
// initialised (its driver may start nvidia-modprobe on first use). It holds with or without the
// bubblewrap sandbox and also for root, whom RLIMIT_NPROC does not bind:
//  - no new processes: fork, vfork, clone without CLONE_THREAD (threads still work), execve(at);
//    clone3 answers ENOSYS so that libc falls back to clone, whose flags the filter can read;
//  - no IP, packet or netlink sockets (Unix sockets stay: CUDA uses them);
//  - signals only to the harness itself (kill(-1, SIGKILL) as root would end every process);
//  - none of the calls that change the machine (reboot, modules, mounts, swap, clocks, ptrace and
//    other processes' memory, bpf, namespaces).
// A refused call fails with EPERM (the variant sees an error; its result is checked as usual).
static std::string g_filter_state = "not installed";
static std::string install_syscall_filter() {
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#if defined(__x86_64__)
  const unsigned arch = AUDIT_ARCH_X86_64;
#else
  const unsigned arch = AUDIT_ARCH_AARCH64;
#endif
  const unsigned self = (unsigned)getpid();
  const unsigned EPERM_RET = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  const unsigned ENOSYS_RET = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
  std::vector<sock_filter> f;
  auto stmt = [&](unsigned short code, unsigned k) { f.push_back(sock_filter{code, 0, 0, k}); };
  auto jeq = [&](unsigned k, unsigned char jt, unsigned char jf) { f.push_back(sock_filter{(unsigned short)(BPF_JMP | BPF_JEQ | BPF_K), jt, jf, k}); };
  const unsigned NR = offsetof(struct seccomp_data, nr), ARCH = offsetof(struct seccomp_data, arch), ARG0 = offsetof(struct seccomp_data, args[0]);
  stmt(BPF_LD | BPF_W | BPF_ABS, ARCH);
  jeq(arch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);  // another ABI (i386/x32 tricks)
  stmt(BPF_LD | BPF_W | BPF_ABS, NR);
#if defined(__x86_64__)
  // x32 system calls carry bit 30 in the number: refuse the whole ABI.
  f.push_back(sock_filter{(unsigned short)(BPF_JMP | BPF_JGE | BPF_K), 0, 1, 0x40000000u});
  stmt(BPF_RET | BPF_K, EPERM_RET);
#endif
  const long denied[] = {
#ifdef __NR_fork
    __NR_fork,
#endif
#ifdef __NR_vfork
    __NR_vfork,
#endif
    __NR_execve, __NR_execveat, __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_reboot, __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_mount, __NR_umount2, __NR_pivot_root, __NR_swapon, __NR_swapoff,
    __NR_settimeofday, __NR_clock_settime, __NR_adjtimex, __NR_clock_adjtime, __NR_sethostname, __NR_setdomainname, __NR_bpf,
    __NR_setns, __NR_unshare, __NR_tkill,
#ifdef __NR_iopl
    __NR_iopl, __NR_ioperm,
#endif
  };
  for (long nr : denied) {
    jeq((unsigned)nr, 0, 1);
    stmt(BPF_RET | BPF_K, EPERM_RET);
  }
  jeq((unsigned)__NR_clone3, 0, 1);
  stmt(BPF_RET | BPF_K, ENOSYS_RET);
  // clone: allowed only with CLONE_THREAD (low word of the flags argument).
  jeq((unsigned)__NR_clone, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, ARG0);
  f.push_back(sock_filter{(unsigned short)(BPF_JMP | BPF_JSET | BPF_K), 0, 1, (unsigned)CLONE_THREAD});
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  stmt(BPF_RET | BPF_K, EPERM_RET);
  // socket: Unix sockets only.
  jeq((unsigned)__NR_socket, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, ARG0);
  jeq((unsigned)AF_UNIX, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  stmt(BPF_RET | BPF_K, EPERM_RET);
  // kill and tgkill: only to this process (pid or thread group = the harness).
  jeq((unsigned)__NR_kill, 1, 0);
  jeq((unsigned)__NR_tgkill, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, ARG0);
  jeq(self, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  stmt(BPF_RET | BPF_K, EPERM_RET);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  sock_fprog prog{(unsigned short)f.size(), f.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + strerror(errno);
  // TSYNC: every thread of the process gets the filter, also the ones CUDA started during its
  // initialisation (a host callback runs on one of those).
  long r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (r != 0) return r > 0 ? "seccomp: thread " + std::to_string(r) + " could not be synchronised" : std::string("seccomp: ") + strerror(errno);
  return "active";
#else
  return "not available on this platform";
#endif
}
// ---------------------------------------------------------------------------------------------
// Reference outputs out of the variant's reach (Landlock, Linux 5.13+). The checking process must
// compare against the reference, so it reads every reference file it needs into memory first;
// then a Landlock ruleset takes the whole reference folder (every task's) away from the process:
// nothing beneath it can be read, written, listed or executed, while everything else stays as it
// was. Landlock only grants, so "everything else" is spelled out: every entry beside each folder
// on the way from / down to the hidden one gets all rights. Installed before CUDA starts its
// threads (they inherit it). Without Landlock (older kernel, other OS) the state says so.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
static const std::vector<unsigned long long>& seeds_of(const Size& s);
static std::string ref_file(const Plan& p, int size, unsigned long long seed, const std::string& arg);
static const std::vector<unsigned char>& ref_bytes(const std::string& path, size_t bytes);
struct KdLandlockRulesetAttr { uint64_t handled_access_fs; };
struct __attribute__((packed)) KdLandlockPathBeneath { uint64_t allowed_access; int32_t parent_fd; };
static std::string g_refs_state = "not hidden";
static bool g_refs_hidden = false;
static std::string hide_tree(const std::string& hidden_in) {
#if defined(__linux__)
  char real[PATH_MAX];
  if (!realpath(hidden_in.c_str(), real)) return "not applied: " + hidden_in + ": " + strerror(errno);
  std::string hidden = real;
  char cwdb[PATH_MAX];
  if (getcwd(cwdb, sizeof cwdb)) {
    std::string cwd = cwdb;
    if (cwd == hidden || cwd.rfind(hidden + "/", 0) == 0 || hidden.rfind(cwd + "/", 0) == 0)
      return "not applied: the work folder " + cwd + " and the reference folder " + hidden + " are nested";
  }
  long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
  if (abi < 1) return std::string("not available: Landlock: ") + strerror(errno);
  const uint64_t EXECUTE = 1ull << 0, WRITE_FILE = 1ull << 1, READ_FILE = 1ull << 2, TRUNCATE = 1ull << 14;
  uint64_t all = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) all |= 1ull << 13;  // refer
  if (abi >= 3) all |= TRUNCATE;
  const uint64_t file_rights = all & (EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE);
  KdLandlockRulesetAttr attr{all};
  int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) return std::string("not available: Landlock ruleset: ") + strerror(errno);
  // Folders from / down to the hidden one's parent; at each, everything but the next step.
  std::vector<std::string> parts;
  for (size_t i = 1, j; i <= hidden.size(); i = j + 1) {
    j = hidden.find('/', i);
    if (j == std::string::npos) j = hidden.size();
    if (j > i) parts.push_back(hidden.substr(i, j - i));
  }
  std::string dir = "/";
  int rules = 0;
  for (size_t k = 0; k < parts.size(); k++) {
    DIR* d = opendir(dir.c_str());
    if (!d) { close(rs); return "not applied: cannot list " + dir + ": " + strerror(errno); }
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == ".." || n == parts[k]) continue;
      std::string path = (dir == "/" ? "" : dir) + "/" + n;
      int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0) continue;
      struct stat st;
      if (fstat(fd, &st) == 0) {
        KdLandlockPathBeneath pb{S_ISDIR(st.st_mode) ? all : file_rights, fd};
        if (syscall(__NR_landlock_add_rule, rs, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0) == 0) rules++;
      }
      close(fd);
    }
    closedir(d);
    dir = (dir == "/" ? "" : dir) + "/" + parts[k];
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { close(rs); return std::string("not applied: no_new_privs: ") + strerror(errno); }
  if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) { close(rs); return std::string("not applied: Landlock: ") + strerror(errno); }
  close(rs);
  g_refs_hidden = true;
  return "hidden (" + std::to_string(rules) + " rules, Landlock ABI " + std::to_string(abi) + ")";
#else
  (void)hidden_in;
  return "not available on this platform";
#endif
}

// Every reference file a mode reads, into memory: check and sweep every size and seed; time and
// duel the timed sizes with the first seed.
static void preload_refs(bool all_sizes) {
  g_cache_refs = true;
  for (const Size& s : g_plan.sizes) {
    bool timed = std::find(g_plan.timed.begin(), g_plan.timed.end(), s.index) != g_plan.timed.end();
    std::vector<unsigned long long> seeds;
    if (all_sizes) seeds = seeds_of(s);
    if (timed && !g_plan.seeds.empty() && std::find(seeds.begin(), seeds.end(), g_plan.seeds[0]) == seeds.end()) seeds.push_back(g_plan.seeds[0]);
    for (unsigned long long seed : seeds)
      for (const Arg& a : s.args) {
        if (!a.buffer || a.role == 0) continue;
        std::string path = ref_file(g_plan, s.index, seed, a.name);
        if (access(path.c_str(), R_OK) == 0) ref_bytes(path, a.elements * dtype_bytes(a.dtype));
      }
  }
}
static bool ref_available(const std::string& path) {
  return g_refs.count(path) > 0 || (!g_refs_hidden && access(path.c_str(), R_OK) == 0);
}

static void lock_down(const std::string& mode) {
  // The reference folder: read what this mode needs, then hide the folder (not for the reference
  // run itself, which writes it, nor the probe, which tries the mechanism on a folder of its own).
  const char* hide = getenv("KERNELDUEL_HIDE_REFS");
  bool hide_off = hide && strcmp(hide, "off") == 0;
  if (hide_off) g_refs_state = "off (KERNELDUEL_HIDE_REFS=off)";
  else if ((mode == "check" || mode == "checktime" || mode == "time" || mode == "duel" || mode == "sweep") && !g_plan.refdir.empty()) {
    preload_refs(mode == "check" || mode == "checktime" || mode == "sweep");
    std::string root = g_plan.refdir;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    size_t slash = root.rfind('/');
    g_refs_state = hide_tree(slash == std::string::npos || slash == 0 ? root : root.substr(0, slash));
  } else if (mode == "probe") {
    // Landlock with CUDA on this machine: hide an empty folder beside the probe's work folder
    // (the engine creates it: under bubblewrap only the work folder is writable).
    char cwdb[PATH_MAX];
    if (getcwd(cwdb, sizeof cwdb)) g_refs_state = hide_tree(std::string(cwdb) + "-hidden-trial");
  }
  if (getenv("KERNELDUEL_SYSCALL_FILTER") && strcmp(getenv("KERNELDUEL_SYSCALL_FILTER"), "off") == 0) {
    g_filter_state = "off (KERNELDUEL_SYSCALL_FILTER=off)";
    return;
  }
  cudaFree(0);  // initialise CUDA first (errors surface in the mode itself)
  g_filter_state = install_syscall_filter();
}

// Hides a folder as check runs hide the references, then tries to reach it (for the test suite).
static void mode_hide_selftest() {
  const char* dir = getenv("KD_SELFTEST_HIDE");
  const char* secret = getenv("KD_SELFTEST_SECRET");
  const char* visible = getenv("KD_SELFTEST_VISIBLE");
  if (!dir || !secret || !visible) fail("runtime", "set KD_SELFTEST_HIDE, KD_SELFTEST_SECRET and KD_SELFTEST_VISIBLE");
  g_refs_state = hide_tree(dir);
  auto try_open = [](const char* path, int flags) {
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0) return (long)-errno;
    close(fd);
    return 0L;
  };
  DIR* d = opendir(dir);
  long list = d ? 0 : -errno;
  if (d) closedir(d);
  std::string fresh = std::string(dir) + "/planted.bin";
  jraw("\"state\":" + jstr(g_refs_state) + ",\"readSecret\":" + std::to_string(try_open(secret, O_RDONLY)) +
       ",\"writeSecret\":" + std::to_string(try_open(secret, O_WRONLY)) + ",\"plant\":" + std::to_string(try_open(fresh.c_str(), O_WRONLY | O_CREAT)) +
       ",\"listHidden\":" + std::to_string(list) + ",\"readVisible\":" + std::to_string(try_open(visible, O_RDONLY)) +
       ",\"readSystem\":" + std::to_string(try_open("/bin/sh", O_RDONLY)) + ",\"eacces\":" + std::to_string(EACCES));
  write_result("ok", "");
}

// Tries what the filter forbids and allows; for the test suite (no GPU needed).
static std::atomic<int> g_selftest_step{0};
static std::atomic<long> g_selftest_fork{0};
static void mode_filter_selftest() {
  // A thread that exists before the filter (as CUDA's do) must be filtered too.
  std::thread early([] {
    while (g_selftest_step.load() == 0) usleep(1000);
    pid_t p = fork();
    if (p == 0) _exit(0);
    if (p > 0) waitpid(p, nullptr, 0);
    g_selftest_fork = p < 0 ? -errno : 1;
    g_selftest_step = 2;
  });
  g_filter_state = install_syscall_filter();
  g_selftest_step = 1;
  while (g_selftest_step.load() != 2) usleep(1000);
  early.join();
  auto rc = [](long r) { return r < 0 ? -errno : r; };
  pid_t p = fork();
  if (p == 0) _exit(0);
  long fork_r = p < 0 ? -errno : 1;
  if (p > 0) waitpid(p, nullptr, 0);
  pthread_t th;
  int th_r = pthread_create(&th, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
  if (th_r == 0) pthread_join(th, nullptr);
  long inet = rc(socket(AF_INET, SOCK_STREAM, 0));
  long inet6 = rc(socket(AF_INET6, SOCK_DGRAM, 0));
  long unix_s = rc(socket(AF_UNIX, SOCK_STREAM, 0));
  long kill_other = rc(kill(1, 0));
  long kill_all = rc(kill(-1, 0));
  long kill_self = rc(kill(getpid(), 0));
  char* argv[] = {(char*)"/bin/true", nullptr};
  long exec_r = rc(execv("/bin/true", argv));
  int sys_r = system("true");
  jraw("\"filter\":" + jstr(g_filter_state) + ",\"fork\":" + std::to_string(fork_r) + ",\"thread\":" + std::to_string(th_r) +
       ",\"inet\":" + std::to_string(inet) + ",\"inet6\":" + std::to_string(inet6) + ",\"unix\":" + std::to_string(unix_s >= 0 ? 0 : unix_s) +
       ",\"killOther\":" + std::to_string(kill_other) + ",\"killAll\":" + std::to_string(kill_all) + ",\"killSelf\":" + std::to_string(kill_self) +
       ",\"exec\":" + std::to_string(exec_r) + ",\"system\":" + std::to_string(sys_r) + ",\"forkEarlyThread\":" + std::to_string(g_selftest_fork.load()) +
       ",\"eperm\":" + std::to_string(EPERM));
  write_result("ok", "");
}

// ---------------------------------------------------------------------------------------------
// plan
static Plan read_plan(const char* path) {
  Plan p;
  for (int i = 0; i < 6; i++) p.tol[i] = Tol{is_float((Dtype)i) ? 1e-4 : 0, is_float((Dtype)i) ? 1e-6 : 0};
  FILE* f = fopen(path, "r");
  if (!f) { fprintf(stderr, "kd_harness: cannot open plan %s\n", path); exit(70); }
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    char key[64] = {0};
    int off = 0;
    if (sscanf(line, "%63s %n", key, &off) < 1) continue;
    const char* rest = line + off;
    if (!strcmp(key, "nonce")) p.nonce = rest;
    else if (!strcmp(key, "refdir")) p.refdir = rest;
    else if (!strcmp(key, "seeds")) {
      char* s = (char*)rest; char* e;
      for (;;) { unsigned long long v = strtoull(s, &e, 10); if (e == s) break; p.seeds.push_back(v); s = e; }
    } else if (!strcmp(key, "sizeseeds")) {
      char* s = (char*)rest; char* e;
      for (;;) { unsigned long long v = strtoull(s, &e, 10); if (e == s) break; p.sizes.back().seeds.push_back(v); s = e; }
    } else if (!strcmp(key, "size")) {
      Size s; s.index = atoi(rest); p.sizes.push_back(s);
    } else if (!strcmp(key, "buffer")) {
      Arg a; char name[256], dt[16], role[16], fk[16];
      unsigned long long el;
      if (sscanf(rest, "%255s %15s %15s %llu %15s %lf %lf", name, dt, role, &el, fk, &a.lo, &a.hi) != 7) { fprintf(stderr, "bad plan line: %s\n", line); exit(70); }
      a.buffer = true; a.name = name; a.dtype = parse_dtype(dt);
      a.role = !strcmp(role, "in") ? 0 : !strcmp(role, "out") ? 1 : 2;
      a.elements = el; a.fill_int = !strcmp(fk, "int"); a.scalar = 0;
      p.sizes.back().args.push_back(a);
    } else if (!strcmp(key, "scalar")) {
      Arg a; char name[256], dt[16];
      if (sscanf(rest, "%255s %15s %lf", name, dt, &a.scalar) != 3) { fprintf(stderr, "bad plan line: %s\n", line); exit(70); }
      a.buffer = false; a.name = name; a.dtype = parse_dtype(dt); a.elements = 0; a.role = 0;
      p.sizes.back().args.push_back(a);
    } else if (!strcmp(key, "tol")) {
      char dt[16]; double r, at;
      if (sscanf(rest, "%15s %lf %lf", dt, &r, &at) == 3) p.tol[parse_dtype(dt)] = Tol{r, at};
    } else if (!strcmp(key, "timing")) {
      unsigned long long fb = 0;
      sscanf(rest, "%lf %d %d %lf %lf %lf %llu", &p.warmup_ms, &p.min_samples, &p.max_samples, &p.target_rel, &p.min_ms, &p.max_ms, &fb);
      p.flush_bytes = fb;
    } else if (!strcmp(key, "timed")) {
      p.timed.push_back(atoi(rest));
    }
  }
  fclose(f);
  return p;
}

// ---------------------------------------------------------------------------------------------
// inputs: generated on the device from (seed, arg, index) with a hash, so the reference process
// and the variant process see identical inputs without shipping gigabytes between them.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
template <typename T>
__global__ void fill_kernel(T* p, size_t n, unsigned long long key, double lo, double hi, int is_int) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long h = mix64(key ^ mix64(i));
    if (is_int) {
      long long span = (long long)hi - (long long)lo + 1;
      p[i] = (T)((long long)lo + (long long)(h % (unsigned long long)span));
    } else {
      double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
      T v = (T)(lo + (hi - lo) * u);
      if (v == (T)0) v = (T)(lo + (hi - lo) * 0.61803398875);  // never zeros
      if (v == (T)0) v = (T)1e-3;
      p[i] = v;
    }
  }
}
static void fill(void* d, const Arg& a, unsigned long long seed, int arg_index) {
  unsigned long long key = seed * 0x100000001B3ull + (unsigned long long)arg_index * 0x9E3779B97F4A7C15ull + 12345;
  int blocks = 1024, threads = 256;
  switch (a.dtype) {
    case F32: fill_kernel<<<blocks, threads>>>((float*)d, a.elements, key, a.lo, a.hi, a.fill_int); break;
    case F64: fill_kernel<<<blocks, threads>>>((double*)d, a.elements, key, a.lo, a.hi, a.fill_int); break;
    case I32: fill_kernel<<<blocks, threads>>>((int*)d, a.elements, key, a.lo, a.hi, 1); break;
    case U32: fill_kernel<<<blocks, threads>>>((unsigned*)d, a.elements, key, a.lo, a.hi, 1); break;
    case I64: fill_kernel<<<blocks, threads>>>((long long*)d, a.elements, key, a.lo, a.hi, 1); break;
    case U8: fill_kernel<<<blocks, threads>>>((unsigned char*)d, a.elements, key, a.lo, a.hi, 1); break;
  }
  CK(cudaGetLastError());
}

// Every buffer is followed by a guard region filled with GUARD_BYTE before each call: a variant
// that writes past the end of a buffer (into what would be its neighbour) is caught by the check.
static const size_t GUARD_BYTES = 256 << 10;
static const int GUARD_BYTE = 0xCD;
struct Bufs {
  std::vector<void*> dev;            // per arg (nullptr for scalars)
  std::vector<unsigned char> scal;   // scalar storage, 8 bytes per arg
  std::vector<void*> packed;
  std::vector<size_t> bytes;         // per arg: buffer bytes (without the guard)
  std::vector<int> role;             // per arg: 0 in, 1 out, 2 inout, -1 scalar
  std::vector<unsigned long long> in_hash;  // per arg: hash of an input after prepare()
};
static void alloc_bufs(Bufs& b, const Size& s) {
  size_t n = s.args.size();
  b.dev.assign(n, nullptr);
  b.scal.assign(8 * n, 0);
  b.packed.assign(n, nullptr);
  b.bytes.assign(n, 0);
  b.role.assign(n, -1);
  b.in_hash.assign(n, 0);
  for (size_t i = 0; i < n; i++) {
    const Arg& a = s.args[i];
    if (a.buffer) {
      b.bytes[i] = a.elements * dtype_bytes(a.dtype);
      b.role[i] = a.role;
      CK(cudaMalloc(&b.dev[i], b.bytes[i] + GUARD_BYTES));
      b.packed[i] = b.dev[i];
    } else {
      void* slot = &b.scal[8 * i];
      switch (a.dtype) {
        case F32: *(float*)slot = (float)a.scalar; break;
        case F64: *(double*)slot = a.scalar; break;
        case I32: *(int*)slot = (int)a.scalar; break;
        case U32: *(unsigned*)slot = (unsigned)a.scalar; break;
        case I64: *(long long*)slot = (long long)a.scalar; break;
        case U8: *(unsigned char*)slot = (unsigned char)a.scalar; break;
      }
      b.packed[i] = slot;
    }
  }
}
static void free_bufs(Bufs& b) {
  for (void* p : b.dev) if (p) cudaFree(p);
  b.dev.clear();
}
// Order-independent 64-bit hash of a buffer's bytes (detects a variant writing to its inputs).
__global__ void hash_kernel(const unsigned char* p, size_t n, unsigned long long* out) {
  unsigned long long h = 0;
  size_t words = n / 4;
  const unsigned* w = (const unsigned*)p;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
    h += mix64(((unsigned long long)i << 32) ^ w[i]);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (size_t i = words * 4; i < n; i++) h += mix64(0xABCDEF0000000000ull ^ ((unsigned long long)i << 8) ^ p[i]);
  atomicAdd(out, h);
}
static unsigned long long* g_hash_slot = nullptr;
static unsigned long long buffer_hash(const void* d, size_t n) {
  if (!g_hash_slot) CK(cudaMalloc(&g_hash_slot, sizeof(unsigned long long)));
  CK(cudaMemset(g_hash_slot, 0, sizeof(unsigned long long)));
  hash_kernel<<<512, 256>>>((const unsigned char*)d, n, g_hash_slot);
  CK(cudaGetLastError());
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, g_hash_slot, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}
// Inputs from the seed; outputs poisoned (NaN for floats; 0xFF or 0xA5 bytes for integers);
// guards after every buffer set; inputs hashed.
static void prepare(Bufs& b, const Size& s, unsigned long long seed, int poison_variant) {
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer) continue;
    if (a.role == 1) {
      int byte = is_float(a.dtype) ? 0xFF : (poison_variant & 1 ? 0xA5 : 0xFF);
      CK(cudaMemset(b.dev[i], byte, a.elements * dtype_bytes(a.dtype)));
    } else {
      fill(b.dev[i], a, seed, (int)i);
    }
    CK(cudaMemset((unsigned char*)b.dev[i] + b.bytes[i], GUARD_BYTE, GUARD_BYTES));
  }
  CK(cudaDeviceSynchronize());
  for (size_t i = 0; i < s.args.size(); i++)
    if (s.args[i].buffer && s.args[i].role == 0) b.in_hash[i] = buffer_hash(b.dev[i], b.bytes[i]);
}
// After a checked call: guards intact, inputs unchanged. Empty string: all well.
static std::string memory_violation(const Bufs& b, const Size& s) {
  std::vector<unsigned char> g(GUARD_BYTES);
  for (size_t i = 0; i < s.args.size(); i++) {
    if (!s.args[i].buffer) continue;
    CK(cudaMemcpy(g.data(), (const unsigned char*)b.dev[i] + b.bytes[i], GUARD_BYTES, cudaMemcpyDeviceToHost));
    size_t changed = 0, first = 0;
    for (size_t k = 0; k < GUARD_BYTES; k++)
      if (g[k] != GUARD_BYTE) { if (!changed) first = k; changed++; }
    if (changed) {
      char m[512];
      snprintf(m, sizeof m, "%s: out-of-bounds write: %zu of the %zu bytes after the end of %s were overwritten (first at byte %zu past the end, size %d); it would corrupt a neighbouring buffer",
               s.args[i].name.c_str(), changed, (size_t)GUARD_BYTES, s.args[i].name.c_str(), first, s.index);
      return m;
    }
    if (s.args[i].role == 0 && buffer_hash(b.dev[i], b.bytes[i]) != b.in_hash[i])
      return s.args[i].name + ": the variant wrote to its input buffer " + s.args[i].name + " (inputs must be left unchanged), size " + std::to_string(s.index);
  }
  return "";
}

static entry_fn load_entry(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) fail("runtime", std::string("cannot load ") + path + ": " + dlerror());
  entry_fn f = (entry_fn)dlsym(h, "kd_entry_packed");
  if (!f) fail("runtime", std::string(path) + " does not export kd_entry_packed (was it built by KernelDuel?)");
  return f;
}
static void call_checked(entry_fn f, Bufs& b, const char* what) {
  f(b.packed.data());
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) fail("runtime", std::string(what) + ": " + cudaGetErrorString(e));
  // The harness's buffers must still be there: a variant that reset the device or destroyed the
  // context took them (and every later result) with it.
  for (void* p : b.dev) {
    if (!p) continue;
    cudaPointerAttributes pa;
    cudaError_t e2 = cudaPointerGetAttributes(&pa, p);
    if (e2 != cudaSuccess || pa.type != cudaMemoryTypeDevice) {
      cudaGetLastError();
      fail("runtime", std::string(what) + ": the harness's device buffers are gone after the call: the variant reset the device or destroyed the CUDA context (not allowed)");
    }
    break;
  }
}
static double now_ms() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static const std::vector<unsigned long long>& seeds_of(const Size& s) { return s.seeds.empty() ? g_plan.seeds : s.seeds; }
static std::string ref_file(const Plan& p, int size, unsigned long long seed, const std::string& arg) {
  return p.refdir + "/ref_s" + std::to_string(size) + "_" + std::to_string(seed) + "_" + arg + ".bin";
}

// ---------------------------------------------------------------------------------------------
static void mode_probe() {
  int dev = 0, n = 0;
  CK(cudaGetDeviceCount(&n));
  CK(cudaGetDevice(&dev));
  {
    // What the sweep does after a failed variant, under the system-call filter: drop the context
    // and create a new one.
    // and launch kernels (the harness's own fill kernel) before and after.
    Arg a{true, "probe", F32, 0, 1 << 18, false, -1, 1, 0};
    for (int round = 0; round < 2; round++) {
      void* p = nullptr;
      CK(cudaMalloc(&p, a.elements * sizeof(float)));
      fill(p, a, 1, 0);
      CK(cudaDeviceSynchronize());
      CK(cudaFree(p));
      if (round == 0) {
        CK(cudaDeviceReset());
        CK(cudaFree(0));
      }
    }
  }
  cudaDeviceProp pr;
  CK(cudaGetDeviceProperties(&pr, dev));
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  // Overhead of an empty timed region (events + synchronise) as the time loop does it.
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> wall;
  for (int i = 0; i < 200; i++) {
    CK(cudaDeviceSynchronize());
    double t0 = now_ms();
    cudaEventRecord(e0, 0);
    cudaEventRecord(e1, 0);
    CK(cudaDeviceSynchronize());
    wall.push_back(now_ms() - t0);
  }
  std::sort(wall.begin(), wall.end());
  jraw("\"devices\":" + std::to_string(n) + ",\"name\":" + jstr(pr.name) + ",\"cc\":" + jstr(std::to_string(pr.major) + "." + std::to_string(pr.minor)) +
       ",\"sms\":" + std::to_string(pr.multiProcessorCount) + ",\"l2Bytes\":" + std::to_string(pr.l2CacheSize) +
       ",\"globalMemBytes\":" + std::to_string((unsigned long long)pr.totalGlobalMem) + ",\"driver\":" + std::to_string(drv) +
       ",\"runtime\":" + std::to_string(rt) + ",\"emptyWallMs\":" + jnum(wall[wall.size() / 2]) + ",\"syscallFilter\":" + jstr(g_filter_state) + ",\"hideRefs\":" + jstr(g_refs_state));
  write_result("ok", "");
}

static void mode_ref(entry_fn f) {
  g_json += "\"written\":[";
  bool first = true;
  for (const Size& s : g_plan.sizes) {
    for (size_t k = 0; k < seeds_of(s).size(); k++) {
      unsigned long long seed = seeds_of(s)[k];
      Bufs b;
      alloc_bufs(b, s);
      prepare(b, s, seed, 0);
      call_checked(f, b, "reference");
      for (size_t i = 0; i < s.args.size(); i++) {
        const Arg& a = s.args[i];
        if (!a.buffer || a.role == 0) continue;
        size_t bytes = a.elements * dtype_bytes(a.dtype);
        std::vector<unsigned char> h(bytes);
        CK(cudaMemcpy(h.data(), b.dev[i], bytes, cudaMemcpyDeviceToHost));
        std::string path = ref_file(g_plan, s.index, seed, a.name);
        std::string tmp = path + ".tmp";
        FILE* o = fopen(tmp.c_str(), "wb");
        if (!o || fwrite(h.data(), 1, bytes, o) != bytes) fail("runtime", "cannot write reference output " + path);
        fclose(o);
        rename(tmp.c_str(), path.c_str());
        if (!first) g_json += ",";
        first = false;
        g_json += jstr(path);
      }
      free_bufs(b);
    }
  }
  g_json += "]";
  write_result("ok", "");
}

// Reference outputs, read from refdir (kept in memory by the sweep: one read per process).
static const std::vector<unsigned char>& ref_bytes(const std::string& path, size_t bytes) {
  if (g_cache_refs) {
    auto it = g_refs.find(path);
    if (it != g_refs.end()) return it->second;
  }
  // One buffer reused for every read (a fresh 256 MiB vector is zeroed first, for nothing).
  std::vector<unsigned char>& v = g_cache_refs ? g_refs[path] : g_ref_scratch;
  if (v.size() != bytes) v.resize(bytes);
  FILE* rf = fopen(path.c_str(), "rb");
  if (!rf || fread(v.data(), 1, bytes, rf) != bytes) {
    if (rf) fclose(rf);
    if (g_cache_refs) g_refs.erase(path);
    fail("runtime", "missing reference output " + path + " (run the reference first)");
  }
  fclose(rf);
  if (g_cache_refs) mask_bytes(v.data(), bytes, g_ref_key);
  return v;
}

template <typename T>
static void compare(const T* got, const T* exp, size_t n, const Tol& tol, bool flt, size_t& bad, double& maxabs, double& maxrel,
                    double& num, double& den, long long& first, double& fe, double& fg, uint64_t key = 0, size_t base = 0) {
  for (size_t i = 0; i < n; i++) {
    const T ei = unmask(exp + i, base + i, key);
    double g = (double)got[i], e = (double)ei;
    double d = fabs(g - e);
    bool ok;
    if (flt) {
      ok = std::isfinite(g) && std::isfinite(e) ? d <= tol.atol + tol.rtol * fabs(e) : false;
      if (std::isfinite(g) && std::isfinite(e)) {
        num += d * d; den += e * e;
        if (d > maxabs) maxabs = d;
        double r = d / (fabs(e) > 0 ? fabs(e) : 1e-300);
        if (fabs(e) > 0 && r > maxrel) maxrel = r;
      } else {
        maxabs = INFINITY;
      }
    } else {
      ok = got[i] == ei || d <= tol.atol + tol.rtol * fabs(e);
      num += d * d; den += e * e;
      if (d > maxabs) maxabs = d;
    }
    if (!ok) {
      if (first < 0) { first = (long long)i; fe = e; fg = g; }
      bad++;
    }
  }
}

// One output buffer against its reference file: counts, errors and the first bad element.
struct CompareStats {
  size_t bad = 0;
  double maxabs = 0, maxrel = 0, num = 0, den = 0, fe = 0, fg = 0;
  long long first = -1;
};
// Large outputs are compared on several threads (chunks in order; merged so the first bad
// element is the lowest index, as a serial pass finds it). Threads: KERNELDUEL_COMPARE_THREADS,
// else the cores (at most 16).
static unsigned compare_threads() {
  const char* e = getenv("KERNELDUEL_COMPARE_THREADS");
  if (e && atoi(e) > 0) return (unsigned)atoi(e);
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n > 16 ? 16 : n;
}
template <typename T>
static CompareStats compare_typed(const T* got, const T* exp, size_t n, const Tol& tol, bool flt, unsigned threads, uint64_t key) {
  const size_t MIN_CHUNK = 1u << 20;
  unsigned parts = threads;
  if (n / MIN_CHUNK + 1 < parts) parts = (unsigned)(n / MIN_CHUNK + 1);
  std::vector<CompareStats> st(parts);
  auto run = [&](unsigned k) {
    size_t lo = n * k / parts, hi = n * (k + 1) / parts;
    CompareStats& c = st[k];
    compare(got + lo, exp + lo, hi - lo, tol, flt, c.bad, c.maxabs, c.maxrel, c.num, c.den, c.first, c.fe, c.fg, key, lo);
    if (c.first >= 0) c.first += (long long)lo;
  };
  if (parts <= 1) {
    run(0);
  } else {
    std::vector<std::thread> ts;
    for (unsigned k = 1; k < parts; k++) ts.emplace_back(run, k);
    run(0);
    for (auto& t : ts) t.join();
  }
  CompareStats c;
  for (const CompareStats& x : st) {
    c.bad += x.bad;
    c.maxabs = std::max(c.maxabs, x.maxabs);
    c.maxrel = std::max(c.maxrel, x.maxrel);
    c.num += x.num;
    c.den += x.den;
    if (c.first < 0 && x.first >= 0) { c.first = x.first; c.fe = x.fe; c.fg = x.fg; }
  }
  return c;
}
static CompareStats compare_bytes(Dtype dt, const void* got, const void* exp, size_t n, const Tol& tol, unsigned threads, uint64_t key = 0) {
  switch (dt) {
    case F32: return compare_typed((const float*)got, (const float*)exp, n, tol, true, threads, key);
    case F64: return compare_typed((const double*)got, (const double*)exp, n, tol, true, threads, key);
    case I32: return compare_typed((const int*)got, (const int*)exp, n, tol, false, threads, key);
    case U32: return compare_typed((const unsigned*)got, (const unsigned*)exp, n, tol, false, threads, key);
    case I64: return compare_typed((const long long*)got, (const long long*)exp, n, tol, false, threads, key);
    case U8: return compare_typed((const unsigned char*)got, (const unsigned char*)exp, n, tol, false, threads, key);
  }
  return CompareStats{};
}
static CompareStats compare_output(const Arg& a, const void* dev, const std::string& refpath) {
  size_t bytes = a.elements * dtype_bytes(a.dtype);
  static std::vector<unsigned char> got;  // reused: zeroed only when it grows
  if (got.size() < bytes) got.resize(bytes);
  CK(cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost));
  const std::vector<unsigned char>& exp = ref_bytes(refpath, bytes);
  return compare_bytes(a.dtype, got.data(), exp.data(), a.elements, g_plan.tol[a.dtype], compare_threads(), g_cache_refs ? g_ref_key : 0);
}

// The threaded comparison against a serial one on made-up data (for the test suite; no GPU).
static void mode_compare_selftest() {
  const size_t n = (size_t)9 << 20;
  std::vector<float> e(n), g(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t i = 0; i < n; i++) e[i] = g[i] = u(rng);
  const size_t bad_at[] = {3 << 20, (3 << 20) + 5, (7 << 20) + 11, n - 1};
  for (size_t i : bad_at) g[i] += 0.5f;
  g[(5 << 20) + 3] = NAN;
  Tol tol{1e-4, 1e-7};
  CompareStats a = compare_bytes(F32, g.data(), e.data(), n, tol, 1);
  // Threaded, against a masked copy of the expected values (as cached references are kept).
  std::vector<float> em(e);
  const uint64_t key = 0x5eedf00dcafe1234ull;
  mask_bytes((unsigned char*)em.data(), n * sizeof(float), key);
  bool masked_differs = memcmp(em.data(), e.data(), 64) != 0;
  CompareStats b = compare_bytes(F32, g.data(), em.data(), n, tol, 7, key);
  jraw("\"serial\":{\"bad\":" + std::to_string(a.bad) + ",\"first\":" + std::to_string(a.first) + ",\"maxabs\":" + jnum(a.maxabs) + ",\"maxrel\":" + jnum(a.maxrel) +
       ",\"num\":" + jnum(a.num) + ",\"den\":" + jnum(a.den) + ",\"fg\":" + jnum(a.fg) + "},\"threaded\":{\"bad\":" + std::to_string(b.bad) +
       ",\"first\":" + std::to_string(b.first) + ",\"maxabs\":" + jnum(b.maxabs) + ",\"maxrel\":" + jnum(b.maxrel) + ",\"num\":" + jnum(b.num) +
       ",\"den\":" + jnum(b.den) + ",\"fg\":" + jnum(b.fg) + "},\"maskedDiffers\":" + (masked_differs ? "true" : "false"));
  write_result("ok", "");
}

static std::string g_check_failure;
static void mode_check_body(entry_fn f);
static void mode_check(entry_fn f) {
  mode_check_body(f);
  if (g_check_failure.empty()) write_result("ok", "");
  else write_result("correctness", g_check_failure);
}
static void mode_check_body(entry_fn f) {
  g_check_failure.clear();
  // What kept the variant away from the references and the machine in this very run.
  g_json += "\"isolation\":{\"refs\":" + jstr(g_refs_state) + ",\"syscallFilter\":" + jstr(g_filter_state) + "},";
  g_json += "\"checks\":[";
  bool firstj = true, all_ok = true;
  std::string first_fail;
  Bufs prev;  // held until the next set is allocated, so every call sees fresh addresses
  int call_no = 0;
  for (const Size& s : g_plan.sizes) {
    for (size_t k = 0; k < seeds_of(s).size(); k++) {
      unsigned long long seed = seeds_of(s)[k];
      Bufs b;
      alloc_bufs(b, s);
      free_bufs(prev);
      prepare(b, s, seed, call_no++);
      call_checked(f, b, "variant");
      std::string mv = memory_violation(b, s);
      if (!mv.empty()) {
        free_bufs(b);
        free_bufs(prev);
        fail("correctness", mv);
      }
      for (size_t i = 0; i < s.args.size(); i++) {
        const Arg& a = s.args[i];
        if (!a.buffer || a.role == 0) continue;
        const Tol& tol = g_plan.tol[a.dtype];
        CompareStats cs = compare_output(a, b.dev[i], ref_file(g_plan, s.index, seed, a.name));
        size_t bad = cs.bad; double maxabs = cs.maxabs, maxrel = cs.maxrel, num = cs.num, den = cs.den, fe = cs.fe, fg = cs.fg; long long first = cs.first;
        double relL2 = den > 0 ? sqrt(num / den) : sqrt(num);
        if (!firstj) g_json += ",";
        firstj = false;
        g_json += "{\"buffer\":" + jstr(a.name) + ",\"size\":" + std::to_string(s.index) + ",\"seed\":" + std::to_string(seed) +
                  ",\"elements\":" + std::to_string(a.elements) + ",\"mismatches\":" + std::to_string(bad) + ",\"maxAbsErr\":" + jnum(maxabs) +
                  ",\"maxRelErr\":" + jnum(maxrel) + ",\"relL2\":" + jnum(relL2);
        if (first >= 0) {
          g_json += ",\"firstBad\":{\"index\":" + std::to_string(first) + ",\"expected\":" + jnum(fe) + ",\"got\":" + jnum(fg) + "}";
          if (all_ok) {
            char m[512];
            std::string es = num_text(fe), gs = num_text(fg);
            snprintf(m, sizeof m, "%s[%lld]: expected %s got %s (size %d, seed %llu; %zu of %zu elements wrong, tolerance rtol %g atol %g)",
                     a.name.c_str(), first, es.c_str(), gs.c_str(), s.index, seed, bad, a.elements, tol.rtol, tol.atol);
            first_fail = m;
          }
          all_ok = false;
        }
        g_json += "}";
      }
      prev = b;
    }
  }
  free_bufs(prev);
  g_json += "]";
  g_check_failure = all_ok ? "" : first_fail;
}

static size_t flush_size(const Plan& p) {
  if (p.flush_bytes) return p.flush_bytes;
  int dev = 0, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  size_t b = (size_t)l2 * 4;
  return b < (64u << 20) ? (64u << 20) : b;
}
// Relative half-width of the 95% CI of the median (order statistics), on a sorted copy.
static double median_noise(std::vector<double> v, double* med) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double h = 0.98 * sqrt((double)n);
  long lo = (long)floor(n / 2.0 - h), hi = (long)ceil(n / 2.0 + h);
  if (lo < 0) lo = 0;
  if (hi > (long)n - 1) hi = (long)n - 1;
  return *med > 0 ? (v[hi] - v[lo]) / (2 * *med) : INFINITY;
}

struct Timer {
  cudaEvent_t e0, e1;
  void* flush;
  size_t flush_bytes;
  int flips = 0;
  void init() {
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    flush_bytes = flush_size(g_plan);
    CK(cudaMalloc(&flush, flush_bytes));
  }
  // One sample: flush L2, then time the call with events on the legacy default stream and with
  // the host clock around call + whole-device synchronise (catches work on other streams).
  void sample(entry_fn f, Bufs& b, double* ev, double* wall) {
    // Outputs poisoned before every sample (outside the timed region), so a variant that skips work
    // when it sees the same inputs again (results cached by address or content) leaves poison,
    // which verify_timed() finds after the samples.
    for (size_t i = 0; i < b.dev.size(); i++)
      if (b.dev[i] && b.role[i] == 1) CK(cudaMemsetAsync(b.dev[i], 0xFF, b.bytes[i], 0));
    CK(cudaMemsetAsync(flush, (flips++) & 1, flush_bytes, 0));
    CK(cudaDeviceSynchronize());
    double t0 = now_ms();
    cudaEventRecord(e0, 0);
    f(b.packed.data());
    cudaEventRecord(e1, 0);
    cudaError_t e = cudaDeviceSynchronize();
    double t1 = now_ms();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) fail("runtime", std::string("during timing: ") + cudaGetErrorString(e));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    *ev = ms;
    *wall = t1 - t0;
  }
};

static int warmup(entry_fn f, Bufs& b) {
  double t0 = now_ms();
  int calls = 0;
  do {
    call_checked(f, b, "warm-up");
    calls++;
  } while ((now_ms() - t0 < g_plan.warmup_ms || calls < 3) && calls < 100000);
  return calls;
}

// After the timed calls: the last call's outputs must still match the reference (see Timer::sample).
static void verify_timed(const Size& s, Bufs& b, unsigned long long seed, const char* who) {
  for (size_t i = 0; i < s.args.size(); i++) {
    const Arg& a = s.args[i];
    if (!a.buffer || a.role != 1) continue;
    std::string path = ref_file(g_plan, s.index, seed, a.name);
    if (!ref_available(path)) continue;  // no reference for this seed: nothing to compare
    CompareStats cs = compare_output(a, b.dev[i], path);
    size_t bad = cs.bad; double fe = cs.fe, fg = cs.fg; long long first = cs.first;
    if (bad) {
      char m[640];
      std::string es = num_text(fe), gs = num_text(fg);
      snprintf(m, sizeof m, "%s%s[%lld]: expected %s got %s after the timed calls (%zu of %zu elements wrong, size %d): the outputs were right in the check but not when the same inputs were given again: results cached between calls, or work skipped",
               who, a.name.c_str(), first, es.c_str(), gs.c_str(), bad, a.elements, s.index);
      fail("correctness", m);
    }
  }
}

static std::string arr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) { if (i) s += ","; s += jnum(v[i]); }
  return s + "]";
}

static Timer* g_timer = nullptr;
static void mode_time_body(entry_fn f);
static void mode_time(entry_fn f) {
  mode_time_body(f);
  write_result("ok", "");
}
// Check, then (if every element is right) time, in one process: what the sweep does for each
// library, for one variant (one CUDA context, one reading of the references). The result says
// which stage it ended in; a failure while timing (e.g. results that go stale) is stage "time".
static void mode_checktime(entry_fn f) {
  g_stage = "check";
  mode_check_body(f);
  if (!g_check_failure.empty()) {
    write_result("correctness", g_check_failure);
    return;
  }
  g_stage = "time";
  // Tells the engine the check is over: its check-stage deadline no longer applies.
  std::string marker = g_result_path + ".time";
  if (FILE* m = fopen(marker.c_str(), "wb")) fclose(m);
  g_json += ",";
  mode_time_body(f);
  write_result("ok", "");
}
static void mode_time_body(entry_fn f) {
  if (!g_timer) { g_timer = new Timer(); g_timer->init(); }
  Timer& t = *g_timer;
  g_json += "\"l2FlushBytes\":" + std::to_string(t.flush_bytes) + ",\"timings\":[";
  bool firstj = true;
  for (const Size& s : g_plan.sizes) {
    if (std::find(g_plan.timed.begin(), g_plan.timed.end(), s.index) == g_plan.timed.end()) continue;
    Bufs b;
    alloc_bufs(b, s);
    unsigned long long tseed = g_plan.seeds.empty() ? 1 : g_plan.seeds[0];
    prepare(b, s, tseed, 0);
    int wc = warmup(f, b);
    std::vector<double> ev, wall;
    double start = now_ms(), med = 0, noise = INFINITY;
    bool converged = false;
    while ((int)ev.size() < g_plan.max_samples) {
      double e, w;
      t.sample(f, b, &e, &w);
      ev.push_back(e);
      wall.push_back(w);
      double el = now_ms() - start;
      if ((int)ev.size() >= g_plan.min_samples && ev.size() % 5 == 0) {
        noise = median_noise(ev, &med);
        if (noise < g_plan.target_rel && el >= g_plan.min_ms) { converged = true; break; }
      }
      if (el > g_plan.max_ms && (int)ev.size() >= 3) break;
    }
    noise = median_noise(ev, &med);
    try {
      verify_timed(s, b, tseed, "");
    } catch (HarnessFailure&) {
      free_bufs(b);
      throw;
    }
    if (!firstj) g_json += ",";
    firstj = false;
    g_json += "{\"size\":" + std::to_string(s.index) + ",\"warmupCalls\":" + std::to_string(wc) + ",\"converged\":" + (converged ? "true" : "false") +
              ",\"eventMs\":" + arr(ev) + ",\"wallMs\":" + arr(wall) + "}";
    free_bufs(b);
  }
  g_json += "]";
}

static void mode_duel(entry_fn fa, entry_fn fb) {
  Timer t;
  t.init();
  std::mt19937_64 rng(g_plan.seeds.empty() ? 7 : g_plan.seeds[0]);
  g_json += "\"l2FlushBytes\":" + std::to_string(t.flush_bytes) + ",\"duels\":[";
  bool firstj = true;
  for (const Size& s : g_plan.sizes) {
    if (std::find(g_plan.timed.begin(), g_plan.timed.end(), s.index) == g_plan.timed.end()) continue;
    Bufs ba, bb;
    alloc_bufs(ba, s);
    alloc_bufs(bb, s);
    unsigned long long seed = g_plan.seeds.empty() ? 1 : g_plan.seeds[0];
    prepare(ba, s, seed, 0);
    prepare(bb, s, seed, 0);
    warmup(fa, ba);
    warmup(fb, bb);
    std::vector<double> ae, aw, be, bw, lr;
    std::vector<int> order;
    double start = now_ms(), med = 0;
    bool converged = false;
    while ((int)ae.size() < g_plan.max_samples) {
      bool a_first = rng() & 1;  // random order within each pair, as CUDA-L1 does
      double e1, w1, e2, w2;
      if (a_first) { t.sample(fa, ba, &e1, &w1); t.sample(fb, bb, &e2, &w2); }
      else { t.sample(fb, bb, &e2, &w2); t.sample(fa, ba, &e1, &w1); }
      ae.push_back(e1); aw.push_back(w1); be.push_back(e2); bw.push_back(w2);
      order.push_back(a_first);
      lr.push_back(log(std::max(e2, 1e-9) / std::max(e1, 1e-9)) + 10.0);  // shifted positive for the noise estimate
      double el = now_ms() - start;
      if ((int)ae.size() >= g_plan.min_samples && ae.size() % 5 == 0) {
        // CI half-width of the median log-ratio, in absolute log units (~ relative ratio error).
        double n = median_noise(lr, &med) * med;
        if (n < g_plan.target_rel && el >= g_plan.min_ms) { converged = true; break; }
      }
      if (el > g_plan.max_ms && ae.size() >= 3) break;
    }
    verify_timed(s, ba, seed, "A: ");
    verify_timed(s, bb, seed, "B: ");
    if (!firstj) g_json += ",";
    firstj = false;
    std::string ord = "[";
    for (size_t i = 0; i < order.size(); i++) { if (i) ord += ","; ord += order[i] ? "1" : "0"; }
    ord += "]";
    g_json += "{\"size\":" + std::to_string(s.index) + ",\"converged\":" + (converged ? "true" : "false") + ",\"aEventMs\":" + arr(ae) +
              ",\"aWallMs\":" + arr(aw) + ",\"bEventMs\":" + arr(be) + ",\"bWallMs\":" + arr(bw) + ",\"aFirst\":" + ord + "}";
    free_bufs(ba);
    free_bufs(bb);
  }
  g_json += "]";
  write_result("ok", "");
}

// Sweep: check and time many libraries in one process (recording whole search spaces). Each
// library's outcome is appended as one JSON line to <result> and flushed, so a crash or a kill
// loses nothing already measured; the engine restarts after the last recorded library. A failure
// that leaves the CUDA context broken (illegal address, launch failure) ends the process (exit 3).
static bool context_broken() {
  cudaGetLastError();
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, 256);
  if (e != cudaSuccess) return true;
  cudaFree(p);
  return cudaDeviceSynchronize() != cudaSuccess;
}
static void mode_sweep(const char* list_path) {
  g_cache_refs = true;
  FILE* lf = fopen(list_path, "r");
  if (!lf) fail("runtime", std::string("cannot open sweep list ") + list_path);
  FILE* out = fopen(g_result_path.c_str(), "ab");
  if (!out) fail("runtime", "cannot open sweep output " + g_result_path);
  char line[8192];
  while (fgets(line, sizeof line, lf)) {
    char id[256];
    int off = 0;
    if (sscanf(line, "%255s %n", id, &off) < 1) continue;
    std::string path = line + off;
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
    std::string status = "ok", error, check_json, time_json;
    try {
      entry_fn f = load_entry(path.c_str());
      g_json.clear();
      mode_check_body(f);
      check_json = g_json;
      if (g_check_failure.empty()) {
        g_json.clear();
        mode_time_body(f);
        time_json = g_json;
      } else {
        status = "correctness";
        error = g_check_failure;
      }
    } catch (HarnessFailure& hf) {
      status = hf.status;
      error = hf.error;
    }
    std::string rec = "{\"id\":" + jstr(id) + ",\"nonce\":" + jstr(g_plan.nonce) + ",\"status\":" + jstr(status);
    if (!error.empty()) rec += ",\"error\":" + jstr(error);
    if (!check_json.empty()) rec += "," + check_json;
    if (!time_json.empty()) rec += "," + time_json;
    rec += "}\n";
    fwrite(rec.data(), 1, rec.size(), out);
    fflush(out);
    if (status != "ok" && status != "correctness") {
      // Buffers of the failed call were not freed: drop the whole context (libraries stay
      // loaded; the runtime re-creates the context and re-registers their kernels lazily).
      if (context_broken()) {
        fclose(out);
        exit(3);
      }
      cudaDeviceReset();
      delete g_timer;
      g_timer = nullptr;
    }
  }
  fclose(out);
  exit(0);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: kd_harness probe|ref|check|time|duel <plan> <result.json> [lib.so [lib2.so]]\n");
    return 64;
  }
  std::string mode = argv[1];
  g_plan = read_plan(argv[2]);
  {
    FILE* ur = fopen("/dev/urandom", "rb");
    if (!ur || fread(&g_ref_key, sizeof g_ref_key, 1, ur) != 1) g_ref_key = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
    if (ur) fclose(ur);
    if (!g_ref_key) g_ref_key = 1;
  }
  g_result_path = argv[3];
  try {
  if (mode == "filter-selftest") { mode_filter_selftest(); return 0; }
  if (mode == "compare-selftest") { mode_compare_selftest(); return 0; }
  if (mode == "hide-selftest") { mode_hide_selftest(); return 0; }
  lock_down(mode);
  if (mode == "sweep" && argc >= 5) mode_sweep(argv[4]);
  else if (mode == "probe") mode_probe();
  else if (mode == "ref" && argc >= 5) mode_ref(load_entry(argv[4]));
  else if (mode == "check" && argc >= 5) mode_check(load_entry(argv[4]));
  else if (mode == "time" && argc >= 5) mode_time(load_entry(argv[4]));
  else if (mode == "checktime" && argc >= 5) mode_checktime(load_entry(argv[4]));
  else if (mode == "duel" && argc >= 6) mode_duel(load_entry(argv[4]), load_entry(argv[5]));
  else { fprintf(stderr, "kd_harness: bad arguments\n"); return 64; }
  } catch (HarnessFailure& f) {
    g_json.clear();  // what the mode had written is cut off mid-way: the failure is the result
    write_result(f.status, f.error);
  }
  return 0;
}
