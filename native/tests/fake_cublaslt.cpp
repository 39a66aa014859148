// fake_cublaslt.cpp: a stand-in libcublasLt.so.13 for the loader's refusal tests. It exports only
// cublasLtGetVersion, returning S3_FAKE_CUBLASLT_VERSION (default 110800, i.e. 11.8.0), so the
// loader can be seen refusing an old library and one that lacks the functions s3 calls.
#include <cstddef>
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) size_t cublasLtGetVersion() {
  const char* version = std::getenv("S3_FAKE_CUBLASLT_VERSION");
  return version != nullptr ? size_t(std::strtoull(version, nullptr, 10)) : size_t(110800);
}
