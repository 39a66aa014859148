// gpu_bench_support.h: what the GPU check's benchmark binaries (cuda_inference_bench.cpp,
// cuda_train_bench.cpp) share: their run size (the full figures, --quick, or --smoke), the random
// checkpoint they run (Qwen3-0.6B, or the `small` shape for --smoke; bf16, written once under a
// temp folder by model/qwen3_init.h), a section of their JSON output that reports an exception as
// {"error": "..."} instead of ending the run, and the "devicePeak" object behind their MFU.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/device_peaks.h"
#include "model/qwen3_init.h"

namespace s3bench {

// How much a benchmark run does: the GPU check's figures (Full), --quick (fewer and shorter
// sequences, still the 0.6B shape), or --smoke (the `small` shape, a handful of short sequences:
// every section and code path once, for the CPU emulation of the device, emulate.py; its figures
// mean nothing).
enum class BenchSize { Full, Quick, Smoke };

// The size the command line asks for; anything but --quick or --smoke is refused.
inline BenchSize bench_size(int argc, char** argv, const char* program) {
  if (argc < 2) return BenchSize::Full;
  if (argc == 2 && std::strcmp(argv[1], "--quick") == 0) return BenchSize::Quick;
  if (argc == 2 && std::strcmp(argv[1], "--smoke") == 0) return BenchSize::Smoke;
  std::fprintf(stderr, "%s: unknown arguments (expected nothing, --quick or --smoke)\n", program);
  std::exit(2);
}

// A Qwen3 checkpoint with random bf16 weights (seed 1) in ROOT/NAME, written once: config.json holds
// `shape`, the config fields that differ between the benchmarks' shapes.
inline std::string random_checkpoint(const std::string& root, const std::string& name, const std::string& shape) {
  const std::string dir = root + "/" + name;
  std::filesystem::create_directories(dir);
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    std::ofstream(dir + "/config.json")
        << R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", )" << shape
        << R"(, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "tie_word_embeddings": true, "hidden_act": "silu",
               "attention_bias": false, "torch_dtype": "bfloat16"})";
    s3::model::init_qwen3_checkpoint({dir, 1, s3::DType::BF16, 0.02f});
  }
  return dir;
}

// The checkpoint a run of this size uses, under TMPDIR (or /tmp): Qwen3-0.6B's shape
// (s3-bench-qwen3-0.6b), or for --smoke the `small` shape (s3-bench-small: hidden 256, 4 layers,
// 8 query and 4 KV heads of 32, vocab 4,096).
inline std::string bench_checkpoint(BenchSize size) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string root = tmp != nullptr ? tmp : "/tmp";
  if (size == BenchSize::Smoke) {
    return random_checkpoint(root, "s3-bench-small",
                             R"("hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4,
                                "head_dim": 32, "intermediate_size": 768, "vocab_size": 4096, "max_position_embeddings": 4096)");
  }
  return random_checkpoint(root, "s3-bench-qwen3-0.6b",
                           R"("hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
                              "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936, "max_position_embeddings": 40960)");
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
