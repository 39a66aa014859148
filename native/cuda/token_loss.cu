// The fused loss's per-row kernel; see token_loss.h.
#include <cmath>

#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/token_loss.h"

namespace s3::cuda {
namespace {

constexpr int kThreads = 512;

__global__ void __launch_bounds__(kThreads) token_loss_kernel(float* logits, int64_t V, TokenLossChunk chunk,
                                                              ops::TokenLossSettings settings, ops::TokenLossRow* rows) {
  __shared__ float scratch_f[32];
  __shared__ double scratch_d[32];
  // Raw storage: a __shared__ variable may not have a constructor that does something.
  __shared__ alignas(ops::TokenLossRow) unsigned char row_storage[sizeof(ops::TokenLossRow)];
  ops::TokenLossRow& row_s = *reinterpret_cast<ops::TokenLossRow*>(row_storage);
  __shared__ double draw_coef_s[kTokenLossMaxDraws];
  const int64_t i = blockIdx.x;
  float* z = logits + i * V;
  const double temperature = settings.temperature;
  float max = -INFINITY;
  for (int64_t v = threadIdx.x; v < V; v += kThreads) max = fmaxf(max, z[v]);
  max = block_max(max, scratch_f, -INFINITY);
  double total = 0.0, weighted = 0.0;
  for (int64_t v = threadIdx.x; v < V; v += kThreads) {
    const double scaled = ops::token_loss_scaled(z[v], max, temperature);
    const double e = exp(scaled);
    total = __dadd_rn(total, e);
    weighted = __dadd_rn(weighted, __dmul_rn(e, scaled));
  }
  total = block_sum(total, scratch_d);
  weighted = block_sum(weighted, scratch_d);
  ops::TokenLossRowInput input;
  input.target = chunk.targets[i];
  input.coef = chunk.coef[i];
  if (settings.policy_gradient) input.old_logprob = chunk.old_logprobs[i];
  if (settings.kl) {
    input.ref_logprob = chunk.ref_logprobs[i];
    input.kl_weight = chunk.kl_weight[i];
  }
  if (settings.num_draws > 0) {
    input.draw_tokens = chunk.draw_tokens + i * settings.num_draws;
    input.draw_logprobs = chunk.draw_logprobs + i * settings.num_draws;
  }
  // The target's and the draws' log-probs are read before any thread overwrites z.
  if (threadIdx.x == 0) {
    row_s = ops::token_loss_row(settings, input, z, max, total, weighted, draw_coef_s);
    rows[i] = row_s;
  }
  __syncthreads();
  const ops::TokenLossRow row = row_s;
  const double inv = 1.0 / total;
  for (int64_t v = threadIdx.x; v < V; v += kThreads) {
    const double e = exp(ops::token_loss_scaled(z[v], max, temperature));
    z[v] = ops::token_loss_dlogit(row, e, inv, temperature);
  }
  __syncthreads();
  // The target's and the draws' own terms, in the CPU's order (a repeated token adds up alike).
  if (threadIdx.x == 0) {
    z[input.target] = __fadd_rn(z[input.target], float(row.g / temperature));
    const int64_t K = settings.num_draws > 0 && input.coef != 0.0 ? settings.num_draws : 0;
    for (int64_t k = 0; k < K; k++) {
      const int32_t u = input.draw_tokens[k];
      if (u >= 0) z[u] = __fadd_rn(z[u], float(draw_coef_s[k] / temperature));
    }
  }
}

}  // namespace

void token_loss_rows(float* logits, int64_t V, const TokenLossChunk& chunk, const ops::TokenLossSettings& settings,
                     ops::TokenLossRow* rows, cudaStream_t stream) {
  if (settings.num_draws > kTokenLossMaxDraws) {
    throw CudaError(describe("token_loss_rows", {{"num_draws", settings.num_draws}, {"max", kTokenLossMaxDraws}}) +
                    ": too many recorded draws per token");
  }
  if (chunk.n == 0) return;
  token_loss_kernel<<<unsigned(chunk.n), kThreads, 0, stream>>>(logits, V, chunk, settings, rows);
  check_launch("token_loss_rows", {{"n", chunk.n}, {"V", V}});
}

}  // namespace s3::cuda
