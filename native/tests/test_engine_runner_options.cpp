// test_engine_runner_options.cpp: the runner settings read from the environment
// (engine/model_runner.h): S3_CUDA_GRAPHS's accepted values, and a clear refusal of any other.
#include <stdexcept>
#include <string>

#include "engine/model_runner.h"
#include "tests/test_framework.h"

TEST(cuda_graphs_setting_accepts_on_and_off_and_refuses_the_rest) {
  CHECK(!s3::engine::parse_cuda_graphs(""));
  CHECK(!s3::engine::parse_cuda_graphs("0"));
  CHECK(!s3::engine::parse_cuda_graphs("off"));
  CHECK(s3::engine::parse_cuda_graphs("1"));
  CHECK(s3::engine::parse_cuda_graphs("on"));
  CHECK(s3::engine::cuda_graphs_enabled(s3::engine::CudaGraphs::On));
  CHECK(!s3::engine::cuda_graphs_enabled(s3::engine::CudaGraphs::Off));
  try {
    s3::engine::parse_cuda_graphs("yes");
    CHECK(false);
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    CHECK(message.find("S3_CUDA_GRAPHS='yes'") != std::string::npos);
    CHECK(message.find("expected 1 or on") != std::string::npos);
  }
}
