// The system-call filter (seccomp) of processes that run untrusted host code (capture) or might
// (probe): defence in depth for the machine, not for the measurements, which are made in processes
// that never run variant host code (docs/ISOLATION.md).
//  - no new processes: fork, vfork, clone without CLONE_THREAD (threads still work), execve(at);
//    clone3 answers ENOSYS so that libc falls back to clone, whose flags the filter can read;
//  - no IP, packet or netlink sockets (Unix sockets stay: CUDA uses them);
//  - signals only to the harness itself (kill(-1, SIGKILL) as root would end every process);
//  - none of the calls that change the machine (reboot, modules, mounts, swap, clocks, ptrace and
//    other processes' memory, bpf, namespaces).
// Installed after CUDA is initialised (its driver may start nvidia-modprobe on first use) and before
// any variant library is loaded; holds with or without bubblewrap and also for root.
#pragma once
#include "kd_common.h"
#include <sched.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <atomic>
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

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

// Installs the filter unless the user turned it off (KERNELDUEL_SYSCALL_FILTER=off).
static void lock_down() {
  const char* off = getenv("KERNELDUEL_SYSCALL_FILTER");
  if (off && strcmp(off, "off") == 0) {
    g_filter_state = "off (KERNELDUEL_SYSCALL_FILTER=off)";
    cudaFree(0);
    cudaGetLastError();
    g_t_context = epoch_ms();
    return;
  }
  cudaFree(0);  // initialise CUDA first (errors surface in the mode itself)
  cudaGetLastError();
  g_t_context = epoch_ms();
  g_filter_state = install_syscall_filter();
}
static std::string restrict_writes(const std::string& dir);

// Tries what the filter forbids and allows; for the test suite (no GPU needed).
static std::atomic<int> g_selftest_step{0};
static std::atomic<long> g_selftest_fork{0};
static std::string mode_filter_selftest() {
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
  return std::string("\"filter\":" + jstr(g_filter_state) + ",\"fork\":" + std::to_string(fork_r) + ",\"thread\":" + std::to_string(th_r) +
       ",\"inet\":" + std::to_string(inet) + ",\"inet6\":" + std::to_string(inet6) + ",\"unix\":" + std::to_string(unix_s >= 0 ? 0 : unix_s) +
       ",\"killOther\":" + std::to_string(kill_other) + ",\"killAll\":" + std::to_string(kill_all) + ",\"killSelf\":" + std::to_string(kill_self) +
       ",\"exec\":" + std::to_string(exec_r) + ",\"system\":" + std::to_string(sys_r) + ",\"forkEarlyThread\":" + std::to_string(g_selftest_fork.load()) +
       ",\"eperm\":" + std::to_string(EPERM));

}

// ---------------------------------------------------------------------------------------------
// Writes only to the process's own folder (Landlock, Linux 5.13+): without bubblewrap, a variant's
// host code could otherwise rewrite other variants' builds, the reference library or the harness
// that the judge runs, or another process's memory through /proc/<pid>/mem. Reading stays allowed
// everywhere (bubblewrap, where present, makes the whole file system read-only as well).
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
struct KdLandlockRulesetAttr { uint64_t handled_access_fs; };
struct __attribute__((packed)) KdLandlockPathBeneath { uint64_t allowed_access; int32_t parent_fd; };
static std::string g_writes_state = "not restricted";
static std::string restrict_writes(const std::string& dir) {
#if defined(__linux__)
  long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
  if (abi < 1) return std::string("not restricted: Landlock: ") + strerror(errno);
  // write_file, remove_dir, remove_file, make_char .. make_sym; refer (ABI 2); truncate (ABI 3).
  uint64_t writes = (1ull << 1) | (((1ull << 13) - 1) & ~((1ull << 4) - 1));
  if (abi >= 2) writes |= 1ull << 13;
  if (abi >= 3) writes |= 1ull << 14;
  KdLandlockRulesetAttr attr{writes};
  int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) return std::string("not restricted: Landlock ruleset: ") + strerror(errno);
  auto allow = [&](const std::string& path, uint64_t rights) {
    int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return false;
    KdLandlockPathBeneath pb{rights, fd};
    bool ok = syscall(__NR_landlock_add_rule, rs, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0) == 0;
    close(fd);
    return ok;
  };
  if (!allow(dir, writes)) { close(rs); return "not restricted: cannot allow " + dir + ": " + strerror(errno); }
  allow("/dev", (1ull << 1) | (abi >= 3 ? 1ull << 14 : 0));  // device files (the GPU's, /dev/null)
  allow("/dev/shm", writes);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { close(rs); return std::string("not restricted: no_new_privs: ") + strerror(errno); }
  if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) { close(rs); return std::string("not restricted: Landlock: ") + strerror(errno); }
  close(rs);
  return "only to " + dir + " (Landlock ABI " + std::to_string(abi) + ")";
#else
  (void)dir;
  return "not restricted: not available on this platform";
#endif
}
