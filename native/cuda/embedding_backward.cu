// Embedding backward on the device; see embedding_backward.h.
#include <algorithm>
#include <numeric>

#include "core/host_device.h"
#include "cuda/check.h"
#include "cuda/embedding_backward.h"
#include "cuda/reduce.cuh"

namespace s3::cuda {
namespace {

constexpr int kColumnThreads = 128;

// Block (g, column tile): table row tokens[g] gains its positions' rows, in increasing t.
__global__ void embedding_backward_kernel(float* dtable, const float* dout, const int32_t* tokens, const int32_t* offsets,
                                          const int32_t* positions, int64_t C) {
  const int64_t g = blockIdx.x;
  const int64_t c = int64_t(blockIdx.y) * kColumnThreads + threadIdx.x;
  if (c >= C) return;
  float* cell = dtable + int64_t(tokens[g]) * C + c;
  float sum = *cell;
  for (int32_t i = offsets[g]; i < offsets[g + 1]; i++) sum = add_rn(sum, dout[int64_t(positions[i]) * C + c]);
  *cell = sum;
}

}  // namespace

TokenGroups group_positions_by_token(const int32_t* tokens, int64_t T) {
  std::vector<int32_t> order(static_cast<size_t>(T));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return tokens[a] < tokens[b]; });
  TokenGroups groups;
  groups.positions = order;
  for (int64_t i = 0; i < T; i++) {
    if (i == 0 || tokens[order[size_t(i)]] != tokens[order[size_t(i - 1)]]) {
      groups.tokens.push_back(tokens[order[size_t(i)]]);
      groups.offsets.push_back(int32_t(i));
    }
  }
  groups.offsets.push_back(int32_t(T));
  return groups;
}

void embedding_backward(float* dtable, const float* dout, const int32_t* group_tokens, const int32_t* group_offsets,
                        const int32_t* group_positions, int64_t G, int64_t C, cudaStream_t stream) {
  if (G == 0 || C == 0) return;
  const dim3 grid(unsigned(G), blocks_for(C, kColumnThreads));
  embedding_backward_kernel<<<grid, kColumnThreads, 0, stream>>>(dtable, dout, group_tokens, group_offsets,
                                                                 group_positions, C);
  check_launch("embedding_backward", {{"G", G}, {"C", C}});
}

}  // namespace s3::cuda
