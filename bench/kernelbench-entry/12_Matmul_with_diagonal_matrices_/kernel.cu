// CUDA entry point for KernelBench level 1, problem 12 (Matmul with diagonal matrices):
//   out = diag(A) @ B, i.e. out[i][j] = A[i] * B[i][j];  A: [4096], B, out: [4096, 4096] f32
// A naive baseline written for KernelDuel (not from KernelBench): a 2-D grid, each block ROWS rows
// by BLOCK * VEC columns; a thread reads A[i] once per row and scales VEC consecutive elements.
// Tunables: BLOCK (threads per block), VEC (1, 2, 4: float, float2, float4), ROWS (rows per block).
// Sizes are constants of the kernel (KB_N rows, KB_M columns).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef KB_N
#define KB_N 4096
#endif
#ifndef KB_M
#define KB_M 4096
#endif

__global__ void __launch_bounds__(BLOCK) diag_scale_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out, int n, int m) {
  const int c = (blockIdx.x * BLOCK + threadIdx.x) * VEC;  // first column of this thread
  const bool whole = m % VEC == 0;                        // every row starts VEC-aligned
#pragma unroll
  for (int r = 0; r < ROWS; r++) {
    const int i = blockIdx.y * ROWS + r;
    if (i >= n) break;
    const float a = A[i];
    const long long row = (long long)i * m;
    if (whole && c + VEC <= m) {
#if VEC == 4
      float4 v = reinterpret_cast<const float4*>(B + row)[c / 4];
      v.x *= a; v.y *= a; v.z *= a; v.w *= a;
      reinterpret_cast<float4*>(out + row)[c / 4] = v;
#elif VEC == 2
      float2 v = reinterpret_cast<const float2*>(B + row)[c / 2];
      v.x *= a; v.y *= a;
      reinterpret_cast<float2*>(out + row)[c / 2] = v;
#else
      out[row + c] = a * B[row + c];
#endif
    } else {
      for (int j = c; j < c + VEC && j < m; j++) out[row + j] = a * B[row + j];
    }
  }
}

void model_forward(const float* A, const float* B, float* out) {
  const int cols_per_block = BLOCK * VEC;
  dim3 grid((KB_M + cols_per_block - 1) / cols_per_block, (KB_N + ROWS - 1) / ROWS);
  diag_scale_kernel<<<grid, BLOCK>>>(A, B, out, KB_N, KB_M);
}
