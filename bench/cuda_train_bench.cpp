// cuda_train_bench.cpp: the CUDA training benchmark of the GPU check (scripts/gpu-check.sh): training
// steps of the trainer on the device (native/bench/train_bench.h, the code behind `swarm bench
// train --device cuda`) on a random Qwen3-0.6B, 8 sequences × 4,096 tokens packed into one micro-batch,
// SFT loss forward + backward + AdamW, with BF16 products (the paper's precision) and f32 master
// weights and moments; bench/torch_train_step.py times PyTorch on the same shape in the same run.
// Built with -DS3_BUILD_GPU_BENCH=ON (CUDA only). Run: s3_cuda_train_bench [--quick] > train.json
// (--quick: 2 × 1,024 tokens).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/train_bench.h"
#include "gpu_bench_support.h"

namespace {

std::string train_figures(const std::string& dir, s3::MatmulPrecision precision, int64_t sequences, int64_t length) {
  s3::model::TrainBenchOptions options;
  options.device = s3::model::Device::Cuda;
  options.matmul_precision = precision;
  options.sequences = sequences;
  options.tokens = sequences * length;
  options.repetitions = 3;
  const s3::model::TrainBenchFigures f = s3::model::bench_train(dir, options);
  char text[1024];
  std::snprintf(text, sizeof text,
                "{\"precision\": \"%s\", \"device\": \"%s\", \"sequences\": %lld, \"tokens\": %lld, \"medianSeconds\": %.4g, "
                "\"bestSeconds\": %.4g, \"forwardBackwardSeconds\": %.4g, \"optimizerSeconds\": %.4g, \"tokensPerSecond\": %.4g, "
                "\"flopsPerToken\": %.6g, \"tflops\": %.4g, \"loss\": %.6g}",
                s3::matmul_precision_name(precision), f.device.c_str(), (long long)f.sequences, (long long)f.tokens,
                f.median_seconds, f.best_seconds, f.forward_backward_seconds, f.optimizer_seconds, f.tokens_per_second,
                f.flops_per_token, f.gflops / 1e3, f.loss);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = s3bench::qwen3_06b_checkpoint(tmp ? tmp : "/tmp");
  const int64_t sequences = quick ? 2 : 8, length = quick ? 1024 : 4096;
  std::printf("{\"model\": \"qwen3-0.6b (random bf16 weights, f32 master weights and AdamW moments)\",\n");
  std::printf(" \"flopsFormula\": \"6 × (matmul parameters of the layers + LM head) + 12 × layers × T × heads × head_dim / 2\",\n");
  std::fflush(stdout);
  std::printf(" \"train\": %s}\n",
              s3bench::guarded([&] { return train_figures(dir, s3::MatmulPrecision::Bf16, sequences, length); }).c_str());
  return 0;
}
