// test_cuda_nccl.cpp: the NCCL loader's refusals on any machine (no library in the folders searched,
// a library older than 2.18, one that lacks the functions s3 calls: a stand-in libnccl.so.2 built
// with the tests, tests/fake_nccl.cpp); with a GPU and a real NCCL, one rank's communicator: an
// all-reduce and a broadcast give the exact values, and a communicator whose other rank never comes
// is aborted with NcclTimeout after its deadline instead of hanging.
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/cuda_test_support.h"
#include "tests/test_framework.h"
#ifdef S3_WITH_CUDA
#include "cuda/nccl.h"
#endif

#ifdef S3_WITH_CUDA

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(nccl_loader_says_where_it_looked_when_nothing_is_there) {
  const s3::cuda::NcclLoad load = s3::cuda::load_nccl_from({"/nonexistent-s3-a", "/nonexistent-s3-b"});
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "libnccl.so.2"));
  CHECK(contains(load.error, "/nonexistent-s3-a, /nonexistent-s3-b"));
  CHECK(contains(load.error, "S3_CUDA_LIBRARY_PATH"));
}

TEST(nccl_loader_refuses_a_library_older_than_2_18) {
  setenv("S3_FAKE_NCCL_VERSION", "21701", 1);
  const s3::cuda::NcclLoad load = s3::cuda::load_nccl_from({S3_FAKE_NCCL_DIR});
  unsetenv("S3_FAKE_NCCL_VERSION");
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "NCCL 2.17.1 at "));
  CHECK(contains(load.error, "fake-nccl/libnccl.so.2"));
  CHECK(contains(load.error, "older than the 2.18.0"));
}

TEST(nccl_loader_refuses_a_library_without_the_functions_it_calls) {
  setenv("S3_FAKE_NCCL_VERSION", "23007", 1);
  const s3::cuda::NcclLoad load = s3::cuda::load_nccl_from({S3_FAKE_NCCL_DIR});
  unsetenv("S3_FAKE_NCCL_VERSION");
  CHECK(load.library == nullptr);
  CHECK(contains(load.error, "does not export ncclGetErrorString"));
  CHECK(contains(load.error, "not a usable NCCL"));
}

// A real NCCL and a GPU, or the test is skipped with the reason.
std::shared_ptr<const s3::cuda::NcclLibrary> usable_nccl() {
  s3test::require_gpu();
  const s3::cuda::NcclLoad& load = s3::cuda::process_nccl();
  if (load.library == nullptr) SKIP("NCCL is not usable here: " + load.error);
  return load.library;
}

TEST(nccl_one_rank_all_reduce_and_broadcast_give_the_exact_values) {
  const auto library = usable_nccl();
  std::printf("  [nccl] %s at %s\n", library->version_text().c_str(), library->path.c_str());
  s3test::cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  s3::cuda::Communicator comm(library, s3::cuda::nccl_unique_id(*library), 1, 0, std::chrono::seconds(60));
  CHECK_EQ(comm.ranks(), 1);
  cudaStream_t stream = nullptr;
  s3test::cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  const std::vector<float> values = s3test::random_floats(100003, 5);  // not a multiple of any bucket
  s3test::DeviceArray<float> data(values);
  comm.all_reduce_sum(data.get(), values.size(), stream);
  comm.broadcast(data.get(), values.size() * sizeof(float) - 2, 0, stream);  // bytes, not whole words
  comm.wait(stream, "one-rank collectives", std::chrono::seconds(60));
  CHECK_EQ(s3test::exact_mismatches(data.download(), values), size_t(0));  // a sum over one rank is the value
  cudaStreamDestroy(stream);
}

TEST(nccl_communicator_whose_other_rank_never_comes_times_out_instead_of_hanging) {
  const auto library = usable_nccl();
  s3test::cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    s3::cuda::Communicator comm(library, s3::cuda::nccl_unique_id(*library), 2, 0, std::chrono::seconds(3));
  } catch (const s3::cuda::NcclTimeout& e) {
    message = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  [nccl] a missing rank: refused after %.1f s: %s\n", seconds, message.c_str());
  CHECK(contains(message, "joining the communicator (rank 0 of 2) did not finish within 3000 ms"));
  CHECK(seconds < 30.0);
}

#else

TEST(nccl_loader) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
