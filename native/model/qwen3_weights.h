// qwen3_weights.h: the parameters of a Qwen3 model as typed views (cpu/matrix_view.h) over
// memory the weights object keeps alive: a memory-mapped checkpoint (no copy) or buffers handed
// over in memory (the trainer's new weights, test models). Every tensor's shape is derived from
// the config and checked on load; a mismatch names the tensor, its shape and the expected one.
// Small vectors (norm weights) are converted to f32 copies; the matrices never are.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/huge_pages.h"
#include "core/safetensors.h"
#include "core/thread_pool.h"
#include "cpu/matrix_view.h"
#include "model/qwen3_config.h"

namespace s3::model {

// The message names the checkpoint, the tensor, what was found and what was expected.
class Qwen3WeightsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A named tensor in memory, laid out as in a safetensors file (row-major).
struct NamedTensor {
  std::string name;  // checkpoint name, e.g. "model.layers.0.self_attn.q_proj.weight"
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

struct Qwen3LayerWeights {
  const float* input_layernorm = nullptr;           // [C]
  cpu::MatrixView q_proj, k_proj, v_proj;           // [NH·HD × C], [NKV·HD × C], [NKV·HD × C]
  const float* q_norm = nullptr;                    // [HD], shared by all query heads
  const float* k_norm = nullptr;                    // [HD], shared by all key heads
  cpu::MatrixView o_proj;                           // [C × NH·HD]
  const float* post_attention_layernorm = nullptr;  // [C]
  cpu::MatrixView gate_proj, up_proj;               // [I × C]
  cpu::MatrixView down_proj;                        // [C × I]
};

class Qwen3Weights {
 public:
  // Whether from_tensors copies the tensors' bytes or only points at them (the caller then keeps
  // them alive and unchanged for the lifetime of the weights).
  enum class Storage { Copy, Borrow };

  // Reads directory/config.json and the checkpoint (model.safetensors, or the shards listed by
  // model.safetensors.index.json), memory-mapped.
  static Qwen3Weights load(const std::string& directory);
  // Weights from tensors in memory, named and shaped as in a checkpoint. `source` names them in
  // error messages.
  static Qwen3Weights from_tensors(const Qwen3Config& config, const std::vector<NamedTensor>& tensors, Storage storage,
                                   const std::string& source = "in-memory weights");

  Qwen3Weights(Qwen3Weights&&) = default;
  Qwen3Weights& operator=(Qwen3Weights&&) = default;
  Qwen3Weights(const Qwen3Weights&) = delete;
  Qwen3Weights& operator=(const Qwen3Weights&) = delete;

  const Qwen3Config& config() const { return config_; }
  const cpu::MatrixView& embed_tokens() const { return embed_tokens_; }  // [V × C]
  const std::vector<Qwen3LayerWeights>& layers() const { return layers_; }
  const float* norm() const { return norm_; }                        // [C], the final model.norm
  const cpu::MatrixView& lm_head() const { return lm_head_; }        // [V × C]; embed_tokens when tied
  // The layers and LM head as the CPU forward multiplies them: where this CPU's matmul reads weight
  // panels (cpu/weight_panels.h, the avx512bf16 level), copies of the views whose BF16 and FP8
  // weights carry panels, packed on the first call by `pool` (once per weights object; safe from any
  // thread, never from inside one of the pool's tasks), so a weights object the CPU never runs
  // costs no second copy; elsewhere layers() and lm_head().
  const std::vector<Qwen3LayerWeights>& cpu_layers(ThreadPool& pool) const;
  const cpu::MatrixView& cpu_lm_head(ThreadPool& pool) const;

 private:
  Qwen3Weights() = default;
  void bind(const std::vector<NamedTensor>& tensors, const std::string& source);
  const void* keep(const NamedTensor& tensor);
  const float* keep_as_f32(const NamedTensor& tensor);
  void prepare_cpu_views(ThreadPool& pool) const;

  Qwen3Config config_;
  Storage storage_ = Storage::Borrow;
  std::unique_ptr<SafetensorsIndex> checkpoint_;         // the mapping borrowed views point into
  std::vector<std::unique_ptr<uint8_t[]>> owned_;        // copies: norms as f32, Storage::Copy tensors
  cpu::MatrixView embed_tokens_;
  std::vector<Qwen3LayerWeights> layers_;
  const float* norm_ = nullptr;
  cpu::MatrixView lm_head_;
  // cpu_layers() and cpu_lm_head(): made on first use (behind a pointer, as once_flag cannot move).
  struct CpuViews {
    std::once_flag once;
    bool panels = false;  // whether the views below are in use
    std::vector<Qwen3LayerWeights> layers;
    cpu::MatrixView lm_head;
    ZeroedPages pages;  // every panel
  };
  std::unique_ptr<CpuViews> cpu_views_ = std::make_unique<CpuViews>();
};

}  // namespace s3::model
