// swiglu_lanes.h: the CPU forward SwiGLU, silu(gate) · up = gate / (1 + e^−gate) · up, on vectors
// of W floats written once with GCC vector extensions and compiled at each SIMD level's width:
// swiglu.cpp (baseline SSE2, W = 4), swiglu_avx2.cpp (8), swiglu_avx512.cpp (16). Its e^x is its
// own, not the C library's: Cephes' expf (x = n·ln2 + r in two steps, a degree-6 polynomial in r,
// then · 2^n in two exact halves), about 1 ulp, in separate IEEE multiplies and adds (kept from
// fusing into FMAs, below), so every width, and the vector tail, gives the same bits. e^x
// saturates to e^−87.34 below (1 + e^x is then exactly 1, as with the true value) and is +inf above
// 88.72, as expf overflows; NaN stays NaN. The GPU's silu (core/ops/swiglu.h, libdevice expf) and
// the backward pass's σ (C library expf) agree with it to f32 rounding, not bit for bit.
// Internal linkage and no standard-library templates, as sum_lanes_avx512.h explains.
#pragma once

#include <cstdint>
#include <cstring>

// The files that include this are compiled with FMA available (AVX2, AVX-512), and GCC fuses a
// multiply and an add into one FMA even in ISO C++ mode: here it must not, or widths would differ.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace s3::cpu {
namespace {

template <int W>
struct SwigluLanes {
  typedef float F __attribute__((vector_size(W * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(W * sizeof(int32_t))));

  static F splat(float x) { return F{} + x; }

  static F silu_mul(F gate, F up) {
    const F x = -gate;
    F xc = x < splat(-87.33654f) ? splat(-87.33654f) : x;
    xc = xc > splat(88.72283f) ? splat(88.72283f) : xc;
    // n = round(x · log2 e), ties to even: adding 1.5 · 2^23 leaves no fraction bits (|n| ≤ 128),
    // and the sum's bits are those of 1.5 · 2^23 plus n.
    const F shifted = xc * 1.44269504088896341f + 12582912.0f;
    const F n = shifted - 12582912.0f;
    F r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    F y = splat(1.9875691500e-4f);
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + (r + 1.0f);
    // · 2^n as 2^h · 2^(n − h), h = ⌊n/2⌋, each a normal power of two: exact, n from −126 to 128.
    const I n_int = (I)shifted - 0x4B400000;
    const I half = n_int >> 1;
    const F low = (F)((half + 127) << 23), high = (F)((n_int - half + 127) << 23);
    F e = y * low * high;
    e = x > splat(88.72283f) ? splat(__builtin_inff()) : e;
    return gate / (1.0f + e) * up;
  }

  // out[i] = silu(gate[i]) · up[i] for i < N; out may equal gate or up (each vector is read whole
  // before it is written). The last N mod W values go through one zero-padded vector.
  static void forward(float* out, const float* gate, const float* up, int64_t N) {
    int64_t i = 0;
    F g, u;
    for (; i + W <= N; i += W) {
      std::memcpy(&g, gate + i, sizeof(F));
      std::memcpy(&u, up + i, sizeof(F));
      const F y = silu_mul(g, u);
      std::memcpy(out + i, &y, sizeof(F));
    }
    if (i < N) {
      const size_t bytes = size_t(N - i) * sizeof(float);
      g = F{}, u = F{};
      std::memcpy(&g, gate + i, bytes);
      std::memcpy(&u, up + i, bytes);
      const F y = silu_mul(g, u);
      std::memcpy(out + i, &y, bytes);
    }
  }
};

}  // namespace
}  // namespace s3::cpu

#pragma GCC pop_options
