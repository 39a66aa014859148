// packed_weights: f32 weights rounded to BF16 and packed as the B operand of the level's BF16
// kernels (cpu/matmul_nn_bf16.h: the panels of avx512bf16, the tiles of amx) once per version of
// the weights, for the trainer's BF16 products: B = Wᵀ for a linear layer's out = inp · Wᵀ, and
// B = W for its backward dinp = dout · W. The forward, the backward and every micro-batch of an
// update multiply by the same weights, so packing them once per version replaces a rounding and
// packing pass per product, and lets the forward run on the C = A·B kernel. The products' bits
// are those of packing per call (tests/test_cpu_matmul_nn_bf16.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "core/thread_pool.h"
#include "cpu/matmul_nn_bf16.h"

namespace s3::cpu {

// The BF16 kernels this CPU runs the trainer's BF16 products on, packing weights straight from
// their rows (avx512bf16, amx), or null (the levels below avx512bf16).
const MatmulNnBf16Kernels* packed_weight_kernels();

class PackedWeights {
 public:
  // Marks every packed weight stale unless `weights` (the base of the caller's parameters) and a
  // nonzero `version` match the last call's: version 0 means "unknown", so each call repacks. The
  // buffers stay allocated either way, so a repack reuses their pages.
  void use_version(const float* weights, uint64_t version);
  // W [N × K] (rows K apart) packed for `kernels` as B = Wᵀ (transposed) or B = W, packed now if it
  // is missing or stale. The reference stays valid until the next use_version.
  const MatmulNnBf16PackedB& packed(const float* w, int64_t N, int64_t K, bool transposed, const MatmulNnBf16Kernels& kernels,
                                    ThreadPool& pool);
  // Bytes the packed weights hold.
  size_t bytes() const;

 private:
  struct Entry {
    MatmulNnBf16PackedB b;
    uint64_t generation = 0;
  };
  const float* weights_ = nullptr;
  uint64_t version_ = 0;
  uint64_t generation_ = 1;
  std::map<std::pair<const float*, bool>, Entry> entries_;
};

}  // namespace s3::cpu
