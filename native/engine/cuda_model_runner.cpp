// The CUDA runner; see cuda_model_runner.h.
#include "engine/cuda_model_runner.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "cuda/attention.h"
#include "cuda/check.h"
#include "cuda/cublaslt.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "cuda/kv_cache.h"
#include "cuda/matmul.h"
#include "cuda/sampling.h"
#include "model/qwen3_decode_graphs.h"
#include "model/qwen3_device_weights.h"
#include "model/qwen3_forward_cuda.h"

namespace s3::engine {
namespace {

constexpr int kDevice = 0;
constexpr int64_t kScratchBlockSize = 16;  // blocks of the scratch caches score() and logits() use

cuda::AttentionKernel attention_kernel(CudaAttention choice) {
  switch (choice) {
    case CudaAttention::Split: return cuda::AttentionKernel::Split;
    case CudaAttention::Tiled: return cuda::AttentionKernel::Tiled;
    case CudaAttention::TiledMma: return cuda::AttentionKernel::TiledMma;
    case CudaAttention::FromEnvironment: break;
  }
  return cuda::attention_kernel_from_environment();
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(int64_t(1) << 30));
  return text;
}

class CudaModelRunner final : public ModelRunner {
 public:
  CudaModelRunner(const RunnerOptions& options, std::shared_ptr<const model::Qwen3Weights> weights)
      : options_(options),
        library_(cuda::usable_cublaslt()),
        info_(cuda::first_device()),
        allocator_("lower kvCacheBytes (the engine's KV cache) or maxBatchTokens (tokens per step)"),
        gemm_(library_, allocator_, stream_.get(), options.max_batch_tokens),
        // Block-scaled FP8 where cuBLASLt and the device offer it and this cuBLASLt has an algorithm
        // for it (else FP8 weights are widened to bf16 at upload).
        fp8_block_scaling_(cuda::fp8_weights_block_scaled(gemm_, info_.compute_major, info_.compute_minor)),
        config_(weights->config()) {
    cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
    const std::shared_ptr<const model::Qwen3Weights> host = weights_in_format(std::move(weights), options.weight_format);
    weights_ = std::make_unique<model::Qwen3DeviceWeights>(*host, allocator_, stream_.get(), fp8_block_scaling_);
    const int64_t kv_bytes = cuda::DeviceKvCache::bytes(config_.num_hidden_layers, config_.num_key_value_heads, config_.head_dim,
                                                        options.block_size, options.num_blocks, options.kv_dtype);
    size_t free_bytes = 0, total_bytes = 0;
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (double(kv_bytes) > 0.95 * double(free_bytes)) {
      throw cuda::DeviceOutOfMemory("the KV cache of " + gib(double(kv_bytes)) + " (" + std::to_string(options.num_blocks) +
                                    " blocks) does not fit the " + gib(double(free_bytes)) + " free on " + device_name() +
                                    " after the weights (" + gib(double(weights_->bytes())) + "); lower kvCacheBytes");
    }
    cache_ = std::make_unique<cuda::DeviceKvCache>(allocator_, config_.num_hidden_layers, config_.num_key_value_heads,
                                                   config_.head_dim, options.block_size, options.num_blocks, options.kv_dtype,
                                                   stream_.get());
    forward_ = std::make_unique<model::Qwen3CudaForward>(config_, allocator_, stream_.get(), gemm_, attention_kernel(options.cuda_attention));
    if (cuda_graphs_enabled(options.cuda_graphs)) {
      const int64_t max_context = options.max_context > 0 ? options.max_context : config_.max_position_embeddings;
      graphs_ = std::make_unique<model::Qwen3DecodeGraphs>(config_, library_, allocator_, stream_.get(), forward_->attention_kernel(),
                                                           std::min(options.max_sequences, options.max_batch_tokens), max_context,
                                                           options.block_size, options.max_batch_tokens);
    }
    stream_.synchronize("starting the CUDA runner");
  }

  std::string gpu_name() const override { return info_.name; }

  RunnerDescription describe() const override {
    // With FP8 weights: the FP8 form cuBLASLt accepted ("fp8 as D f32"), or why it refused every one.
    const std::string fp8 = weights_->holds_fp8() ? gemm_.fp8_description() : std::string();
    return {device_name(),
            "cublasLt " + library_->version_text() + " " + weights_->format() + (gemm_.batch_invariant() ? "" : " (not batch-invariant)") +
                (fp8.empty() ? "" : "; " + fp8),
            forward_->attention_name(), graphs_ != nullptr ? graphs_->description() : graphs_off_};
  }

  void set_weights(std::shared_ptr<const model::Qwen3Weights> weights) override {
    cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
    const std::shared_ptr<const model::Qwen3Weights> host = weights_in_format(std::move(weights), options_.weight_format);
    if (weights_->update(*host, stream_.get())) return;
    if (graphs_ != nullptr) graphs_->clear();  // they hold the old weights' addresses
    weights_.reset();  // free the old version before the new one takes its place
    weights_ = std::make_unique<model::Qwen3DeviceWeights>(*host, allocator_, stream_.get(), fp8_block_scaling_);
  }

