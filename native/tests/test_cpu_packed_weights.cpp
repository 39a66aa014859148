// The weights' packed BF16 kept once per version (native/cpu/packed_weights): on the avx512bf16
// panels, the software tile model and the hardware tiles where the CPU has AMX, packed() gives the
// bits of packing W (or Wᵀ) per call, keeps them while the weights' base and a nonzero version
// stay the same, repacks after a new version, another base or version 0, and keys each weight by
// its address and orientation.
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/packed_weights.h"
#include "tests/random_values.h"
#include "tests/test_framework.h"

namespace {

using s3::cpu::MatmulNnBf16Kernels;
using s3::cpu::MatmulNnBf16PackedB;

bool same_values(const MatmulNnBf16PackedB& a, const MatmulNnBf16PackedB& b) {
  return a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(uint16_t)) == 0;
}

}  // namespace

TEST(packed_weights_pack_once_per_version_and_repack_on_a_new_one) {
  if (s3::cpu_info().supported_level < s3::SimdLevel::Avx512Bf16) SKIP("this CPU lacks AVX512-BF16: the packing is compiled for it");
  s3::ThreadPool pool(2);
  std::vector<const MatmulNnBf16Kernels*> tables = {&s3::cpu::kMatmulNnAvx512Bf16, &s3::cpu::kMatmulNnAmxModel};
  if (s3::cpu_info().supported_level >= s3::SimdLevel::Amx) tables.push_back(&s3::cpu::kMatmulNnAmx);
  const int64_t N = 40, K = 70;
  for (const MatmulNnBf16Kernels* kernels : tables) {
    std::vector<float> params = s3::tests::normal_values(size_t(2 * N * K), 7);
    const float* w = params.data() + N * K;  // the second of two weights
    s3::cpu::PackedWeights packed;
    packed.use_version(params.data(), 1);
    MatmulNnBf16PackedB want_t, want;
    s3::cpu::matmul_nn_bf16_pack_b_transposed(want_t, w, K, K, N, *kernels, pool);
    s3::cpu::matmul_nn_bf16_pack_b(want, w, K, N, K, *kernels, pool);
    CHECK(same_values(packed.packed(w, N, K, true, *kernels, pool), want_t));
    CHECK(same_values(packed.packed(w, N, K, false, *kernels, pool), want));
    CHECK_EQ(packed.bytes(), (want_t.values.size() + want.values.size()) * sizeof(uint16_t));
    // Same base and version: the kept tiles, even though the weights changed (the caller's contract).
    params[size_t(N * K)] += 1.0f;
    packed.use_version(params.data(), 1);
    CHECK(same_values(packed.packed(w, N, K, true, *kernels, pool), want_t));
    // A new version repacks.
    MatmulNnBf16PackedB changed;
    s3::cpu::matmul_nn_bf16_pack_b_transposed(changed, w, K, K, N, *kernels, pool);
    CHECK(!same_values(changed, want_t));
    packed.use_version(params.data(), 2);
    CHECK(same_values(packed.packed(w, N, K, true, *kernels, pool), changed));
    // Version 0 repacks on every call; so does another base.
    params[size_t(N * K)] += 1.0f;
    packed.use_version(params.data(), 0);
    s3::cpu::matmul_nn_bf16_pack_b_transposed(changed, w, K, K, N, *kernels, pool);
    CHECK(same_values(packed.packed(w, N, K, true, *kernels, pool), changed));
    params[size_t(N * K)] += 1.0f;
    packed.use_version(params.data() + 1, 2);
    s3::cpu::matmul_nn_bf16_pack_b_transposed(changed, w, K, K, N, *kernels, pool);
    CHECK(same_values(packed.packed(w, N, K, true, *kernels, pool), changed));
    CHECK_EQ(packed.bytes(), (want_t.values.size() + want.values.size()) * sizeof(uint16_t));  // buffers reused
  }
}
