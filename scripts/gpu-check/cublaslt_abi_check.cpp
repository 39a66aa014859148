// cublaslt_abi_check.cpp: our declarations of cuBLASLt (native/cuda/cublaslt_api.h, written without
// the header so CI builds need no cuBLAS) against the official cublasLt.h of the library that will
// run: every constant we pass and the layout of the structs we read. Compiled (never run) by
// scripts/gpu-check.sh where a cublasLt.h is found (PyTorch's nvidia-cublas wheel ships one):
//   g++ -std=c++17 -fsyntax-only -Inative -I<dir of cublasLt.h> -I<CUDA include> scripts/gpu-check/cublaslt_abi_check.cpp
#include <cublasLt.h>

#include <cstddef>

#include "cuda/cublaslt_api.h"

namespace lt = s3::cuda::lt;

static_assert(lt::kStatusSuccess == CUBLAS_STATUS_SUCCESS);
static_assert(lt::kStatusNotSupported == CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(lt::kOpN == CUBLAS_OP_N && lt::kOpT == CUBLAS_OP_T);
static_assert(lt::kCompute32F == CUBLAS_COMPUTE_32F);
static_assert(lt::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA && lt::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(lt::kDescAScalePointer == CUBLASLT_MATMUL_DESC_A_SCALE_POINTER);
static_assert(lt::kDescBScalePointer == CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
static_assert(lt::kDescAScaleMode == CUBLASLT_MATMUL_DESC_A_SCALE_MODE);
static_assert(lt::kDescBScaleMode == CUBLASLT_MATMUL_DESC_B_SCALE_MODE);
static_assert(lt::kScaleVec128F32 == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F);
static_assert(lt::kScaleBlock128x128F32 == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
static_assert(lt::kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(lt::kPrefReductionSchemeMask == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK);
static_assert(lt::kPrefMinAlignmentABytes == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
              lt::kPrefMinAlignmentABytes + 1 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES &&
              lt::kPrefMinAlignmentABytes + 2 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES &&
              lt::kPrefMinAlignmentABytes + 3 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
static_assert(lt::kReductionSchemeNone == CUBLASLT_REDUCTION_SCHEME_NONE);
static_assert(lt::kReductionSchemeComputeType == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
static_assert(lt::kReductionSchemeOutputType == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
static_assert(sizeof(lt::MatmulAlgo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(lt::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(lt::HeuristicResult, workspace_size) == offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(lt::HeuristicResult, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(lt::HeuristicResult, waves_count) == offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));
