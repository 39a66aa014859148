// weight_rebuild.h: a new Qwen3Weights built tensor by tensor from an existing one, the walk the
// weight formats share (`--weights fp8` in fp8_quantize.h, `--weights bf16` in bf16_round.h): every
// tensor visited once under its checkpoint name, each matrix handed to the format's rule, the
// norms kept as f32 vectors (optionally mapped value by value). The result owns its bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/qwen3_weights.h"

namespace s3::model {

// One tensor of the rebuilt checkpoint, with its bytes.
struct RebuiltTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// What a matrix is in the model: the embedding, the untied LM head, or a linear layer's weight.
enum class MatrixRole { Embedding, LmHead, Linear };

// How one weight format rebuilds a model.
struct WeightRebuild {
  // Appends the tensors of matrix `w` named `name` (the weight and any sibling, such as its block scales).
  std::function<void(std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w, MatrixRole role)> matrix;
  // Maps each value of a norm vector; identity when empty.
  std::function<float(float)> vector_value;
  // The result's config.fp8_blockwise.
  bool fp8_blockwise = false;
  // Names the result in error messages.
  std::string source;
};

// Appends `w` exactly as stored: its bytes in its dtype, and an FP8 weight's block scales.
void add_stored_matrix(std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w);

// The tensors of `weights` rebuilt by `rebuild`, under their checkpoint names.
std::vector<RebuiltTensor> rebuild_tensors(const Qwen3Weights& weights, const WeightRebuild& rebuild);
// Rebuilds `weights` by `rebuild`.
Qwen3Weights rebuild_weights(const Qwen3Weights& weights, const WeightRebuild& rebuild);

}  // namespace s3::model
