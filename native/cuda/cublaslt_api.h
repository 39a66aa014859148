// cublaslt_api.h: the part of NVIDIA's cuBLASLt API s3 calls, declared here because the library is
// opened at run time (cuda/cublaslt.h) and its headers are not installed on build machines. Only
// the types, prototypes and enum values we use; each value is pinned with its source:
//   [nvmath] NVIDIA's generated bindings, nvmath-python nvmath/bindings/cycublasLt.pxd (commit
//            63409f5), which mirror cublasLt.h of cuBLAS 12.9 / 13;
//   [cublas_api] cublas_api.h of the CUDA toolkit (cublasOperation_t, cublasComputeType_t);
//   [cublasLt.h] cublasLt.h of the nvidia-cublas 13.1.1.3 wheel, read 2026-12-04 (the split-K
//            reduction schemes); scripts/gpu-check/cublaslt_abi_check.cpp asserts every value here.
// Element types (cudaDataType) come from the toolkit's own library_types.h, which nvcc ships.
// Some hand-written declarations in public code carry wrong values for the scale modes and the
// later descriptor attributes; the GPU tests check a known product at start (test_cuda_gemm.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>

namespace s3::cuda::lt {

using Status = int;  // cublasStatus_t; 0 is CUBLAS_STATUS_SUCCESS [cublas_api]
constexpr Status kStatusSuccess = 0;
constexpr Status kStatusNotSupported = 15;  // CUBLAS_STATUS_NOT_SUPPORTED [cublas_api]

using Handle = void*;             // cublasLtHandle_t
using MatmulDesc = void*;         // cublasLtMatmulDesc_t
using MatrixLayout = void*;       // cublasLtMatrixLayout_t
using MatmulPreference = void*;   // cublasLtMatmulPreference_t

// cublasLtMatmulAlgo_t: an opaque 64-byte value [nvmath].
struct MatmulAlgo {
  uint64_t data[8];
};

// cublasLtMatmulHeuristicResult_t [nvmath].
struct HeuristicResult {
  MatmulAlgo algo;
  size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

// cublasOperation_t [cublas_api].
constexpr int32_t kOpN = 0;
constexpr int32_t kOpT = 1;

// cublasComputeType_t [cublas_api]: CUBLAS_COMPUTE_32F (f32 accumulation, no TF32 shortcut).
constexpr int32_t kCompute32F = 68;

// cublasLtMatmulDescAttributes_t [nvmath].
constexpr int32_t kDescTransA = 3;
constexpr int32_t kDescTransB = 4;
constexpr int32_t kDescAScalePointer = 17;
constexpr int32_t kDescBScalePointer = 18;
constexpr int32_t kDescAScaleMode = 31;
constexpr int32_t kDescBScaleMode = 32;

// cublasLtMatmulMatrixScale_t [nvmath]: 1×128 vectors along K, and 128×128 blocks.
constexpr int32_t kScaleVec128F32 = 4;
constexpr int32_t kScaleBlock128x128F32 = 5;

// cublasLtMatmulPreferenceAttributes_t [nvmath].
constexpr int32_t kPrefMaxWorkspaceBytes = 1;
constexpr int32_t kPrefReductionSchemeMask = 3;
constexpr int32_t kPrefMinAlignmentABytes = 5;  // then B, C and D: 6, 7, 8

// cublasLtReductionScheme_t [nvmath]: NONE keeps split-K reductions (whose split depends on the
// shape) out of the heuristic's answers. [cublasLt.h]: COMPUTE_TYPE and OUTPUT_TYPE add the split-K
// parts up out of place, in the workspace, in a separate step (INPLACE, 1, adds them in the output).
constexpr uint32_t kReductionSchemeNone = 0;
constexpr uint32_t kReductionSchemeComputeType = 2;
constexpr uint32_t kReductionSchemeOutputType = 4;

// The functions, as the table cuda/cublaslt.cpp fills with dlsym.
struct Functions {
  size_t (*GetVersion)();
  const char* (*GetStatusString)(Status);
  Status (*Create)(Handle*);
  Status (*Destroy)(Handle);
  Status (*MatmulDescCreate)(MatmulDesc*, int32_t compute_type, cudaDataType_t scale_type);
  Status (*MatmulDescDestroy)(MatmulDesc);
  Status (*MatmulDescSetAttribute)(MatmulDesc, int32_t attribute, const void* value, size_t size);
  Status (*MatrixLayoutCreate)(MatrixLayout*, cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld);
  Status (*MatrixLayoutDestroy)(MatrixLayout);
  Status (*MatmulPreferenceCreate)(MatmulPreference*);
  Status (*MatmulPreferenceDestroy)(MatmulPreference);
  Status (*MatmulPreferenceSetAttribute)(MatmulPreference, int32_t attribute, const void* value, size_t size);
  Status (*MatmulAlgoGetHeuristic)(Handle, MatmulDesc, MatrixLayout a, MatrixLayout b, MatrixLayout c, MatrixLayout d,
                                   MatmulPreference, int requested, HeuristicResult* results, int* returned);
  Status (*MatmulAlgoCheck)(Handle, MatmulDesc, MatrixLayout a, MatrixLayout b, MatrixLayout c, MatrixLayout d,
                            const MatmulAlgo* algo, HeuristicResult* result);
  Status (*Matmul)(Handle, MatmulDesc, const void* alpha, const void* a, MatrixLayout a_layout, const void* b,
                   MatrixLayout b_layout, const void* beta, const void* c, MatrixLayout c_layout, void* d,
                   MatrixLayout d_layout, const MatmulAlgo* algo, void* workspace, size_t workspace_bytes,
                   cudaStream_t stream);
};

}  // namespace s3::cuda::lt
