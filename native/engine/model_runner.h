// model_runner.h: the one place the engine touches the model and the device (nano-vllm's
// model_runner). A runner holds the weights in the form its device computes with, the paged KV
// cache the block manager hands out ids for, and the scratch of a forward pass; it runs a
// scheduled batch (forward over every chunk, keys and values of the new tokens written to the
// cache, then the draws of the chunks that sample) and scores token sequences. The engine above it
// (scheduler, block manager, prefix cache, bookkeeping) is the same for every device.
//
// Contract every runner keeps: a sampled chunk's draws are a pure function of its logits row, the
// temperature, the seed and the token index (cpu/sampling.h), and a sequence's logits do not
// depend on what else is in the batch (for a given device and build), so batching order and limits
// never change a token.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kv_dtype.h"
#include "core/thread_pool.h"
#include "cpu/attention.h"
#include "cpu/sampling.h"
#include "model/device.h"
#include "model/qwen3_device_params.h"
#include "model/qwen3_forward.h"
#include "model/qwen3_weights.h"

namespace s3::engine {

// How a sampled row is drawn from (cpu::sample_forward's arguments besides the logits).
struct RunnerSample {
  float temperature = 1.0f;
  uint64_t seed = 0;
  uint64_t token_index = 0;  // index in the sequence of the token being drawn
  int64_t num_draws = 1;     // 1 + K extra draws
};

// One step: the forward batch (model/qwen3_forward.h; its logit rows are the sampled rows, in
// order) and how each of those rows is sampled.
struct RunnerBatch {
  model::Qwen3Batch forward;
  const RunnerSample* samples = nullptr;  // [forward.num_logit_rows]
  int64_t draw_width = 1;                 // ≥ every samples[i].num_draws
};

// Weight storage on the device: as the checkpoint stores it, or FP8 E4M3 with 128 × 128 block
// scales quantized at load (`--weights fp8`; FP8 checkpoints stay FP8 either way).
enum class WeightFormat { Stored, Bf16, Fp8 };

// The CUDA runner's attention implementation (cuda/attention.h). FromEnvironment reads
// S3_CUDA_ATTENTION once per process: "split" (the default while the tiled ones await their first GPU
// run), "tiled" (f32 arithmetic) or "tiled-mma" (bf16 tensor cores for bf16 and fp8 caches); the CPU
// runner ignores it.
enum class CudaAttention { FromEnvironment, Split, Tiled, TiledMma };

// Whether the CUDA runner replays decode steps from CUDA graphs (model/qwen3_decode_graphs.h).
// FromEnvironment reads S3_CUDA_GRAPHS once per process: unset, empty, "0" or "off" (the default
// until a GPU run has measured them), "1" or "on"; the CPU runner ignores it.
enum class CudaGraphs { FromEnvironment, Off, On };

// S3_CUDA_GRAPHS's value as a setting: "", "0", "off" → false; "1", "on" → true; anything else
// throws std::invalid_argument naming the variable, the value and the accepted ones.
bool parse_cuda_graphs(const std::string& value);
// On for On, off for Off, else S3_CUDA_GRAPHS (read once per process, parse_cuda_graphs).
bool cuda_graphs_enabled(CudaGraphs choice);

struct RunnerOptions {
  model::Device device = model::Device::Cpu;
  int64_t block_size = 16;   // KV positions per block
  int64_t num_blocks = 1;    // KV blocks in the cache
  KvDtype kv_dtype = KvDtype::F32;
  int64_t max_batch_tokens = 512;  // the largest batch the engine schedules (sizes device scratch)
  int64_t max_sequences = 64;      // sequences in one batch
  int64_t max_context = 0;         // the longest sequence (score and logits size scratch for it)
  WeightFormat weight_format = WeightFormat::Stored;
  CudaAttention cuda_attention = CudaAttention::FromEnvironment;
  CudaGraphs cuda_graphs = CudaGraphs::FromEnvironment;
};

// What a runner computes with, for `swarm doctor` and the bench JSON.
struct RunnerDescription {
  std::string device;     // "cpu" or "cuda:0 (NVIDIA H200)"
  std::string gemm;       // e.g. "cpu avx512" or "cublasLt 13.0.2 bf16" or "cublasLt 13.0.2 fp8 block-scaled"
  std::string attention;  // e.g. "cpu avx512", "cuda split-KV paged attention" or "cuda tiled paged attention"
  std::string graphs;     // "none (cpu)", "off", or "decode steps of 1 to 64 sequences through CUDA graphs (…)"
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;

  virtual RunnerDescription describe() const = 0;
  // The GPU's name as the CUDA runtime gives it ("NVIDIA H200"); "" for the CPU runner.
  virtual std::string gpu_name() const { return ""; }
  // Makes `weights` (same shape as before) the ones the next batch uses; called between batches on
  // the thread that runs them. A device runner copies them to the device here.
  virtual void set_weights(std::shared_ptr<const model::Qwen3Weights> weights) = 0;
  // Whether set_weights_from_device takes a trainer's parameters on this runner's device (the CUDA
  // runner with stored or bf16 weights); the others take host weights only.
  virtual bool takes_device_params() const { return false; }
  // The same as set_weights with the trainer's f32 parameters on the device, converted there into
  // this runner's weight format with the bits set_weights would give for host copies of them.
  virtual void set_weights_from_device(std::shared_ptr<const model::Qwen3DeviceParamSnapshot> params);
  // Runs one step. draws: [num_logit_rows × draw_width]; row i's first samples[i].num_draws entries
  // are written. The batch has been validated by the scheduler; any failure throws, leaving the
  // cache entries of this batch's new positions unspecified (the engine fails the batch's requests).
  virtual void run_batch(const RunnerBatch& batch, cpu::TokenDraw* draws) = 0;
  // log p(tokens[i + 1] | tokens[0..i]) for i < T − 1, in a scratch cache of the engine's KV dtype.
  virtual std::vector<float> score(const int32_t* tokens, int64_t T) = 0;
  // logits: [T × V], every position of one sequence whose token t sits at rotary position
  // rope_offset + t, in a scratch f32 cache (`swarm model logits`).
  virtual void logits(const int32_t* tokens, int64_t T, int64_t rope_offset, float* logits) = 0;
};

// The weights a runner computes with in `format`: `weights` itself, or (Fp8, for weights not FP8
// already) the copy model/fp8_quantize.h makes.
std::shared_ptr<const model::Qwen3Weights> weights_in_format(std::shared_ptr<const model::Qwen3Weights> weights, WeightFormat format);

// The runner for options.device. Throws std::runtime_error when that device cannot hold the cache,
// the weights or the scratch (naming what to lower), or was not built in.
std::unique_ptr<ModelRunner> make_model_runner(const RunnerOptions& options,
                                               std::shared_ptr<const model::Qwen3Weights> weights, ThreadPool& pool);

}  // namespace s3::engine
