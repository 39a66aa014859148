// dlopen-based loading of optional libraries; see dynamic_library.h.
#include "core/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <sstream>
#include <utility>

namespace s3 {

namespace {

std::vector<std::string> search_directories() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("S3_CUDA_LIBRARY_PATH");
  if (env == nullptr) return dirs;
  std::stringstream stream(env);
  std::string dir;
  while (std::getline(stream, dir, ':')) {
    if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates, LibraryProbe* probe) {
  std::vector<std::string> attempts;
  for (const std::string& dir : search_directories()) {
    for (const std::string& name : candidates) attempts.push_back(dir + "/" + name);
  }
  for (const std::string& name : candidates) attempts.push_back(name);

  std::string last_error = "no candidate library names";
  for (const std::string& file : attempts) {
    void* handle = dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle != nullptr) {
      if (probe != nullptr) {
        probe->found = true;
        probe->path = loaded_path(handle, file);
        probe->error.clear();
      }
      return DynamicLibrary(handle);
    }
    const char* err = dlerror();
    last_error = err != nullptr ? err : ("cannot open " + file);
  }
  if (probe != nullptr) {
    probe->found = false;
    probe->path.clear();
    probe->error = last_error;
  }
  return DynamicLibrary();
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, name);
}

const std::vector<std::string>& cublaslt_candidates() {
  static const std::vector<std::string> names = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  return names;
}

const std::vector<std::string>& nccl_candidates() {
  static const std::vector<std::string> names = {"libnccl.so.2", "libnccl.so"};
  return names;
}

LibraryProbe probe_library(const std::vector<std::string>& candidates) {
  LibraryProbe probe;
  DynamicLibrary library = DynamicLibrary::open_first(candidates, &probe);
  return probe;
}

}  // namespace s3
