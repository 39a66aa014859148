// Opening cuBLASLt at run time; see cublaslt.h.
#include "cuda/cublaslt.h"

#include <cstdint>

#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "cuda/check.h"

namespace s3::cuda {
namespace {

// Fills the table from the opened file, or says which symbol or version is wrong.
CublasLtLoad bind(DynamicLibrary library, const LibraryProbe& probe) {
  auto lt = std::make_shared<CublasLtLibrary>();
  lt->path = probe.path;
  std::string missing;
  auto resolve = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(library.symbol(name));
    if (slot == nullptr && missing.empty()) missing = name;
  };
  lt::Functions& f = lt->api;
  resolve(f.GetVersion, "cublasLtGetVersion");
  resolve(f.GetStatusString, "cublasLtGetStatusString");
  resolve(f.Create, "cublasLtCreate");
  resolve(f.Destroy, "cublasLtDestroy");
  resolve(f.MatmulDescCreate, "cublasLtMatmulDescCreate");
  resolve(f.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  resolve(f.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  resolve(f.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  resolve(f.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  resolve(f.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  resolve(f.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  resolve(f.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  resolve(f.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  resolve(f.MatmulAlgoCheck, "cublasLtMatmulAlgoCheck");
  resolve(f.Matmul, "cublasLtMatmul");
  // The version first: an old library that lacks newer symbols is best described by its version.
  if (f.GetVersion != nullptr) {
    lt->version = f.GetVersion();
    if (lt->version < kMinCublasLtVersion) {
      return {nullptr, "cuBLASLt " + library_version_text(lt->version) + " at " + lt->path + " is older than the " +
                           library_version_text(kMinCublasLtVersion) + " s3 needs; point S3_CUDA_LIBRARY_PATH at a CUDA 12 or 13 cuBLAS"};
    }
  }
  if (!missing.empty()) {
    return {nullptr, "the library at " + lt->path + " does not export " + missing + "; it is not a usable cuBLASLt"};
  }
  lt->library = std::move(library);
  return {std::move(lt), ""};
}

CublasLtLoad not_found(const LibraryProbe& probe, const std::string& where) {
  return {nullptr, "cuBLASLt (libcublasLt.so.13 or .so.12) was not found in " + where + " (last error: " + probe.error +
                       "); set S3_CUDA_LIBRARY_PATH to the folder that holds it, e.g. PyTorch's site-packages/nvidia/cu13/lib"};
}

}  // namespace

std::string CublasLtLibrary::version_text() const { return library_version_text(version); }

CublasLtLoad load_cublaslt() { return open_library(cublaslt_candidates(), nullptr, bind, not_found); }

CublasLtLoad load_cublaslt_from(const std::vector<std::string>& directories) {
  return open_library(cublaslt_candidates(), &directories, bind, not_found);
}

const CublasLtLoad& cublaslt() {
  static std::once_flag once;
  static CublasLtLoad load;
  std::call_once(once, [] { load = load_cublaslt(); });
  return load;
}

lt::Status set_gemm_preferences(const CublasLtLibrary& library, lt::MatmulPreference preference, uint64_t workspace,
                                const char** failed) {
  const lt::Functions& f = library.api;
  const uint32_t no_split_reduction = lt::kReductionSchemeNone;
  struct Setting {
    int32_t attribute;
    const void* value;
    size_t size;
    const char* name;
  };
  const Setting settings[] = {
      {lt::kPrefMaxWorkspaceBytes, &workspace, sizeof workspace, "MAX_WORKSPACE_BYTES"},
      {lt::kPrefReductionSchemeMask, &no_split_reduction, sizeof no_split_reduction, "REDUCTION_SCHEME_MASK"},
      {lt::kPrefMinAlignmentABytes, &kGemmOperandAlignment, sizeof kGemmOperandAlignment, "MIN_ALIGNMENT_A_BYTES"},
      {lt::kPrefMinAlignmentABytes + 1, &kGemmOperandAlignment, sizeof kGemmOperandAlignment, "MIN_ALIGNMENT_B_BYTES"},
      {lt::kPrefMinAlignmentABytes + 2, &kGemmOperandAlignment, sizeof kGemmOperandAlignment, "MIN_ALIGNMENT_C_BYTES"},
      {lt::kPrefMinAlignmentABytes + 3, &kGemmOperandAlignment, sizeof kGemmOperandAlignment, "MIN_ALIGNMENT_D_BYTES"},
  };
  for (const Setting& setting : settings) {
    const lt::Status status = f.MatmulPreferenceSetAttribute(preference, setting.attribute, setting.value, setting.size);
    if (status != lt::kStatusSuccess) {
      *failed = setting.name;
      return status;
    }
  }
  return lt::kStatusSuccess;
}

void require_gemm_alignment(const void* pointer, const char* what) {
  if (reinterpret_cast<uintptr_t>(pointer) % kGemmOperandAlignment != 0) {
    throw CudaError(std::string(what) + ": the operand at " + std::to_string(reinterpret_cast<uintptr_t>(pointer)) +
                    " is not " + std::to_string(kGemmOperandAlignment) + "-byte aligned, as every GEMM operand must be");
  }
}

std::shared_ptr<const CublasLtLibrary> usable_cublaslt() {
  const CublasLtLoad& load = cublaslt();
  if (load.library == nullptr) throw std::runtime_error("device cuda: " + load.error);
  return load.library;
}

bool fp8_block_scaling(const CublasLtLibrary& library, int compute_major, int compute_minor) {
  return library.version >= kBlockScaledFp8Version && compute_major == 9 && compute_minor == 0;
}

std::string cublaslt_status_text(const CublasLtLibrary& library, lt::Status status) {
  const char* text = library.api.GetStatusString != nullptr ? library.api.GetStatusString(status) : nullptr;
  return text != nullptr ? std::string(text) : "cuBLAS status " + std::to_string(status);
}

}  // namespace s3::cuda
