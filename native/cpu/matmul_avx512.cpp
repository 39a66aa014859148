// AVX-512 matmul (compiled with -mavx512f/bw/vl/dq; called only after run-time detection).
//
// A register tile of kRows input rows × kCols weight rows keeps kRows × kCols 16-lane
// accumulators; each step over 16 values of k loads kRows input vectors and kCols weight vectors
// for kRows × kCols FMAs. Weights are converted to f32 in registers as they stream: bf16 and f16
// conversion is cheaper than the FMAs it feeds and runs beside them, so weights are never packed
// (measured: packing bf16 panels first was about 25% slower). FP8 conversion costs more, so with
// enough input rows a tile's weight rows are converted once into a small f32 buffer. Either way
// the same f32 values go through the same accumulation order (see matmul.h): identical bits.
// Each weight tile prefetches the next one's stored bytes (cpu/matmul_lookahead.h).
#include <immintrin.h>

#include "core/dtype.h"
#include "cpu/matmul.h"
#include "cpu/matmul_lookahead.h"
#include "cpu/sum_lanes_avx512.h"

namespace s3::cpu {
namespace {

// This file uses no standard-library templates or inline library functions: an out-of-line copy
// compiled here with wider instructions could be the one the linker keeps for baseline code too.
inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

constexpr int kLanes = 16;
constexpr int kRows = 4;  // input rows per register tile
constexpr int kCols = 6;  // weight rows per register tile: 24 accumulators + 4 inputs + 1 weight ≤ 32 registers
// From this many input rows on, an FP8 weight tile is converted to f32 once rather than per row tile.
constexpr int64_t kConvertMinRows = 2 * kRows;
static_assert(kCols <= kMatmulScratchRows, "a converted tile must fit the caller's scratch");

inline __mmask16 lane_mask(int64_t count) {
  return count >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}

// 16 weights of one row starting at column k, as exact f32 (lanes outside `mask` read as 0).
template <DType D>
struct WeightRow;

template <>
struct WeightRow<DType::F32> {
  const float* p;
  __m512 load(int64_t k) const { return _mm512_loadu_ps(p + k); }
  __m512 load(int64_t k, __mmask16 mask) const { return _mm512_maskz_loadu_ps(mask, p + k); }
};

template <>
struct WeightRow<DType::BF16> {
  const uint16_t* p;
  static __m512 convert(__m256i bits) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
  }
  __m512 load(int64_t k) const { return convert(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k))); }
  __m512 load(int64_t k, __mmask16 mask) const { return convert(_mm256_maskz_loadu_epi16(mask, p + k)); }
};

template <>
struct WeightRow<DType::F16> {
  const uint16_t* p;
  __m512 load(int64_t k) const { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k))); }
  __m512 load(int64_t k, __mmask16 mask) const { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, p + k)); }
};

// fp8 e4m3 → f16 is a bit move (sign to bit 15, the 7 exponent/mantissa bits to bits 13..7) that
// yields exactly fp8 / 256, subnormals included; the hardware f16 → f32 conversion follows, and
// the factor 256 rides on the block scale: (fp8 / 256) × (scale × 256) rounds once, like
// fp8 × scale. The NaN codes 0x7F/0xFF come out finite; checkpoints do not contain them.
template <>
struct WeightRow<DType::F8_E4M3> {
  const uint8_t* p;
  const float* scales;  // this row's block scales, one per 128 columns
  __m512 convert(__m128i bytes, int64_t k) const {
    // b + (b & 0x80) moves the sign from bit 7 to bit 8, then << 7 puts everything in place.
    const __m256i wide = _mm256_cvtepu8_epi16(bytes);
    const __m256i half = _mm256_slli_epi16(_mm256_add_epi16(wide, _mm256_and_si256(wide, _mm256_set1_epi16(0x80))), 7);
    return _mm512_mul_ps(_mm512_cvtph_ps(half), _mm512_set1_ps(scales[k / kFp8BlockSize] * 256.0f));
  }
  __m512 load(int64_t k) const { return convert(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k)), k); }
  __m512 load(int64_t k, __mmask16 mask) const { return convert(_mm_maskz_loadu_epi8(mask, p + k), k); }
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

// One step over 16 values of k; the last, partial step (kTail) reads only the lanes in `mask`.
template <bool kTail, int R, DType D>
inline void accumulate_step(__m512 (&acc)[R][kCols], const float* x, int64_t ldx, const WeightRow<D> (&w)[kCols],
                            int64_t k, __mmask16 mask) {
  __m512 xv[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    xv[r] = kTail ? _mm512_maskz_loadu_ps(mask, x + r * ldx + k) : _mm512_loadu_ps(x + r * ldx + k);
  }
#pragma GCC unroll 8
  for (int c = 0; c < kCols; c++) {
    const __m512 wv = kTail ? w[c].load(k, mask) : w[c].load(k);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[r][c] = _mm512_fmadd_ps(xv[r], wv, acc[r][c]);
  }
}

// out[m][c] = x[m] · w[c] for m < R, c < cols_valid (weight rows past cols_valid repeat the last
// valid one and are not stored). x rows are ldx apart, out rows ldo apart.
template <int R, DType D>
void dot_tile(const float* x, int64_t ldx, const WeightRow<D> (&w)[kCols], int64_t K, float* out, int64_t ldo,
              int cols_valid, const Lookahead& lookahead) {
  Lookahead ahead = lookahead;
  __m512 acc[R][kCols];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
    for (int c = 0; c < kCols; c++) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    ahead.step();
    accumulate_step<false, R>(acc, x, ldx, w, k, 0);
  }
  if (k < K) accumulate_step<true, R>(acc, x, ldx, w, k, lane_mask(K - k));
  store_row_sums(acc, out, ldo, cols_valid);
}

// All M input rows against weight rows [n, n + cols_valid), taking the input rows kRows at a time;
// the first row tile carries `ahead`.
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
    case 3: dot_tile<3>(x, K, w, K, y, N, cols_valid, ahead); break;
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
      for (int64_t k = 0; k < K; k += kLanes) {
        _mm512_mask_storeu_ps(row + k, lane_mask(K - k), w[c].load(k, lane_mask(K - k)));
      }
      wf[c] = {row};
    }
    dot_rows(out, inp, wf, M, K, N, n, cols_valid, ahead);
  }
}

void matmul_columns_avx512(float* out, const MatmulInput& input, const MatrixView& w, int64_t M, int64_t n_begin, int64_t n_end,
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

const MatmulKernels kMatmulAvx512 = {"avx512", false, matmul_columns_avx512};

}  // namespace s3::cpu
