// CUDA entry point for KernelBench level 1, problem 88 (MinGPTNewGelu):
//   out = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),  x: [8192, 8192] f32
// A naive elementwise baseline written for KernelDuel (not from KernelBench): one thread per VEC
// consecutive elements, ITEMS such groups per thread (BLOCK apart, so a warp's loads stay
// coalesced). Tunables: BLOCK (threads per block), VEC (1, 2, 4: float, float2, float4 loads),
// ITEMS (groups per thread). The size is a constant of the kernel (KB_ROWS x KB_COLS).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef KB_ROWS
#define KB_ROWS 8192
#endif
#ifndef KB_COLS
#define KB_COLS 8192
#endif

__device__ __forceinline__ float gelu_tanh(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * (x * x * x))));
}

__global__ void __launch_bounds__(BLOCK) gelu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long groups = n / VEC;
  const long long base = (long long)blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const long long g = base + (long long)k * BLOCK;
    if (g >= groups) break;
#if VEC == 4
    float4 v = reinterpret_cast<const float4*>(x)[g];
    v.x = gelu_tanh(v.x); v.y = gelu_tanh(v.y); v.z = gelu_tanh(v.z); v.w = gelu_tanh(v.w);
    reinterpret_cast<float4*>(y)[g] = v;
#elif VEC == 2
    float2 v = reinterpret_cast<const float2*>(x)[g];
    v.x = gelu_tanh(v.x); v.y = gelu_tanh(v.y);
    reinterpret_cast<float2*>(y)[g] = v;
#else
    y[g] = gelu_tanh(x[g]);
#endif
  }
  // The elements after the last whole group (none when n is a multiple of VEC).
  if (blockIdx.x == 0)
    for (long long i = groups * VEC + threadIdx.x; i < n; i += BLOCK) y[i] = gelu_tanh(x[i]);
}

void model_forward(const float* x, float* out) {
  const long long n = (long long)KB_ROWS * KB_COLS;
  const long long groups = n / VEC;
  long long blocks = (groups + (long long)BLOCK * ITEMS - 1) / ((long long)BLOCK * ITEMS);
  if (blocks < 1) blocks = 1;
  gelu_kernel<<<(unsigned)blocks, BLOCK>>>(x, out, n);
}
