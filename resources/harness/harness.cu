// KernelDuel measurement harness. Generic: it knows nothing of any task. The engine writes a plan
// file (buffers, scalars, seeds, tolerances, timing settings); variants are shared libraries that
// export `kd_entry_packed(void**)` (a shim generated from the task's signature). One binary, four
// roles in separate processes (docs/ISOLATION.md):
//
//   kd_harness probe   <plan> <result.json>                          device facts, what works here
//   kd_harness capture <plan> <result.json> <variant.so> <work>      runs the variant's host code
//                      (sandboxed) and writes the GPU work it asks for (kd_capture.h)
//   kd_harness judge   <plan> <reference.so>                         long-lived, commands on stdin:
//                      checks, times and duels variants; never runs variant code (kd_judge.h);
//                      with the plan's `reference files` (a PyTorch task) <reference.so> is "files"
//                      and the reference data comes from PyTorch's files (kd_reffiles.h)
//   kd_harness exec    <plan>                                        started by the judge: runs one
//                      variant's rebuilt GPU work, no variant host code (kd_exec.h)
//   kd_harness filter-selftest|writes-selftest|fatbin-selftest|workdesc-selftest|reffiles-selftest ... tests without a GPU
//
// One-shot modes write <result.json> atomically, never to stdout, so a variant that floods stdout
// cannot forge it; exit code 0 also for a failure: the result says why.
#include "kd_common.h"
#include "kd_plan.h"
#include "kd_driver.h"
#include "kd_lockdown.h"
#include "kd_buffers.h"
#include "kd_fatbin.h"
#include "kd_workdesc.h"
#include "kd_compare.h"
#include "kd_capture.h"
#include "kd_exec.h"
#include "kd_judge.h"
#include "kd_reffiles.h"

static void write_result(const std::string& path, const std::string& nonce, const std::string& status, const std::string& error, const std::string& body) {
  std::string out = "{\"kdresult\":1,\"nonce\":" + jstr(nonce) + ",\"status\":" + jstr(status);
  if (!error.empty()) out += ",\"error\":" + jstr(error);
  out += ",\"body\":{" + body + "}}\n";
  write_file_atomic(path, out);
}

// Device facts, the overhead of an empty timed region, and whether the driver has what the
// harness needs; run in the capture process's isolation so the engine learns what works there.
static std::string mode_probe() {
  std::string body = device_json();
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
  bool driver = load_driver();
  // Stream capture on the per-thread default stream, as the capture mode does it.
  cudaGraph_t g = nullptr;
  std::string capture = "ok";
  if (cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal) != cudaSuccess || cudaStreamEndCapture(cudaStreamPerThread, &g) != cudaSuccess) capture = cudaGetErrorString(cudaGetLastError());
  if (g) cudaGraphDestroy(g);
  return body + ",\"emptyWallMs\":" + jnum(wall[wall.size() / 2]) + ",\"syscallFilter\":" + jstr(g_filter_state) + ",\"writes\":" + jstr(g_writes_state) + ",\"driverApi\":" + jstr(driver ? "ok" : "missing " + g_driver_missing) +
         ",\"capture\":" + jstr(capture);
}

