// Uploading a model's parameters to the device; see qwen3_device_weights.h.
#include "model/qwen3_device_weights.h"

#include <cstring>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/dtype.h"
#include "core/ops/fp8_block_scales.h"
#include "cuda/fp8_weights.h"
#include "cuda/check.h"
#include "cuda/dtype_kernels.h"

namespace s3::model {
namespace {

// The device form of a stored matrix.
cuda::GemmDtype device_form(DType stored, bool fp8_block_scaling) {
  switch (stored) {
    case DType::BF16: return cuda::GemmDtype::Bf16;
    case DType::F8_E4M3: return fp8_block_scaling ? cuda::GemmDtype::Fp8 : cuda::GemmDtype::Bf16;
    default: return cuda::GemmDtype::F32;  // F32 as is, F16 widened exactly
  }
}

std::string form_name(const cpu::MatrixView& w, cuda::GemmDtype form) {
  std::string name = cuda::gemm_dtype_name(form);
  if (w.dtype == DType::F8_E4M3 && form == cuda::GemmDtype::Bf16) name = "fp8 widened to bf16";
  return name;
}

// What update() compares: the form and the shape.
std::string form_key(const cpu::MatrixView& w, cuda::GemmDtype form) {
  return form_name(w, form) + " " + std::to_string(w.rows) + "x" + std::to_string(w.cols);
}

// The matrix's elements in device form: f32 or bf16 values row-major, or the FP8 bytes as stored.
std::vector<uint8_t> device_elements(const cpu::MatrixView& w, cuda::GemmDtype form) {
  const size_t count = size_t(w.rows * w.cols);
  if (form == cuda::GemmDtype::Fp8 || (form == cuda::GemmDtype::Bf16 && w.dtype == DType::BF16) ||
      (form == cuda::GemmDtype::F32 && w.dtype == DType::F32)) {
    const size_t bytes = count * dtype_size(w.dtype);
    const uint8_t* data = static_cast<const uint8_t*>(w.data);
    return std::vector<uint8_t>(data, data + bytes);
  }
  std::vector<float> row(size_t(w.cols));
  std::vector<uint8_t> out(count * (form == cuda::GemmDtype::F32 ? 4 : 2));
  for (int64_t n = 0; n < w.rows; n++) {
    cpu::matrix_row_to_f32(w, n, row.data());
    for (int64_t k = 0; k < w.cols; k++) {
      const size_t i = size_t(n * w.cols + k);
      if (form == cuda::GemmDtype::F32) {
        std::memcpy(&out[4 * i], &row[size_t(k)], 4);
      } else {
        const uint16_t bits = f32_to_bf16(row[size_t(k)]);
        std::memcpy(&out[2 * i], &bits, 2);
      }
    }
  }
  return out;
}

// A checkpoint's row-major weight_scale_inv repacked with the K-block count padded to a multiple of 4.
std::vector<float> padded_scales(const cpu::MatrixView& w) {
  std::vector<float> out(size_t(ops::weight_scale_count(w.rows, w.cols)), 1.0f);
  for (int64_t nb = 0; nb < ops::fp8_blocks(w.rows); nb++) {
    for (int64_t kb = 0; kb < ops::fp8_blocks(w.cols); kb++) {
      out[size_t(ops::weight_scale_index(nb, kb, w.cols))] = w.block_scales[nb * w.scale_cols() + kb];
    }
  }
  return out;
}

// What update() compares for a matrix of `rows` × `cols` in `form` made from f32 values.
std::string form_key_from_f32(cuda::GemmDtype form, int64_t rows, int64_t cols) {
  return std::string(cuda::gemm_dtype_name(form)) + " " + std::to_string(rows) + "x" + std::to_string(cols);
}

void require_matrix_form(cuda::GemmDtype form) {
  if (form != cuda::GemmDtype::F32 && form != cuda::GemmDtype::Bf16 && form != cuda::GemmDtype::Fp8) {
    throw std::invalid_argument("weights from device parameters: only f32, bf16 and fp8 forms are made on the device");
  }
}

// From f32 device parameters in `form`, a linear layer's device form: Fp8 (`--weights fp8`) is
// block-scaled FP8 where the GEMM takes it, else FP8 widened to bf16, as the host path uploads them.
cuda::GemmDtype linear_form_from_f32(cuda::GemmDtype form, bool fp8_block_scaling) {
  if (form != cuda::GemmDtype::Fp8) return form;
  return fp8_block_scaling ? cuda::GemmDtype::Fp8 : cuda::GemmDtype::Bf16;
}

// The embedding, the LM head and the norms: FP8 weights keep them as stored (f32 here), as
// model/fp8_quantize.h does.
cuda::GemmDtype outer_form_from_f32(cuda::GemmDtype form) { return form == cuda::GemmDtype::Fp8 ? cuda::GemmDtype::F32 : form; }

}  // namespace

Qwen3DeviceWeights::Qwen3DeviceWeights(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form,
                                       cuda::DeviceAllocator& allocator, cudaStream_t stream, bool fp8_block_scaling)
    : allocator_(allocator), stream_(stream), fp8_block_scaling_(fp8_block_scaling), config_(params.config) {
  require_matrix_form(form);
  upload_from_device(params, form, false);
}

std::vector<std::string> Qwen3DeviceWeights::forms_from_device(const Qwen3DeviceParamSnapshot& params,
                                                               cuda::GemmDtype form) const {
  const Qwen3Config& c = params.config;
  const cuda::GemmDtype outer = outer_form_from_f32(form), linear = linear_form_from_f32(form, fp8_block_scaling_);
  std::vector<std::string> forms{form_key_from_f32(outer, c.vocab_size, c.hidden_size)};
  const std::pair<int64_t, int64_t> shapes[] = {{c.q_dim(), c.hidden_size},        {c.kv_dim(), c.hidden_size},
                                                {c.kv_dim(), c.hidden_size},       {c.hidden_size, c.q_dim()},
                                                {c.intermediate_size, c.hidden_size}, {c.intermediate_size, c.hidden_size},
                                                {c.hidden_size, c.intermediate_size}};
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    for (const auto& [rows, cols] : shapes) forms.push_back(form_key_from_f32(linear, rows, cols));
  }
  if (!c.tie_word_embeddings) forms.push_back(form_key_from_f32(outer, c.vocab_size, c.hidden_size));
  return forms;
}