  bool takes_device_params() const override {
    return options_.weight_format == WeightFormat::Stored || options_.weight_format == WeightFormat::Bf16 ||
           options_.weight_format == WeightFormat::Fp8;
  }

  void set_weights_from_device(std::shared_ptr<const model::Qwen3DeviceParamSnapshot> params) override {
    if (!takes_device_params()) throw std::logic_error("the CUDA runner makes only stored (f32), bf16 or fp8 weights on the device");
    cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
    // The trainer's parameters are f32: stored keeps them f32, bf16 rounds them and fp8 quantizes the
    // linear layers (as weights_in_format does on the host).
    const cuda::GemmDtype form = options_.weight_format == WeightFormat::Bf16  ? cuda::GemmDtype::Bf16
                                 : options_.weight_format == WeightFormat::Fp8 ? cuda::GemmDtype::Fp8
                                                                               : cuda::GemmDtype::F32;
    if (weights_->update(*params, form, stream_.get())) return;
    if (graphs_ != nullptr) graphs_->clear();  // they hold the old weights' addresses
    weights_.reset();  // free the old version before the new one takes its place
    weights_ = std::make_unique<model::Qwen3DeviceWeights>(*params, form, allocator_, stream_.get(), fp8_block_scaling_);
  }

  void run_batch(const RunnerBatch& batch, cpu::TokenDraw* draws) override {
    cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
    const int64_t R = batch.forward.num_logit_rows, V = config_.vocab_size, width = batch.draw_width;
    const float* logits = forward(batch.forward);
    if (R == 0) {
      stream_.synchronize("the engine step");
      return;
    }
    std::vector<cuda::SampleRow> rows(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; i++) {
      const RunnerSample& s = batch.samples[i];
      rows[size_t(i)] = {s.temperature, s.seed, s.token_index, int32_t(s.num_draws)};
    }
    cuda::SampleRow* device_rows = sample_rows_.reserve<cuda::SampleRow>(allocator_, size_t(R));
    int32_t* tokens = draw_tokens_.reserve<int32_t>(allocator_, size_t(R * width));
    float* logprobs = draw_logprobs_.reserve<float>(allocator_, size_t(R * width));
    int32_t* status = status_.reserve<int32_t>(allocator_, size_t(R));
    cuda::check(cudaMemcpyAsync(device_rows, rows.data(), rows.size() * sizeof(cuda::SampleRow), cudaMemcpyHostToDevice, stream_.get()),
                "uploading the sampled rows");
    cuda::sample_rows(logits, R, V, device_rows, width, tokens, logprobs, status, stream_.get());
    host_tokens_.resize(size_t(R * width));
    host_logprobs_.resize(size_t(R * width));
    host_status_.resize(size_t(R));
    copy_back(host_tokens_.data(), tokens, host_tokens_.size() * sizeof(int32_t));
    copy_back(host_logprobs_.data(), logprobs, host_logprobs_.size() * sizeof(float));
    copy_back(host_status_.data(), status, host_status_.size() * sizeof(int32_t));
    stream_.synchronize("the engine step");
    for (int64_t i = 0; i < R; i++) {
      refuse_bad_row(host_status_[size_t(i)], i);
      for (int64_t k = 0; k < batch.samples[i].num_draws; k++) {
        draws[i * width + k] = {host_tokens_[size_t(i * width + k)], host_logprobs_[size_t(i * width + k)]};
      }
    }
  }

  std::vector<float> score(const int32_t* tokens, int64_t T) override {
    std::vector<float> out(size_t(T - 1));
    run_sequence(tokens, T, 0, options_.kv_dtype, [&](const float* logits, int64_t first, int64_t count) {
      // Row i of this chunk predicts token first + i + 1; the last position of the sequence predicts nothing.
      const int64_t rows = std::min(count, T - 1 - first);
      if (rows <= 0) return;
      std::vector<int32_t> targets(tokens + first + 1, tokens + first + 1 + rows);
      int32_t* device_targets = targets_.reserve<int32_t>(allocator_, size_t(rows));
      float* logprobs = score_logprobs_.reserve<float>(allocator_, size_t(rows));
      int32_t* status = status_.reserve<int32_t>(allocator_, size_t(rows));
      cuda::check(cudaMemcpyAsync(device_targets, targets.data(), size_t(rows) * sizeof(int32_t), cudaMemcpyHostToDevice, stream_.get()),
                  "uploading the scored tokens");
      cuda::token_logprobs(logits, rows, config_.vocab_size, device_targets, logprobs, status, stream_.get());
      host_status_.resize(size_t(rows));
      copy_back(out.data() + first, logprobs, size_t(rows) * sizeof(float));
      copy_back(host_status_.data(), status, size_t(rows) * sizeof(int32_t));
      stream_.synchronize("score");
      for (int64_t i = 0; i < rows; i++) refuse_bad_row(host_status_[size_t(i)], first + i);
    });
    return out;
  }

