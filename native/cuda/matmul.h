// matmul.h: the CUDA twin of cpu/matmul.h, out = inp · Wᵀ through cuBLASLt (cuda/cublaslt.h), for
// weights on the device in one of three forms: f32 (f32 inputs, an exact-precision GEMM), bf16 (bf16
// inputs, f32 accumulation and output) or FP8 E4M3 with 128 × 128 block scales (FP8 inputs with
// 1 × 128 scales, cuda/fp8_activations.h; cuBLASLt ≥ 12.9 on sm_90 only, no fast accumulation).
// cuBLASLt is column-major: the row-major out [M × N] is its D [N × M] = op(A)·B with A = W as
// [K × N] transposed (TN, the only layout block-scaled FP8 takes) and B = inp as [K × M].
//
// Batch invariance: each weight shape's algorithm is chosen once, at a reference row count, among
// algorithms without split-K reductions (or, in the last FP8 forms below, with split-K reduced out
// of place in a fixed split), and reused for every M the library accepts it for
// (cublasLtMatmulAlgoCheck), so a row's result does not depend on how many rows share the call. An
// M it is refused for gets its own algorithm and batch_invariant() turns false. Unverified on a
// GPU until test_cuda_gemm.cpp runs there.
//
// Block-scaled FP8 is planned in one of several forms (Fp8GemmForm), the first that cuBLASLt offers
// an algorithm for; fp8_description() says which, or why every one was refused. The first GPU run
// (H200, cuBLASLt 13.1.0, docs/gpu-results/2026-12-04-c047f93*) found no algorithm for the plan as
// it then was, which asked the heuristic before any scale pointer was on the descriptor.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

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

// How a block-scaled FP8 GEMM is put to cuBLASLt beyond what every form shares (A = W with
// BLK128x128 scales and op T, B = inputs with VEC128 scales, compute and scale type 32F, scale
// pointers on the descriptor before the heuristic is asked): the output type (the cuBLAS docs allow D
// in f32, bf16 or f16 with C of the same type for these scale modes; a bf16 D lands in a scratch
// buffer and is widened to the f32 out) and what the heuristic is promised about the operands.
struct Fp8GemmForm {
  bool bf16_output = false;
  uint32_t operand_alignment = kGemmOperandAlignment;  // bytes; run() checks A, B and D against it
  bool split_k = false;  // split-K allowed when reduced out of place in the workspace (never in place)
};
// The forms an FP8 plan tries, in this order: f32 out, then bf16 out, each first with s3's GEMM
// preferences (16-byte operands, no split-K), then with cuBLASLt's default 256-byte alignment, then
// also allowing split-K.
const std::vector<Fp8GemmForm>& fp8_gemm_forms();
// "D f32", "D bf16 widened to f32, 256-byte operands, split-K", ...
std::string fp8_gemm_form_name(const Fp8GemmForm& form);

class Gemm {
 public:
  // reference_rows: the row count each shape's algorithm is chosen at (the engine's batch size).
  Gemm(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream, int64_t reference_rows);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // out: [M × N] f32 (Fp8: fp8_activation_rows(M) rows); inp: [M × K] of w's input type (F32: f32;
  // Bf16: bf16 bits; Fp8: [fp8_activation_rows(M) × K] bytes with inp_scales, both scale pointers
  // 16-byte aligned). Queued on the stream.
  void run(float* out, const void* inp, const float* inp_scales, const DeviceMatrix& w, int64_t M);

  // Whether cuBLASLt offers an algorithm for a weight of this dtype and shape in some form (block-scaled
  // FP8 is probed this way before weights are uploaded as FP8; fp8_description() then says why not).
  bool supports(GemmDtype dtype, int64_t N, int64_t K);

  // The form an FP8 weight of this shape runs in (planning it; throws CudaError naming every form
  // tried and cuBLASLt's answer when there is none).
  Fp8GemmForm fp8_form(int64_t N, int64_t K);

  // "fp8 as D f32" (the forms of every FP8 plan so far, joined by " + " when shapes differ), or, when
  // no FP8 plan was made, why cuBLASLt refused the last one tried; empty before any FP8 plan.
  std::string fp8_description() const;

  // Sizes the scratch a bf16-output FP8 form writes for up to `rows` rows of outputs up to `cols`
  // wide, so no later run of at most that size moves it (a CUDA graph holds its address).
  void reserve_outputs(int64_t rows, int64_t cols);

  bool batch_invariant() const { return batch_invariant_; }
  const CublasLtLibrary& library() const { return *library_; }

 private:
  struct Plan;
  Plan& plan_for(const DeviceMatrix& w);
  std::unique_ptr<Plan> try_plan(const DeviceMatrix& w, const Fp8GemmForm& form, std::string& refusal);
  void* fp8_output(size_t bytes);

  std::shared_ptr<const CublasLtLibrary> library_;
  DeviceAllocator* allocator_;
  cudaStream_t stream_;
  int64_t reference_rows_;
  lt::Handle handle_ = nullptr;
  DeviceBuffer workspace_;
  DeviceBuffer fp8_output_;  // a bf16 D, for the forms that have one
  std::map<std::tuple<int64_t, int64_t, int>, std::unique_ptr<Plan>> plans_;
  std::set<std::string> fp8_forms_used_;
  std::string fp8_refusal_;
  bool batch_invariant_ = true;
};

// Whether FP8 weights multiply block-scaled on this device (else they are widened to bf16 at upload):
// cuBLASLt and the device offer it (fp8_block_scaling) and this cuBLASLt has an algorithm for it
// (a 1024 × 1024 weight, in some form; gemm.fp8_description() then says why not). The runner and
// `swarm doctor` both decide by this.
bool fp8_weights_block_scaled(Gemm& gemm, int compute_major, int compute_minor);

}  // namespace s3::cuda
