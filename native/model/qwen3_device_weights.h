// qwen3_device_weights.h: a model's parameters on a CUDA device, in the forms the CUDA forward pass
// multiplies with (cuda/matmul.h): f32 and bf16 matrices as stored; f16 widened to f32 (exact); FP8
// E4M3 with 128 × 128 block scales kept as FP8 with the scales repacked to cuBLASLt's padded layout
// where block-scaled FP8 GEMMs run (cuBLASLt ≥ 12.9, sm_90), else widened to bf16 once at upload
// (each value fp8 × its block's scale, rounded to nearest even). Norm weights are f32. A tied LM head
// shares the embedding's device copy. Uploaded once per weight version; update() copies a new
// version of the same forms into the same memory, between batches. A version can also come from a
// trainer on the same device (model/qwen3_device_params.h): its f32 parameters are copied, or
// rounded to bf16 (every matrix, and the norms to bf16 values, as model/bf16_round.h does on the
// host), or its linear layers quantized to FP8 (model/fp8_quantize.h's quantization), by kernels on
// the device, with the bits the host path gives.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda/device_memory.h"
#include "cuda/matmul.h"
#include "model/qwen3_device_params.h"
#include "model/qwen3_weights.h"

namespace s3::model {

struct Qwen3DeviceLayer {
  const float* input_layernorm = nullptr;
  const float* post_attention_layernorm = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  cuda::DeviceMatrix q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj;
};

class Qwen3DeviceWeights {
 public:
  Qwen3DeviceWeights(const Qwen3Weights& weights, cuda::DeviceAllocator& allocator, cudaStream_t stream, bool fp8_block_scaling);
  Qwen3DeviceWeights(const Qwen3DeviceWeights&) = delete;
  Qwen3DeviceWeights& operator=(const Qwen3DeviceWeights&) = delete;

  // From a trainer's parameters on this device, every matrix in `form` (F32: as they are; Bf16:
  // rounded to nearest even, norms to bf16 values; Fp8: `--weights fp8`, the linear layers quantized
  // by cuda/fp8_weights.h, block-scaled where fp8_block_scaling, else widened to bf16, the rest f32).
  // Queued on `stream` and waited for.
  Qwen3DeviceWeights(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form, cuda::DeviceAllocator& allocator,
                     cudaStream_t stream, bool fp8_block_scaling = false);

  // Copies `weights` into the same device memory when every tensor keeps its device form; returns
  // false (changing nothing) when some would change form, so the caller uploads anew.
  bool update(const Qwen3Weights& weights, cudaStream_t stream);
  // The same for a trainer's parameters on this device, converted to `form`.
  bool update(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form, cudaStream_t stream);

  const Qwen3Config& config() const { return config_; }
  const void* embed_tokens() const { return embed_.data; }
  DType embed_dtype() const { return embed_dtype_; }  // F32 or BF16
  const std::vector<Qwen3DeviceLayer>& layers() const { return layers_; }
  const float* norm() const { return norm_; }
  const cuda::DeviceMatrix& lm_head() const { return lm_head_; }
  // "bf16", "f32", "fp8 block-scaled", "fp8 widened to bf16", or a mix ("bf16 + fp8 block-scaled").
  const std::string& format() const { return format_; }
  // Whether any matrix came from FP8 (block-scaled or widened): the FP8 GEMM path matters then.
  bool holds_fp8() const { return holds_fp8_; }
  size_t bytes() const { return bytes_; }

 private:
  // Builds every tensor's device form in a fixed order; `place` allocates (first upload) or reuses
  // (update) the memory of the i-th tensor.
  void upload(const Qwen3Weights& weights, bool reuse);
  void* place(const void* host, size_t bytes, const char* name, bool reuse);
  // The same sequence from device parameters; each tensor's `count` f32 values at `source`.
  void upload_from_device(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form, bool reuse);
  void* place_from_device(const float* source, size_t count, cuda::GemmDtype form, bool bf16_values, const char* name,
                          bool reuse);
  // A linear layer quantized to FP8 on the device (its bytes and padded scales, or widened to bf16).
  cuda::DeviceMatrix place_fp8_from_device(const float* source, int64_t rows, int64_t cols, const char* name, bool reuse);
  // What the tensors' forms would be, for update()'s comparison.
  std::vector<std::string> forms_from_device(const Qwen3DeviceParamSnapshot& params, cuda::GemmDtype form) const;

  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  bool fp8_block_scaling_;
  Qwen3Config config_;
  std::vector<cuda::DeviceBuffer> buffers_;  // one per tensor, in upload order
  std::vector<std::string> forms_;           // each tensor's device form, what update() must match
  size_t next_ = 0;                          // during upload: the tensor being placed
  cuda::DeviceMatrix embed_;
  DType embed_dtype_ = DType::BF16;
  std::vector<Qwen3DeviceLayer> layers_;
  const float* norm_ = nullptr;
  cuda::DeviceMatrix lm_head_;
  cuda::ScratchBuffer rounding_{"bf16 rounding of the norms"};
  cuda::ScratchBuffer fp8_bytes_{"fp8 weights before widening"}, fp8_scales_{"fp8 block scales before widening"};
  std::string format_;
  bool holds_fp8_ = false;
  size_t bytes_ = 0;
};

}  // namespace s3::model
