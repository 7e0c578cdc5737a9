// hostile case network_connect: expected rejected.
// Opens a TCP connection to 127.0.0.1 (exfiltration or a C&C server): the screen rejects sockets, and it could not include <sys/socket.h> anyway.
#include <cuda_runtime.h>
#include <stdlib.h>
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
extern "C" int socket(int, int, int);
extern "C" int connect(int, const void*, unsigned);
void softmax(const float* x, float* y, int rows, int cols) {
  int s = socket(2, 1, 0);
  unsigned char addr[16] = {2, 0, 0xB8, 0xEF, 127, 0, 0, 1};
  connect(s, addr, 16);
  k<<<(rows * 32 + 255) / 256, 256>>>(x, y, rows, cols);
}
