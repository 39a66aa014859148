// weight_tiles.cpp: the implementation of cpu/weight_tiles.h.
#include "cpu/weight_tiles.h"

#include "core/cpu_features.h"

namespace s3::cpu {

const MatmulNnBf16Kernels* weight_tile_kernels() {
  const MatmulNnBf16Kernels* kernels = matmul_nn_bf16_kernels_for(cpu_info().level);
  return kernels != nullptr && kernels->tiles && kernels->pack_rows_as_b_block != nullptr ? kernels : nullptr;
}

void WeightTiles::use_version(const float* weights, uint64_t version) {
  if (version == 0 || weights != weights_ || version != version_) generation_++;
  weights_ = weights;
  version_ = version;
}

const MatmulNnBf16PackedB& WeightTiles::packed(const float* w, int64_t N, int64_t K, bool transposed,
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

size_t WeightTiles::bytes() const {
  size_t total = 0;
  for (const auto& [key, entry] : entries_) total += entry.b.values.size() * sizeof(uint16_t);
  return total;
}

}  // namespace s3::cpu