  void logits(const int32_t* tokens, int64_t T, int64_t rope_offset, float* out) override {
    const int64_t V = config_.vocab_size;
    run_sequence(tokens, T, rope_offset, KvDtype::F32, [&](const float* logits, int64_t first, int64_t count) {
      copy_back(out + first * V, logits, size_t(count * V) * sizeof(float));
      stream_.synchronize("logits");
    });
  }

 private:
  // The step's logits: replayed from a decode graph where one serves it, else eagerly. A graph that
  // cannot be captured turns graphs off for this runner (describe() says why) and the step runs
  // eagerly; its new keys and values are written again with the same bits.
  const float* forward(const model::Qwen3Batch& batch) {
    if (graphs_ != nullptr && graphs_->serves(batch)) {
      try {
        return graphs_->forward(*weights_, batch, *cache_);
      } catch (const std::logic_error& e) {
        if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr) throw;  // a bad batch fails as it would eagerly
        turn_graphs_off(e.what());
      } catch (const cuda::CudaError& e) {
        // A fault in the device context fails the step as it would eagerly; a capture or replay that
        // could not be made leaves the stream usable.
        if (cudaStreamSynchronize(stream_.get()) != cudaSuccess) throw;
        turn_graphs_off(e.what());
      }
    }
    return forward_->forward(*weights_, batch, *cache_);
  }

  void turn_graphs_off(const std::string& reason) {
    graphs_off_ = "off: " + reason;
    graphs_.reset();
  }

  std::string device_name() const { return "cuda:" + std::to_string(kDevice) + " (" + info_.name + ")"; }

  void copy_back(void* host, const void* device, size_t bytes) {
    cuda::check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_.get()), "copying results back",
                {{"bytes", int64_t(bytes)}});
  }

  static void refuse_bad_row(int32_t status, int64_t row) {
    switch (status) {
      case cuda::kSampleOk: return;
      case cuda::kSampleBadLogit: throw std::invalid_argument("logits row " + std::to_string(row) + " holds a NaN or +inf; expected finite numbers or -inf");
      case cuda::kSampleAllNegativeInfinity: throw std::invalid_argument("every logit of row " + std::to_string(row) + " is -inf");
      default: throw std::invalid_argument("row " + std::to_string(row) + ": temperature must be a number >= 0");
    }
  }

  // One sequence through a scratch cache, in chunks of at most max_batch_tokens positions;
  // consume(logits, first, count) gets the device logits of positions [first, first + count).
  template <typename Consume>
  void run_sequence(const int32_t* tokens, int64_t T, int64_t rope_offset, KvDtype dtype, const Consume& consume) {
    cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
    const int64_t blocks = (T + kScratchBlockSize - 1) / kScratchBlockSize;
    cuda::DeviceKvCache cache(allocator_, config_.num_hidden_layers, config_.num_key_value_heads, config_.head_dim,
                              kScratchBlockSize, blocks, dtype, stream_.get());
    std::vector<int32_t> table(static_cast<size_t>(blocks));
    std::iota(table.begin(), table.end(), 0);
    const int64_t chunk = std::max<int64_t>(1, options_.max_batch_tokens);
    for (int64_t first = 0; first < T; first += chunk) {
      const int64_t count = std::min(chunk, T - first);
      const cpu::AttentionSequence sequence{first, count, table.data(), blocks};
      std::vector<int64_t> rows(static_cast<size_t>(count));
      std::iota(rows.begin(), rows.end(), 0);
      const model::Qwen3Batch batch{tokens + first, &sequence, 1, rows.data(), count, &rope_offset};
      consume(forward_->forward(*weights_, batch, cache), first, count);
    }
  }

  RunnerOptions options_;
  std::shared_ptr<const cuda::CublasLtLibrary> library_;
  cuda::DeviceInfo info_;
  // Declared before everything that holds device memory, so it is destroyed last.
  cuda::DeviceAllocator allocator_;
  cuda::Stream stream_;
  cuda::Gemm gemm_;
  bool fp8_block_scaling_;
  model::Qwen3Config config_;
  std::unique_ptr<model::Qwen3DeviceWeights> weights_;
  std::unique_ptr<cuda::DeviceKvCache> cache_;
  std::unique_ptr<model::Qwen3CudaForward> forward_;
  std::unique_ptr<model::Qwen3DecodeGraphs> graphs_;  // null when graphs are off
  std::string graphs_off_ = "off";                      // why, when they are
  cuda::ScratchBuffer sample_rows_{"the sampled rows"}, draw_tokens_{"the draws"}, draw_logprobs_{"the draws' log-probs"},
      status_{"the rows' status"}, targets_{"the scored tokens"}, score_logprobs_{"the scores"};
  std::vector<int32_t> host_tokens_, host_status_;
  std::vector<float> host_logprobs_;
};

}  // namespace

std::unique_ptr<ModelRunner> make_cuda_model_runner(const RunnerOptions& options, std::shared_ptr<const model::Qwen3Weights> weights) {
  return std::make_unique<CudaModelRunner>(options, std::move(weights));
}

}  // namespace s3::engine
