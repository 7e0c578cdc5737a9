// transpose: out (cols x rows) = transpose of in (rows x cols), fp32, row-major. One tunable kernel family.
//
// A block owns a TILE_Y x TILE_X tile of `in` (TILE_Y input rows, TILE_X input columns) and has
// (TILE_X/VEC) x BLOCK_ROWS threads; thread (tx, ty) reads in[y0 + j][x0 + tx*VEC .. +VEC) for
// j = ty, ty+BLOCK_ROWS, ... (coalesced along the row).
//   USE_SMEM=0  each thread writes its element straight to out[x0+tx][y0+j]: consecutive lanes write
//               addresses `rows` floats apart (uncoalesced writes, the naive transpose); VEC is 1
//   USE_SMEM=1  the tile is staged in shared memory tile[TILE_Y][TILE_X+PAD]; after a barrier the block
//               writes the transposed tile row by row of `out` (consecutive lanes -> consecutive addresses)
//   VEC         floats per global load and store (USE_SMEM=1): 1, 2 or 4 (128-bit). A vector that is
//               not aligned or crosses the matrix edge is moved as scalars (any size is correct)
//   PAD         floats of padding per shared row; PAD=1 makes the column-wise reads conflict-free
//   SWIZZLE     1: no padding; element (j, i) of the tile is kept at column i ^ ((j/VEC) % 32) of row j,
//               which makes both the row-wise writes and the column-wise reads conflict-free
//   REG4        1: no shared memory and no barrier: each thread moves TILE_Y / (4*BLOCK_ROWS) 4 x 4 blocks,
//               each read as four float4 (4 input rows) and written, transposed in registers, as four
//               float4 (4 output rows). Consecutive lanes take consecutive 4-row blocks of one 4-column
//               strip (then the next strip), so with TILE_Y <= 64 every warp load and store uses whole
//               32-byte sectors. Needs USE_SMEM=0, VEC=4; a block not fully inside the matrix, or any
//               matrix whose rows/cols are not multiples of 4 or whose pointers are not 16-byte aligned,
//               is moved element by element with bounds checks.
//   DIAG        1: blocks take tiles in diagonal order (block b of the launch -> tile row b % grid.y,
//               tile column (b / grid.y + b % grid.y) % grid.x): blocks running together spread over
//               all rows and columns of both matrices instead of a band of input rows / output
//               columns (the power-of-two strides of 8192 x 8192 otherwise meet few DRAM banks:
//               "partition camping"). Only on the VEC > 1 and REG4 kernels.
//   STREAM      1: global loads and stores with streaming cache hints (__ldcs / __stcs: evict first,
//               each byte is touched once); 0: __ldg loads and plain stores. Only with VEC > 1.
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
#ifndef VEC
#define VEC 1
#endif
#ifndef SWIZZLE
#define SWIZZLE 0
#endif
#ifndef REG4
#define REG4 0
#endif
#ifndef STREAM
#define STREAM 0
#endif
#ifndef DIAG
#define DIAG 0
#endif

#if VEC != 1 && VEC != 2 && VEC != 4
#error "VEC must be 1, 2 or 4"
#endif
#if VEC > 1 && !USE_SMEM && !REG4
#error "VEC > 1 needs USE_SMEM=1 or REG4=1"
#endif
#if REG4 && (USE_SMEM || VEC != 4 || PAD != 0 || SWIZZLE)
#error "REG4 needs USE_SMEM=0, VEC=4, PAD=0, SWIZZLE=0"
#endif
#if REG4 && (TILE_Y % (4 * BLOCK_ROWS)) != 0
#error "REG4 needs TILE_Y a multiple of 4 * BLOCK_ROWS"
#endif
#if STREAM && VEC == 1
#error "STREAM needs VEC > 1"
#endif
#if DIAG && VEC == 1
#error "DIAG needs VEC > 1"
#endif
#if (TILE_X % VEC) != 0 || (TILE_Y % VEC) != 0
#error "VEC must divide TILE_X and TILE_Y"
#endif
#if SWIZZLE && (!USE_SMEM || PAD != 0 || TILE_X < 32 || (TILE_X & (TILE_X - 1)) != 0)
#error "SWIZZLE needs USE_SMEM=1, PAD=0 and TILE_X a power of two >= 32"
#endif
#define TR_TX (TILE_X / VEC)              // threads along a tile row
#define TR_THREADS (TR_TX * BLOCK_ROWS)
#define TR_ITERS (TILE_Y / BLOCK_ROWS)    // loads per thread, and stores per thread

#if TR_THREADS > 1024
#error "(TILE_X / VEC) * BLOCK_ROWS must be <= 1024"
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

// Shared column of tile element (row j, column i).
__device__ __forceinline__ int tr_scol(int j, int i) {
#if SWIZZLE
  return i ^ ((j / VEC) & 31);   // TILE_X is a power of two >= 32: a permutation of the row
#else
  (void)j;
  return i;
#endif
}

// Global accesses of the VEC > 1 paths: streaming hints with STREAM=1.
#if STREAM
#define TR_LDG(p) __ldcs(p)
#define TR_STG(p, v) __stcs((p), (v))
#else
#define TR_LDG(p) __ldg(p)
#define TR_STG(p, v) (*(p) = (v))
#endif

