// embedding_backward.h: the CUDA twin of cpu/embedding_backward.h, dtable[tokens[t]] += dout[t],
// deterministic without atomics and with the CPU's bits: the positions are grouped by token on the
// host (the trainer has the token ids there), and each table row then adds its positions' rows in
// increasing t, the CPU's order. Device pointers unless said otherwise.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace s3::cuda {

// The positions of each distinct token: group g is token tokens[g] (ascending) at positions
// positions[offsets[g] .. offsets[g + 1]) (ascending). Host memory.
struct TokenGroups {
  std::vector<int32_t> tokens, offsets, positions;
  int64_t count() const { return int64_t(tokens.size()); }
};

// Host: the groups of tokens[0 .. T).
TokenGroups group_positions_by_token(const int32_t* tokens, int64_t T);

// dtable: [V × C] f32, accumulated (+=); dout: [T × C]; group_tokens, group_offsets,
// group_positions: a TokenGroups' three arrays on the device (G groups, G + 1 offsets).
void embedding_backward(float* dtable, const float* dout, const int32_t* group_tokens, const int32_t* group_offsets,
                        const int32_t* group_positions, int64_t G, int64_t C, cudaStream_t stream);

}  // namespace s3::cuda
