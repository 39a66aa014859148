// Run-time loading of optional shared libraries (cuBLASLt, NCCL) with dlopen, so the addon
// never links them and still loads on machines that lack them.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace s3 {

// What happened when we tried to open a library: the file that was loaded, or why none was.
struct LibraryProbe {
  bool found = false;
  std::string path;   // absolute path of the loaded file (from the dynamic linker)
  std::string error;  // dlerror() of the last attempt when nothing loaded
};

// An opened shared library; closes it when destroyed. Move-only.
class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  // Tries each candidate file name in order: a copy already loaded into the process (say by
  // PyTorch), then every directory of the colon-separated environment variable
  // S3_CUDA_LIBRARY_PATH, then the dynamic linker's own search (LD_LIBRARY_PATH, ldconfig), then
  // the CUDA toolkit's and Python wheels' folders (cuda_library_directories()).
  static DynamicLibrary open_first(const std::vector<std::string>& candidates, LibraryProbe* probe);
  // Only the given directories, in order, nothing else (tests of the loaders' refusals).
  static DynamicLibrary open_in(const std::vector<std::string>& directories, const std::vector<std::string>& candidates,
                                LibraryProbe* probe);
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  bool is_open() const { return handle_ != nullptr; }
  // The address of an exported symbol, or nullptr.
  void* symbol(const char* name) const;

 private:
  explicit DynamicLibrary(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

// Folders that usually hold CUDA libraries when the dynamic linker does not know them: the
// toolkit's (/usr/local/cuda/lib64, $CUDA_HOME/lib64) and the nvidia/*/lib folders of Python
// wheels in the site-packages of $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local and /usr(/local)/lib.
std::vector<std::string> cuda_library_directories();

// Candidate file names of the libraries the CUDA backend opens at run time.
const std::vector<std::string>& cublaslt_candidates();
const std::vector<std::string>& nccl_candidates();

// The loaders' shared search: the first of `candidates` opened everywhere open_first looks (or, when
// `directories` is given, only there) and handed to bind(library, probe); when none opens,
// not_found(probe, where) with the places searched in words.
template <typename Bind, typename NotFound>
auto open_library(const std::vector<std::string>& candidates, const std::vector<std::string>* directories, Bind bind,
                  NotFound not_found) {
  LibraryProbe probe;
  DynamicLibrary library = directories == nullptr ? DynamicLibrary::open_first(candidates, &probe)
                                                  : DynamicLibrary::open_in(*directories, candidates, &probe);
  if (!library.is_open()) {
    std::string where;
    if (directories == nullptr) {
      where = "S3_CUDA_LIBRARY_PATH, the dynamic linker's path, the CUDA toolkit or Python's nvidia wheels";
    } else {
      for (const std::string& dir : *directories) where += (where.empty() ? "" : ", ") + dir;
      if (where.empty()) where = "no folder";
    }
    return not_found(probe, where);
  }
  return bind(std::move(library), probe);
}

// "13.0.2" from a library's version number 130002 (major·10000 + minor·100 + patch, as cuBLASLt and
// NCCL ≥ 2.9 report them).
std::string library_version_text(size_t version);

// Opens and immediately closes a library, reporting where it was found.
LibraryProbe probe_library(const std::vector<std::string>& candidates);

}  // namespace s3