// The tile (column tbx, first row tby0 of the grid-stride loop) this block starts with.
__device__ __forceinline__ void tr_block_tile(int& tbx, int& tby0) {
#if DIAG
  const long long b = blockIdx.x + (long long)gridDim.x * blockIdx.y;   // launch order
  tby0 = (int)(b % gridDim.y);
  tbx = (int)((b / gridDim.y + tby0) % gridDim.x);   // for each row, a rotation of the columns: a bijection
#else
  tbx = blockIdx.x;
  tby0 = blockIdx.y;
#endif
}

__device__ __forceinline__ bool tr_aligned(const void* p) {
  return (((unsigned long long)p) % (VEC * sizeof(float))) == 0;
}

// VEC=1 without swizzling: one element per thread, the kernel as it was before VEC and SWIZZLE
// existed. Kept as its own code: the general path below, at VEC=1, measured 207 µs against this
// one's 159 µs at USE_SMEM=1, TILE_X=64, TILE_Y=8, BLOCK_ROWS=2 on the H200 (2026-12-01), so the
// configurations recorded before VEC existed keep their speed.
#if VEC == 1 && !SWIZZLE
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
#elif REG4
#define TR_NB (TILE_Y / (4 * BLOCK_ROWS))   // 4 x 4 blocks per thread
#define TR_BJ (TILE_Y / 4)                  // 4-row blocks along a tile column strip
__global__ void __launch_bounds__(TR_THREADS)
transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int tid = threadIdx.y * TR_TX + threadIdx.x;
  int tbx, tby0;
  tr_block_tile(tbx, tby0);                                   // DIAG: diagonal order
  const int x0 = tbx * TILE_X;                                // first input column of the tile
  const int tiles_y = (rows - 1) / TILE_Y + 1;                 // rows > 0 (checked by the entry)
  // float4 everywhere needs 16-byte aligned rows of both matrices.
  const bool vec_ok = ((rows | cols) & 3) == 0 && ((((unsigned long long)in) | ((unsigned long long)out)) & 15) == 0;

  // grid.y is capped at 65535, so blocks stride over the tile rows (block-uniform loop).
  // (unroll 1: a runtime-bound loop; it also keeps this loop out of the optimiser's unroll sites,
  // which name loops by kernel and position and would meet the same-named loop of the VEC=1 kernel)
#pragma unroll 1
  for (int by = tby0; by < tiles_y; by += gridDim.y) {
    const int y0 = by * TILE_Y;                               // first input row of the tile
    float4 v[TR_NB][4];                                       // v[b][q] = in[r+q][c..c+3] of block b
#pragma unroll
    for (int b = 0; b < TR_NB; ++b) {
      const int e = tid + b * TR_THREADS;                     // < (TILE_X/4) * (TILE_Y/4)
      const int r = y0 + 4 * (e % TR_BJ), c = x0 + 4 * (e / TR_BJ);
      if (vec_ok && r + 4 <= rows && c + 4 <= cols) {
        const float* p = in + (size_t)r * cols + c;
#pragma unroll
        for (int q = 0; q < 4; ++q) v[b][q] = TR_LDG(reinterpret_cast<const float4*>(p + (size_t)q * cols));
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const bool rin = r + q < rows;
          const float* p = in + (size_t)(rin ? r + q : 0) * cols + c;
          v[b][q].x = (rin && c + 0 < cols) ? p[0] : 0.f;
          v[b][q].y = (rin && c + 1 < cols) ? p[1] : 0.f;
          v[b][q].z = (rin && c + 2 < cols) ? p[2] : 0.f;
          v[b][q].w = (rin && c + 3 < cols) ? p[3] : 0.f;
        }
      }
    }
#pragma unroll
    for (int b = 0; b < TR_NB; ++b) {
      const int e = tid + b * TR_THREADS;
      const int r = y0 + 4 * (e % TR_BJ), c = x0 + 4 * (e / TR_BJ);
      // out[c+p][r..r+3] = (v[b][0].p, v[b][1].p, v[b][2].p, v[b][3].p)
      const float4 o0 = make_float4(v[b][0].x, v[b][1].x, v[b][2].x, v[b][3].x);
      const float4 o1 = make_float4(v[b][0].y, v[b][1].y, v[b][2].y, v[b][3].y);
      const float4 o2 = make_float4(v[b][0].z, v[b][1].z, v[b][2].z, v[b][3].z);
      const float4 o3 = make_float4(v[b][0].w, v[b][1].w, v[b][2].w, v[b][3].w);
      if (vec_ok && r + 4 <= rows && c + 4 <= cols) {
        float* p = out + (size_t)c * rows + r;
        TR_STG(reinterpret_cast<float4*>(p), o0);
        TR_STG(reinterpret_cast<float4*>(p + (size_t)rows), o1);
        TR_STG(reinterpret_cast<float4*>(p + 2 * (size_t)rows), o2);
        TR_STG(reinterpret_cast<float4*>(p + 3 * (size_t)rows), o3);
      } else {
        const float4 o[4] = {o0, o1, o2, o3};
#pragma unroll
        for (int q = 0; q < 4; ++q) {                         // out row c+q
          if (c + q >= cols) continue;
          float* p = out + (size_t)(c + q) * rows + r;
          if (r + 0 < rows) p[0] = o[q].x;
          if (r + 1 < rows) p[1] = o[q].y;
          if (r + 2 < rows) p[2] = o[q].z;
          if (r + 3 < rows) p[3] = o[q].w;
        }
      }
    }
  }
}
#else
__global__ void __launch_bounds__(TR_THREADS)
transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
#if USE_SMEM
  __shared__ float tile[TILE_Y][TILE_X + PAD];
