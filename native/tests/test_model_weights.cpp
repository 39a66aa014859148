// Loading Qwen3 weights (native/model/qwen3_weights): from a checkpoint folder on disk (single
// file and sharded) without converting the matrices, from memory (copied or borrowed), and the
// refusals that name the tensor, its shape and the expected one.
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "core/thread_pool.h"
#include "model/qwen3_forward.h"
#include "tests/naive_qwen3.h"
#include "tests/test_framework.h"

namespace {

using s3::DType;
using s3::model::Qwen3Config;
using s3::model::Qwen3Weights;
using s3::model::Qwen3WeightsError;

std::string config_json(const Qwen3Config& c) {
  char text[1024];
  std::snprintf(text, sizeof text,
                R"({"model_type": "qwen3", "hidden_size": %lld, "num_hidden_layers": %lld, "num_attention_heads": %lld,
 "num_key_value_heads": %lld, "head_dim": %lld, "intermediate_size": %lld, "vocab_size": %lld,
 "max_position_embeddings": %lld, "rope_theta": %.9g, "rms_norm_eps": %.9g, "tie_word_embeddings": %s,
 "torch_dtype": "bfloat16", "rope_scaling": null})",
                (long long)c.hidden_size, (long long)c.num_hidden_layers, (long long)c.num_attention_heads,
                (long long)c.num_key_value_heads, (long long)c.head_dim, (long long)c.intermediate_size,
                (long long)c.vocab_size, (long long)c.max_position_embeddings, double(c.rope_theta),
                double(c.rms_norm_eps), c.tie_word_embeddings ? "true" : "false");
  return text;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<s3::TensorToWrite> to_write(const s3test::TestModel& model, size_t begin, size_t end) {
  std::vector<s3::TensorToWrite> tensors;
  for (size_t i = begin; i < end; i++) {
    const s3test::TestTensor& t = model.tensors[i];
    tensors.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  }
  return tensors;
}

std::vector<float> last_logits(const Qwen3Weights& weights, const std::vector<int32_t>& tokens) {
  s3::ThreadPool pool(2);
  s3::model::KvCache cache(weights.config(), 64, 1);
  s3::model::Qwen3Workspace workspace;
  const int32_t table[] = {0};
  const s3::cpu::AttentionSequence seq{0, int64_t(tokens.size()), table, 1};
  const int64_t last = int64_t(tokens.size()) - 1;
  std::vector<float> logits(static_cast<size_t>(weights.config().vocab_size));
  s3::model::qwen3_forward(weights, {tokens.data(), &seq, 1, &last, 1}, cache, workspace, logits.data(), pool);
  return logits;
}

