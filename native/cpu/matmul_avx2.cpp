// AVX2 matmul (compiled with -mavx2 -mfma -mf16c; called only after run-time detection). The
// same design as matmul_avx512.cpp with 8 lanes and a 3 × 4 register tile (12 accumulators +
// 3 inputs + 1 weight = the 16 ymm registers). AVX2 has no masked byte loads, so the last
// partial step over k reads through small zero-padded copies. Each weight tile prefetches the
// next one's stored bytes (cpu/matmul_lookahead.h).
#include <immintrin.h>

#include <cstring>

#include "cpu/matmul.h"
#include "cpu/matmul_lookahead.h"
#include "cpu/sum_lanes_avx2.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 8;
constexpr int kRows = 3;
constexpr int kCols = 4;
// From this many input rows on, an FP8 weight tile is converted to f32 once rather than per row tile.
constexpr int64_t kConvertMinRows = 2 * kRows;
static_assert(kCols <= kMatmulScratchRows, "a converted tile must fit the caller's scratch");

// `count` (< 8) elements from src, zero-padded to a full step.
template <typename T>
struct Padded {
  alignas(32) T value[kLanes] = {};
  Padded(const T* src, int64_t count) { std::memcpy(value, src, size_t(count) * sizeof(T)); }
};

// 8 weights of one row starting at column k as exact f32; load_tail reads only `count` (< 8) of them.
template <DType D>
struct WeightRow;

template <>
struct WeightRow<DType::F32> {
  const float* p;
  static __m256 convert(const float* src) { return _mm256_loadu_ps(src); }
  __m256 load(int64_t k) const { return convert(p + k); }
  __m256 load_tail(int64_t k, int64_t count) const { return convert(Padded<float>(p + k, count).value); }
};

template <>
struct WeightRow<DType::BF16> {
  const uint16_t* p;
  static __m256 convert(const uint16_t* src) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  __m256 load(int64_t k) const { return convert(p + k); }
  __m256 load_tail(int64_t k, int64_t count) const { return convert(Padded<uint16_t>(p + k, count).value); }
};

template <>
struct WeightRow<DType::F16> {
  const uint16_t* p;
  static __m256 convert(const uint16_t* src) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  }
  __m256 load(int64_t k) const { return convert(p + k); }
  __m256 load_tail(int64_t k, int64_t count) const { return convert(Padded<uint16_t>(p + k, count).value); }
};

// fp8 e4m3 → f16 by moving bits gives exactly fp8 / 256; the factor 256 rides on the block scale
// (see matmul_avx512.cpp). NaN codes come out finite; checkpoints do not contain them.
template <>
struct WeightRow<DType::F8_E4M3> {
  const uint8_t* p;
  const float* scales;
  __m256 convert(const uint8_t* src, int64_t k) const {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
    const __m128i wide = _mm_cvtepu8_epi16(bytes);
    const __m128i half = _mm_slli_epi16(_mm_add_epi16(wide, _mm_and_si128(wide, _mm_set1_epi16(0x80))), 7);
    return _mm256_mul_ps(_mm256_cvtph_ps(half), _mm256_set1_ps(scales[k / kFp8BlockSize] * 256.0f));
  }
  __m256 load(int64_t k) const { return convert(p + k, k); }
  __m256 load_tail(int64_t k, int64_t count) const { return convert(Padded<uint8_t>(p + k, count).value, k); }
};

template <DType D>
WeightRow<D> weight_row(const MatrixView& w, int64_t n) {
  if constexpr (D == DType::F8_E4M3) {
    const int64_t scale_cols = (w.cols + kFp8BlockSize - 1) / kFp8BlockSize;
    return {static_cast<const uint8_t*>(w.data) + n * w.cols, w.block_scales + (n / kFp8BlockSize) * scale_cols};
  } else if constexpr (D == DType::F32) {
    return {static_cast<const float*>(w.data) + n * w.cols};
  } else {
    return {static_cast<const uint16_t*>(w.data) + n * w.cols};
  }
}

template <int R, DType D>
inline void accumulate_step(__m256 (&acc)[R][kCols], const __m256 (&xv)[R], const WeightRow<D> (&w)[kCols], int64_t k,
                            int64_t count) {
#pragma GCC unroll 8
  for (int c = 0; c < kCols; c++) {
    const __m256 wv = count == kLanes ? w[c].load(k) : w[c].load_tail(k, count);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[r][c] = _mm256_fmadd_ps(xv[r], wv, acc[r][c]);
  }
}

