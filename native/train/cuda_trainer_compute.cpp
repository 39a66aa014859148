// cuda_trainer_compute.cpp: the implementation of train/cuda_trainer_compute.h.
#include "train/cuda_trainer_compute.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "cuda/adamw.h"
#include "cuda/check.h"
#include "cuda/cublaslt.h"
#include "cuda/device_info.h"
#include "cuda/device_memory.h"
#include "cuda/dtype_kernels.h"
#include "cuda/matmul.h"
#include "model/qwen3_train_cuda.h"
#include "train/losses_cuda.h"

namespace s3::train {
namespace {

constexpr int kDevice = 0;

// Makes kDevice current on the calling thread; a member initialized with it comes before the stream
// and buffers, so they are made on that device whatever another component selected.
bool select_device() {
  cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
  return true;
}

std::vector<cuda::Event> make_events(size_t count) { return std::vector<cuda::Event>(count); }

std::vector<cudaEvent_t> event_handles(const std::vector<cuda::Event>& events) {
  std::vector<cudaEvent_t> handles;
  for (const cuda::Event& e : events) handles.push_back(e.get());
  return handles;
}

class CudaTrainerCompute final : public TrainerCompute {
 public:
  CudaTrainerCompute(const model::Qwen3Config& config, const model::Qwen3ParamLayout& layout, std::vector<float> params,
                     const TrainerComputeOptions& options)
      : config_(config),
        layout_(layout),
        options_(options),
        library_(cuda::usable_cublaslt()),
        info_(cuda::first_device()),
        selected_(select_device()),
        allocator_("train on fewer tokens per micro-batch, or keep AdamW's moments in bf16 (optimizer.stateDtype)") {
    if (params.size() != layout_.total) throw std::invalid_argument("CudaTrainerCompute: params do not match the layout");
    const size_t n = layout_.total;
    const bool bf16_moments = options_.state_dtype == OptimizerStateDtype::Bf16;
    const size_t moment_bytes = bf16_moments ? sizeof(uint16_t) : sizeof(float);
    params_ = cuda::DeviceBuffer(allocator_, n * sizeof(float), "the f32 master parameters");
    grads_ = cuda::DeviceBuffer(allocator_, n * sizeof(float), "the accumulated gradients");
    m_ = cuda::DeviceBuffer(allocator_, n * moment_bytes, "AdamW's first moments");
    v_ = cuda::DeviceBuffer(allocator_, n * moment_bytes, "AdamW's second moments");
    if (bf16_gemms()) params_bf16_ = cuda::DeviceBuffer(allocator_, n * sizeof(uint16_t), "the bf16 copy of the parameters");
    norm_scratch_ = cuda::DeviceBuffer(allocator_, cuda::gradient_norm_scratch_bytes(), "the gradient norm's partial sums");
    upload_state(params.data(), AdamWState{});  // no moments: zeroed
    zero_grad();  // cudaMalloc's memory holds whatever the process freed there before
    const cuda::GemmDtype gemm_dtype = bf16_gemms() ? cuda::GemmDtype::Bf16 : cuda::GemmDtype::F32;
    pass_ = std::make_unique<model::Qwen3TrainCuda>(config_, layout_, library_, allocator_, stream_.get(), gemm_dtype,
                                                    options_.activation_bytes);
    loss_ = std::make_unique<DeviceHeadLoss>(library_, allocator_, stream_.get(), 256);
  }

  std::string description() const override {
    return "cuda:" + std::to_string(kDevice) + " (" + info_.name + ", cublasLt " + library_->version_text() + ")";
  }
  std::string gpu_name() const override { return info_.name; }