#endif
  const int tx = threadIdx.x, ty = threadIdx.y;
  int tbx, tby0;
  tr_block_tile(tbx, tby0);                                   // DIAG: diagonal order
  const int x0 = tbx * TILE_X;                                // first input column of the tile
  const int tiles_y = (rows - 1) / TILE_Y + 1;                 // rows > 0 (checked by the entry)
  const int c = x0 + tx * VEC;                                 // this thread's first input column

  // grid.y is capped at 65535, so blocks stride over the tile rows (block-uniform loop).
  for (int by = tby0; by < tiles_y; by += gridDim.y) {
    const int y0 = by * TILE_Y;                               // first input row of the tile
#pragma unroll
    for (int k = 0; k < TR_ITERS; ++k) {
      const int j = ty + k * BLOCK_ROWS;
      const int r = y0 + j;
#if USE_SMEM
      if (r < rows) {
        const float* p = in + (size_t)r * cols + c;
#if VEC == 4
        if (c + 3 < cols && tr_aligned(p)) {
          const float4 v = TR_LDG(reinterpret_cast<const float4*>(p));
          tile[j][tr_scol(j, tx * 4 + 0)] = v.x;
          tile[j][tr_scol(j, tx * 4 + 1)] = v.y;
          tile[j][tr_scol(j, tx * 4 + 2)] = v.z;
          tile[j][tr_scol(j, tx * 4 + 3)] = v.w;
        } else
#elif VEC == 2
        if (c + 1 < cols && tr_aligned(p)) {
          const float2 v = TR_LDG(reinterpret_cast<const float2*>(p));
          tile[j][tr_scol(j, tx * 2 + 0)] = v.x;
          tile[j][tr_scol(j, tx * 2 + 1)] = v.y;
        } else
#endif
        {
#pragma unroll
          for (int q = 0; q < VEC; ++q)
            if (c + q < cols) tile[j][tr_scol(j, tx * VEC + q)] = TR_LDG(p + q);
        }
      }
#else
      if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
#endif
    }
#if USE_SMEM
    __syncthreads();
    // Write the transposed tile: out rows x0..x0+TILE_X-1, out columns y0..y0+TILE_Y-1, VEC at a time.
    // Linear vector e -> (out row i = e / (TILE_Y/VEC), out columns j..j+VEC-1, j = VEC * (e % (TILE_Y/VEC))):
    // lanes run along j.
    const int tid = ty * TR_TX + tx;
#pragma unroll
    for (int k = 0; k < TR_ITERS; ++k) {
      const int e = tid + k * TR_THREADS;                     // < TILE_X * TILE_Y / VEC
      const int i = e / (TILE_Y / VEC), j = (e % (TILE_Y / VEC)) * VEC;
      const int oc = x0 + i, orr = y0 + j;                    // oc = input column, orr = input row
      if (oc < cols) {
        float* p = out + (size_t)oc * rows + orr;
#if VEC == 4
        if (orr + 3 < rows && tr_aligned(p)) {
          TR_STG(reinterpret_cast<float4*>(p), make_float4(tile[j][tr_scol(j, i)], tile[j + 1][tr_scol(j + 1, i)],
                                                           tile[j + 2][tr_scol(j + 2, i)], tile[j + 3][tr_scol(j + 3, i)]));
        } else
#elif VEC == 2
        if (orr + 1 < rows && tr_aligned(p)) {
          TR_STG(reinterpret_cast<float2*>(p), make_float2(tile[j][tr_scol(j, i)], tile[j + 1][tr_scol(j + 1, i)]));
        } else
#endif
        {
#pragma unroll
          for (int q = 0; q < VEC; ++q)
            if (orr + q < rows) TR_STG(p + q, tile[j + q][tr_scol(j + q, i)]);
        }
      }
    }
    __syncthreads();                                          // tile is reused by the next iteration
#endif
  }
}
#endif

void transpose(const float* in, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const long long tiles_x = ((long long)cols + TILE_X - 1) / TILE_X;
  long long tiles_y = ((long long)rows + TILE_Y - 1) / TILE_Y;
  if (tiles_y > 65535) tiles_y = 65535;                     // the kernel loops over the rest
  dim3 block(TR_TX, BLOCK_ROWS);
  dim3 grid((unsigned int)tiles_x, (unsigned int)tiles_y);
  transpose_kernel<<<grid, block, 0, 0>>>(in, out, rows, cols);
}
