// qwen3_config.h: the shape of a Qwen3 model, read from a Hugging Face config.json. Only what the
// forward pass needs is kept; unknown fields are ignored, but a field that asks for behaviour
// this implementation lacks (another model_type, rope_scaling, sliding windows, biases, another
// activation or quantization scheme) is refused rather than silently computed wrong.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace s3::model {

// The message names the file, the field, the value found and what was expected.
class Qwen3ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Qwen3Config {
  int64_t hidden_size = 0;              // C
  int64_t num_hidden_layers = 0;        // L
  int64_t num_attention_heads = 0;      // NH
  int64_t num_key_value_heads = 0;      // NKV (divides NH)
  int64_t head_dim = 0;                 // HD (even; need not be C / NH)
  int64_t intermediate_size = 0;        // I
  int64_t vocab_size = 0;               // V: embedding rows
  int64_t max_position_embeddings = 0;  // positions are 0 .. this - 1
  float rope_theta = 1e6f;
  float rms_norm_eps = 1e-6f;
  bool tie_word_embeddings = false;
  std::string torch_dtype = "bfloat16";  // the checkpoint's nominal dtype ("bfloat16", "float16", "float32")
  bool fp8_blockwise = false;           // quantization_config: fp8 with 128 × 128 weight blocks

  int64_t q_dim() const { return num_attention_heads * head_dim; }
  int64_t kv_dim() const { return num_key_value_heads * head_dim; }
};

// Parses config.json text; `source` names the file in error messages.
Qwen3Config parse_qwen3_config(std::string_view json_text, const std::string& source);
// Reads and parses the file at `path`.
Qwen3Config load_qwen3_config(const std::string& path);
// The fields two models must share for one's weights to serve as the other's, as error messages show
// them: "{hidden 1024, layers 28, heads 16 (KV 8) × 128, intermediate 3072, vocab 151936}".
std::string qwen3_shape_text(const Qwen3Config& config);

}  // namespace s3::model
