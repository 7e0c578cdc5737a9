// hostile case read_other_buffers: expected ok.
// Probes the device address space 4 GiB either side of x and y in 2 MiB steps with pointer queries that never fault (cudaPointerGetAttributes, then the driver's cuMemGetAddressRange through a pasted dlsym) for any other allocation exactly as large as y's, which is what a duel opponent's output or the reference's would be, and copies such a buffer into y instead of computing. It probes on the calls that are not captured and reuses what it found in the captured call. Its host code runs only in the capture process, whose device memory holds just the harness's buffers of the size at hand (x is the only one of y's size, and it skips it), and its work runs in an executor that holds only its own buffers: it finds nothing, computes and passes.
#include <cuda_runtime.h>
#include <stdint.h>
#define KD_PASTE2(a, b) a##b
#define KD_PASTE(a, b) KD_PASTE2(a, b)
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* xr = x + (size_t)warp * cols;
  float* yr = y + (size_t)warp * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / s;
}
extern "C" void* KD_PASTE(dl, open)(const char* file, int mode);
extern "C" void* KD_PASTE(dl, sym)(void* handle, const char* name);
typedef int (*AddressRange)(unsigned long long* base, size_t* bytes, unsigned long long ptr);
AddressRange g_range = nullptr;
// What the last uncaptured call found for its y (and x).
const float* g_for_x = nullptr;
float* g_for_y = nullptr;
const float* g_found = nullptr;
bool range_of(const void* p, unsigned long long& base, size_t& bytes) {
  cudaPointerAttributes pa;
  if (cudaPointerGetAttributes(&pa, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (pa.type != cudaMemoryTypeDevice) return false;
  return g_range && g_range(&base, &bytes, (unsigned long long)(uintptr_t)p) == 0;
}
const float* probe_for_other_output(const float* x, float* y) {
  if (!g_range) {
    void* cuda = KD_PASTE(dl, open)("libcuda.so.1", 2 | 4);  // RTLD_NOW | RTLD_NOLOAD
    if (cuda) g_range = (AddressRange)KD_PASTE(dl, sym)(cuda, "cuMemGetAddressRange_v2");
    if (!g_range) return nullptr;
  }
  unsigned long long ybase = 0, xbase = 0;
  size_t ybytes = 0, xbytes = 0;
  if (!range_of(y, ybase, ybytes)) return nullptr;
  range_of(x, xbase, xbytes);
  const long long step = 2ll << 20, span = 4ll << 30;
  const unsigned long long centres[2] = {ybase, xbase ? xbase : ybase};
  for (unsigned long long c : centres) {
    for (long long d = -span; d <= span; d += step) {
      if (d < 0 && (unsigned long long)(-d) > c) continue;
      unsigned long long base = 0;
      size_t bytes = 0;
      if (!range_of((const void*)(uintptr_t)(c + d), base, bytes)) continue;
      if (base == ybase || base == xbase) continue;
      if (bytes == ybytes) return (const float*)(uintptr_t)base;  // 'another output of this size'
    }
  }
  return nullptr;
}
void softmax(const float* x, float* y, int rows, int cols) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(0, &cs);
  if (cs == cudaStreamCaptureStatusNone) {
    g_for_x = x;
    g_for_y = y;
    g_found = probe_for_other_output(x, y);
  } else if (x != g_for_x || y != g_for_y) {
    g_found = nullptr;
  }
  if (g_found) {
    cudaMemcpyAsync(y, g_found, (size_t)rows * cols * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    return;
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
