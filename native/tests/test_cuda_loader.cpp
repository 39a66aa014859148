// test_cuda_loader.cpp: the cuBLASLt loader's refusals, on any machine: no library in the folders
// searched, a library older than 12.0, and one that lacks the functions s3 calls (a stand-in
// libcublasLt.so.13 built with the tests, tests/fake_cublaslt.cpp); and the device choice refusing
// `cuda` with the reason where CUDA cannot run.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "model/device.h"
#include "tests/test_framework.h"
#ifdef S3_WITH_CUDA
#include "cuda/cublaslt.h"
#endif

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(device_choice_parses_the_three_names_and_nothing_else) {
  CHECK(s3::model::parse_device_choice("auto") == s3::model::DeviceChoice::Auto);
  CHECK(s3::model::parse_device_choice("cpu") == s3::model::DeviceChoice::Cpu);
  CHECK(s3::model::parse_device_choice("cuda") == s3::model::DeviceChoice::Cuda);
  CHECK(!s3::model::parse_device_choice("gpu"));
  CHECK(!s3::model::parse_device_choice("CUDA"));
  CHECK(!s3::model::parse_device_choice(""));
}

TEST(device_cuda_is_refused_with_the_reason_where_cuda_cannot_run) {
  const s3::model::DeviceAvailability availability = s3::model::device_availability();
  CHECK(s3::model::resolve_device(s3::model::DeviceChoice::Cpu) == s3::model::Device::Cpu);
  if (availability.cuda_usable) {
    CHECK(s3::model::resolve_device(s3::model::DeviceChoice::Auto) == s3::model::Device::Cuda);
    CHECK(s3::model::resolve_device(s3::model::DeviceChoice::Cuda) == s3::model::Device::Cuda);
    return;
  }
  CHECK(!availability.cuda_reason.empty());
  CHECK(s3::model::resolve_device(s3::model::DeviceChoice::Auto) == s3::model::Device::Cpu);
  std::string message;
  try {
    s3::model::resolve_device(s3::model::DeviceChoice::Cuda);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CHECK(contains(message, "--device cuda: " + availability.cuda_reason));
  CHECK(contains(message, "--device cpu"));
}

#ifdef S3_WITH_CUDA

TEST(cublaslt_loader_says_where_it_looked_when_nothing_is_there) {
  const s3::cuda::CublasLtLoad load = s3::cuda::load_cublaslt_from({"/nonexistent-s3-a", "/nonexistent-s3-b"});
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "libcublasLt.so.13"));
  CHECK(contains(load.error, "/nonexistent-s3-a, /nonexistent-s3-b"));
  CHECK(contains(load.error, "S3_CUDA_LIBRARY_PATH"));
}

TEST(cublaslt_loader_refuses_a_library_older_than_12) {
  setenv("S3_FAKE_CUBLASLT_VERSION", "110800", 1);
  const s3::cuda::CublasLtLoad load = s3::cuda::load_cublaslt_from({S3_FAKE_CUBLASLT_DIR});
  unsetenv("S3_FAKE_CUBLASLT_VERSION");
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "cuBLASLt 11.8.0 at "));
  CHECK(contains(load.error, "fake-cublaslt/libcublasLt.so.13"));
  CHECK(contains(load.error, "older than the 12.0.0"));
}

TEST(cublaslt_loader_refuses_a_library_without_the_functions_it_calls) {
  setenv("S3_FAKE_CUBLASLT_VERSION", "130002", 1);
  const s3::cuda::CublasLtLoad load = s3::cuda::load_cublaslt_from({S3_FAKE_CUBLASLT_DIR});
  unsetenv("S3_FAKE_CUBLASLT_VERSION");
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "does not export cublasLtGetStatusString"));
  CHECK(contains(load.error, "not a usable cuBLASLt"));
}

TEST(cublaslt_fp8_block_scaling_needs_12_9_and_sm_90) {
  s3::cuda::CublasLtLibrary library;
  library.version = 120900;
  CHECK(s3::cuda::fp8_block_scaling(library, 9, 0));
  CHECK(!s3::cuda::fp8_block_scaling(library, 8, 0));
  CHECK(!s3::cuda::fp8_block_scaling(library, 10, 0));
  library.version = 120804;
  CHECK(!s3::cuda::fp8_block_scaling(library, 9, 0));
  library.version = 130002;
  CHECK(library.version_text() == "13.0.2");
}

#else

TEST(cublaslt_loader) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
