// kv_dtype.h: the element types of cached keys and values, which the CPU and CUDA KV caches and
// attention kernels share: f32; bf16 (the top 16 bits of an f32, rounded to nearest even when
// stored); or fp8 e4m3 ("fn": largest magnitude 448, no inf) with one f32 scale per (position, KV
// head) row of HD values, so a row holds x ≈ fp8e4m3_to_f32(byte) × scale (core/ops/fp8_rows.h).
#pragma once

#include <cstdint>

namespace s3 {

enum class KvDtype : uint8_t { F32, Bf16, Fp8E4M3 };

// Bytes of one cached element (an fp8 row's scale comes on top: kv_row_scale_bytes).
constexpr int64_t kv_dtype_size(KvDtype dtype) { return dtype == KvDtype::F32 ? 4 : dtype == KvDtype::Bf16 ? 2 : 1; }
// Bytes of the scale each row of HD elements carries: 4 (one f32) for fp8, none otherwise.
constexpr int64_t kv_row_scale_bytes(KvDtype dtype) { return dtype == KvDtype::Fp8E4M3 ? 4 : 0; }

}  // namespace s3
