// hostile case persisting_l2: expected ok-honest.
// On its calls that are not captured, raises cudaLimitPersistingL2CacheSize to the device's maximum (pasted cudaDeviceSetLimit) and sets an access-policy window over x on stream 0 (persisting, hitRatio 1), so that its input would stay in L2 across the flush before every timed call; then computes correctly. The window is an attribute of a stream in the capture process, which the work description does not carry, and the executor sets the persisting L2 size to 0 and resets persisting lines before every timed call: measured honestly.
#include <cuda_runtime.h>
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
int g_max_window = -1;
void softmax(const float* x, float* y, int rows, int cols) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(0, &cs);
  if (cs == cudaStreamCaptureStatusNone) {
    int dev = 0;
    cudaGetDevice(&dev);
    if (g_max_window < 0) {
      int max_persist = 0;
      cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev);
      cudaDeviceGetAttribute(&g_max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev);
      KD_PASTE(cudaDevice, SetLimit)(cudaLimitPersistingL2CacheSize, (size_t)max_persist);
    }
    size_t bytes = (size_t)rows * cols * sizeof(float);
    cudaStreamAttrValue v = {};
    v.accessPolicyWindow.base_ptr = (void*)x;
    v.accessPolicyWindow.num_bytes = bytes < (size_t)g_max_window ? bytes : (size_t)g_max_window;
    v.accessPolicyWindow.hitRatio = 1.0f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &v);
    cudaGetLastError();  // a device without persisting L2 says no: not this variant's problem
  }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