int main(int argc, char** argv) {
  g_t_main = epoch_ms();
  if (argc < 3) {
    fprintf(stderr, "usage: kd_harness probe|capture|judge|exec|filter-selftest|fatbin-selftest|workdesc-selftest <plan> ...\n");
    return 64;
  }
  std::string mode = argv[1];
  Plan plan = read_plan(argv[2]);
  g_spread_large = plan.spread_large;
  if (mode == "judge" && argc >= 4) return mode_judge(argv[2], argv[3]);
  if (mode == "exec") return mode_exec(plan);
  if (argc < 4) {
    fprintf(stderr, "kd_harness: %s needs <plan> <result.json>\n", mode.c_str());
    return 64;
  }
  std::string result = argv[3];
  std::string body;
  try {
    if (mode == "filter-selftest") body = mode_filter_selftest();
    else if (mode == "reffiles-selftest") body = mode_reffiles_selftest(plan);
    else if (mode == "writes-selftest" && argc >= 5) {
      // Restricts writes to the working folder, then tries what a variant's host code would.
      char cwd[PATH_MAX];
      if (!getcwd(cwd, sizeof cwd)) fail("runtime", "no working folder");
      std::string state = restrict_writes(cwd);
      auto try_open = [](const std::string& path, int flags) {
        int fd = open(path.c_str(), flags | O_CLOEXEC, 0600);
        if (fd < 0) return (long)-errno;
        close(fd);
        return 0L;
      };
      std::string outside = argv[4];
      body = "\"state\":" + jstr(state) + ",\"own\":" + std::to_string(try_open(std::string(cwd) + "/x.bin", O_WRONLY | O_CREAT)) +
             ",\"outsideNew\":" + std::to_string(try_open(outside + "/planted.bin", O_WRONLY | O_CREAT)) +
             ",\"outsideExisting\":" + std::to_string(try_open(outside + "/existing.bin", O_WRONLY)) +
             ",\"readOutside\":" + std::to_string(try_open(outside + "/existing.bin", O_RDONLY)) +
             ",\"procMem\":" + std::to_string(try_open("/proc/self/mem", O_RDWR)) + ",\"devNull\":" + std::to_string(try_open("/dev/null", O_WRONLY)) +
             ",\"eacces\":" + std::to_string(EACCES);
    }
    else if (mode == "fatbin-selftest" && argc >= 5) body = mode_fatbin_selftest(argv[4], std::vector<std::string>(argv + 5, argv + argc));
    else if (mode == "workdesc-selftest" && argc >= 5) {
      std::vector<unsigned char> text, blob;
      std::string why;
      if (!read_file(argv[4], text, 64u << 20, &why)) fail("runtime", why);
      read_file(std::string(argv[4]) + ".blob", blob, (size_t)WD_MAX_BLOB, nullptr);
      WorkDesc w;
      std::string err = read_workdesc(std::string(text.begin(), text.end()), blob, plan, w);
      if (!err.empty()) fail("constraints", err);
      size_t code = 0;
      for (size_t i = 0; i < w.modules.size(); i++) {
        if (!w.modules[i].runtime) continue;
        std::vector<unsigned char> img;
        if (!read_code(argv[4], i, w.modules[i], img, why)) fail("constraints", why);
        code++;
      }
      size_t ops = 0;
      for (const SizeWork& s : w.sizes) ops += s.ops.size();
      body = "\"sizes\":" + std::to_string(w.sizes.size()) + ",\"ops\":" + std::to_string(ops) + ",\"modules\":" + std::to_string(w.modules.size()) + ",\"code\":" + std::to_string(code) + ",\"text\":" + jstr(write_workdesc(w));
    } else if (mode == "probe") {
      lock_down();
      char cwd[PATH_MAX];
      g_writes_state = getcwd(cwd, sizeof cwd) ? restrict_writes(cwd) : "not restricted: no working folder";
      body = mode_probe();
    } else if (mode == "capture" && argc >= 6) {
      setenv("CUDA_MODULE_LOADING", "LAZY", 1);  // the code search loads many fat binaries; nothing is timed here
      setenv("CUDA_CACHE_DISABLE", "1", 1);       // no JIT cache writes outside the run folder
      lock_down();
      char cwd[PATH_MAX];
      g_writes_state = getcwd(cwd, sizeof cwd) ? restrict_writes(cwd) : "not restricted: no working folder";
      g_t_locked = epoch_ms();
      body = "\"syscallFilter\":" + jstr(g_filter_state) + ",\"writes\":" + jstr(g_writes_state) + "," + mode_capture(plan, argv[4], argv[5], argc >= 7 && strcmp(argv[6], "gate") == 0);
    } else {
      fprintf(stderr, "kd_harness: bad arguments\n");
      return 64;
    }
  } catch (HarnessFailure& f) {
    write_result(result, plan.nonce, f.status, f.error, mode == "capture" ? "\"syscallFilter\":" + jstr(g_filter_state) + ",\"writes\":" + jstr(g_writes_state) : "");
    _exit(0);
  }
  write_result(result, plan.nonce, "ok", "", body);
  // Nothing of a variant may run after its result is written (destructors, atexit handlers).
  _exit(0);
}