  // on_layer_done(l) is called as soon as layer l's backward is queued, after an event recorded on
  // the stream there: a data-parallel sum of that layer's bucket (all_reduce_gradient_range, on the
  // sum's own thread) waits for the event on the collective stream, so it runs on the device while
  // the backward goes on with the layers below.
  LossStats accumulate(const TrainRows& rows, const LossOptions& options,
                       const std::function<void(int64_t layer)>& on_layer_done) override {
    if (options.precision != options_.matmul_precision) {
      throw std::invalid_argument("accumulate: the loss's precision differs from the trainer's matmul precision");
    }
    select_device();
    if (bf16_gemms() && bf16_stale_) {
      cuda::f32_to_bf16(params_.get<float>(), params_bf16_.get<uint16_t>(), layout_.total, stream_.get());
      bf16_stale_ = false;
    }
    const model::Qwen3DeviceParams params{params_.get<float>(), bf16_gemms() ? params_bf16_.get<uint16_t>() : nullptr};
    const model::Qwen3TrainBatch batch = rows.model_batch();
    if (options_.activation_bytes == 0) {
      // Half of what is free now, the last batch's activations (back in the cache) included, so an
      // engine that took its share of the device since leaves room for this batch's other buffers.
      state_.saved.reset();
      size_t free_bytes = 0, total_bytes = 0;
      cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
      pass_->set_saved_activation_bytes((free_bytes + allocator_.bytes_cached()) / 2);
    }
    pass_->forward(params, batch, state_);
    const int64_t T = rows.rows(), C = config_.hidden_size;
    float* dh = dh_.reserve<float>(allocator_, size_t(T * C));
    const size_t head = layout_.lm_head;
    const cuda::DeviceMatrix head_matrix{
        bf16_gemms() ? static_cast<const void*>(params.bf16 + head) : static_cast<const void*>(params.f32 + head),
        bf16_gemms() ? cuda::GemmDtype::Bf16 : cuda::GemmDtype::F32, config_.vocab_size, C, nullptr};
    float* grads = grads_.get<float>();
    const LossStats stats = loss_->run(dh, grads + head, state_.final_normed_data(), head_matrix, T, rows.loss_inputs(), options);
    std::fill(layer_queued_.begin(), layer_queued_.end(), 0);
    std::function<void(int64_t)> on_layer_queued;
    if (on_layer_done) {
      on_layer_queued = [&](int64_t layer) {
        cuda::check(cudaEventRecord(layer_events_.at(size_t(layer)), stream_.get()), "recording a layer's gradients as final");
        layer_queued_[size_t(layer)] = 1;
        on_layer_done(layer);
      };
    }
    pass_->backward(params, grads, state_, dh, on_layer_queued);
    stream_.synchronize("the training pass");
    host_grads_valid_ = false;
    return stats;
  }

  AdamWStepResult step(const AdamWOptions& options) override {
    if (options.state_dtype != options_.state_dtype) {
      throw std::invalid_argument(std::string("step: this trainer keeps its moments in ") +
                                  optimizer_state_dtype_name(options_.state_dtype));
    }
    select_device();
    const size_t n = layout_.total;
    const double norm = cuda::gradient_norm(grads_.get<float>(), n, norm_scratch_.get(), stream_.get());
    const AdamWUpdate update = adamw_plan_update(options, step_ + 1, norm);
    if (options.state_dtype == OptimizerStateDtype::Bf16) {
      cuda::adamw_update_bf16(params_.get<float>(), grads_.get<float>(), m_.get<uint16_t>(), v_.get<uint16_t>(), n,
                              update.coefficients, options.rounding_seed, uint32_t(step_ + 1), stream_.get());
    } else {
      cuda::adamw_update(params_.get<float>(), grads_.get<float>(), m_.get<float>(), v_.get<float>(), n, update.coefficients,
                         stream_.get());
    }
    step_ += 1;
    zero_grad();
    stream_.synchronize("the AdamW update");
    bf16_stale_ = true;
    host_params_valid_ = host_state_valid_ = false;
    return update.result;
  }

  void zero_grad() override {
    select_device();
    cuda::check(cudaMemsetAsync(grads_.get(), 0, layout_.total * sizeof(float), stream_.get()), "zeroing the gradients");
    stream_.synchronize("zeroing the gradients");
    host_grads_valid_ = false;
  }

  int64_t step_count() const override { return step_; }
  bool kept_activations() const override { return state_.saved != nullptr; }

