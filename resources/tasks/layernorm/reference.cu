// Reference: row-wise layer norm (biased variance, eps = 1e-5) in double precision, one block per
// row: the block's threads stride over the row and reduce its sum, then its sum of squared
// deviations from the mean, through shared memory, and write. Not one thread per row (the first
// reference): the judge runs the reference on fresh inputs for every verified timed call (1 in 8),
// and a reference far slower than the variants makes those runs most of a fast variant's timing
// (histogram's did, H100, 2026-12-07).
#include <cuda_runtime.h>
#include <math.h>

#define LAYERNORM_REF_BLOCK 256  // a power of two: the reductions halve it

__device__ double layernorm_ref_block_sum(double v, double* red) {
  const int t = threadIdx.x;
  red[t] = v;
  __syncthreads();
  for (int k = LAYERNORM_REF_BLOCK / 2; k > 0; k /= 2) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  const double total = red[0];
  __syncthreads();  // red is written again by the next sum
  return total;
}

__global__ void layernorm_ref_kernel(const float* x, const float* gamma, const float* beta, float* y,
                                     int rows, int cols) {
  __shared__ double red[LAYERNORM_REF_BLOCK];
  const int t = threadIdx.x;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;
  double s = 0.0;
  for (int c = t; c < cols; c += LAYERNORM_REF_BLOCK) s += xr[c];
  const double mean = layernorm_ref_block_sum(s, red) / cols;
  double q = 0.0;
  for (int c = t; c < cols; c += LAYERNORM_REF_BLOCK) { double d = xr[c] - mean; q += d * d; }
  const double rstd = 1.0 / sqrt(layernorm_ref_block_sum(q, red) / cols + 1e-5);
  for (int c = t; c < cols; c += LAYERNORM_REF_BLOCK)
    yr[c] = (float)(((double)xr[c] - mean) * rstd * (double)gamma[c] + (double)beta[c]);
}

void layernorm(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  layernorm_ref_kernel<<<rows, LAYERNORM_REF_BLOCK, 0, 0>>>(x, gamma, beta, y, rows, cols);
}
