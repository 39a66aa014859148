// fake_nccl.cpp: a stand-in libnccl.so.2 for the loader's refusal tests. It exports only
// ncclGetVersion, reporting S3_FAKE_NCCL_VERSION (default 21701, i.e. 2.17.1), so the loader can be
// seen refusing an old library and one that lacks the functions s3 calls.
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  const char* text = std::getenv("S3_FAKE_NCCL_VERSION");
  *version = text != nullptr ? std::atoi(text) : 21701;
  return 0;
}
