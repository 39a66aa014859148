// mma_bf16.cuh: the warp-level tensor-core pieces the bf16 attention kernels share
// (attention_mma.cu for inference, attention_train_mma.cu for training): packing f32 pairs to bf16,
// mma.sync.m16n8k16 with bf16 operands and f32 accumulation, and ldmatrix loads of 8×8 b16
// matrices from shared memory (sm_80+). Included by .cu files only.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane = 4·group + quad:
//   A (16×16, row-major): a[0] row group, columns 2·quad, 2·quad + 1; a[1] row group + 8, the same
//     columns; a[2], a[3] the same rows at columns + 8.
//   B (16×8, "col"): b0 rows (k) 2·quad, 2·quad + 1 of column (n) group; b1 rows + 8.
//   C/D (16×8 f32): d[0], d[1] row group, columns 2·quad, 2·quad + 1; d[2], d[3] row group + 8.
// So the accumulators of two neighbouring n-tiles, packed pairwise, are an A fragment of the next
// product (FlashAttention-2's register reuse): A chunk c = {pack(s[2c][0..1]), pack(s[2c][2..3]),
// pack(s[2c+1][0..1]), pack(s[2c+1][2..3])}.
// online_softmax_step is the step both forward kernels take over a key tile held in accumulators.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/attention_tiles.cuh"

namespace s3::cuda::mma {

// Two floats as bf16 (round to nearest even), `low` in the low half (the lower column of a fragment).
__device__ inline uint32_t pack_bf16(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// d += a·b for a 16×16 bf16 A fragment, a 16×8 bf16 B fragment and a 16×8 f32 accumulator.
__device__ inline void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four 8×8 b16 matrices from shared memory: lanes 8j .. 8j + 7 give the rows of matrix j; lane
// 4·group + quad receives row group, columns 2·quad, 2·quad + 1 of each (.trans: column group, rows
// 2·quad, 2·quad + 1).
__device__ inline void load_matrices(uint32_t (&r)[4], const void* row) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}
__device__ inline void load_matrices_transposed(uint32_t (&r)[4], const void* row) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

// Where lane `lane` points ldmatrix for the three operand forms the kernels use, over bf16 rows
// `stride` bytes apart in shared memory (offsets in bytes from the tile's row r0 and column c0):
//   a_rows:      an A fragment of rows r0 .. r0 + 15, columns c0 .. c0 + 15 (load_matrices → a[0..3]);
//   b_rows:      the B fragments of two n-tiles whose columns (n) are the rows r0 .. r0 + 15 of the
//                tile and whose k runs along its columns c0 .. c0 + 15 (load_matrices → b[0], b[1] for
//                rows r0 .. r0 + 7, b[2], b[3] for r0 + 8 .. r0 + 15);
//   b_columns:   the B fragments of two n-tiles whose k runs along the rows r0 .. r0 + 15 and whose n
//                are the columns c0 .. c0 + 7 and c0 + 8 .. c0 + 15 (load_matrices_transposed →
//                b[0], b[1], then b[2], b[3]).
__device__ inline int a_rows_offset(int lane, int r0, int c0, int stride) {
  return (r0 + (lane & 7) + ((lane >> 3) & 1) * 8) * stride + (c0 + (lane >> 4) * 8) * 2;
}
__device__ inline int b_rows_offset(int lane, int r0, int c0, int stride) {
  return (r0 + (lane & 7) + (lane >> 4) * 8) * stride + (c0 + ((lane >> 3) & 1) * 8) * 2;
}
__device__ inline int b_columns_offset(int lane, int r0, int c0, int stride) {
  return (r0 + (lane & 7) + ((lane >> 3) & 1) * 8) * stride + (c0 + (lane >> 4) * 8) * 2;
}

// The online-softmax step of a warp's two rows, group (h = 0) and group + 8 (h = 1), over a tile
// of 8·N keys: s holds the tile's scores as N n-tiles of accumulators (a row's scores sit in the 4
// lanes of its group), already scaled, with −inf for keys the row does not see. Moves the running
// maximum m (attention_tiles::advance_max), turns s into the weights e^(score − m) (0 where −inf),
// adds their sum to l and rescales l and the output accumulators o by the factor the maximum moved.
template <int N, int NO>
__device__ inline void online_softmax_step(float (&s)[N][4], float (&m)[2], float (&l)[2], float (&o)[NO][4]) {
  constexpr unsigned kAllLanes = 0xffffffffu;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int t = 0; t < N; t++) tile_max = fmaxf(tile_max, fmaxf(s[t][2 * h], s[t][2 * h + 1]));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(kAllLanes, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(kAllLanes, tile_max, 2));
    const float factor = attention_tiles::advance_max(m[h], tile_max);
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < N; t++) {
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float& x = s[t][2 * h + e];
        x = x == -INFINITY ? 0.0f : attention_tiles::key_weight(x, m[h]);
        sum = __fadd_rn(sum, x);
      }
    }
    sum = __fadd_rn(sum, __shfl_xor_sync(kAllLanes, sum, 1));
    sum = __fadd_rn(sum, __shfl_xor_sync(kAllLanes, sum, 2));
    l[h] = __fadd_rn(__fmul_rn(l[h], factor), sum);
#pragma unroll
    for (int n = 0; n < NO; n++) {
      o[n][2 * h] = __fmul_rn(o[n][2 * h], factor);
      o[n][2 * h + 1] = __fmul_rn(o[n][2 * h + 1], factor);
    }
  }
}

}  // namespace s3::cuda::mma
