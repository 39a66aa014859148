// matmul_nn_bf16.cpp: the BF16-product C (+)= A·B of matmul_nn_bf16.h: rounding and packing the
// operands once per call, the per-level choice between the VDPBF16PS kernels and the portable path,
// and the split of columns between threads.
#include "cpu/matmul_nn_bf16.h"

#include <algorithm>

#include "core/dtype.h"
#include "cpu/convert.h"
#include "cpu/kernel_select.h"

namespace s3::cpu {
namespace {

// Rows of A or k pairs of B each pool unit rounds: a fixed unit, so the work split never matters
// (rounding is elementwise anyway).
constexpr int64_t kRowsPerUnit = 32;

inline float round_to_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

inline float a_at(const MatmulNnArgs& p, int64_t i, int64_t k) { return p.a[i * p.a_row + k * p.a_col]; }

// Calls fn(begin, end) on consecutive ranges of at most kRowsPerUnit of [0, n): over the pool, or
// (pool null) on this thread.
template <typename Fn>
void for_row_units(ThreadPool* pool, int64_t n, Fn fn) {
  const int64_t units = (n + kRowsPerUnit - 1) / kRowsPerUnit;
  const auto run = [&](size_t begin, size_t end) {
    for (size_t u = begin; u < end; u++) fn(int64_t(u) * kRowsPerUnit, std::min(n, int64_t(u + 1) * kRowsPerUnit));
  };
  if (pool == nullptr) {
    run(0, size_t(units));
  } else {
    pool->parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) { run(begin, end); });
  }
}

// A as BF16 rows (k padded with zeros to lda), B as BF16 k pairs (the odd k of a last, unpaired
// step zero), into scratch.
MatmulNnBf16Args pack(const MatmulNnArgs& p, MatmulNnBf16Scratch& scratch, ThreadPool* pool) {
  MatmulNnBf16Args out;
  out.M = p.M;
  out.N = p.N;
  out.K = p.K;
  out.c = p.c;
  out.ldc = p.ldc;
  out.accumulate = p.accumulate;
  const int64_t pairs = (p.K + 1) / 2;
  out.lda = 2 * pairs;
  out.ldb = 2 * p.N;
  scratch.a.resize(size_t(p.M * out.lda));
  scratch.b.resize(size_t(pairs * out.ldb));
  uint16_t* a = scratch.a.data();
  uint16_t* b = scratch.b.data();
  const ConvertKernels& convert = convert_kernels();
  for_row_units(pool, p.M, [&](int64_t i0, int64_t i1) {
    if (p.a_col == 1) {  // contiguous rows: the bulk SIMD rounding (bit-identical to f32_to_bf16)
      for (int64_t i = i0; i < i1; i++) convert.f32_to_bf16(p.a + i * p.a_row, a + i * out.lda, size_t(p.K));
    } else {  // A read transposed (dW = doutᵀ·inp): k outermost, so each k reads the unit's rows side by side
      for (int64_t k = 0; k < p.K; k++) {
        for (int64_t i = i0; i < i1; i++) a[i * out.lda + k] = f32_to_bf16(a_at(p, i, k));
      }
    }
    if (out.lda > p.K) {
      for (int64_t i = i0; i < i1; i++) a[i * out.lda + p.K] = 0;
    }
  });
  for_row_units(pool, pairs, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; q++) {
      const float* even = p.b + 2 * q * p.ldb;
      const float* odd = 2 * q + 1 < p.K ? even + p.ldb : nullptr;
      uint16_t* row = b + q * out.ldb;
      for (int64_t n = 0; n < p.N; n++) {
        row[2 * n] = f32_to_bf16(even[n]);
        row[2 * n + 1] = odd != nullptr ? f32_to_bf16(odd[n]) : uint16_t(0);
      }
    }
  });
  out.a = a;
  out.b = b;
  return out;
}

// A [M × K] and B [K × N] rounded to BF16 values in f32 (row-major, contiguous) into scratch, as
// the f32 kernels' arguments.
MatmulNnArgs round_operands(const MatmulNnArgs& p, MatmulNnBf16Scratch& scratch, ThreadPool* pool) {
  scratch.a_f32.resize(size_t(p.M * p.K));
  scratch.b_f32.resize(size_t(p.K * p.N));
  float* a = scratch.a_f32.data();
  float* b = scratch.b_f32.data();
  for_row_units(pool, p.M, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) {
      for (int64_t k = 0; k < p.K; k++) a[i * p.K + k] = round_to_bf16(a_at(p, i, k));
    }
  });
  for_row_units(pool, p.K, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; k++) {
      for (int64_t n = 0; n < p.N; n++) b[k * p.N + n] = round_to_bf16(p.b[k * p.ldb + n]);
    }
  });
  MatmulNnArgs out = matmul_nn_args(p.c, a, b, p.M, p.N, p.K, p.accumulate);
  out.ldc = p.ldc;
  return out;
}

}  // namespace

const MatmulNnBf16Kernels* matmul_nn_bf16_kernels_for(SimdLevel level) {
  return level == SimdLevel::Avx512Bf16 ? &kMatmulNnAvx512Bf16 : nullptr;
}

void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool) { matmul_nn_bf16(args, pool, cpu_info().level); }

void matmul_nn_bf16(const MatmulNnArgs& args, ThreadPool& pool, SimdLevel level) {
  if (args.M <= 0 || args.N <= 0) return;
  // Kept per calling thread: the trainer calls this with the same few shapes every step, and fresh
  // buffers of the LM head's size would be faulted in again each time.
  thread_local MatmulNnBf16Scratch scratch;
  if (const MatmulNnBf16Kernels* kernels = matmul_nn_bf16_kernels_for(level)) {
    const MatmulNnBf16Args packed = pack(args, scratch, &pool);
    const int64_t units = (args.N + kMatmulNnColumnsPerUnit - 1) / kMatmulNnColumnsPerUnit;
    pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
      kernels->columns(packed, int64_t(begin) * kMatmulNnColumnsPerUnit,
                       std::min(args.N, int64_t(end) * kMatmulNnColumnsPerUnit));
    });
  } else {
    matmul_nn(round_operands(args, scratch, &pool), pool, *matmul_nn_kernels_for(level));
  }
}

void matmul_nn_bf16_serial(const MatmulNnArgs& args, MatmulNnBf16Scratch& scratch) {
  if (args.M <= 0 || args.N <= 0) return;
  const SimdLevel level = cpu_info().level;
  if (const MatmulNnBf16Kernels* kernels = matmul_nn_bf16_kernels_for(level)) {
    kernels->columns(pack(args, scratch, nullptr), 0, args.N);
  } else {
    matmul_nn_kernels_for(level)->columns(round_operands(args, scratch, nullptr), 0, args.N);
  }
}

void matmul_nn(const MatmulNnArgs& args, MatmulPrecision precision, ThreadPool& pool) {
  if (precision == MatmulPrecision::Bf16) {
    matmul_nn_bf16(args, pool);
  } else {
    matmul_nn(args, pool);
  }
}

}  // namespace s3::cpu
