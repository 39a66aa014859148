// Opening cuBLASLt at run time; see cublaslt.h.
#include "cuda/cublaslt.h"

#include <mutex>
#include <stdexcept>
#include <type_traits>

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

CublasLtLoad load_cublaslt() {
  LibraryProbe probe;
  DynamicLibrary library = DynamicLibrary::open_first(cublaslt_candidates(), &probe);
  if (!library.is_open()) {
    return not_found(probe, "S3_CUDA_LIBRARY_PATH, the dynamic linker's path, the CUDA toolkit or Python's nvidia wheels");
  }
  return bind(std::move(library), probe);
}

CublasLtLoad load_cublaslt_from(const std::vector<std::string>& directories) {
  LibraryProbe probe;
  DynamicLibrary library = DynamicLibrary::open_in(directories, cublaslt_candidates(), &probe);
  if (!library.is_open()) {
    std::string where;
    for (const std::string& dir : directories) where += (where.empty() ? "" : ", ") + dir;
    return not_found(probe, where.empty() ? std::string("no folder") : where);
  }
  return bind(std::move(library), probe);
}

const CublasLtLoad& cublaslt() {
  static std::once_flag once;
  static CublasLtLoad load;
  std::call_once(once, [] { load = load_cublaslt(); });
  return load;
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
