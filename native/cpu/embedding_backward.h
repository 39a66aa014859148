// embedding_backward: dtable[tokens[t]] += dout[t] for an f32 table [V × C].
#pragma once

#include <cstdint>

namespace s3::cpu {

void embedding_backward(float* dtable, const float* dout, const int32_t* tokens, int64_t T, int64_t C);

}  // namespace s3::cpu
