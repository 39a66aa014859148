// packed_weights.cpp: the implementation of cpu/packed_weights.h.
#include "cpu/packed_weights.h"

#include "core/cpu_features.h"

namespace s3::cpu {

const MatmulNnBf16Kernels* packed_weight_kernels() {
  const MatmulNnBf16Kernels* kernels = matmul_nn_bf16_kernels_for(cpu_info().level);
  if (kernels == nullptr) return nullptr;
  const bool from_rows = kernels->tiles ? kernels->pack_rows_as_b_block != nullptr : kernels->pack_rows_as_b_panel != nullptr;
  return from_rows ? kernels : nullptr;
}

void PackedWeights::use_version(const float* weights, uint64_t version) {
  if (version == 0 || weights != weights_ || version != version_) generation_++;
  weights_ = weights;
  version_ = version;
}

const MatmulNnBf16PackedB& PackedWeights::packed(const float* w, int64_t N, int64_t K, bool transposed,
                                               const MatmulNnBf16Kernels& kernels, ThreadPool& pool) {
  Entry& entry = entries_[{w, transposed}];
  const bool current = entry.generation == generation_ && entry.b.kernels == &kernels &&
                       entry.b.N == (transposed ? N : K) && entry.b.K == (transposed ? K : N);
  if (!current) {
    if (transposed) {
      matmul_nn_bf16_pack_b_transposed(entry.b, w, K, K, N, kernels, pool);
    } else {
      matmul_nn_bf16_pack_b(entry.b, w, K, N, K, kernels, pool);
    }
    entry.generation = generation_;
  }
  return entry.b;
}

size_t PackedWeights::bytes() const {
  size_t total = 0;
  for (const auto& [key, entry] : entries_) total += entry.b.values.size() * sizeof(uint16_t);
  return total;
}

}  // namespace s3::cpu
