// dlopen probing: a library that exists (libm) is found with its path; a missing one reports why.
#include <cstdlib>

#include "core/dynamic_library.h"
#include "tests/test_framework.h"

TEST(dynamic_library_finds_an_existing_library_and_its_symbols) {
  s3::LibraryProbe probe;
  s3::DynamicLibrary lib = s3::DynamicLibrary::open_first({"libdoes-not-exist.so.9", "libm.so.6"}, &probe);
  CHECK(lib.is_open());
  CHECK(probe.found);
  CHECK(probe.path.find("libm") != std::string::npos);
  CHECK(lib.symbol("cos") != nullptr);
  CHECK(lib.symbol("s3_no_such_symbol") == nullptr);
}

TEST(dynamic_library_reports_why_nothing_loaded) {
  const s3::LibraryProbe probe = s3::probe_library({"libs3-missing-a.so", "libs3-missing-b.so"});
  CHECK(!probe.found);
  CHECK(probe.path.empty());
  CHECK(probe.error.find("libs3-missing-b.so") != std::string::npos);
}

TEST(dynamic_library_searches_S3_CUDA_LIBRARY_PATH_first) {
  setenv("S3_CUDA_LIBRARY_PATH", "/nonexistent-dir:/lib/x86_64-linux-gnu", 1);
  const s3::LibraryProbe probe = s3::probe_library({"libm.so.6"});
  unsetenv("S3_CUDA_LIBRARY_PATH");
  CHECK(probe.found);
  CHECK(probe.path.find("/lib/x86_64-linux-gnu/libm.so.6") != std::string::npos);
}
