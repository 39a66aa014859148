// matmul.h: out = inp · Wᵀ for a linear layer whose weight W stays in its checkpoint dtype
// (f32, bf16, f16 or fp8 with 128 × 128 block scales). This is the CPU's hot spot.
//
// Every output element is the dot product of one input row and one weight row, accumulated in a
// fixed order that depends only on K and the SIMD level: lane l of a vector accumulator sums the
// products at k ≡ l (mod lanes) in increasing k, then the lanes are added in a fixed tree. No
// element's order depends on M, on which rows share a register tile, on the thread count or on
// whether the weights were converted in registers or through a packed panel. So a sequence's
// logits are bit-identical whether it is computed alone or batched with others (the engine's
// determinism guarantee); different SIMD levels agree only to f32 rounding.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/matrix_view.h"

namespace s3::cpu {

// Rows of K floats of per-thread scratch a kernel may use (for converted weight rows).
constexpr int64_t kMatmulScratchRows = 6;

// One implementation per SIMD level. `columns` computes output columns [n_begin, n_end) of
// every row; the caller splits N between threads and hands each its scratch (the instruction-set
// files allocate nothing; see matmul.cpp).
struct MatmulKernels {
  const char* name;
  // out: [M × N] f32 (N = w.rows), inp: [M × K] f32 (K = w.cols), both row-major;
  // scratch: [kMatmulScratchRows × K] f32.
  void (*columns)(float* out, const float* inp, const MatrixView& w, int64_t M, int64_t n_begin, int64_t n_end,
                  float* scratch);
};

// out: [M × N] row-major; inp: [M × K] row-major; w: [N × K] (see matrix_view.h). out must not
// alias inp. Splits N between the pool's threads.
void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels);
void matmul_forward(float* out, const float* inp, const MatrixView& w, int64_t M, ThreadPool& pool);

// Several weights with the same K applied to one input in a single parallel pass (q/k/v, gate/up):
// outputs[i].out = inp · outputs[i].w ᵀ. Threads split the weights' output columns as if the
// matrices were stacked, so one token's decode step waits for the pool once instead of once per
// matrix; every element is computed exactly as by matmul_forward.
struct MatmulOutput {
  float* out;            // [M × w.rows]
  const MatrixView* w;   // [w.rows × K]
};
void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool,
                    const MatmulKernels& kernels);
void matmul_forward(const MatmulOutput* outputs, int64_t count, const float* inp, int64_t M, ThreadPool& pool);

// The kernels of one SIMD level (tests and benchmarks compare levels); nullptr if not built.
const MatmulKernels* matmul_kernels_for(SimdLevel level);
// The kernels of cpu_info().level.
const MatmulKernels& matmul_kernels();

extern const MatmulKernels kMatmulAvx2;
extern const MatmulKernels kMatmulAvx512;

}  // namespace s3::cpu