bool Qwen3DeviceWeights::update(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form, cudaStream_t stream) {
  require_matrix_form(form);
  if (forms_from_device(params, form) != forms_) return false;
  stream_ = stream;
  config_ = params.config;
  upload_from_device(params, form, true);
  return true;
}

void* Qwen3DeviceWeights::place_from_device(const float* source, size_t count, cuda::GemmDtype form, bool bf16_values,
                                            const char* name, bool reuse) {
  const size_t bytes = count * (form == cuda::GemmDtype::Bf16 ? sizeof(uint16_t) : sizeof(float));
  if (!reuse) {
    buffers_.emplace_back(allocator_, bytes, name);
    bytes_ += bytes;
  }
  void* device = buffers_[next_++].get();
  if (form == cuda::GemmDtype::Bf16) {
    cuda::f32_to_bf16(source, static_cast<uint16_t*>(device), count, stream_);
  } else if (bf16_values) {  // an f32 vector holding bf16 values: rounded, then widened back
    uint16_t* bits = rounding_.reserve<uint16_t>(allocator_, count);
    cuda::f32_to_bf16(source, bits, count, stream_);
    cuda::bf16_to_f32(bits, static_cast<float*>(device), count, stream_);
  } else {
    cuda::check(cudaMemcpyAsync(device, source, bytes, cudaMemcpyDeviceToDevice, stream_), "copying weights on the device",
                {{"bytes", int64_t(bytes)}});
  }
  return device;
}

cuda::DeviceMatrix Qwen3DeviceWeights::place_fp8_from_device(const float* source, int64_t rows, int64_t cols, const char* name,
                                                              bool reuse) {
  const size_t count = size_t(rows * cols);
  if (fp8_block_scaling_) {  // bytes, then scales in cuBLASLt's padded layout, as the host path places them
    const int64_t stride = ops::weight_scale_stride(cols);
    const size_t scale_bytes = size_t(ops::weight_scale_count(rows, cols)) * sizeof(float);
    if (!reuse) {
      buffers_.emplace_back(allocator_, count, name);
      buffers_.emplace_back(allocator_, scale_bytes, name);
      bytes_ += count + scale_bytes;
    }
    uint8_t* bytes = buffers_[next_++].get<uint8_t>();
    float* scales = buffers_[next_++].get<float>();
    cuda::quantize_fp8_blockwise(source, rows, cols, bytes, scales, stride, stream_);
    return cuda::DeviceMatrix{bytes, cuda::GemmDtype::Fp8, rows, cols, scales};
  }
  if (!reuse) {
    buffers_.emplace_back(allocator_, count * sizeof(uint16_t), name);
    bytes_ += count * sizeof(uint16_t);
  }
  uint16_t* out = buffers_[next_++].get<uint16_t>();
  const int64_t stride = ops::fp8_blocks(cols);
  uint8_t* bytes = fp8_bytes_.reserve<uint8_t>(allocator_, count);
  float* scales = fp8_scales_.reserve<float>(allocator_, size_t(ops::fp8_blocks(rows) * stride));
  cuda::quantize_fp8_blockwise(source, rows, cols, bytes, scales, stride, stream_);
  cuda::widen_fp8_blockwise_to_bf16(bytes, scales, stride, rows, cols, out, stream_);
  return cuda::DeviceMatrix{out, cuda::GemmDtype::Bf16, rows, cols, nullptr};
}

