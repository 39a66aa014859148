// matmul_backward.h: the CUDA twin of cpu/matmul_backward.h, the backward of a linear layer
// out[M×N] = inp[M×K] · Wᵀ through cuBLASLt: dinp[M×K] = dout · W and dweight[N×K] += doutᵀ · inp.
// In f32 (f32 operands, an exact-precision GEMM: the CPU twin's parity mode) or bf16 (bf16 operands,
// the paper's BF16 backward: f32 accumulation, f32 outputs, so parameter gradients accumulate in
// f32). Row-major [R × C] is cuBLASLt's column-major [C × R], so
//   dinp  ↔ D[K × M] = W[K × N] · dout[N × M]            (no transposes),
//   dweight ↔ D[K × N] = inp[K × M] · dout[N × M]ᵀ + D   (B transposed, beta = 1).
// Algorithms are chosen once per shape among those without split-K reductions (no atomics: the
// same inputs give the same bits). Unverified on a GPU until test_cuda_backward.cpp runs there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "cuda/matmul.h"

namespace s3::cuda {

class MatmulBackward {
 public:
  MatmulBackward(std::shared_ptr<const CublasLtLibrary> library, DeviceAllocator& allocator, cudaStream_t stream);
  ~MatmulBackward();
  MatmulBackward(const MatmulBackward&) = delete;
  MatmulBackward& operator=(const MatmulBackward&) = delete;

  // dtype F32: dout [M×N], inp [M×K], weight [N×K] f32; Bf16: the same as bf16 bits. dinp [M×K] f32
  // is overwritten (skipped when null); dweight [N×K] f32 is accumulated (skipped when null).
  // GemmDtype::Fp8 is refused (the backward runs in BF16, App. A.1). Queued on the stream.
  void run(float* dinp, float* dweight, const void* dout, const void* inp, const void* weight, int64_t M, int64_t N,
           int64_t K, GemmDtype dtype);

 private:
  struct Product;
  // D[m × n] (ld m) = op(A) · op(B) + beta·D, column-major, A and B of `dtype`, D f32.
  void product(float* d, const void* a, bool transpose_a, int64_t lda, const void* b, bool transpose_b, int64_t ldb,
               int64_t m, int64_t n, int64_t k, float beta, GemmDtype dtype);

  std::shared_ptr<const CublasLtLibrary> library_;
  cudaStream_t stream_;
  lt::Handle handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int>, std::unique_ptr<Product>> products_;
};

}  // namespace s3::cuda
