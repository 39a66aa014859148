// loss_row_lanes.h: loss_row.h's passes on vectors of W doubles (and W floats), written once with
// GCC vector extensions and compiled at each SIMD level's width: loss_row.cpp (baseline SSE2, W = 2),
// loss_row_avx2.cpp (4), loss_row_avx512.cpp (8). Eight values per step whatever W, each into the
// partial sum of its index mod 8, so the sums' order, and with separate IEEE multiplies and adds
// (kept from fusing into FMAs, below) every bit, is the same at every width.
// Its e^x, for the x ≤ 0 of a row shifted by its maximum: x = n·ln 2 + r in two steps (Cephes'
// split of ln 2, exact for these n), e^r by its Taylor polynomial to degree 13 (truncation below
// 2⁻⁵⁸ for |r| ≤ ln 2 / 2) in Horner form, then · 2^n by the exponent bits. About 1 ulp from the true
// value. Below −708 it is 0 (the C library's e^x is subnormal there down to −745: at most 2⁻¹⁰²², below
// anything a row with e^0 = 1 in its total can show); NaN stays NaN.
// Internal linkage and no standard-library templates, as sum_lanes_avx512.h explains.
#pragma once

#include <cstdint>
#include <cstring>

#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace s3::cpu {
namespace {

template <int W>
struct LossRowLanes {
  typedef double D __attribute__((vector_size(W * sizeof(double))));
  typedef int64_t I __attribute__((vector_size(W * sizeof(int64_t))));
  static constexpr int kGroups = 8 / W;  // vectors per step of eight values

  static D splat(double x) { return D{} + x; }

  static D exp_nonpositive(D x) {
    const D xc = x < splat(-708.0) ? splat(-708.0) : x;
    // n = round(x · log2 e), ties to even: adding 1.5 · 2^52 leaves no fraction bits (|n| ≤ 1022),
    // and the sum's bits are those of 1.5 · 2^52 plus n.
    const D shifted = xc * 1.4426950408889634 + 6755399441055744.0;
    const D n = shifted - 6755399441055744.0;
    D r = xc - n * 6.93145751953125e-1;
    r = r - n * 1.42860682030941723212e-6;
    D y = splat(1.0 / 6227020800.0);  // 1/13!
    y = y * r + 1.0 / 479001600.0;
    y = y * r + 1.0 / 39916800.0;
    y = y * r + 1.0 / 3628800.0;
    y = y * r + 1.0 / 362880.0;
    y = y * r + 1.0 / 40320.0;
    y = y * r + 1.0 / 5040.0;
    y = y * r + 1.0 / 720.0;
    y = y * r + 1.0 / 120.0;
    y = y * r + 1.0 / 24.0;
    y = y * r + 1.0 / 6.0;
    y = y * r + 0.5;
    y = y * r + 1.0;
    y = y * r + 1.0;
    // 2^n for n from −1021 to 0: a normal power of two, so the product rounds once, if at all.
    const I n_int = (I)shifted - (I)(D{} + 6755399441055744.0);
    const D scale = (D)((n_int + 1023) << 52);
    const D e = y * scale;
    return x < splat(-708.0) ? D{} : e;
  }

  // The eight values from v of the row (count of them real, the rest zero): s and e^s into e, and
  // into the partial sums. (Element-wise conversions go through arrays: GCC does not subscript or
  // convert vectors whose width is a template parameter.)
  static void step(double* e, const float* z, int count, float max, double temperature, D* total, D* weighted) {
    double shifted[8];
    for (int j = 0; j < 8; j++) shifted[j] = j < count ? double(z[j] - max) : 0.0;  // z − max in f32
    // Division by 1 changes no bit. On the array, not the vectors: GCC 12 at -O3 with AVX-512 dropped
    // a division of the vectors under this condition (loss_row_exp test, temperature 0.7).
    if (temperature != 1.0) {
      for (int j = 0; j < 8; j++) shifted[j] = shifted[j] / temperature;
    }
    int64_t index[8];
    for (int j = 0; j < 8; j++) index[j] = j;
    D s[kGroups], out[kGroups];
    I lane[kGroups];
    std::memcpy(s, shifted, sizeof s);
    std::memcpy(lane, index, sizeof lane);
    for (int g = 0; g < kGroups; g++) {
      D ev = exp_nonpositive(s[g]);
      if (count < 8) {  // the padding lanes add nothing
        const I real = lane[g] < count;
        ev = real ? ev : D{};
        s[g] = real ? s[g] : D{};
      }
      total[g] = total[g] + ev;
      weighted[g] = weighted[g] + ev * s[g];
      out[g] = ev;
    }
    std::memcpy(e, out, size_t(count) * sizeof(double));
  }

  static void exp_sums(double* e, const float* z, int64_t V, float max, double temperature, double* total_out,
                       double* weighted_out) {
    D total[kGroups], weighted[kGroups];
    for (int g = 0; g < kGroups; g++) total[g] = D{}, weighted[g] = D{};
    int64_t v = 0;
    for (; v + 8 <= V; v += 8) step(e + v, z + v, 8, max, temperature, total, weighted);
    if (v < V) step(e + v, z + v, int(V - v), max, temperature, total, weighted);
    double t[8], w[8];
    std::memcpy(t, total, sizeof t);
    std::memcpy(w, weighted, sizeof w);
    *total_out = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    *weighted_out = ((w[0] + w[1]) + (w[2] + w[3])) + ((w[4] + w[5]) + (w[6] + w[7]));
  }

  static void dlogits(float* z, const double* e, int64_t V, double coef, double inv_total, double temperature) {
    int64_t v = 0;
    for (; v + W <= V; v += W) {
      D d;
      std::memcpy(&d, e + v, sizeof d);
      d = d * coef * inv_total;  // (coef · e) · inv_total, as token_loss_dlogit groups it
      if (temperature != 1.0) d = d / temperature;
      double lanes[W];
      std::memcpy(lanes, &d, sizeof lanes);
      for (int j = 0; j < W; j++) z[v + j] = float(lanes[j]);
    }
    for (; v < V; v++) {
      double d = e[v] * coef * inv_total;
      if (temperature != 1.0) d = d / temperature;
      z[v] = float(d);
    }
  }
};

}  // namespace
}  // namespace s3::cpu

#pragma GCC pop_options
