// GPU clocks, temperature and power read by the judge itself through NVML (the driver's
// libnvidia-ml, opened at run time), just before and just after it times: microseconds instead of
// an nvidia-smi process on the measurement's critical path. Absent NVML, no readings (the engine
// then asks nvidia-smi).
#pragma once
#include "kd_common.h"
#include <dlfcn.h>

struct ClockReading {
  bool ok = false;
  unsigned sm_mhz = 0, mem_mhz = 0, temp_c = 0, power_mw = 0;
};

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_bus_fn)(const char*, void**);
typedef int (*nvml_clock_fn)(void*, int, unsigned*);
typedef int (*nvml_temp_fn)(void*, int, unsigned*);
typedef int (*nvml_power_fn)(void*, unsigned*);
static struct {
  bool tried = false;
  void* dev = nullptr;
  nvml_clock_fn clock = nullptr;
  nvml_temp_fn temp = nullptr;
  nvml_power_fn power = nullptr;
} g_nvml;

static void nvml_open() {
  if (g_nvml.tried) return;
  g_nvml.tried = true;
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  nvml_init_fn init = (nvml_init_fn)dlsym(h, "nvmlInit_v2");
  nvml_by_bus_fn by_bus = (nvml_by_bus_fn)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
  g_nvml.clock = (nvml_clock_fn)dlsym(h, "nvmlDeviceGetClockInfo");
  g_nvml.temp = (nvml_temp_fn)dlsym(h, "nvmlDeviceGetTemperature");
  g_nvml.power = (nvml_power_fn)dlsym(h, "nvmlDeviceGetPowerUsage");
  if (!init || !by_bus || !g_nvml.clock || init() != 0) return;
  int dev = 0;
  char bus[64] = {0};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) return;
  void* d = nullptr;
  if (by_bus(bus, &d) == 0) g_nvml.dev = d;
}

static ClockReading read_clocks() {
  ClockReading c;
  nvml_open();
  if (!g_nvml.dev) return c;
  // NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0; power in milliwatts.
  c.ok = g_nvml.clock(g_nvml.dev, 1, &c.sm_mhz) == 0;
  g_nvml.clock(g_nvml.dev, 2, &c.mem_mhz);
  if (g_nvml.temp) g_nvml.temp(g_nvml.dev, 0, &c.temp_c);
  if (g_nvml.power) g_nvml.power(g_nvml.dev, &c.power_mw);
  return c;
}

// The fields of main/engine/base/types.ts ClockReading.
static std::string clocks_json(const ClockReading& c) {
  char b[160];
  snprintf(b, sizeof b, "{\"smMHz\":%u,\"memMHz\":%u,\"tempC\":%u,\"powerW\":%.1f}", c.sm_mhz, c.mem_mhz, c.temp_c, c.power_mw / 1000.0);
  return b;
}
