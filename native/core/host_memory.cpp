// host_memory.cpp: the implementation of core/host_memory.h.
#include "core/host_memory.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace s3 {

namespace {

// MemAvailable in bytes, or 0 when /proc/meminfo is missing or lacks it (kernels before 3.14).
size_t meminfo_available_bytes() {
  std::FILE* file = std::fopen("/proc/meminfo", "r");
  if (file == nullptr) return 0;
  char line[256];
  unsigned long long kib = 0;
  bool found = false;
  while (!found && std::fgets(line, sizeof line, file) != nullptr) {
    found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
  }
  std::fclose(file);
  return found ? size_t(kib) * 1024 : 0;
}

}  // namespace

size_t available_host_memory_bytes() {
  const size_t from_meminfo = meminfo_available_bytes();
  if (from_meminfo > 0) return from_meminfo;
#if defined(_SC_AVPHYS_PAGES)
  const long pages = sysconf(_SC_AVPHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) return size_t(pages) * size_t(page_bytes);
#endif
  return 0;
}

}  // namespace s3