// out[m][c] = x[m] · w[c] for m < R, c < cols_valid; see matmul_avx512.cpp.
template <int R, DType D>
void dot_tile(const float* x, int64_t ldx, const WeightRow<D> (&w)[kCols], int64_t K, float* out, int64_t ldo,
              int cols_valid, const Lookahead& lookahead) {
  Lookahead ahead = lookahead;
  __m256 acc[R][kCols];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
    for (int c = 0; c < kCols; c++) acc[r][c] = _mm256_setzero_ps();
  }
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    ahead.step();
    __m256 xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) xv[r] = _mm256_loadu_ps(x + r * ldx + k);
    accumulate_step<R>(acc, xv, w, k, kLanes);
  }
  if (k < K) {
    __m256 xv[R];
    for (int r = 0; r < R; r++) xv[r] = _mm256_load_ps(Padded<float>(x + r * ldx + k, K - k).value);
    accumulate_step<R>(acc, xv, w, k, K - k);
  }
  store_row_sums(acc, out, ldo, cols_valid);
}

// All M input rows against weight rows [n, n + cols_valid), kRows at a time; the first row tile
// carries `ahead` (cpu/matmul_lookahead.h).
template <DType D>
void dot_rows(float* out, const float* inp, const WeightRow<D> (&w)[kCols], int64_t M, int64_t K, int64_t N,
              int64_t n, int cols_valid, Lookahead ahead) {
  int64_t m = 0;
  for (; m + kRows <= M; m += kRows) {
    dot_tile<kRows>(inp + m * K, K, w, K, out + m * N + n, N, cols_valid, ahead);
    ahead = Lookahead{};
  }
  const float* x = inp + m * K;
  float* y = out + m * N + n;
  switch (M - m) {
    case 2: dot_tile<2>(x, K, w, K, y, N, cols_valid, ahead); break;
    case 1: dot_tile<1>(x, K, w, K, y, N, cols_valid, ahead); break;
    default: break;
  }
}

template <DType D>
void matmul_columns(float* out, const float* inp, const MatrixView& view, int64_t M, int64_t n_begin, int64_t n_end,
                    float* converted) {
  const int64_t K = view.cols, N = view.rows;
  for (int64_t n = n_begin; n < n_end; n += kCols) {
    const int cols_valid = int(smaller(kCols, n_end - n));
    WeightRow<D> w[kCols];
    for (int c = 0; c < kCols; c++) w[c] = weight_row<D>(view, n + smaller(c, cols_valid - 1));
    const Lookahead ahead = next_weight_tile<D>(view, n, n_end, kCols, kLanes);
    if (D != DType::F8_E4M3 || M < kConvertMinRows) {
      dot_rows(out, inp, w, M, K, N, n, cols_valid, ahead);
      continue;
    }
    // FP8 conversion costs more than the FMAs it feeds: convert the tile's rows once for all inputs.
    WeightRow<DType::F32> wf[kCols];
    for (int c = 0; c < kCols; c++) {
      float* row = converted + c * K;
      int64_t k = 0;
      for (; k + kLanes <= K; k += kLanes) _mm256_storeu_ps(row + k, w[c].load(k));
      if (k < K) {
        alignas(32) float tail[kLanes];
        _mm256_store_ps(tail, w[c].load_tail(k, K - k));
        std::memcpy(row + k, tail, size_t(K - k) * sizeof(float));
      }
      wf[c] = {row};
    }
    dot_rows(out, inp, wf, M, K, N, n, cols_valid, ahead);
  }
}

void matmul_columns_avx2(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin, int64_t n_end,
                         float* scratch) {
  const float* inp = input.f32;
  switch (w.dtype) {
    case DType::BF16: return matmul_columns<DType::BF16>(out, inp, w, M, n_begin, n_end, scratch);
    case DType::F16: return matmul_columns<DType::F16>(out, inp, w, M, n_begin, n_end, scratch);
    case DType::F8_E4M3: return matmul_columns<DType::F8_E4M3>(out, inp, w, M, n_begin, n_end, scratch);
    default: return matmul_columns<DType::F32>(out, inp, w, M, n_begin, n_end, scratch);
  }
}

}  // namespace

const MatmulKernels kMatmulAvx2 = {"avx2", false, matmul_columns_avx2};

}  // namespace s3::cpu
