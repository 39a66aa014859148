// cublaslt.h: cuBLASLt opened at run time (dlopen; never linked, so the addon loads on machines
// without it). The library is searched as core/dynamic_library.h describes (libcublasLt.so.13,
// then .so.12), every function s3 calls is resolved up front, and cublasLtGetVersion() must say
// 12.0 or newer; anything else is refused with the file and the reason. Block-scaled FP8 GEMMs
// need cuBLAS 12.9 and an sm_90 device (fp8_block_scaling).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/dynamic_library.h"
#include "cuda/cublaslt_api.h"

namespace s3::cuda {

constexpr size_t kMinCublasLtVersion = 120000;     // 12.0: BF16/F32 matmuls with the Lt API
constexpr size_t kBlockScaledFp8Version = 120900;  // 12.9: VEC128 / BLK128x128 scale modes on sm_90

// An opened cuBLASLt: its function table, version (major·10000 + minor·100 + patch) and file.
struct CublasLtLibrary {
  DynamicLibrary library;  // keeps the file open while the table is used
  lt::Functions api{};
  size_t version = 0;
  std::string path;

  // "13.0.2" from 130002.
  std::string version_text() const;
};

// The outcome of one attempt to open cuBLASLt: the library, or why there is none.
struct CublasLtLoad {
  std::shared_ptr<const CublasLtLibrary> library;
  std::string error;
};

// Searches everywhere core/dynamic_library.h looks.
CublasLtLoad load_cublaslt();
// Searches only `directories` (tests of the refusals).
CublasLtLoad load_cublaslt_from(const std::vector<std::string>& directories);

// The process's cuBLASLt, opened on first use and kept; its library is null when it could not be
// opened, and error then says why.
const CublasLtLoad& cublaslt();
// The process's cuBLASLt; throws std::runtime_error("device cuda: <why>") when it cannot be opened.
std::shared_ptr<const CublasLtLibrary> usable_cublaslt();

// Whether block-scaled FP8 GEMMs can run: cuBLASLt ≥ 12.9 and compute capability 9.0 exactly
// (the VEC128 / BLK128x128 modes are Hopper-only; Blackwell uses MX formats instead).
bool fp8_block_scaling(const CublasLtLibrary& library, int compute_major, int compute_minor);

// Every operand pointer of an s3 GEMM is at least this aligned: the trainer's tensors sit at offsets
// of one flat parameter buffer (whole multiples of 8 elements), not at cudaMalloc's 256 bytes.
constexpr uint32_t kGemmOperandAlignment = 16;

// The preferences every s3 GEMM's algorithm is chosen with: at most `workspace` bytes, no split-K
// reduction (its split depends on the shape, so results would too), operands aligned to
// kGemmOperandAlignment. Returns the first failing call's status and names it in `failed`.
lt::Status set_gemm_preferences(const CublasLtLibrary& library, lt::MatmulPreference preference, uint64_t workspace,
                                const char** failed);

// Throws CudaError naming `what` when `pointer` is less aligned than kGemmOperandAlignment.
void require_gemm_alignment(const void* pointer, const char* what);

// "cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED" style text for a failed call.
std::string cublaslt_status_text(const CublasLtLibrary& library, lt::Status status);

}  // namespace s3::cuda
