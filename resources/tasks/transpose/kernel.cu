// transpose: out (cols x rows) = transpose of in (rows x cols), fp32, row-major. One tunable kernel family.
//
// A block owns a TILE_Y x TILE_X tile of `in` (TILE_Y input rows, TILE_X input columns) and has
// TILE_X x BLOCK_ROWS threads; thread (tx, ty) reads in[y0 + j][x0 + tx] for j = ty, ty+BLOCK_ROWS, ...
// (coalesced along the row).
//   USE_SMEM=0  each thread writes its element straight to out[x0+tx][y0+j]: consecutive lanes write
//               addresses `rows` floats apart (uncoalesced writes, the naive transpose)
//   USE_SMEM=1  the tile is staged in shared memory tile[TILE_Y][TILE_X+PAD]; after a barrier the block
//               writes the transposed tile row by row of `out` (consecutive lanes -> consecutive addresses)
//   PAD         floats of padding per shared row; PAD=1 makes the column-wise reads conflict-free
// Partial tiles (rows/cols not multiples of the tile) are bounds-checked element by element.
// Naive default: USE_SMEM=0, TILE_X=16, TILE_Y=16, BLOCK_ROWS=16 (16x16 blocks, one element per thread).
#include <cuda_runtime.h>

#ifndef USE_SMEM
#define USE_SMEM 0
#endif
#ifndef TILE_X
#define TILE_X 16
#endif
#ifndef TILE_Y
#define TILE_Y 16
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 16
#endif
#ifndef PAD
#define PAD 0
#endif

#if TILE_X * BLOCK_ROWS > 1024
#error "TILE_X * BLOCK_ROWS must be <= 1024"
#endif
#if BLOCK_ROWS > TILE_Y
#error "BLOCK_ROWS must be <= TILE_Y"
#endif
#if USE_SMEM && (TILE_Y * (TILE_X + PAD) * 4 > 49152)
#error "shared tile exceeds 48 KB"
#endif

#if TILE_Y % BLOCK_ROWS != 0
#error "BLOCK_ROWS must divide TILE_Y"
#endif

#define TR_THREADS (TILE_X * BLOCK_ROWS)
#define TR_ITERS (TILE_Y / BLOCK_ROWS)   // elements per thread, in both phases

__global__ void __launch_bounds__(TR_THREADS)
transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
#if USE_SMEM
  __shared__ float tile[TILE_Y][TILE_X + PAD];
#endif
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * TILE_X;                         // first input column of the tile
  const int tiles_y = (rows - 1) / TILE_Y + 1;                 // rows > 0 (checked by the entry)
  const int c = x0 + tx;

  // grid.y is capped at 65535, so blocks stride over the tile rows (block-uniform loop).
  for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const int y0 = by * TILE_Y;                               // first input row of the tile
#pragma unroll
    for (int k = 0; k < TR_ITERS; ++k) {
      const int j = ty + k * BLOCK_ROWS;
      const int r = y0 + j;
      if (r < rows && c < cols) {
        const float v = in[(size_t)r * cols + c];
#if USE_SMEM
        tile[j][tx] = v;
#else
        out[(size_t)c * rows + r] = v;
#endif
      }
    }
#if USE_SMEM
    __syncthreads();
    // Write the transposed tile: out rows x0..x0+TILE_X-1, out columns y0..y0+TILE_Y-1.
    // Linear element e -> (out row i = e / TILE_Y, out column j = e % TILE_Y): lanes run along j.
    const int tid = ty * TILE_X + tx;
#pragma unroll
    for (int k = 0; k < TR_ITERS; ++k) {
      const int e = tid + k * TR_THREADS;                     // < TILE_X * TILE_Y
      const int i = e / TILE_Y, j = e % TILE_Y;
      const int oc = x0 + i, orr = y0 + j;                    // oc = input column, orr = input row
      if (oc < cols && orr < rows) out[(size_t)oc * rows + orr] = tile[j][i];
    }
    __syncthreads();                                          // tile is reused by the next iteration
#endif
  }
}

void transpose(const float* in, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const long long tiles_x = ((long long)cols + TILE_X - 1) / TILE_X;
  long long tiles_y = ((long long)rows + TILE_Y - 1) / TILE_Y;
  if (tiles_y > 65535) tiles_y = 65535;                     // the kernel loops over the rest
  dim3 block(TILE_X, BLOCK_ROWS);
  dim3 grid((unsigned int)tiles_x, (unsigned int)tiles_y);
  transpose_kernel<<<grid, block, 0, 0>>>(in, out, rows, cols);
}
