// swiglu_lanes.h: the CPU SwiGLU, silu(gate) · up = gate / (1 + e^−gate) · up, and its backward, on vectors
// of W floats written once with GCC vector extensions and compiled at each SIMD level's width:
// swiglu.cpp (baseline SSE2, W = 4), swiglu_avx2.cpp (8), swiglu_avx512.cpp (16). Its e^x is its
// own, not the C library's: Cephes' expf (x = n·ln2 + r in two steps, a degree-6 polynomial in r,
// then · 2^n in two exact halves), about 1 ulp, in separate IEEE multiplies and adds (kept from
// fusing into FMAs, below), so every width, and the vector tail, gives the same bits. e^x
// saturates to e^−87.34 below (1 + e^x is then exactly 1, as with the true value) and is +inf above
// 88.72, as expf overflows; NaN stays NaN. The backward's σ = 1 / (1 + e^−gate) uses the same e^x,
// so the gradient is that of the forward as computed. The GPU's (core/ops/swiglu.h, libdevice expf)
// agree with them to f32 rounding, not bit for bit.
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

  // e^x as the header says.
  static F exp(F x) {
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
    const F e = y * low * high;
    return x > splat(88.72283f) ? splat(__builtin_inff()) : e;
  }

  static F silu_mul(F gate, F up) { return gate / (1.0f + exp(-gate)) * up; }

  // core/ops/swiglu.h's silu_mul_backward with this e^x: dup = dy·(gate·σ),
  // dgate = ((dy·up)·σ)·(1 + gate·(1 − σ)), each product rounded on its own.
  static void silu_mul_grads(F gate, F up, F dy, F& dgate, F& dup) {
    const F sigmoid = 1.0f / (1.0f + exp(-gate));
    dup = dy * (gate * sigmoid);
    dgate = dy * up * sigmoid * (1.0f + gate * (1.0f - sigmoid));
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

  // dgate[i], dup[i] from dout[i], gate[i], up[i] for i < N; the outputs may equal any input (each
  // vector is read whole before it is written). The tail as in forward.
  static void backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t N) {
    int64_t i = 0;
    F g, u, dy, dg, du;
    for (; i + W <= N; i += W) {
      std::memcpy(&g, gate + i, sizeof(F));
      std::memcpy(&u, up + i, sizeof(F));
      std::memcpy(&dy, dout + i, sizeof(F));
      silu_mul_grads(g, u, dy, dg, du);
      std::memcpy(dgate + i, &dg, sizeof(F));
      std::memcpy(dup + i, &du, sizeof(F));
    }
    if (i < N) {
      const size_t bytes = size_t(N - i) * sizeof(float);
      g = F{}, u = F{}, dy = F{};
      std::memcpy(&g, gate + i, bytes);
      std::memcpy(&u, up + i, bytes);
      std::memcpy(&dy, dout + i, bytes);
      silu_mul_grads(g, u, dy, dg, du);
      std::memcpy(dgate + i, &dg, bytes);
      std::memcpy(dup + i, &du, bytes);
    }
  }
};

}  // namespace
}  // namespace s3::cpu

#pragma GCC pop_options