void Qwen3DeviceWeights::upload_from_device(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form, bool reuse) {
  const Qwen3Config& c = params.config;
  const Qwen3ParamLayout& L = params.layout;
  const float* p = params.data.get();
  const bool bf16 = form == cuda::GemmDtype::Bf16, fp8 = form == cuda::GemmDtype::Fp8;
  const cuda::GemmDtype outer = outer_form_from_f32(form);
  next_ = 0;
  // The embedding and the LM head (never FP8: the embedding is gathered row by row).
  auto matrix = [&](size_t offset, int64_t rows, int64_t cols, const char* name) {
    return cuda::DeviceMatrix{place_from_device(p + offset, size_t(rows * cols), outer, false, name, reuse), outer, rows, cols,
                              nullptr};
  };
  auto linear = [&](size_t offset, int64_t rows, int64_t cols, const char* name) {
    return fp8 ? place_fp8_from_device(p + offset, rows, cols, name, reuse) : matrix(offset, rows, cols, name);
  };
  auto vector = [&](size_t offset, int64_t count, const char* name) {
    return static_cast<const float*>(place_from_device(p + offset, size_t(count), cuda::GemmDtype::F32, bf16, name, reuse));
  };
  embed_ = matrix(L.embed, c.vocab_size, c.hidden_size, "the token embedding");
  embed_dtype_ = bf16 ? DType::BF16 : DType::F32;
  layers_.resize(size_t(c.num_hidden_layers));
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const Qwen3ParamLayout::Layer& l = L.layers[size_t(i)];
    Qwen3DeviceLayer& d = layers_[size_t(i)];
    d.q_proj = linear(l.q_proj, c.q_dim(), c.hidden_size, "q_proj");
    d.k_proj = linear(l.k_proj, c.kv_dim(), c.hidden_size, "k_proj");
    d.v_proj = linear(l.v_proj, c.kv_dim(), c.hidden_size, "v_proj");
    d.o_proj = linear(l.o_proj, c.hidden_size, c.q_dim(), "o_proj");
    d.gate_proj = linear(l.gate_proj, c.intermediate_size, c.hidden_size, "gate_proj");
    d.up_proj = linear(l.up_proj, c.intermediate_size, c.hidden_size, "up_proj");
    d.down_proj = linear(l.down_proj, c.hidden_size, c.intermediate_size, "down_proj");
    d.input_layernorm = vector(l.input_layernorm, c.hidden_size, "input_layernorm");
    d.post_attention_layernorm = vector(l.post_attention_layernorm, c.hidden_size, "post_attention_layernorm");
    d.q_norm = vector(l.q_norm, c.head_dim, "q_norm");
    d.k_norm = vector(l.k_norm, c.head_dim, "k_norm");
  }
  norm_ = vector(L.norm, c.hidden_size, "model.norm");
  lm_head_ = c.tie_word_embeddings ? embed_ : matrix(L.lm_head, c.vocab_size, c.hidden_size, "lm_head");
  cuda::check(cudaStreamSynchronize(stream_), "converting the trainer's parameters into weights");
  forms_ = forms_from_device(params, form);
  const std::string made = !fp8 ? cuda::gemm_dtype_name(form) : fp8_block_scaling_ ? "f32 + fp8 block-scaled" : "f32 + fp8 widened to bf16";
  format_ = made + " (from the trainer on the device)";
  holds_fp8_ = fp8;
}

Qwen3DeviceWeights::Qwen3DeviceWeights(const Qwen3Weights& weights, cuda::DeviceAllocator& allocator, cudaStream_t stream,
                                       bool fp8_block_scaling)
    : allocator_(allocator), stream_(stream), fp8_block_scaling_(fp8_block_scaling), config_(weights.config()) {
  upload(weights, false);
}

