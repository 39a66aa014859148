// dlopen-based loading of optional libraries; see dynamic_library.h.
#include "core/dynamic_library.h"

#include <dlfcn.h>
#include <glob.h>
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

// Every path matching `pattern`, sorted (glob's order), or none.
void append_glob(const std::string& pattern, std::vector<std::string>& out) {
  glob_t matches{};
  if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; i++) out.push_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
}

std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

namespace {

void* open_file(const std::string& file) { return dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL); }
// Only a copy the process has loaded already (RTLD_NOLOAD opens nothing new).
void* open_loaded(const std::string& file) { return dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD); }

}  // namespace

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates, LibraryProbe* probe) {
  for (const std::string& name : candidates) {
    if (void* handle = open_loaded(name)) {
      if (probe != nullptr) *probe = LibraryProbe{true, loaded_path(handle, name), ""};
      return DynamicLibrary(handle);
    }
  }
  dlerror();
  std::vector<std::string> directories = search_directories();
  directories.push_back("");  // the dynamic linker's own search
  for (const std::string& dir : cuda_library_directories()) directories.push_back(dir);
  return open_in(directories, candidates, probe);
}

DynamicLibrary DynamicLibrary::open_in(const std::vector<std::string>& directories,
                                       const std::vector<std::string>& candidates, LibraryProbe* probe) {
  std::string last_error = "no candidate library names";
  for (const std::string& dir : directories) {
    for (const std::string& name : candidates) {
      const std::string file = dir.empty() ? name : dir + "/" + name;
      void* handle = open_file(file);
      if (handle != nullptr) {
        if (probe != nullptr) *probe = LibraryProbe{true, loaded_path(handle, file), ""};
        return DynamicLibrary(handle);
      }
      const char* err = dlerror();
      last_error = err != nullptr ? err : ("cannot open " + file);
    }
  }
  if (probe != nullptr) *probe = LibraryProbe{false, "", last_error};
  return DynamicLibrary();
}

std::vector<std::string> cuda_library_directories() {
  std::vector<std::string> dirs;
  if (const char* cuda_home = std::getenv("CUDA_HOME")) dirs.push_back(std::string(cuda_home) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  std::vector<std::string> prefixes;
  for (const char* variable : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const char* prefix = std::getenv(variable)) prefixes.push_back(prefix);
  }
  if (const char* home = std::getenv("HOME")) prefixes.push_back(std::string(home) + "/.local");
  prefixes.push_back("/usr/local");
  prefixes.push_back("/usr");
  for (const std::string& prefix : prefixes) {
    for (const char* packages : {"site-packages", "dist-packages"}) {
      append_glob(prefix + "/lib/python3*/" + packages + "/nvidia/*/lib", dirs);
    }
  }
  return dirs;
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

std::string library_version_text(size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
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
