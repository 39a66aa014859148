// matmul_precision.h: the precision of the trainer's matrix products (precision.train), shared by
// the CPU and CUDA trainers: f32 (operands as stored, f32 products) or bf16 (both operands rounded
// to BF16, round-to-nearest-even, products accumulated in f32). Master weights, gradients, AdamW
// states and every reduction outside the products stay f32 either way (the paper's App. A.1).
#pragma once

#include <cstring>

namespace s3 {

enum class MatmulPrecision { F32, Bf16 };

// The config's spelling: "f32" or "bf16".
inline const char* matmul_precision_name(MatmulPrecision precision) {
  return precision == MatmulPrecision::Bf16 ? "bf16" : "f32";
}

// Parses "f32" or "bf16" into *out; false for anything else (out untouched).
inline bool parse_matmul_precision(const char* name, MatmulPrecision* out) {
  if (std::strcmp(name, "f32") == 0) {
    *out = MatmulPrecision::F32;
  } else if (std::strcmp(name, "bf16") == 0) {
    *out = MatmulPrecision::Bf16;
  } else {
    return false;
  }
  return true;
}

}  // namespace s3
