// config.json parsing (native/model/qwen3_config): the real Qwen3-0.6B config, Hugging Face
// defaults, and refusals that name the file, the field, the value and what was expected.
#include <string>

#include "model/qwen3_config.h"
#include "tests/test_framework.h"

namespace {

using s3::model::parse_qwen3_config;
using s3::model::Qwen3Config;
using s3::model::Qwen3ConfigError;

// Qwen3-0.6B's config.json as published.
const char* kQwen3_0_6B = R"({
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

// The refusal message for `json`, or "" if it parsed.
std::string refusal(const std::string& json) {
  try {
    parse_qwen3_config(json, "dir/config.json");
  } catch (const Qwen3ConfigError& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(qwen3_config_reads_the_published_0_6b_config) {
  const Qwen3Config c = parse_qwen3_config(kQwen3_0_6B, "config.json");
  CHECK_EQ(c.hidden_size, 1024);
  CHECK_EQ(c.num_hidden_layers, 28);
  CHECK_EQ(c.num_attention_heads, 16);
  CHECK_EQ(c.num_key_value_heads, 8);
  CHECK_EQ(c.head_dim, 128);
  CHECK_EQ(c.q_dim(), 2048);  // not hidden_size: q_proj is 1024 → 2048
  CHECK_EQ(c.kv_dim(), 1024);
  CHECK_EQ(c.intermediate_size, 3072);
  CHECK_EQ(c.vocab_size, 151936);
  CHECK_EQ(c.max_position_embeddings, 40960);
  CHECK_EQ(c.rope_theta, 1e6f);
  CHECK_EQ(c.rms_norm_eps, 1e-6f);
  CHECK(c.tie_word_embeddings);
  CHECK_EQ(c.torch_dtype, std::string("bfloat16"));
  CHECK(!c.fp8_blockwise);
}

TEST(qwen3_config_defaults_follow_hugging_face) {
  const Qwen3Config c = parse_qwen3_config(R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 512, "some_future_field": [1, 2]})", "c");
  CHECK_EQ(c.head_dim, 16);  // hidden_size / num_attention_heads
  CHECK_EQ(c.num_key_value_heads, 4);
  CHECK_EQ(c.max_position_embeddings, 32768);
  CHECK_EQ(c.rope_theta, 10000.0f);
  CHECK(!c.tie_word_embeddings);
}

// transformers ≥ 5 writes {"rope_parameters": {"rope_type": "default", "rope_theta": θ}} and no top-level
// rope_theta; reading only the top level took the default 10000 for such a checkpoint.
TEST(qwen3_config_reads_rope_theta_from_rope_parameters) {
  const std::string base = R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 512)";
  CHECK_EQ(parse_qwen3_config(base + R"(, "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}})", "c").rope_theta,
           1e6f);
  CHECK_EQ(parse_qwen3_config(base + R"(, "rope_theta": 5e5, "rope_parameters": {"rope_theta": 5e5}})", "c").rope_theta, 5e5f);
  CHECK(contains(refusal(base + R"(, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0}})"),
                 "dir/config.json (rope_parameters): \"rope_type\" is \"yarn\"; expected \"default\""));
  CHECK(contains(refusal(base + R"(, "rope_theta": 10000, "rope_parameters": {"rope_theta": 1e6}})"),
                 "\"rope_theta\" is number 10000; expected the same value as rope_parameters.rope_theta (1000000)"));
  CHECK(contains(refusal(base + R"(, "rope_parameters": 3})"), "\"rope_parameters\" is number 3; expected an object"));
}

TEST(qwen3_config_accepts_fp8_blockwise_quantization) {
  std::string json = kQwen3_0_6B;
  json.insert(json.rfind('}'), R"(, "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
      "quant_method": "fp8", "weight_block_size": [128, 128]})");
  CHECK(parse_qwen3_config(json, "c").fp8_blockwise);
  std::string other = kQwen3_0_6B;
  other.insert(other.rfind('}'), R"(, "quantization_config": {"quant_method": "awq"})");
  const std::string message = refusal(other);
  CHECK(contains(message, "dir/config.json: \"quantization_config.quant_method\" is \"awq\"; expected \"fp8\""));
}

TEST(qwen3_config_refusals_name_file_field_value_and_expectation) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = kQwen3_0_6B;
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  CHECK(contains(refusal(with("\"model_type\": \"qwen3\"", "\"model_type\": \"llama\"")),
                 "dir/config.json: \"model_type\" is \"llama\"; expected \"qwen3\""));
  CHECK(contains(refusal(with("\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}")),
                 "dir/config.json: \"rope_scaling\" is an object; expected null or false"));
  CHECK(contains(refusal(with("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5")),
                 "\"num_key_value_heads\" is 5; expected a divisor of num_attention_heads (16)"));
  CHECK(contains(refusal(with("\"hidden_size\": 1024", "\"hidden_size\": -3")),
                 "\"hidden_size\" is number -3; expected a positive integer"));
  CHECK(contains(refusal(with("\"hidden_size\": 1024,", "")),
                 "\"hidden_size\" is missing; expected a positive integer"));
  CHECK(contains(refusal(with("\"attention_bias\": false", "\"attention_bias\": true")),
                 "\"attention_bias\" is boolean true"));
  CHECK(contains(refusal(with("\"use_sliding_window\": false", "\"use_sliding_window\": true")), "use_sliding_window"));
  CHECK(contains(refusal(with("\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"")),
                 "\"hidden_act\" is \"gelu\"; expected \"silu\""));
  CHECK(contains(refusal(with("\"head_dim\": 128", "\"head_dim\": 127")),
                 "\"head_dim\" is 127; expected an even number"));
  CHECK(contains(refusal(with("\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": \"int8\"")),
                 "\"torch_dtype\" is \"int8\""));
  CHECK(contains(refusal("[1, 2]"), "dir/config.json: the top level is array; expected an object"));
  CHECK(contains(refusal("{"), "dir/config.json: not valid JSON"));
  CHECK_THROWS(Qwen3ConfigError, s3::model::load_qwen3_config("/nonexistent/config.json"));
}
