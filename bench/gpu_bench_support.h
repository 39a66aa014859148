// gpu_bench_support.h: what the GPU check's benchmark binaries (cuda_inference_bench.cpp,
// cuda_train_bench.cpp) share: the random Qwen3-0.6B checkpoint they run (bf16, written once under
// a temp folder by model/qwen3_init.h), a section of their JSON output that reports an exception
// as {"error": "..."} instead of ending the run, and the "devicePeak" object behind their MFU.
#pragma once

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/device_peaks.h"
#include "model/qwen3_init.h"

namespace s3bench {

// ROOT/s3-bench-qwen3-0.6b: Qwen3-0.6B's config with random bf16 weights (seed 1).
inline std::string qwen3_06b_checkpoint(const std::string& root) {
  const std::string dir = root + "/s3-bench-qwen3-0.6b";
  std::filesystem::create_directories(dir);
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    std::ofstream(dir + "/config.json")
        << R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28,
               "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072,
               "vocab_size": 151936, "max_position_embeddings": 40960, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06,
               "tie_word_embeddings": true, "hidden_act": "silu", "attention_bias": false, "torch_dtype": "bfloat16"})";
    s3::model::init_qwen3_checkpoint({dir, 1, s3::DType::BF16, 0.02f});
  }
  return dir;
}

// {"device", "product", "bf16Tflops", "source"}: the GPU's datasheet dense BF16 peak
// (bench/device_peaks.h), product and bf16Tflops null for a GPU not in its table.
inline std::string device_peak_json(std::string gpu) {
  for (char& c : gpu) {
    if (c == '"' || c == '\\' || c == '\n') c = ' ';
  }
  const s3::bench::NominalDevicePeak peak = s3::bench::nominal_device_peak(gpu);
  char figure[32] = "null";
  if (peak.bf16_tflops > 0) std::snprintf(figure, sizeof figure, "%.1f", peak.bf16_tflops);
  return "{\"device\": \"" + gpu + "\", \"product\": " + (peak.bf16_tflops > 0 ? "\"" + std::string(peak.product) + "\"" : "null") +
         ", \"bf16Tflops\": " + figure + ", \"source\": \"" + s3::bench::kNominalPeakSource + "\"}";
}

// section()'s JSON text, or {"error": "<what it threw>"}.
template <typename Section>
std::string guarded(const Section& section) {
  try {
    return section();
  } catch (const std::exception& e) {
    std::string message = e.what();
    for (char& c : message) {
      if (c == '"' || c == '\\' || c == '\n') c = ' ';
    }
    return "{\"error\": \"" + message + "\"}";
  }
}

}  // namespace s3bench
