// matmul.h: the CUDA twin of cpu/matmul.h, out = inp · Wᵀ through cuBLASLt (cuda/cublaslt.h), for
// weights on the device in one of three forms: f32 (f32 inputs, an exact-precision GEMM), bf16 (bf16
// inputs, f32 accumulation and output) or FP8 E4M3 with 128 × 128 block scales (FP8 inputs with
// 1 × 128 scales, cuda/fp8_activations.h; cuBLASLt ≥ 12.9 on sm_90 only, no fast accumulation).
// cuBLASLt is column-major: the row-major out [M × N] is its D [N × M] = op(A)·B with A = W as
// [K × N] transposed (TN, the only layout block-scaled FP8 takes) and B = inp as [K × M].
//
// Batch invariance: each weight shape's algorithm is chosen once, at a reference row count, among
// algorithms without split-K reductions, and reused for every M the library accepts it for
// (cublasLtMatmulAlgoCheck), so a row's result does not depend on how many rows share the call. An
// M it is refused for gets its own algorithm and batch_invariant() turns false. Unverified on a
// GPU until test_cuda_gemm.cpp runs there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"

namespace s3::cuda {

enum class GemmDtype { F32, Bf16, Fp8 };
const char* gemm_dtype_name(GemmDtype dtype);

// A linear layer's weight on the device: [rows × cols] = [N × K] row-major.
struct DeviceMatrix {
  const void* data = nullptr;
  GemmDtype dtype = GemmDtype::Bf16;
  int64_t rows = 0, cols = 0;
  const float* scales = nullptr;  // Fp8: the padded 128 × 128 layout of core/ops/fp8_block_scales.h
};

class Gemm {
 public:
  // reference_rows: the row count each shape's algorithm is chosen at (the engine's batch size).
  Gemm(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream, int64_t reference_rows);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // out: [M × N] f32 (Fp8: fp8_activation_rows(M) rows); inp: [M × K] of w's input type (F32: f32;
  // Bf16: bf16 bits; Fp8: [fp8_activation_rows(M) × K] bytes with inp_scales). Queued on the stream.
  void run(float* out, const void* inp, const float* inp_scales, const DeviceMatrix& w, int64_t M);

  // Whether cuBLASLt offers an algorithm for a weight of this dtype and shape (FP8 block scaling with
  // f32 output is probed this way before weights are uploaded as FP8).
  bool supports(GemmDtype dtype, int64_t N, int64_t K);

  bool batch_invariant() const { return batch_invariant_; }
  const CublasLtLibrary& library() const { return *library_; }

 private:
  struct Plan;
  Plan& plan_for(const DeviceMatrix& w);

  std::shared_ptr<const CublasLtLibrary> library_;
  cudaStream_t stream_;
  int64_t reference_rows_;
  lt::Handle handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<std::tuple<int64_t, int64_t, int>, std::unique_ptr<Plan>> plans_;
  bool batch_invariant_ = true;
};

}  // namespace s3::cuda
