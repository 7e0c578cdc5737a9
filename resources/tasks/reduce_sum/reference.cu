// Reference: out[0] = sum of x, in double. Two simple passes: RP threads each sum a strided
// subset of x into a double partial, then one thread adds the partials in order.
#include <cuda_runtime.h>

#define RS_REF_PARTIALS 16384
__device__ double rs_ref_partials[RS_REF_PARTIALS];

__global__ void reduce_ref_partials(const float* x, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= RS_REF_PARTIALS) return;
  double s = 0.0;
  for (long long i = t; i < n; i += RS_REF_PARTIALS) s += x[i];
  rs_ref_partials[t] = s;
}

__global__ void reduce_ref_final(float* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double s = 0.0;
  for (int t = 0; t < RS_REF_PARTIALS; ++t) s += rs_ref_partials[t];
  out[0] = (float)s;
}

void reduce_sum(const float* x, float* out, int n) {
  reduce_ref_partials<<<RS_REF_PARTIALS / 256, 256, 0, 0>>>(x, n);
  reduce_ref_final<<<1, 1, 0, 0>>>(out);
}