  // Runs on the collective stream, after the event that makes [offset, offset + count) final: its
  // layer's (queued by the backward running now) or, for the rest, everything queued so far.
  void all_reduce_gradient_range(Collective& group, size_t offset, size_t count) override {
    select_device();
    host_grads_valid_ = false;
    float* device = grads_.get<float>() + offset;
    cudaStream_t collective = collective_stream_.get();
    cuda::check(cudaStreamWaitEvent(collective, gradients_ready(offset), 0), "waiting for the gradients to sum");
    if (group.all_reduce_sum_on_device(device, count, collective)) return;
    range_scratch_.resize(count);  // a host collective: down, summed, up
    const cuda::Shapes bytes = {{"bytes", int64_t(count * sizeof(float))}};
    cuda::check(cudaMemcpyAsync(range_scratch_.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost, collective),
                "downloading gradients to sum", bytes);
    collective_stream_.synchronize("downloading gradients to sum");
    group.all_reduce_sum(range_scratch_.data(), count);
    cuda::check(cudaMemcpyAsync(device, range_scratch_.data(), count * sizeof(float), cudaMemcpyHostToDevice, collective),
                "uploading the summed gradients", bytes);
    collective_stream_.synchronize("uploading the summed gradients");
  }

  const std::vector<float>& params() const override {
    if (!host_params_valid_) download(host_params_, params_, "downloading the parameters");
    host_params_valid_ = true;
    return host_params_;
  }

  const std::vector<float>& grads() const override {
    if (!host_grads_valid_) download(host_grads_, grads_, "downloading the gradients");
    host_grads_valid_ = true;
    return host_grads_;
  }

  const AdamWState& optimizer_state() const override {
    if (!host_state_valid_) {
      host_state_ = AdamWState{};
      if (options_.state_dtype == OptimizerStateDtype::Bf16) {
        download(host_state_.m_bf16, m_, "downloading AdamW's moments");
        download(host_state_.v_bf16, v_, "downloading AdamW's moments");
      } else {
        download(host_state_.m, m_, "downloading AdamW's moments");
        download(host_state_.v, v_, "downloading AdamW's moments");
      }
      host_state_valid_ = true;
    }
    host_state_.step = step_;
    return host_state_;
  }

  std::shared_ptr<const model::Qwen3DeviceParamSnapshot> device_snapshot() const override {
    select_device();
    const size_t bytes = layout_.total * sizeof(float);
    void* copy = nullptr;
    const cudaError_t status = cudaMalloc(&copy, bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw cuda::DeviceOutOfMemory("a device copy of the trainer's parameters for the engine (" + std::to_string(bytes) +
                                    " bytes): " + cudaGetErrorString(status) +
                                    "; lower the engine's kvCacheBytes or the trainer's activationBytes");
    }
    auto snapshot = std::make_shared<model::Qwen3DeviceParamSnapshot>();
    snapshot->config = config_;
    snapshot->layout = layout_;
    snapshot->data = std::shared_ptr<const float>(static_cast<const float*>(copy), [](const float* p) {
      cudaFree(const_cast<float*>(p));
    });
    cuda::check(cudaMemcpyAsync(copy, params_.get(), bytes, cudaMemcpyDeviceToDevice, stream_.get()),
                "copying the parameters for the engine", {{"bytes", int64_t(bytes)}});
    stream_.synchronize("copying the parameters for the engine");
    return snapshot;
  }

  void set_params(const float* values) override {
    select_device();
    upload(params_, values, layout_.total * sizeof(float), "uploading the parameters");
    stream_.synchronize("uploading the parameters");
    bf16_stale_ = true;
    host_params_valid_ = false;
  }

  void set_state(std::vector<float> params, AdamWState state) override {
    upload_state(params.data(), state);
    step_ = state.step;
    zero_grad();
  }

 private:
  bool bf16_gemms() const { return options_.matmul_precision == MatmulPrecision::Bf16; }

  // The event after which the gradients at `offset` are final: their layer's, where the backward
  // under way has queued it; otherwise one recorded now on the compute stream.
  cudaEvent_t gradients_ready(size_t offset) {
    const auto& layers = layout_.layers;
    for (size_t l = 0; l < layers.size(); l++) {
      const size_t end = l + 1 < layers.size() ? layers[l + 1].input_layernorm : layout_.norm;
      if (offset >= layers[l].input_layernorm && offset < end && layer_queued_[l] != 0) return layer_events_[l];
    }
    cuda::check(cudaEventRecord(rest_event_.get(), stream_.get()), "recording the gradients as final");
    return rest_event_.get();
  }

