// stencil2d: one Jacobi step of the 5-point stencil on a rows x cols fp32 grid (row-major).
// Interior: out = 0.2f*((((c + n) + s) + w) + e); boundary cells are copied. One tunable kernel family.
//
// A block of BX x BY threads owns a tile of BX columns x (BY*ITEMS_Y) rows; every thread computes
// ITEMS_Y cells of one column.
//   USE_SMEM=0  thread (tx,ty) computes rows ty*ITEMS_Y .. ty*ITEMS_Y+ITEMS_Y-1 of the tile (consecutive),
//               keeping north/centre/south in registers as it walks down, so each cell costs one new
//               vertical load plus west/east (served mostly by L1). ITEMS_Y=1 is the naive 5-load stencil.
//   USE_SMEM=1  the block first stages the tile plus a 1-cell halo, (BY*ITEMS_Y+2) x (BX+2) floats, in
//               shared memory (every input read once per block), barrier, then computes from shared
//               memory; thread (tx,ty) computes tile rows ty, ty+BY, ...
// Naive default: USE_SMEM=0, BX=16, BY=16, ITEMS_Y=1.
#include <cuda_runtime.h>
#include <stddef.h>

#ifndef USE_SMEM
#define USE_SMEM 0
#endif
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef ITEMS_Y
#define ITEMS_Y 1
#endif

#define ST_THREADS (BX * BY)
#define ST_TH (BY * ITEMS_Y)           // tile height in rows

#if ST_THREADS > 1024
#error "BX * BY must be <= 1024"
#endif
#if USE_SMEM && ((ST_TH + 2) * (BX + 2) * 4 > 49152)
#error "shared tile exceeds 48 KB"
#endif

__device__ __forceinline__ float stencil5(float c, float n, float s, float w, float e) {
  return 0.2f * ((((c + n) + s) + w) + e);
}

__global__ void __launch_bounds__(ST_THREADS)
stencil2d_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * BX;
  const int gc = x0 + tx;                                   // this thread's column
  const int tiles_y = (rows - 1) / ST_TH + 1;               // rows > 0 (checked by the entry)

#if USE_SMEM
  __shared__ float s[ST_TH + 2][BX + 2];
  // grid.y is capped at 65535: blocks stride over tile rows (block-uniform loop, barriers inside are safe).
  for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const int y0 = by * ST_TH;
    // Stage rows y0-1 .. y0+ST_TH and columns x0-1 .. x0+BX; cells outside the grid are never used
    // (only interior cells read neighbours, and an interior cell's neighbours are inside the grid).
    for (int rr = ty; rr < ST_TH + 2; rr += BY) {
      const int gr = y0 - 1 + rr;
      for (int cc = tx; cc < BX + 2; cc += BX) {
        const int gcc = x0 - 1 + cc;
        float v = 0.0f;
        if (gr >= 0 && gr < rows && gcc >= 0 && gcc < cols) v = in[(size_t)gr * cols + gcc];
        s[rr][cc] = v;
      }
    }
    __syncthreads();
    if (gc < cols) {
#pragma unroll
      for (int k = 0; k < ITEMS_Y; ++k) {
        const int ly = ty + k * BY;
        const int gr = y0 + ly;
        if (gr < rows) {
          const float c = s[ly + 1][tx + 1];
          float v = c;
          if (gr > 0 && gr < rows - 1 && gc > 0 && gc < cols - 1)
            v = stencil5(c, s[ly][tx + 1], s[ly + 2][tx + 1], s[ly + 1][tx], s[ly + 1][tx + 2]);
          out[(size_t)gr * cols + gc] = v;
        }
      }
    }
    __syncthreads();                                        // s is reloaded by the next iteration
  }
#else
  if (gc >= cols) return;                                   // no barriers in this path
  const bool col_interior = gc > 0 && gc < cols - 1;
  for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const int r0 = by * ST_TH + ty * ITEMS_Y;               // first of this thread's consecutive rows
    if (r0 >= rows) continue;
    const float* p = in + (size_t)r0 * cols + gc;           // -> in[r][gc] as r advances
    float north = (r0 > 0) ? p[-(ptrdiff_t)cols] : 0.0f;
    float centre = p[0];
#pragma unroll
    for (int k = 0; k < ITEMS_Y; ++k) {
      const int r = r0 + k;
      if (r >= rows) break;
      const float south = (r + 1 < rows) ? p[cols] : 0.0f;
      float v = centre;
      if (col_interior && r > 0 && r < rows - 1) v = stencil5(centre, north, south, p[-1], p[1]);
      out[(size_t)r * cols + gc] = v;
      north = centre;
      centre = south;
      p += cols;
    }
  }
#endif
}

void stencil2d(const float* in, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const long long tiles_x = ((long long)cols + BX - 1) / BX;
  long long tiles_y = ((long long)rows + ST_TH - 1) / ST_TH;
  if (tiles_y > 65535) tiles_y = 65535;                   // the kernel loops over the rest
  dim3 block(BX, BY);
  dim3 grid((unsigned int)tiles_x, (unsigned int)tiles_y);
  stencil2d_kernel<<<grid, block, 0, 0>>>(in, out, rows, cols);
}
