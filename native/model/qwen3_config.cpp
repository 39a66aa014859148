// config.json → Qwen3Config; see qwen3_config.h. Optional fields take the defaults of Hugging
// Face's Qwen3Config, so a config that transformers accepts means the same thing here.
#include "model/qwen3_config.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/json.h"
#include "core/mapped_file.h"

namespace s3::model {
namespace {

class ConfigReader {
 public:
  ConfigReader(const JsonValue& root, const std::string& source) : root_(root), source_(source) {}

  [[noreturn]] void fail(const std::string& field, const std::string& found, const std::string& expected) const {
    throw Qwen3ConfigError(source_ + ": \"" + field + "\" is " + found + "; expected " + expected);
  }

  static std::string describe(const JsonValue& value) {
    if (value.is_string()) return json_quote(value.as_string());
    if (value.is_number() || value.is_bool() || value.is_null()) {
      return std::string(value.kind_name()) + " " + text(value);
    }
    return std::string("an ") + value.kind_name();
  }

  const JsonValue* find(const char* field) const { return root_.find(field); }

  int64_t positive_integer(const char* field, const int64_t* fallback = nullptr) const {
    const JsonValue* value = find(field);
    if (value == nullptr || value->is_null()) {
      if (fallback) return *fallback;
      throw Qwen3ConfigError(source_ + ": \"" + field + "\" is missing; expected a positive integer");
    }
    const std::optional<uint64_t> number = value->as_uint64();
    if (!number || *number == 0 || *number > uint64_t(1) << 40) fail(field, describe(*value), "a positive integer");
    return int64_t(*number);
  }

  float positive_number(const char* field, float fallback) const {
    const JsonValue* value = find(field);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_number() || !(value->as_number() > 0.0) || !std::isfinite(float(value->as_number()))) {
      fail(field, describe(*value), "a positive number");
    }
    return float(value->as_number());
  }

  bool boolean(const char* field, bool fallback) const {
    const JsonValue* value = find(field);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_bool()) fail(field, describe(*value), "true or false");
    return value->as_bool();
  }

  // A field whose only supported setting is "off": absent, null or false.
  void require_off(const char* field, const char* why) const {
    const JsonValue* value = find(field);
    if (value == nullptr || value->is_null() || (value->is_bool() && !value->as_bool())) return;
    fail(field, describe(*value), std::string("null or false (") + why + ")");
  }

 private:
  static std::string text(const JsonValue& value) {
    if (value.is_bool()) return value.as_bool() ? "true" : "false";
    if (value.is_null()) return "null";
    return json_number(value.as_number());
  }

  const JsonValue& root_;
  const std::string& source_;
};

void check_quantization(const ConfigReader& reader, const JsonValue& quantization) {
  if (!quantization.is_object()) reader.fail("quantization_config", ConfigReader::describe(quantization), "an object");
  const JsonValue* method = quantization.find("quant_method");
  if (method == nullptr || !method->is_string() || method->as_string() != "fp8") {
    reader.fail("quantization_config.quant_method", method ? ConfigReader::describe(*method) : "missing",
                "\"fp8\" (the only quantization s3 reads: FP8 E4M3 with 128 x 128 block scales)");
  }
  const JsonValue* format = quantization.find("fmt");
  if (format && !(format->is_string() && format->as_string() == "e4m3")) {
    reader.fail("quantization_config.fmt", ConfigReader::describe(*format), "\"e4m3\"");
  }
  if (const JsonValue* block = quantization.find("weight_block_size"); block && !block->is_null()) {
    const bool is_128 = block->is_array() && block->as_array().size() == 2 &&
                        block->as_array()[0].as_uint64() == 128u && block->as_array()[1].as_uint64() == 128u;
    if (!is_128) reader.fail("quantization_config.weight_block_size", ConfigReader::describe(*block), "[128, 128]");
  }
}

}  // namespace