void* Qwen3DeviceWeights::place(const void* host, size_t bytes, const char* name, bool reuse) {
  if (!reuse) {
    buffers_.emplace_back(allocator_, bytes, name);
    bytes_ += bytes;
  }
  void* device = buffers_[next_++].get();
  // Synchronous from pageable host memory: the host bytes may go away right after.
  cuda::check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_), "uploading weights", {{"bytes", int64_t(bytes)}});
  cuda::check(cudaStreamSynchronize(stream_), "uploading weights");
  return device;
}

bool Qwen3DeviceWeights::update(const Qwen3Weights& weights, cudaStream_t stream) {
  // Every tensor must keep its device form (and so its size) for the memory to be reused.
  std::vector<std::string> forms;
  auto matrix_form = [&](const cpu::MatrixView& w, bool fp8_allowed) {
    forms.push_back(form_key(w, device_form(w.dtype, fp8_allowed && fp8_block_scaling_)));
  };
  matrix_form(weights.embed_tokens(), false);
  for (const Qwen3LayerWeights& l : weights.layers()) {
    for (const cpu::MatrixView* w : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      matrix_form(*w, true);
    }
  }
  if (!weights.config().tie_word_embeddings) matrix_form(weights.lm_head(), false);
  if (forms != forms_) return false;
  stream_ = stream;
  config_ = weights.config();
  upload(weights, true);
  return true;
}

void Qwen3DeviceWeights::upload(const Qwen3Weights& weights, bool reuse) {
  const Qwen3Config& c = weights.config();
  next_ = 0;
  std::set<std::string> formats;
  std::vector<std::string> forms;
  bool holds_fp8 = false;
  auto matrix = [&](const cpu::MatrixView& w, const char* name, bool fp8_allowed) {
    const cuda::GemmDtype form = device_form(w.dtype, fp8_allowed && fp8_block_scaling_);
    holds_fp8 = holds_fp8 || w.dtype == DType::F8_E4M3;
    formats.insert(form_name(w, form));
    forms.push_back(form_key(w, form));
    const std::vector<uint8_t> elements = device_elements(w, form);
    cuda::DeviceMatrix m{place(elements.data(), elements.size(), name, reuse), form, w.rows, w.cols, nullptr};
    if (form == cuda::GemmDtype::Fp8) {
      const std::vector<float> scales = padded_scales(w);
      m.scales = static_cast<const float*>(place(scales.data(), scales.size() * sizeof(float), name, reuse));
    }
    return m;
  };
  auto vector = [&](const float* values, int64_t count, const char* name) {
    return static_cast<const float*>(place(values, size_t(count) * sizeof(float), name, reuse));
  };
  // The embedding is gathered row by row, so it is never FP8 on the device.
  embed_ = matrix(weights.embed_tokens(), "the token embedding", false);
  embed_dtype_ = embed_.dtype == cuda::GemmDtype::F32 ? DType::F32 : DType::BF16;
  layers_.resize(size_t(c.num_hidden_layers));
  for (int64_t i = 0; i < c.num_hidden_layers; i++) {
    const Qwen3LayerWeights& l = weights.layers()[size_t(i)];
    Qwen3DeviceLayer& d = layers_[size_t(i)];
    d.q_proj = matrix(l.q_proj, "q_proj", true);
    d.k_proj = matrix(l.k_proj, "k_proj", true);
    d.v_proj = matrix(l.v_proj, "v_proj", true);
    d.o_proj = matrix(l.o_proj, "o_proj", true);
    d.gate_proj = matrix(l.gate_proj, "gate_proj", true);
    d.up_proj = matrix(l.up_proj, "up_proj", true);
    d.down_proj = matrix(l.down_proj, "down_proj", true);
    d.input_layernorm = vector(l.input_layernorm, c.hidden_size, "input_layernorm");
    d.post_attention_layernorm = vector(l.post_attention_layernorm, c.hidden_size, "post_attention_layernorm");
    d.q_norm = vector(l.q_norm, c.head_dim, "q_norm");
    d.k_norm = vector(l.k_norm, c.head_dim, "k_norm");
  }
  norm_ = vector(weights.norm(), c.hidden_size, "model.norm");
  lm_head_ = c.tie_word_embeddings ? embed_ : matrix(weights.lm_head(), "lm_head", false);
  forms_ = forms;
  holds_fp8_ = holds_fp8;
  format_.clear();
  for (const std::string& f : formats) format_ += (format_.empty() ? "" : " + ") + f;
}

}  // namespace s3::model
