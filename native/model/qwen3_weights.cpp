// Loading and checking Qwen3 parameters; see qwen3_weights.h.
#include "model/qwen3_weights.h"

#include <cstring>
#include <unordered_map>

#include "core/json.h"
#include "cpu/weight_panels.h"

namespace s3::model {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); i++) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

size_t byte_size(const NamedTensor& tensor) {
  size_t count = 1;
  for (int64_t dim : tensor.shape) count *= size_t(dim);
  return count * dtype_size(tensor.dtype);
}

int64_t blocks(int64_t n) { return (n + cpu::kFp8BlockSize - 1) / cpu::kFp8BlockSize; }

class TensorTable {
 public:
  TensorTable(const std::vector<NamedTensor>& tensors, const std::string& source) : source_(source) {
    for (const NamedTensor& tensor : tensors) {
      if (!by_name_.emplace(tensor.name, &tensor).second) fail(tensor.name, "appears twice");
    }
  }

  [[noreturn]] void fail(const std::string& name, const std::string& problem) const {
    throw Qwen3WeightsError(source_ + ": tensor " + json_quote(name) + " " + problem);
  }

  bool has(const std::string& name) const { return by_name_.count(name) != 0; }

  // The tensor, checked to have `shape` (whose meaning `dims` spells out) and one of `dtypes`.
  const NamedTensor& get(const std::string& name, const std::vector<int64_t>& shape, const char* dims,
                         std::initializer_list<DType> dtypes) const {
    const auto found = by_name_.find(name);
    if (found == by_name_.end()) fail(name, "is missing; expected shape " + shape_text(shape) + " " + dims);
    const NamedTensor& tensor = *found->second;
    if (tensor.shape != shape) {
      fail(name, "has shape " + shape_text(tensor.shape) + "; expected " + shape_text(shape) + " " + dims);
    }
    bool allowed = false;
    std::string names;
    for (DType dtype : dtypes) {
      allowed |= dtype == tensor.dtype;
      names += (names.empty() ? "" : ", ") + std::string(dtype_name(dtype));
    }
    if (!allowed) fail(name, std::string("has dtype ") + dtype_name(tensor.dtype) + "; expected one of " + names);
    if (tensor.data == nullptr && byte_size(tensor) > 0) fail(name, "has no data");
    return tensor;
  }

 private:
  const std::string& source_;
  std::unordered_map<std::string, const NamedTensor*> by_name_;
};

}  // namespace

const void* Qwen3Weights::keep(const NamedTensor& tensor) {
  const bool aligned = reinterpret_cast<uintptr_t>(tensor.data) % dtype_size(tensor.dtype) == 0;
  if (storage_ == Storage::Borrow && aligned) return tensor.data;
  // A copy: asked for, or the file placed the tensor off its element alignment.
  const size_t bytes = byte_size(tensor);
  owned_.emplace_back(new uint8_t[bytes > 0 ? bytes : 1]);
  if (bytes > 0) std::memcpy(owned_.back().get(), tensor.data, bytes);
  return owned_.back().get();
}

const float* Qwen3Weights::keep_as_f32(const NamedTensor& tensor) {
  const size_t count = byte_size(tensor) / dtype_size(tensor.dtype);
  owned_.emplace_back(new uint8_t[(count > 0 ? count : 1) * sizeof(float)]);
  float* values = reinterpret_cast<float*>(owned_.back().get());
  for (size_t i = 0; i < count; i++) {
    uint16_t half;
    float single;
    switch (tensor.dtype) {
      case DType::BF16:
        std::memcpy(&half, static_cast<const uint8_t*>(tensor.data) + 2 * i, 2);
        values[i] = bf16_to_f32(half);
        break;
      case DType::F16:
        std::memcpy(&half, static_cast<const uint8_t*>(tensor.data) + 2 * i, 2);
        values[i] = f16_to_f32(half);
        break;
      default:
        std::memcpy(&single, static_cast<const uint8_t*>(tensor.data) + 4 * i, 4);
        values[i] = single;
        break;
    }
  }
  return values;
}