Qwen3Config parse_qwen3_config(std::string_view json_text, const std::string& source) {
  JsonValue root;
  try {
    root = parse_json(json_text);
  } catch (const JsonError& error) {
    throw Qwen3ConfigError(source + ": not valid JSON: " + error.what());
  }
  if (!root.is_object()) {
    throw Qwen3ConfigError(source + ": the top level is " + root.kind_name() + "; expected an object");
  }
  const ConfigReader reader(root, source);

  const JsonValue* model_type = reader.find("model_type");
  if (model_type == nullptr || !model_type->is_string() || model_type->as_string() != "qwen3") {
    reader.fail("model_type", model_type ? ConfigReader::describe(*model_type) : "missing", "\"qwen3\"");
  }
  reader.require_off("rope_scaling", "s3 implements plain RoPE only");
  reader.require_off("use_sliding_window", "s3 implements full causal attention only");
  reader.require_off("attention_bias", "Qwen3 projections have no biases");
  if (const JsonValue* act = reader.find("hidden_act"); act && !(act->is_string() && act->as_string() == "silu")) {
    reader.fail("hidden_act", ConfigReader::describe(*act), "\"silu\"");
  }

  Qwen3Config config;
  config.hidden_size = reader.positive_integer("hidden_size");
  config.num_hidden_layers = reader.positive_integer("num_hidden_layers");
  config.num_attention_heads = reader.positive_integer("num_attention_heads");
  config.num_key_value_heads = reader.positive_integer("num_key_value_heads", &config.num_attention_heads);
  if (config.num_attention_heads % config.num_key_value_heads != 0) {
    reader.fail("num_key_value_heads", std::to_string(config.num_key_value_heads),
                "a divisor of num_attention_heads (" + std::to_string(config.num_attention_heads) + ")");
  }
  if (reader.find("head_dim") == nullptr || reader.find("head_dim")->is_null()) {
    if (config.hidden_size % config.num_attention_heads != 0) {
      reader.fail("head_dim", "missing and hidden_size is not a multiple of num_attention_heads",
                  "an explicit head_dim");
    }
    config.head_dim = config.hidden_size / config.num_attention_heads;
  } else {
    config.head_dim = reader.positive_integer("head_dim");
  }
  if (config.head_dim % 2 != 0) {
    reader.fail("head_dim", std::to_string(config.head_dim),
                "an even number (rotate-half RoPE pairs j with j + head_dim/2)");
  }
  config.intermediate_size = reader.positive_integer("intermediate_size");
  config.vocab_size = reader.positive_integer("vocab_size");
  const int64_t default_positions = 32768;
  config.max_position_embeddings = reader.positive_integer("max_position_embeddings", &default_positions);
  config.rope_theta = reader.positive_number("rope_theta", 10000.0f);
  // transformers ≥ 5 writes RoPE's settings as "rope_parameters": {"rope_type": "default", "rope_theta": θ}.
  if (const JsonValue* rope = reader.find("rope_parameters"); rope != nullptr && !rope->is_null()) {
    if (!rope->is_object()) {
      reader.fail("rope_parameters", ConfigReader::describe(*rope), "an object such as {\"rope_type\": \"default\", \"rope_theta\": 1000000}");
    }
    const std::string nested = source + " (rope_parameters)";
    const ConfigReader inner(*rope, nested);
    const JsonValue* type = inner.find("rope_type");
    if (type != nullptr && !type->is_null() && !(type->is_string() && type->as_string() == "default")) {
      inner.fail("rope_type", ConfigReader::describe(*type), "\"default\" (s3 implements plain RoPE only)");
    }
    if (inner.find("rope_theta") != nullptr && !inner.find("rope_theta")->is_null()) {
      const float theta = inner.positive_number("rope_theta", 0.0f);
      const JsonValue* top = reader.find("rope_theta");
      if (top != nullptr && !top->is_null() && theta != config.rope_theta) {
        reader.fail("rope_theta", ConfigReader::describe(*top),
                    "the same value as rope_parameters.rope_theta (" + json_number(theta) + ")");
      }
      config.rope_theta = theta;
    }
  }
  config.rms_norm_eps = reader.positive_number("rms_norm_eps", 1e-6f);
  config.tie_word_embeddings = reader.boolean("tie_word_embeddings", false);

  // transformers writes "torch_dtype" (newer versions: "dtype").
  for (const char* field : {"torch_dtype", "dtype"}) {
    const JsonValue* dtype = reader.find(field);
    if (dtype == nullptr || dtype->is_null()) continue;
    const bool known = dtype->is_string() && (dtype->as_string() == "bfloat16" || dtype->as_string() == "float16" ||
                                              dtype->as_string() == "float32");
    if (!known) reader.fail(field, ConfigReader::describe(*dtype), "\"bfloat16\", \"float16\" or \"float32\"");
    config.torch_dtype = dtype->as_string();
    break;
  }
  if (const JsonValue* quantization = reader.find("quantization_config"); quantization && !quantization->is_null()) {
    check_quantization(reader, *quantization);
    config.fp8_blockwise = true;
  }
  return config;
}

Qwen3Config load_qwen3_config(const std::string& path) {
  MappedFile file;
  try {
    file = MappedFile::open(path);
  } catch (const MappedFileError& error) {
    throw Qwen3ConfigError(std::string("cannot read the model config: ") + error.what());
  }
  return parse_qwen3_config(std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), path);
}

std::string qwen3_shape_text(const Qwen3Config& c) {
  return "{hidden " + std::to_string(c.hidden_size) + ", layers " + std::to_string(c.num_hidden_layers) + ", heads " +
         std::to_string(c.num_attention_heads) + " (KV " + std::to_string(c.num_key_value_heads) + ") × " +
         std::to_string(c.head_dim) + ", intermediate " + std::to_string(c.intermediate_size) + ", vocab " +
         std::to_string(c.vocab_size) + "}";
}

}  // namespace s3::model
