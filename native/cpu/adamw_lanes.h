// adamw_lanes.h: core/ops/adamw.h's f32 AdamW update on vectors of W floats, written once with GCC
// vector extensions and compiled at each SIMD level's width: adamw_update.cpp (baseline SSE2, W = 4),
// adamw_update_avx2.cpp (8), adamw_update_avx512.cpp (16). Each operation is the scalar formula's,
// IEEE-rounded on its own (multiplies and adds kept from fusing, below; division and square root
// are correctly rounded at every width), so every lane, width and the vector tail give the bits of
// ops::adamw_update. Internal linkage and no standard-library templates, as sum_lanes_avx512.h
// explains.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/ops/adamw.h"

// The files that include this are compiled with FMA available (AVX2, AVX-512), and GCC fuses a
// multiply and an add into one FMA even in ISO C++ mode: here it must not.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace s3::cpu {
namespace {

template <int W>
struct AdamwLanes {
  typedef float F __attribute__((vector_size(W * sizeof(float))));

  static F splat(float x) { return F{} + x; }

  static F sqrt(F x) {
    F out;
    if constexpr (W == 16) {
      const __m512 r = _mm512_sqrt_ps(reinterpret_cast<__m512&>(x));
      std::memcpy(&out, &r, sizeof(F));
    } else if constexpr (W == 8) {
      const __m256 r = _mm256_sqrt_ps(reinterpret_cast<__m256&>(x));
      std::memcpy(&out, &r, sizeof(F));
    } else {
      static_assert(W == 4, "SSE2, AVX2 or AVX-512 widths");
      const __m128 r = _mm_sqrt_ps(reinterpret_cast<__m128&>(x));
      std::memcpy(&out, &r, sizeof(F));
    }
    return out;
  }

  // ops::adamw_update, lane by lane.
  static void step(const ops::AdamWCoefficients& k, F grad, F& m, F& v, F& param) {
    const F g = grad * k.scale;
    m = splat(k.b1) * m + splat(1.0f - k.b1) * g;
    v = splat(k.b2) * v + splat(1.0f - k.b2) * g * g;
    const F mhat = m / k.c1, vhat = v / k.c2;
    const F update = mhat / (sqrt(vhat) + k.eps);
    param = param - splat(k.lr) * (update + splat(k.wd) * param);
  }

  static void update(const ops::AdamWCoefficients& k, const float* grads, float* m, float* v, float* params, int64_t n) {
    int64_t i = 0;
    F g, mv, vv, p;
    for (; i + W <= n; i += W) {
      std::memcpy(&g, grads + i, sizeof(F));
      std::memcpy(&mv, m + i, sizeof(F));
      std::memcpy(&vv, v + i, sizeof(F));
      std::memcpy(&p, params + i, sizeof(F));
      step(k, g, mv, vv, p);
      std::memcpy(m + i, &mv, sizeof(F));
      std::memcpy(v + i, &vv, sizeof(F));
      std::memcpy(params + i, &p, sizeof(F));
    }
    if (i < n) {  // the tail through one zero-padded vector (its padding lanes are discarded)
      const size_t bytes = size_t(n - i) * sizeof(float);
      g = F{}, mv = F{}, vv = F{}, p = F{};
      std::memcpy(&g, grads + i, bytes);
      std::memcpy(&mv, m + i, bytes);
      std::memcpy(&vv, v + i, bytes);
      std::memcpy(&p, params + i, bytes);
      step(k, g, mv, vv, p);
      std::memcpy(m + i, &mv, bytes);
      std::memcpy(v + i, &vv, bytes);
      std::memcpy(params + i, &p, bytes);
    }
  }
};

}  // namespace
}  // namespace s3::cpu

#pragma GCC pop_options
