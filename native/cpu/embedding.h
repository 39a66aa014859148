// embedding.h: token embedding lookup from the checkpoint's table (any MatrixView dtype).
#pragma once

#include <cstdint>

#include "cpu/matrix_view.h"

namespace s3::cpu {

// out: [T × C] f32; tokens: [T]; table: [V × C]. Throws std::out_of_range naming the token and
// its index when a token is not in [0, V).
void embedding_forward(float* out, const int32_t* tokens, int64_t T, const MatrixView& table);

}  // namespace s3::cpu