  // Queues the parameters and, where `state` holds them, the moments; the bf16 copy goes stale.
  void upload_state(const float* params, const AdamWState& state) {
    select_device();
    upload(params_, params, layout_.total * sizeof(float), "uploading the parameters");
    const bool bf16 = options_.state_dtype == OptimizerStateDtype::Bf16;
    const void* m = bf16 ? static_cast<const void*>(state.m_bf16.data()) : state.m.data();
    const void* v = bf16 ? static_cast<const void*>(state.v_bf16.data()) : state.v.data();
    const size_t count = bf16 ? state.m_bf16.size() : state.m.size();
    if (count == layout_.total) {
      upload(m_, m, m_.bytes(), "uploading AdamW's moments");
      upload(v_, v, v_.bytes(), "uploading AdamW's moments");
    } else if (count == 0) {  // no moments: fresh ones, as the CPU's adamw_step starts them
      cuda::check(cudaMemsetAsync(m_.get(), 0, m_.bytes(), stream_.get()), "zeroing AdamW's moments");
      cuda::check(cudaMemsetAsync(v_.get(), 0, v_.bytes(), stream_.get()), "zeroing AdamW's moments");
    } else {
      throw std::invalid_argument("set_state: " + std::to_string(count) + " moments for " + std::to_string(layout_.total) +
                                  " parameters");
    }
    stream_.synchronize("uploading the trainer's state");
    bf16_stale_ = true;
    host_params_valid_ = host_grads_valid_ = host_state_valid_ = false;
  }

  void upload(cuda::DeviceBuffer& to, const void* from, size_t bytes, const char* what) {
    cuda::check(cudaMemcpyAsync(to.get(), from, bytes, cudaMemcpyHostToDevice, stream_.get()), what, {{"bytes", int64_t(bytes)}});
  }

  template <typename T>
  void download(std::vector<T>& to, const cuda::DeviceBuffer& from, const char* what) const {
    select_device();
    to.resize(layout_.total);
    cuda::check(cudaMemcpyAsync(to.data(), from.get(), to.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_.get()), what,
                {{"bytes", int64_t(to.size() * sizeof(T))}});
    stream_.synchronize(what);
  }

  model::Qwen3Config config_;
  model::Qwen3ParamLayout layout_;
  TrainerComputeOptions options_;
  std::shared_ptr<const cuda::CublasLtLibrary> library_;
  cuda::DeviceInfo info_;
  bool selected_;  // kDevice made current before the allocator, stream and buffers
  cuda::DeviceAllocator allocator_;
  cuda::Stream stream_;
  cuda::Stream collective_stream_;  // data-parallel sums, beside the backward on stream_
  std::vector<cuda::Event> layer_events_owned_ = make_events(size_t(config_.num_hidden_layers));
  std::vector<cudaEvent_t> layer_events_ = event_handles(layer_events_owned_);
  std::vector<uint8_t> layer_queued_ = std::vector<uint8_t>(size_t(config_.num_hidden_layers), 0);
  cuda::Event rest_event_;
  cuda::DeviceBuffer params_, params_bf16_, grads_, m_, v_, norm_scratch_;
  cuda::ScratchBuffer dh_{"the loss's gradient of the final hidden states"};
  std::unique_ptr<model::Qwen3TrainCuda> pass_;
  std::unique_ptr<DeviceHeadLoss> loss_;
  model::Qwen3DeviceTrainState state_;
  int64_t step_ = 0;
  bool bf16_stale_ = true;
  // Host copies, downloaded on demand.
  mutable std::vector<float> host_params_, host_grads_;
  std::vector<float> range_scratch_;  // a host collective's share of the gradients
  mutable AdamWState host_state_;
  mutable bool host_params_valid_ = false, host_state_valid_ = false;
  mutable std::atomic<bool> host_grads_valid_{false};  // also cleared by the sum's thread
};

}  // namespace

std::unique_ptr<TrainerCompute> make_cuda_trainer_compute(const model::Qwen3Config& config,
                                                          const model::Qwen3ParamLayout& layout, std::vector<float> params,
                                                          const TrainerComputeOptions& options) {
  return std::make_unique<CudaTrainerCompute>(config, layout, std::move(params), options);
}

}  // namespace s3::train
