// losses_cuda.h: the fused LM-head loss on the device, the twin of train/losses.h's
// fused_head_loss (same formulas, options and statistics; rows chosen, checked and counted by the
// same functions). Chunks of rows: gather h's rows, logits = h·headᵀ (cuda::Gemm), the per-row
// kernel (cuda/token_loss.h) turns them into ∂L/∂logits in place, then dh and dhead through
// cuda::MatmulBackward, and dh's rows scattered back. So the [T × V] logits never exist at once.
// With a bf16 head, h's rows and ∂L/∂logits go into the GEMMs as bf16 (the paper's BF16 backward;
// f32 accumulation and outputs, dhead accumulated in f32). Unverified on a GPU until
// test_cuda_loss.cpp runs there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "cuda/matmul.h"
#include "cuda/matmul_backward.h"
#include "train/losses.h"

namespace s3::train {

class DeviceHeadLoss {
 public:
  // chunk_rows: the rows of the LM head per chunk the GEMMs' algorithms are chosen for.
  DeviceHeadLoss(std::shared_ptr<const cuda::CublasLtLibrary> library, cuda::DeviceAllocator& allocator, cudaStream_t stream,
                 int64_t chunk_rows);

  // dh [T × C] f32 overwritten with ∂L/∂h; dhead [V × C] f32 += ∂L/∂head; h [T × C] f32; head
  // [V × C] f32 or bf16 (head.rows = V, head.cols = C); all device memory. inputs are host arrays
  // (as for the CPU loss). Waits for the stream at the end of every chunk (the statistics).
  LossStats run(float* dh, float* dhead, const float* h, const cuda::DeviceMatrix& head, int64_t T, const LossInputs& inputs,
                const LossOptions& options);

 private:
  cuda::DeviceAllocator& allocator_;
  cudaStream_t stream_;
  int64_t chunk_rows_;
  cuda::Gemm gemm_;
  cuda::MatmulBackward backward_;
  cuda::ScratchBuffer rows_{"the loss's row indices"}, hc_{"the loss's gathered rows"}, hc16_{"the loss's bf16 rows"},
      logits_{"the loss's logits chunk"}, logits16_{"the loss's bf16 logit gradients"}, dhc_{"the loss's row gradients"},
      inputs_{"the loss's chunk inputs"}, results_{"the loss's row results"};
};

}  // namespace s3::train
