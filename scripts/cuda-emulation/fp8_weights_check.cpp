// fp8_weights_check.cpp (emulate.py fp8-weights): cuda/fp8_weights.h's quantization and widening run
// in the CPU emulation against the host's (model/fp8_quantize.h, and the host upload's widening
// fp8e4m3_to_f32(byte) × scale rounded to bf16), on matrices with partial blocks, an all-zero block,
// magnitudes from 1e-6 to 1e4, a NaN and an inf; bytes, scales (checkpoint and padded layouts) and
// widened values must be the same bits. Exits non-zero otherwise.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/ops/fp8_block_scales.h"
#include "cuda/fp8_weights.h"
#include "model/fp8_quantize.h"

namespace {

bool check(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> exponent(-6.0f, 4.0f);
  std::vector<float> w(size_t(rows * cols));
  for (float& x : w) x = normal(rng) * std::pow(10.0f, exponent(rng));
  for (int64_t r = 0; r < std::min<int64_t>(rows, 128); r++) {  // the first block all zeros
    for (int64_t c = 0; c < std::min<int64_t>(cols, 128); c++) w[size_t(r * cols + c)] = 0.0f;
  }
  if (rows > 130 && cols > 130) w[size_t(130 * cols + 129)] = NAN, w[size_t(131 * cols + 5)] = INFINITY;
  const int64_t row_blocks = s3::ops::fp8_blocks(rows), col_blocks = s3::ops::fp8_blocks(cols);
  std::vector<uint8_t> want_bytes(w.size());
  std::vector<float> want_scales(size_t(row_blocks * col_blocks));
  s3::model::quantize_fp8_blockwise(w.data(), rows, cols, want_bytes.data(), want_scales.data());
  bool ok = true;
  // The checkpoint's layout (stride = column blocks), then cuBLASLt's padded one.
  for (const int64_t stride : {col_blocks, s3::ops::weight_scale_stride(cols)}) {
    std::vector<uint8_t> bytes(w.size(), 0xAA);
    std::vector<float> scales(size_t(row_blocks * stride), NAN);
    s3::cuda::quantize_fp8_blockwise(w.data(), rows, cols, bytes.data(), scales.data(), stride, nullptr);
    bool same_scales = true;
    for (int64_t rb = 0; rb < row_blocks; rb++) {
      for (int64_t kb = 0; kb < stride; kb++) {
        const float want = kb < col_blocks ? want_scales[size_t(rb * col_blocks + kb)] : 1.0f;
        same_scales = same_scales && std::memcmp(&want, &scales[size_t(rb * stride + kb)], 4) == 0;
      }
    }
    const bool same_bytes = bytes == want_bytes;
    std::vector<uint16_t> widened(w.size());
    s3::cuda::widen_fp8_blockwise_to_bf16(bytes.data(), scales.data(), stride, rows, cols, widened.data(), nullptr);
    bool same_widened = true;
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t c = 0; c < cols; c++) {
        const size_t i = size_t(r * cols + c);
        const float scale = want_scales[size_t((r / 128) * col_blocks + c / 128)];
        same_widened = same_widened && widened[i] == s3::f32_to_bf16(s3::fp8e4m3_to_f32(want_bytes[i]) * scale);
      }
    }
    const bool pass = same_scales && same_bytes && same_widened;
    std::printf("%4lld x %4lld, scale stride %lld: bytes %s, scales %s, widened %s  %s\n", (long long)rows, (long long)cols,
                (long long)stride, same_bytes ? "equal" : "DIFFER", same_scales ? "equal" : "DIFFER",
                same_widened ? "equal" : "DIFFER", pass ? "ok" : "FAIL");
    ok = ok && pass;
  }
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  ok &= check(300, 200, 1);
  ok &= check(128, 640, 2);
  ok &= check(70, 1030, 3);
  return ok ? 0 : 1;
}
