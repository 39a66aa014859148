// linear_bf16.cpp: the implementation of cpu/linear_bf16.h (see the header for the numerics).
#include "cpu/linear_bf16.h"

#include <algorithm>

#include "core/dtype.h"
#include "cpu/convert.h"

namespace s3::cpu {
namespace {

// Elements each pool unit rounds: a fixed unit, though rounding is elementwise anyway.
constexpr int64_t kRoundUnit = 1 << 16;

}  // namespace

void round_to_bf16(uint16_t* out, const float* in, int64_t count, ThreadPool& pool) {
  const ConvertKernels& convert = convert_kernels();
  const int64_t units = (count + kRoundUnit - 1) / kRoundUnit;
  pool.parallel_for(size_t(units), [&](size_t begin, size_t end, size_t) {
    const int64_t first = int64_t(begin) * kRoundUnit, last = std::min(count, int64_t(end) * kRoundUnit);
    convert.f32_to_bf16(in + first, out + first, size_t(last - first));
  });
}

void linear_bf16(float* out, const float* inp, const uint16_t* w_bf16, int64_t M, int64_t N, int64_t K,
                 std::vector<float>& input_scratch, ThreadPool& pool, const MatmulKernels& kernels) {
  MatrixView w;
  w.data = w_bf16;
  w.dtype = DType::BF16;
  w.rows = N;
  w.cols = K;
  const float* x = inp;
  if (!kernels.rounds_input_to_bf16) {
    input_scratch.resize(size_t(M * K));
    for (int64_t i = 0; i < M * K; i++) input_scratch[size_t(i)] = bf16_to_f32(f32_to_bf16(inp[i]));
    x = input_scratch.data();
  }
  matmul_forward(out, x, w, M, pool, kernels);
}

void linear_bf16(float* out, const float* inp, const uint16_t* w_bf16, int64_t M, int64_t N, int64_t K,
                 std::vector<float>& input_scratch, ThreadPool& pool) {
  linear_bf16(out, inp, w_bf16, M, N, K, input_scratch, pool, matmul_kernels());
}

}  // namespace s3::cpu
