// The fused LM-head loss on the device; see losses_cuda.h.
#include "train/losses_cuda.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda/check.h"
#include "cuda/dtype_kernels.h"
#include "cuda/embedding.h"
#include "cuda/token_loss.h"

namespace s3::train {
namespace {

// One chunk's per-row inputs, gathered on the host into one upload: targets, coef, old and
// reference log-probs, KL weights, then the draws' tokens and log-probs.
struct HostChunk {
  std::vector<int32_t> targets, draw_tokens;
  std::vector<float> coef, old_logprobs, ref_logprobs, kl_weight, draw_logprobs;
};

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

DeviceHeadLoss::DeviceHeadLoss(std::shared_ptr<const cuda::CublasLtLibrary> library, cuda::DeviceAllocator& allocator,
                               cudaStream_t stream, int64_t chunk_rows)
    : allocator_(allocator),
      stream_(stream),
      chunk_rows_(chunk_rows > 0 ? chunk_rows : 256),
      gemm_(library, allocator, stream, chunk_rows_),
      backward_(library, allocator, stream) {}

LossStats DeviceHeadLoss::run(float* dh, float* dhead, const float* h, const cuda::DeviceMatrix& head, int64_t T,
                              const LossInputs& in, const LossOptions& options) {
  if (head.dtype != cuda::GemmDtype::F32 && head.dtype != cuda::GemmDtype::Bf16) {
    throw cuda::CudaError("fused_head_loss on the device: the head must be f32 or bf16");
  }
  const int64_t V = head.rows, C = head.cols;
  const std::vector<int64_t> rows = loss_rows(T, V, in, options);
  const ops::TokenLossSettings settings = token_loss_settings(in, options);
  const bool bf16 = head.dtype == cuda::GemmDtype::Bf16;
  const int64_t K = settings.num_draws;
  cuda::check(cudaMemsetAsync(dh, 0, size_t(T * C) * sizeof(float), stream_), "fused_head_loss (zero dh)", {{"T", T}, {"C", C}});
  LossStats stats;
  const int64_t R = std::max<int64_t>(1, std::min<int64_t>(options.chunk_rows > 0 ? options.chunk_rows : chunk_rows_, int64_t(rows.size())));
  int32_t* rows_d = rows_.reserve<int32_t>(allocator_, size_t(R));
  float* hc = hc_.reserve<float>(allocator_, size_t(R * C));
  uint16_t* hc16 = bf16 ? hc16_.reserve<uint16_t>(allocator_, size_t(R * C)) : nullptr;
  float* logits = logits_.reserve<float>(allocator_, size_t(R * V));
  uint16_t* logits16 = bf16 ? logits16_.reserve<uint16_t>(allocator_, size_t(R * V)) : nullptr;
  float* dhc = dhc_.reserve<float>(allocator_, size_t(R * C));
  ops::TokenLossRow* results = results_.reserve<ops::TokenLossRow>(allocator_, size_t(R));
  // The chunk inputs' device layout: 5 arrays of R 4-byte values, then 2 of R × K.
  const size_t column = aligned(size_t(R) * 4), draws = aligned(size_t(R * K) * 4);
  uint8_t* inputs_d = inputs_.reserve<uint8_t>(allocator_, 5 * column + 2 * draws);
  std::vector<ops::TokenLossRow> host_results(static_cast<size_t>(R));
  std::vector<int32_t> host_rows(static_cast<size_t>(R));
  for (size_t r0 = 0; r0 < rows.size(); r0 += size_t(R)) {
    const int64_t n = int64_t(std::min(rows.size() - r0, size_t(R)));
    HostChunk chunk;
    chunk.targets.resize(size_t(n));
    chunk.coef.resize(size_t(n));
    chunk.old_logprobs.assign(size_t(n), 0.0f);
    chunk.ref_logprobs.assign(size_t(n), 0.0f);
    chunk.kl_weight.assign(size_t(n), 0.0f);
    chunk.draw_tokens.assign(size_t(n * K), -1);
    chunk.draw_logprobs.assign(size_t(n * K), 0.0f);
    for (int64_t i = 0; i < n; i++) {
      const int64_t t = rows[r0 + size_t(i)];
      const ops::TokenLossRowInput row = token_loss_row_input(in, settings, t);
      host_rows[size_t(i)] = int32_t(t);
      chunk.targets[size_t(i)] = row.target;
      chunk.coef[size_t(i)] = in.coef[t];
      chunk.old_logprobs[size_t(i)] = row.old_logprob;
      chunk.ref_logprobs[size_t(i)] = row.ref_logprob;
      chunk.kl_weight[size_t(i)] = row.kl_weight;
      if (K > 0) {
        std::memcpy(&chunk.draw_tokens[size_t(i * K)], row.draw_tokens, size_t(K) * sizeof(int32_t));
        std::memcpy(&chunk.draw_logprobs[size_t(i * K)], row.draw_logprobs, size_t(K) * sizeof(float));
      }
    }
    auto upload = [&](void* to, const void* from, size_t bytes, const char* what) {
      cuda::check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_), what, {{"n", n}});
    };
    upload(rows_d, host_rows.data(), size_t(n) * 4, "fused_head_loss (rows)");
    cuda::TokenLossChunk device_chunk;
    device_chunk.n = n;
    device_chunk.targets = reinterpret_cast<const int32_t*>(inputs_d);
    device_chunk.coef = reinterpret_cast<const float*>(inputs_d + column);
    device_chunk.old_logprobs = reinterpret_cast<const float*>(inputs_d + 2 * column);
    device_chunk.ref_logprobs = reinterpret_cast<const float*>(inputs_d + 3 * column);
    device_chunk.kl_weight = reinterpret_cast<const float*>(inputs_d + 4 * column);
    device_chunk.draw_tokens = reinterpret_cast<const int32_t*>(inputs_d + 5 * column);
    device_chunk.draw_logprobs = reinterpret_cast<const float*>(inputs_d + 5 * column + draws);
    upload(inputs_d, chunk.targets.data(), size_t(n) * 4, "fused_head_loss (targets)");
    upload(inputs_d + column, chunk.coef.data(), size_t(n) * 4, "fused_head_loss (coef)");
    upload(inputs_d + 2 * column, chunk.old_logprobs.data(), size_t(n) * 4, "fused_head_loss (old log-probs)");
    upload(inputs_d + 3 * column, chunk.ref_logprobs.data(), size_t(n) * 4, "fused_head_loss (reference log-probs)");
    upload(inputs_d + 4 * column, chunk.kl_weight.data(), size_t(n) * 4, "fused_head_loss (KL weights)");
    if (K > 0) {
      upload(inputs_d + 5 * column, chunk.draw_tokens.data(), size_t(n * K) * 4, "fused_head_loss (draw tokens)");
      upload(inputs_d + 5 * column + draws, chunk.draw_logprobs.data(), size_t(n * K) * 4, "fused_head_loss (draw log-probs)");
    }
    cuda::gather_rows(hc, h, rows_d, n, C, stream_);
    if (bf16) cuda::f32_to_bf16(hc, hc16, size_t(n * C), stream_);
    gemm_.run(logits, bf16 ? static_cast<const void*>(hc16) : hc, nullptr, head, n);
    cuda::token_loss_rows(logits, V, device_chunk, settings, results, stream_);
    if (bf16) cuda::f32_to_bf16(logits, logits16, size_t(n * V), stream_);
    backward_.run(dhc, dhead, bf16 ? static_cast<const void*>(logits16) : logits, bf16 ? static_cast<const void*>(hc16) : hc,
                  head.data, n, V, C, head.dtype);
    cuda::scatter_rows(dh, dhc, rows_d, n, C, stream_);
    cuda::check(cudaMemcpyAsync(host_results.data(), results, size_t(n) * sizeof(ops::TokenLossRow), cudaMemcpyDeviceToHost, stream_),
                "fused_head_loss (row results)", {{"n", n}});
    cuda::check(cudaStreamSynchronize(stream_), "fused_head_loss", {{"n", n}, {"V", V}, {"C", C}});
    for (int64_t i = 0; i < n; i++) add_token_loss_row(stats, host_results[size_t(i)], settings.policy_gradient);
  }
  return stats;
}

}  // namespace s3::train
