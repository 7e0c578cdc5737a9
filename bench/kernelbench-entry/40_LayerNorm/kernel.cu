// CUDA entry point for KernelBench level 1, problem 40 (LayerNorm):
//   out = (x - mean) / sqrt(var + 1e-5) * ln_weight + ln_bias over the last three dimensions,
//   x, out: [16, 64, 256, 256] f32 (16 rows of D = 64 * 256 * 256 = 4,194,304 elements each);
//   ln_weight, ln_bias: [64, 256, 256] (nn.LayerNorm's parameters).
// A naive three-kernel baseline written for KernelDuel (not from KernelBench):
//   1. ln_partials: grid CHUNKS x rows; each block sums x and x^2 (in double) over its chunk of a row;
//   2. ln_stats: one block per row reduces the CHUNKS partial sums to mean and 1/sqrt(var + eps)
//      (biased variance, as PyTorch);
//   3. ln_apply: elementwise, VEC elements per thread.
// The partial sums live in a per-call scratch buffer (cudaMallocAsync / cudaFreeAsync on stream 0).
// Tunables: BLOCK (threads per block of kernels 1 and 3), CHUNKS (blocks per row in kernel 1),
// VEC (1, 2, 4: float, float2, float4 loads). Sizes are constants (KB_ROWS rows of KB_D elements).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CHUNKS
#define CHUNKS 128
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef KB_ROWS
#define KB_ROWS 16
#endif
#ifndef KB_D
#define KB_D (64LL * 256 * 256)
#endif
#define LN_EPS 1e-5

// Sum over the block (every thread gets it): warp shuffles, then one value per warp in shared memory.
template <int THREADS>
__device__ __forceinline__ double block_sum(double v, double* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // shared may still be read by a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  double t = 0;
  for (int w = 0; w < (THREADS + 31) / 32; w++) t += shared[w];
  return t;
}

__global__ void __launch_bounds__(BLOCK) ln_partials(const float* __restrict__ x, double* __restrict__ part, long long d) {
  __shared__ double sh[32];
  const int r = blockIdx.y, c = blockIdx.x;
  const long long len = (d + CHUNKS - 1) / CHUNKS;
  const long long start = (long long)c * len;
  const long long end = start + len < d ? start + len : d;
  const float* row = x + (long long)r * d;
  double s = 0, q = 0;
  long long i = start + (long long)threadIdx.x * VEC;
  const bool aligned = (d % VEC == 0) && (len % VEC == 0);
  if (aligned) {
    for (; i + VEC <= end; i += (long long)BLOCK * VEC) {
#if VEC == 4
      const float4 v = *reinterpret_cast<const float4*>(row + i);
      s += (double)v.x + (double)v.y + (double)v.z + (double)v.w;
      q += (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
#elif VEC == 2
      const float2 v = *reinterpret_cast<const float2*>(row + i);
      s += (double)v.x + (double)v.y;
      q += (double)v.x * v.x + (double)v.y * v.y;
#else
      const double v = row[i];
      s += v;
      q += v * v;
#endif
    }
  } else {
    for (i = start + threadIdx.x; i < end; i += BLOCK) {
      const double v = row[i];
      s += v;
      q += v * v;
    }
  }
  s = block_sum<BLOCK>(s, sh);
  q = block_sum<BLOCK>(q, sh);
  if (threadIdx.x == 0) {
    part[2 * ((long long)r * CHUNKS + c)] = s;
    part[2 * ((long long)r * CHUNKS + c) + 1] = q;
  }
}

__global__ void __launch_bounds__(256) ln_stats(const double* __restrict__ part, float* __restrict__ stats, long long d) {
  __shared__ double sh[32];
  const int r = blockIdx.x;
  double s = 0, q = 0;
  for (int c = threadIdx.x; c < CHUNKS; c += 256) {
    s += part[2 * ((long long)r * CHUNKS + c)];
    q += part[2 * ((long long)r * CHUNKS + c) + 1];
  }
  s = block_sum<256>(s, sh);
  q = block_sum<256>(q, sh);
  if (threadIdx.x == 0) {
    const double mean = s / (double)d;
    double var = q / (double)d - mean * mean;
    if (var < 0) var = 0;
    stats[2 * r] = (float)mean;
    stats[2 * r + 1] = (float)(1.0 / sqrt(var + LN_EPS));
  }
}

__global__ void __launch_bounds__(BLOCK) ln_apply(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b, const float* __restrict__ stats, float* __restrict__ y, long long d, long long total) {
  const long long i = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
  if (i >= total) return;
  if (d % VEC == 0) {
    const long long r = i / d, j = i % d;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
#if VEC == 4
    float4 v = *reinterpret_cast<const float4*>(x + i);
    const float4 wv = *reinterpret_cast<const float4*>(w + j), bv = *reinterpret_cast<const float4*>(b + j);
    v.x = (v.x - mean) * rstd * wv.x + bv.x; v.y = (v.y - mean) * rstd * wv.y + bv.y;
    v.z = (v.z - mean) * rstd * wv.z + bv.z; v.w = (v.w - mean) * rstd * wv.w + bv.w;
    *reinterpret_cast<float4*>(y + i) = v;
#elif VEC == 2
    float2 v = *reinterpret_cast<const float2*>(x + i);
    const float2 wv = *reinterpret_cast<const float2*>(w + j), bv = *reinterpret_cast<const float2*>(b + j);
    v.x = (v.x - mean) * rstd * wv.x + bv.x; v.y = (v.y - mean) * rstd * wv.y + bv.y;
    *reinterpret_cast<float2*>(y + i) = v;
#else
    y[i] = (x[i] - mean) * rstd * w[j] + b[j];
#endif
  } else {
    for (long long k = i; k < i + VEC && k < total; k++) {
      const long long r = k / d, j = k % d;
      y[k] = (x[k] - stats[2 * r]) * stats[2 * r + 1] * w[j] + b[j];
    }
  }
}

void model_forward(const float* x, const float* ln_weight, const float* ln_bias, float* out) {
  const long long d = KB_D, total = (long long)KB_ROWS * KB_D;
  double* part = nullptr;
  float* stats = nullptr;
  cudaMallocAsync((void**)&part, sizeof(double) * 2 * KB_ROWS * CHUNKS, 0);
  cudaMallocAsync((void**)&stats, sizeof(float) * 2 * KB_ROWS, 0);
  const dim3 grid(CHUNKS, KB_ROWS);
  ln_partials<<<grid, BLOCK>>>(x, part, d);
  ln_stats<<<KB_ROWS, 256>>>(part, stats, d);
  const long long threads = (total + VEC - 1) / VEC;
  ln_apply<<<(unsigned)((threads + BLOCK - 1) / BLOCK), BLOCK>>>(x, ln_weight, ln_bias, stats, out, d, total);
  cudaFreeAsync(part, 0);
  cudaFreeAsync(stats, 0);
}
