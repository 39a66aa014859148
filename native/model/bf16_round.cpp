// Rounding a model's f32 weights to BF16; see bf16_round.h.
#include "model/bf16_round.h"

#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/weight_rebuild.h"

namespace s3::model {

Qwen3Weights round_weights_bf16(const Qwen3Weights& weights) {
  WeightRebuild rebuild;
  rebuild.matrix = [](std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w, MatrixRole) {
    if (w.dtype != DType::F32) {
      add_stored_matrix(out, name, w);
      return;
    }
    RebuiltTensor t{name, DType::BF16, {w.rows, w.cols}, std::vector<uint8_t>(size_t(w.rows * w.cols) * sizeof(uint16_t))};
    convert_f32_to_bf16(static_cast<const float*>(w.data), reinterpret_cast<uint16_t*>(t.bytes.data()), size_t(w.rows * w.cols));
    out.push_back(std::move(t));
  };
  rebuild.vector_value = [](float x) { return bf16_to_f32(f32_to_bf16(x)); };
  rebuild.fp8_blockwise = weights.config().fp8_blockwise;
  rebuild.source = "the BF16-rounded weights";
  return rebuild_weights(weights, rebuild);
}

}  // namespace s3::model