std::string refusal(const Qwen3Config& config, const std::vector<s3::model::NamedTensor>& tensors) {
  try {
    Qwen3Weights::from_tensors(config, tensors, Qwen3Weights::Storage::Borrow, "test.safetensors");
  } catch (const Qwen3WeightsError& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::vector<int32_t> kTokens = {5, 17, 300, 2, 99, 511, 0, 42};

}  // namespace

TEST(qwen3_weights_load_a_checkpoint_folder_memory_mapped) {
  const s3test::TestModel model =
      s3test::make_test_model(s3test::tiny_qwen3_config(), DType::BF16, 3, DType::BF16, /*with_lm_head=*/true);
  s3test::TempDir dir;
  s3::write_safetensors(dir.file("model.safetensors"), to_write(model, 0, model.tensors.size()));
  write_text(dir.file("config.json"), config_json(model.config));
  const Qwen3Weights loaded = Qwen3Weights::load(dir.path());
  const Qwen3Weights in_memory =
      Qwen3Weights::from_tensors(model.config, model.named(), Qwen3Weights::Storage::Borrow, "memory");
  CHECK(loaded.embed_tokens().dtype == DType::BF16);  // used as stored, not converted
  CHECK(loaded.layers()[1].down_proj.dtype == DType::BF16);
  CHECK(loaded.lm_head().data == loaded.embed_tokens().data);  // tied: the file's lm_head.weight is unused
  CHECK_EQ(loaded.layers().size(), size_t(2));
  CHECK(last_logits(loaded, kTokens) == last_logits(in_memory, kTokens));
}

TEST(qwen3_weights_load_a_sharded_fp8_checkpoint) {
  Qwen3Config config = s3test::tiny_qwen3_config();
  config.tie_word_embeddings = false;
  const s3test::TestModel model = s3test::make_test_model(config, DType::F8_E4M3, 4);
  s3test::TempDir dir;
  const size_t half = model.tensors.size() / 2;
  s3::write_safetensors(dir.file("model-00001-of-00002.safetensors"), to_write(model, 0, half));
  s3::write_safetensors(dir.file("model-00002-of-00002.safetensors"), to_write(model, half, model.tensors.size()));
  std::string index = R"({"metadata": {}, "weight_map": {)";
  for (size_t i = 0; i < model.tensors.size(); i++) {
    const std::string shard = i < half ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    index += (i ? ", \"" : "\"") + model.tensors[i].name + "\": \"" + shard + "\"";
  }
  write_text(dir.file("model.safetensors.index.json"), index + "}}");
  write_text(dir.file("config.json"), config_json(config));
  const Qwen3Weights loaded = Qwen3Weights::load(dir.path());
  CHECK(loaded.layers()[0].q_proj.dtype == DType::F8_E4M3);
  CHECK(loaded.layers()[0].q_proj.block_scales != nullptr);
  CHECK(loaded.lm_head().data != loaded.embed_tokens().data);
  const Qwen3Weights in_memory = Qwen3Weights::from_tensors(config, model.named(), Qwen3Weights::Storage::Copy);
  CHECK(last_logits(loaded, kTokens) == last_logits(in_memory, kTokens));
}

TEST(qwen3_weights_copy_or_borrow_in_memory_tensors) {
  s3test::TestModel model = s3test::make_test_model(s3test::tiny_qwen3_config(), DType::F32, 5, DType::F32);
  const Qwen3Weights borrowed = Qwen3Weights::from_tensors(model.config, model.named(), Qwen3Weights::Storage::Borrow);
  const Qwen3Weights copied = Qwen3Weights::from_tensors(model.config, model.named(), Qwen3Weights::Storage::Copy);
  const uint8_t* source = model.tensor("model.layers.0.mlp.up_proj.weight").bytes.data();
  CHECK(borrowed.layers()[0].up_proj.data == source);
  CHECK(copied.layers()[0].up_proj.data != source);
  const std::vector<float> before = last_logits(copied, kTokens);
  CHECK(last_logits(borrowed, kTokens) == before);
  // The copy is independent of the caller's buffers; the borrowed view sees their changes.
  std::vector<uint8_t>& up_bytes = model.tensor("model.layers.0.mlp.up_proj.weight").bytes;
  up_bytes.assign(up_bytes.size(), 0);
  CHECK(last_logits(copied, kTokens) == before);
  CHECK(last_logits(borrowed, kTokens) != before);
}

TEST(qwen3_weights_refusals_name_the_tensor_and_shapes) {
  const Qwen3Config config = s3test::tiny_qwen3_config();
  const s3test::TestModel model = s3test::make_test_model(config, DType::BF16, 6);
  std::vector<s3::model::NamedTensor> tensors = model.named();
  auto find = [&](const std::string& name) -> s3::model::NamedTensor& {
    for (auto& t : tensors) {
      if (t.name == name) return t;
    }
    throw std::runtime_error(name);
  };

  find("model.layers.1.self_attn.q_proj.weight").shape = {32, 64};
  CHECK(contains(refusal(config, tensors),
                 "test.safetensors: tensor \"model.layers.1.self_attn.q_proj.weight\" has shape [32, 64]; "
                 "expected [64, 64] (num_attention_heads x head_dim, hidden_size)"));
  tensors = model.named();
  find("model.norm.weight").dtype = DType::I32;
  CHECK(contains(refusal(config, tensors),
                 "tensor \"model.norm.weight\" has dtype I32; expected one of BF16, F16, F32"));
  tensors = model.named();
  tensors.erase(tensors.begin() + 3);
  CHECK(contains(refusal(config, tensors), "tensor \"" + model.tensors[3].name + "\" is missing; expected shape"));

  Qwen3Config untied = config;
  untied.tie_word_embeddings = false;
  CHECK(contains(refusal(untied, model.named()), "tensor \"lm_head.weight\" is missing; expected shape [512, 64]"));

  const s3test::TestModel fp8 = s3test::make_test_model(config, DType::F8_E4M3, 6);
  tensors = fp8.named();
  find("model.layers.0.mlp.down_proj.weight_scale_inv").shape = {2, 1};
  CHECK(contains(refusal(config, tensors), "tensor \"model.layers.0.mlp.down_proj.weight_scale_inv\" has shape [2, 1]; "
                                           "expected [1, 1] (one f32 scale per 128 x 128 block"));
  tensors = fp8.named();
  tensors.erase(std::find_if(tensors.begin(), tensors.end(),
                             [](const auto& t) { return t.name == "model.layers.0.mlp.up_proj.weight_scale_inv"; }));
  CHECK(contains(refusal(config, tensors), "\"model.layers.0.mlp.up_proj.weight_scale_inv\" is missing"));
  tensors = model.named();
  tensors.push_back(fp8.named()[size_t(std::find_if(fp8.tensors.begin(), fp8.tensors.end(), [](const auto& t) {
                                         return t.name == "model.layers.0.mlp.up_proj.weight_scale_inv";
                                       }) - fp8.tensors.begin())]);
  CHECK(contains(refusal(config, tensors), "is present but its weight is BF16"));
  tensors = model.named();
  tensors.push_back(tensors[0]);
  CHECK(contains(refusal(config, tensors), "tensor \"model.embed_tokens.weight\" appears twice"));

  s3test::TempDir empty;
  CHECK_THROWS(s3::model::Qwen3ConfigError, Qwen3Weights::load(empty.path()));
  write_text(empty.file("config.json"), config_json(config));
  CHECK_THROWS(Qwen3WeightsError, Qwen3Weights::load(empty.path()));
}
