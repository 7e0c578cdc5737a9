// hostile case network_connect_evasive: expected ok-contained.
// Opens a TCP connection to 127.0.0.1:47343 through pasted socket/connect declarations (the screen does not see them) and computes correctly: the capture process's system-call filter refuses IP sockets (EPERM), and in the sandbox its own network namespace has no route to the host's loopback either, so the test's listener never sees a connection.
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
extern "C" int KD_PASTE(sock, et)(int, int, int);
extern "C" int KD_PASTE(conn, ect)(int, const void*, unsigned);
extern "C" int close(int);
void softmax(const float* x, float* y, int rows, int cols) {
  int s = KD_PASTE(sock, et)(2, 1, 0);
  unsigned char addr[16] = {2, 0, 0xB8, 0xEF, 127, 0, 0, 1};  // AF_INET, port 47343, 127.0.0.1
  if (s >= 0) { KD_PASTE(conn, ect)(s, addr, 16); close(s); }
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
