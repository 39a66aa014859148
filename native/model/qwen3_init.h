// qwen3_init.h: randomly initialised Qwen3 checkpoints in Hugging Face format, for tests and
// benchmarks without downloads (`swarm model init`). The shape comes from a config.json the
// caller wrote; the weights are drawn from Philox normals keyed by (seed, tensor, element), so
// the same seed gives the same checkpoint on every machine and thread count.
#pragma once
#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace s3::model {

struct Qwen3InitOptions {
  std::string directory;  // holds config.json; model.safetensors is written beside it (atomically)
  uint64_t seed = 0;
  DType dtype = DType::BF16;  // F32, BF16 or F16
  float init_std = 0.02f;     // std of every linear and embedding weight (HF's initializer_range)
};

// Writes <directory>/model.safetensors: every tensor SPEC §10 names (lm_head only when untied),
// linear weights ~ N(0, init_std²), RMSNorm weights = 1. Returns the number of parameters.
int64_t init_qwen3_checkpoint(const Qwen3InitOptions& options);

}  // namespace s3::model
