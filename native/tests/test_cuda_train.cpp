// test_cuda_train.cpp: the Qwen3 training pass on the device (model/qwen3_train_cuda.h) against the
// CPU's (model/qwen3_train.h, itself checked by finite differences in test_model_qwen3_train.cpp) on
// the `small` shape over packed sequences with a shared prefix: the final normed hidden states and
// every parameter gradient from the same random upstream gradient. F32 precision: NMSE ≤ 1e-8 each
// (f32 sums in another order); BF16 precision (bf16 GEMM operands) against the f32 CPU: NMSE ≤ 1e-3.
// Saved activations and per-layer recompute give the same bits, and a second run repeats the first
// bit for bit. Skipped where CUDA is not usable.
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/qwen3_param_layout.h"
#include "model/qwen3_train.h"
#include "tests/cuda_test_support.h"
#include "tests/naive_qwen3.h"

#ifdef S3_WITH_CUDA
#include "cuda/cublaslt.h"
#include "cuda/device_memory.h"
#include "model/qwen3_train_cuda.h"

using s3test::DeviceArray;

TEST(cuda_qwen3_training_pass_matches_cpu) {
  s3test::require_cuda();
  const s3::model::Qwen3Config c = s3test::small_qwen3_config();
  const s3test::TestModel model = s3test::make_test_model(c, s3::DType::F32, 5, s3::DType::F32);
  const auto weights = s3::model::Qwen3Weights::from_tensors(c, model.named(), s3::model::Qwen3Weights::Storage::Borrow);
  const s3::model::Qwen3ParamLayout layout = s3::model::Qwen3ParamLayout::make(c);
  const std::vector<float> params = s3::model::qwen3_params_from_weights(weights, layout);
  std::mt19937 rng(9);
  std::vector<int64_t> begins = {0, 90, 130, 200, 203, 350}, parent = {-1, 0, 0, -1, 3};
  std::vector<int32_t> tokens(size_t(begins.back()));
  for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(c.vocab_size));
  const s3::model::Qwen3TrainBatch batch{tokens.data(), begins.back(), begins.data(), int64_t(begins.size()) - 1, parent.data()};
  const int64_t T = batch.T, C = c.hidden_size;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> d_final(size_t(T * C));
  for (float& x : d_final) x = normal(rng);

  s3::ThreadPool pool(2);
  s3::model::Qwen3TrainState cpu_state;
  s3::model::qwen3_train_forward(c, layout, params.data(), batch, cpu_state, pool);
  std::vector<float> cpu_grads(layout.total, 0.0f);
  s3::model::qwen3_train_backward(c, layout, params.data(), cpu_grads.data(), batch, cpu_state, d_final.data(), pool);

  s3::cuda::DeviceAllocator allocator("test");
  s3::cuda::Stream stream;
  std::vector<uint16_t> bits(params.size());
  for (size_t i = 0; i < params.size(); i++) bits[i] = s3::f32_to_bf16(params[i]);
  DeviceArray<float> d_params(params), d_upstream(d_final), d_grads(layout.total);
  DeviceArray<uint16_t> d_bits(bits);
  const s3::model::Qwen3DeviceParams device_params{d_params.get(), d_bits.get()};
  for (s3::cuda::GemmDtype precision : {s3::cuda::GemmDtype::F32, s3::cuda::GemmDtype::Bf16}) {
    const bool bf16 = precision == s3::cuda::GemmDtype::Bf16;
    std::vector<std::vector<float>> runs;
    for (size_t budget : {size_t(1) << 30, size_t(0), size_t(1) << 30}) {  // saved, recomputed, saved again
      s3::model::Qwen3TrainCuda trainer(c, layout, s3::cuda::cublaslt().library, allocator, stream.get(), precision, budget);
      s3::model::Qwen3DeviceTrainState state;
      trainer.forward(device_params, batch, state);
      d_grads.upload(std::vector<float>(layout.total, 0.0f));
      trainer.backward(device_params, d_grads.get(), state, d_upstream.get());
      stream.synchronize("training pass");
      std::vector<float> normed(size_t(T * C));
      s3test::cuda_ok(cudaMemcpy(normed.data(), state.final_normed_data(), normed.size() * 4, cudaMemcpyDeviceToHost), "download");
      std::vector<float> grads = d_grads.download();
      grads.insert(grads.end(), normed.begin(), normed.end());
      runs.push_back(grads);
    }
    const std::vector<float>& got = runs[0];
    const double threshold = bf16 ? 1e-3 : 1e-8;
    const std::string name = bf16 ? " (bf16)" : " (f32)";
    CHECK_NMSE("final normed" + name, got.data() + layout.total, cpu_state.final_normed.data(), size_t(T * C), threshold);
    for (const auto& e : layout.entries) {
      CHECK_NMSE("grad " + e.name + name, got.data() + e.offset, cpu_grads.data() + e.offset, e.count, threshold);
    }
    CHECK(std::memcmp(runs[1].data(), got.data(), got.size() * 4) == 0);
    CHECK(std::memcmp(runs[2].data(), got.data(), got.size() * 4) == 0);
  }
}

#else

TEST(cuda_train) { SKIP("built without CUDA (no nvcc at build time, or S3_CUDA=OFF)"); }

#endif
