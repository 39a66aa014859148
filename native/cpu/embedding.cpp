// Embedding lookup; see embedding.h.
#include "cpu/embedding.h"

#include <stdexcept>
#include <string>

namespace s3::cpu {

void embedding_forward(float* out, const int32_t* tokens, int64_t T, const MatrixView& table) {
  for (int64_t t = 0; t < T; t++) {
    if (tokens[t] < 0 || tokens[t] >= table.rows) {
      throw std::out_of_range("token " + std::to_string(tokens[t]) + " at index " + std::to_string(t) +
                              " is outside the vocabulary [0, " + std::to_string(table.rows) + ")");
    }
    matrix_row_to_f32(table, tokens[t], out + t * table.cols);
  }
}

}  // namespace s3::cpu
