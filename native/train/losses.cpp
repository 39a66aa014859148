// losses.cpp: the implementation of train/losses.h (see the header for the contract and layouts).
#include "train/losses.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/cpu_features.h"
#include "core/ops/token_loss.h"
#include "cpu/matmul_backward.h"
#include "cpu/matmul_nn.h"
#include "cpu/matmul_nn_bf16.h"
#include "cpu/linear_bf16.h"
#include "cpu/loss_row.h"

namespace s3::train {
namespace {

// Vocabulary rows per block of the logits product: a block's transposed logits [kVocabBlock × n]
// stay in the thread's cache between the product and the transposition.
constexpr int64_t kVocabBlock = 256;

// logits[n × V] = hc[n × C] · headᵀ through the matmul_nn kernels, which want a row-major B: each
// fixed block of vocabulary rows is computed transposed, head[block × C] · hcᵀ[C × n], into the
// thread's scratch [kVocabBlock × n] and transposed into its columns of logits. hc_t [C × n] is
// scratch for hcᵀ. Each logit is one FMA chain in increasing c, whatever the thread count.
void head_logits(float* logits, float* hc_t, std::vector<float>& scratch, const float* hc, const float* head, int64_t n,
                 int64_t C, int64_t V, ThreadPool& pool) {
  for (int64_t i = 0; i < n; i++) {
    for (int64_t c = 0; c < C; c++) hc_t[c * n + i] = hc[i * C + c];
  }
  scratch.resize(pool.num_threads() * size_t(kVocabBlock * n));
  const int64_t blocks = (V + kVocabBlock - 1) / kVocabBlock;
  pool.parallel_for(size_t(blocks), [&](size_t begin, size_t end, size_t thread) {
    float* block_t = scratch.data() + thread * size_t(kVocabBlock * n);
    for (size_t b = begin; b < end; b++) {
      const int64_t v0 = int64_t(b) * kVocabBlock, rows = std::min(kVocabBlock, V - v0);
      cpu::matmul_nn_serial(cpu::matmul_nn_args(block_t, head + v0 * C, hc_t, rows, n, C, false));
      for (int64_t i = 0; i < n; i++) {
        for (int64_t v = 0; v < rows; v++) logits[i * V + v0 + v] = block_t[v * n + i];
      }
    }
  });
}

// The largest of z[0, V) (−inf for V = 0; NaNs skipped, as `z > max ? z : max` skips them), in
// sixteen interleaved running maxima so the compiler vectorizes them where one would wait on each
// compare. Each maximum keeps the value the serial loop would pick, so the result is the serial
// loop's whatever the order (up to which zero's sign wins a tie between +0 and −0).
float row_max(const float* z, int64_t V) {
  constexpr int kLanes = 16;
  float m[kLanes];
  for (float& x : m) x = -INFINITY;
  int64_t v = 0;
  for (; v + kLanes <= V; v += kLanes) {
    for (int j = 0; j < kLanes; j++) m[j] = z[v + j] > m[j] ? z[v + j] : m[j];
  }
  for (int j = 0; v < V; v++, j++) m[j] = z[v] > m[j] ? z[v] : m[j];
  float max = -INFINITY;
  for (const float x : m) max = x > max ? x : max;
  return max;
}

}  // namespace

RatioQuantiles ratio_quantiles(std::vector<double> x) {
  RatioQuantiles q;
  if (x.empty()) return q;
  // A strict weak order with NaN after every number (std::sort needs one).
  std::sort(x.begin(), x.end(), [](double a, double b) { return std::isnan(a) ? false : std::isnan(b) || a < b; });
  const size_t n = x.size();
  const auto at = [&](double p) {
    const double h = double(n - 1) * p;
    const size_t lo = size_t(std::floor(h));
    if (lo + 1 >= n) return x[n - 1];
    const double frac = h - double(lo);
    return frac == 0.0 ? x[lo] : x[lo] + frac * (x[lo + 1] - x[lo]);
  };
  q.min = x.front();
  q.p01 = at(0.01);
  q.p10 = at(0.1);
  q.p50 = at(0.5);
  q.p90 = at(0.9);
  q.p99 = at(0.99);
  q.max = x.back();
  return q;
}

std::vector<int64_t> loss_rows(int64_t T, int64_t V, const LossInputs& in, const LossOptions& options) {
  if (options.kind == LossKind::PolicyGradient && in.old_logprobs == nullptr) {
    throw std::invalid_argument("policy-gradient loss needs the sampler's old log-probs");
  }
  const bool centering = options.kind == LossKind::PolicyGradient && in.num_draws > 0;
  if (centering && (in.draw_tokens == nullptr || in.draw_logprobs == nullptr)) {
    throw std::invalid_argument("score centering needs the draws' tokens and sampler log-probs");
  }
  if (!(options.temperature > 0.0) || !std::isfinite(options.temperature)) {
    throw std::invalid_argument("loss temperature must be a finite number > 0, got " + std::to_string(options.temperature));
  }
  const bool kl = options.kind == LossKind::PolicyGradient && options.kl_coef > 0.0f;
  if (kl && (in.ref_logprobs == nullptr || in.kl_weight == nullptr)) {
    throw std::invalid_argument("the KL penalty needs the reference log-probs and the KL weights");
  }
  std::vector<int64_t> rows;
  for (int64_t t = 0; t < T; t++) {
    if (in.targets[t] >= V) throw std::invalid_argument("loss target out of vocabulary");
    for (int64_t k = 0; centering && k < in.num_draws; k++) {
      if (in.draw_tokens[t * in.num_draws + k] >= V) throw std::invalid_argument("draw token out of vocabulary");
    }
    if (in.targets[t] >= 0 && (in.coef[t] != 0.0f || (kl && in.kl_weight[t] > 0.0f))) rows.push_back(t);
  }
  return rows;
}

ops::TokenLossSettings token_loss_settings(const LossInputs& in, const LossOptions& options) {
  ops::TokenLossSettings s;
  s.policy_gradient = options.kind == LossKind::PolicyGradient;
  s.kl = s.policy_gradient && options.kl_coef > 0.0f;
  s.num_draws = s.policy_gradient ? in.num_draws : 0;
  s.icepop_low = options.icepop_low;
  s.icepop_high = options.icepop_high;
  s.temperature = s.policy_gradient ? options.temperature : 1.0;
  s.kl_coef = double(options.kl_coef);
  return s;
}

ops::TokenLossRowInput token_loss_row_input(const LossInputs& in, const ops::TokenLossSettings& s, int64_t t) {
  ops::TokenLossRowInput row;
  row.target = in.targets[t];
  row.coef = in.coef[t];
  if (s.policy_gradient) row.old_logprob = in.old_logprobs[t];
  if (s.kl) {
    row.ref_logprob = in.ref_logprobs[t];
    row.kl_weight = in.kl_weight[t];
  }
  if (s.num_draws > 0) {
    row.draw_tokens = in.draw_tokens + t * s.num_draws;
    row.draw_logprobs = in.draw_logprobs + t * s.num_draws;
  }
  return row;
}

void add_token_loss_row(LossStats& stats, const ops::TokenLossRow& row, bool policy_gradient) {
  LossStats s;
  s.loss = row.loss;
  s.tokens = row.tokens;
  s.ratio_sum = row.ratio;
  s.masked = row.masked;
  s.entropy_sum = row.entropy;
  s.logprob_sum = row.logprob;
  s.centering = row.centering;
  s.draw_weight_sum = row.draw_weight_sum;
  s.kl_sum = row.kl;
  s.kl_tokens = row.kl_tokens;
  stats.add(s);
  if (policy_gradient && row.tokens > 0) stats.ratios.push_back(row.ratio);
}

LossStats fused_head_loss(float* dh, float* dhead, const float* h, const float* head, int64_t T, int64_t C, int64_t V,
                          const LossInputs& in, const LossOptions& options, ThreadPool& pool, HeadLossScratch* scratch) {
  HeadLossScratch local;
  HeadLossScratch& b = scratch != nullptr ? *scratch : local;
  const std::vector<int64_t> rows = loss_rows(T, V, in, options);
  const ops::TokenLossSettings settings = token_loss_settings(in, options);
  std::memset(dh, 0, size_t(T * C) * sizeof(float));
  LossStats stats;
  // Rows per chunk, no more than there are (the buffers below hold one chunk's R × V logits).
  const int64_t R = std::max<int64_t>(1, std::min<int64_t>(options.chunk_rows > 0 ? options.chunk_rows : 256, int64_t(rows.size())));
  std::vector<float>&hc = b.hc, &hc_t = b.hc_t, &logits = b.logits, &dhc = b.dhc, &logits_scratch = b.logits_scratch;
  hc.resize(size_t(R * C));
  hc_t.resize(size_t(R * C));
  logits.resize(size_t(R * V));
  dhc.resize(size_t(R * C));
  // bf16 with BF16 kernels (avx512bf16, amx): every chunk's logits = hc · headᵀ on headᵀ packed once
  // per version (cpu/packed_weights.h: the bits of the level's forward kernel on packed weights).
  // Levels below: the head rounded to BF16 rows once per call for every chunk's logits
  // (cpu/linear_bf16.h: no transposition, and V × C roundings instead of one set per chunk).
  const bool bf16 = options.precision == MatmulPrecision::Bf16;
  const cpu::MatmulNnBf16Kernels* packed_kernels = bf16 ? cpu::packed_weight_kernels() : nullptr;
  b.head_packed.use_version(head, b.head_version);
  const cpu::MatmulNnBf16PackedB* head_t =
      packed_kernels != nullptr ? &b.head_packed.packed(head, V, C, true, *packed_kernels, pool) : nullptr;
  std::vector<uint16_t>& head_bf16 = b.head_bf16;
  head_bf16.resize(bf16 && head_t == nullptr ? size_t(V * C) : 0);
  std::vector<float>& rounded_input = b.rounded_input;
  if (bf16 && head_t == nullptr) cpu::round_to_bf16(head_bf16.data(), head, V * C, pool);
  // bf16 with BF16 kernels: the head also packed as the B of every chunk's dh = dlogits · head.
  const cpu::MatmulNnBf16Kernels* bf16_kernels = bf16 ? cpu::matmul_nn_bf16_kernels_for(cpu_info().level) : nullptr;
  const cpu::MatmulNnBf16PackedB* head_as_b =
      bf16_kernels != nullptr ? &b.head_packed.packed(head, V, C, false, *bf16_kernels, pool) : nullptr;
  std::vector<ops::TokenLossRow> row_results(static_cast<size_t>(R));
  const double temperature = settings.temperature;
  const cpu::LossRowKernels& row_kernels = cpu::loss_row_kernels();
  // exp(z_v − max) of the row each thread is on, computed once for the sums and the gradient; and
  // the row's draw coefficients.
  std::vector<std::vector<double>>& row_exp = b.row_exp;
  std::vector<std::vector<double>>& row_draw_coef = b.row_draw_coef;
  row_exp.resize(pool.num_threads());
  row_draw_coef.resize(pool.num_threads());
  for (auto& e : row_exp) e.resize(size_t(V));
  for (auto& d : row_draw_coef) d.resize(size_t(settings.num_draws));
  for (size_t r0 = 0; r0 < rows.size(); r0 += size_t(R)) {
    const int64_t n = int64_t(std::min(rows.size() - r0, size_t(R)));
    for (int64_t i = 0; i < n; i++) std::memcpy(&hc[size_t(i * C)], h + rows[r0 + size_t(i)] * C, size_t(C) * sizeof(float));
    if (head_t != nullptr) {
      cpu::matmul_nn_bf16(cpu::matmul_nn_args(logits.data(), hc.data(), nullptr, n, V, C, false), *head_t, pool);
    } else if (bf16) {
      cpu::linear_bf16(logits.data(), hc.data(), head_bf16.data(), n, V, C, rounded_input, pool);
    } else {
      head_logits(logits.data(), hc_t.data(), logits_scratch, hc.data(), head, n, C, V, pool);
    }
    // logits → dlogits in place, row by row.
    pool.parallel_for(size_t(n), [&](size_t begin, size_t end, size_t thread) {
      double* e = row_exp[thread].data();
      double* draw_coef = row_draw_coef[thread].data();
      for (size_t i = begin; i < end; i++) {
        const int64_t t = rows[r0 + i];
        float* z = &logits[i * size_t(V)];
        const float max = row_max(z, V);
        double total = 0.0, weighted = 0.0;
        row_kernels.exp_sums(e, z, V, max, temperature, &total, &weighted);
        const ops::TokenLossRowInput input = token_loss_row_input(in, settings, t);
        // The log-probs of the target and the draws are read before z is overwritten with the gradient.
        const ops::TokenLossRow row = ops::token_loss_row(settings, input, z, max, total, weighted, draw_coef);
        row_results[i] = row;
        // ∂L/∂z_v = (g · (1[v = target] − p_v) + Σ_k c_k · (1[v = u_k] − p_v)) / T
        row_kernels.dlogits(z, e, V, -(row.g + row.draw_total), 1.0 / total, temperature);
        z[input.target] += float(row.g / temperature);
        const int64_t K = settings.num_draws > 0 && input.coef != 0.0 ? settings.num_draws : 0;
        for (int64_t k = 0; k < K; k++) {
          const int32_t u = input.draw_tokens[k];
          if (u >= 0) z[u] += float(draw_coef[k] / temperature);
        }
      }
    });
    for (int64_t i = 0; i < n; i++) add_token_loss_row(stats, row_results[size_t(i)], settings.policy_gradient);
    if (head_as_b != nullptr) {  // matmul_backward's two products, dh's on the packed head
      cpu::matmul_backward(dhc.data(), dhead, logits.data(), hc.data(), n, V, C, pool, *head_as_b);
    } else {
      cpu::matmul_backward(dhc.data(), dhead, logits.data(), hc.data(), head, n, V, C, pool, options.precision);
    }
    for (int64_t i = 0; i < n; i++) std::memcpy(dh + rows[r0 + size_t(i)] * C, &dhc[size_t(i * C)], size_t(C) * sizeof(float));
  }
  return stats;
}

}  // namespace s3::train