void Qwen3Weights::bind(const std::vector<NamedTensor>& tensors, const std::string& source) {
  const Qwen3Config& c = config_;
  const TensorTable table(tensors, source);
  const std::initializer_list<DType> matrix_types = {DType::BF16, DType::F16, DType::F32, DType::F8_E4M3};
  const std::initializer_list<DType> vector_types = {DType::BF16, DType::F16, DType::F32};

  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols, const char* dims) {
    const NamedTensor& tensor = table.get(name, {rows, cols}, dims, matrix_types);
    cpu::MatrixView view{keep(tensor), tensor.dtype, rows, cols, nullptr};
    const std::string scale_name = name + "_scale_inv";
    if (tensor.dtype == DType::F8_E4M3) {
      const NamedTensor& scales = table.get(scale_name, {blocks(rows), blocks(cols)},
                                            "(one f32 scale per 128 x 128 block of the F8_E4M3 weight)", {DType::F32});
      view.block_scales = static_cast<const float*>(keep(scales));
    } else if (table.has(scale_name)) {
      table.fail(scale_name, std::string("is present but its weight is ") + dtype_name(tensor.dtype) +
                                 "; block scales belong to F8_E4M3 weights only");
    }
    return view;
  };
  auto vector = [&](const std::string& name, int64_t size, const char* dims) {
    return keep_as_f32(table.get(name, {size}, dims, vector_types));
  };

  embed_tokens_ = matrix("model.embed_tokens.weight", c.vocab_size, c.hidden_size, "(vocab_size, hidden_size)");
  layers_.resize(size_t(c.num_hidden_layers));
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    Qwen3LayerWeights& layer = layers_[size_t(i)];
    layer.input_layernorm = vector(prefix + "input_layernorm.weight", c.hidden_size, "(hidden_size)");
    layer.q_proj = matrix(prefix + "self_attn.q_proj.weight", c.q_dim(), c.hidden_size,
                          "(num_attention_heads x head_dim, hidden_size)");
    layer.k_proj = matrix(prefix + "self_attn.k_proj.weight", c.kv_dim(), c.hidden_size,
                          "(num_key_value_heads x head_dim, hidden_size)");
    layer.v_proj = matrix(prefix + "self_attn.v_proj.weight", c.kv_dim(), c.hidden_size,
                          "(num_key_value_heads x head_dim, hidden_size)");
    layer.q_norm = vector(prefix + "self_attn.q_norm.weight", c.head_dim, "(head_dim)");
    layer.k_norm = vector(prefix + "self_attn.k_norm.weight", c.head_dim, "(head_dim)");
    layer.o_proj = matrix(prefix + "self_attn.o_proj.weight", c.hidden_size, c.q_dim(),
                          "(hidden_size, num_attention_heads x head_dim)");
    layer.post_attention_layernorm = vector(prefix + "post_attention_layernorm.weight", c.hidden_size, "(hidden_size)");
    layer.gate_proj = matrix(prefix + "mlp.gate_proj.weight", c.intermediate_size, c.hidden_size,
                             "(intermediate_size, hidden_size)");
    layer.up_proj = matrix(prefix + "mlp.up_proj.weight", c.intermediate_size, c.hidden_size,
                           "(intermediate_size, hidden_size)");
    layer.down_proj = matrix(prefix + "mlp.down_proj.weight", c.hidden_size, c.intermediate_size,
                             "(hidden_size, intermediate_size)");
  }
  norm_ = vector("model.norm.weight", c.hidden_size, "(hidden_size)");
  // Tied checkpoints may still carry lm_head.weight (Qwen3-0.6B does); tying means it is unused.
  lm_head_ = c.tie_word_embeddings ? embed_tokens_
                                   : matrix("lm_head.weight", c.vocab_size, c.hidden_size, "(vocab_size, hidden_size)");
}

const std::vector<Qwen3LayerWeights>& Qwen3Weights::cpu_layers(ThreadPool& pool) const {
  prepare_cpu_views(pool);
  return cpu_views_->panels ? cpu_views_->layers : layers_;
}

const cpu::MatrixView& Qwen3Weights::cpu_lm_head(ThreadPool& pool) const {
  prepare_cpu_views(pool);
  return cpu_views_->panels ? cpu_views_->lm_head : lm_head_;
}

void Qwen3Weights::prepare_cpu_views(ThreadPool& pool) const {
  CpuViews& views = *cpu_views_;
  std::call_once(views.once, [&] {
    if (!cpu::weight_panels_used()) return;
    views.layers = layers_;
    views.lm_head = lm_head_;  // the embedding lookups keep reading embed_tokens as stored
    std::vector<cpu::MatrixView*> matrices;
    for (Qwen3LayerWeights& layer : views.layers) {
      for (cpu::MatrixView* view : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.gate_proj,
                                    &layer.up_proj, &layer.down_proj}) {
        if (cpu::weight_panel_bytes(*view) > 0) matrices.push_back(view);
      }
    }
    if (cpu::weight_panel_bytes(views.lm_head) > 0) matrices.push_back(&views.lm_head);
    int64_t bytes = 0;
    for (const cpu::MatrixView* view : matrices) bytes += cpu::weight_panel_bytes(*view);
    if (bytes == 0) return;
    views.pages = ZeroedPages(size_t(bytes));
    uint8_t* next = static_cast<uint8_t*>(views.pages.data());
    for (cpu::MatrixView* view : matrices) {
      cpu::pack_weight_panels(*view, next, pool);
      cpu::attach_weight_panels(*view, next);
      next += cpu::weight_panel_bytes(*view);
    }
    views.panels = true;
  });
}

Qwen3Weights Qwen3Weights::load(const std::string& directory) {
  Qwen3Weights weights;
  weights.config_ = load_qwen3_config(directory + "/config.json");
  try {
    weights.checkpoint_ = std::make_unique<SafetensorsIndex>(SafetensorsIndex::open(directory));
  } catch (const std::exception& error) {
    throw Qwen3WeightsError(std::string("cannot open the checkpoint: ") + error.what());
  }
  std::vector<NamedTensor> tensors;
  for (const std::string& name : weights.checkpoint_->names()) {
    const TensorInfo& info = weights.checkpoint_->info(name);
    tensors.push_back({name, info.dtype, info.shape, info.data});
  }
  weights.storage_ = Storage::Borrow;
  weights.bind(tensors, directory);
  return weights;
}

Qwen3Weights Qwen3Weights::from_tensors(const Qwen3Config& config, const std::vector<NamedTensor>& tensors,
                                        Storage storage, const std::string& source) {
  Qwen3Weights weights;
  weights.config_ = config;
  weights.storage_ = storage;
  weights.bind(tensors, source);
  return weights;
}

}  // namespace s3::model
