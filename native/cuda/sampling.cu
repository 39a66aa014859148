// Sampling and log-probs of logits rows on the device; see sampling.h.
#include <cmath>

#include "core/ops/sampling.h"
#include "core/philox.h"
#include "cuda/check.h"
#include "cuda/reduce.cuh"
#include "cuda/sampling.h"

namespace s3::cuda {
namespace {

constexpr int kThreads = 256;
constexpr uint32_t kSamplingStream = 0;  // cpu::kSamplingStream

// The row's maximum and whether it is one the CPU sampler accepts (no NaN or +inf, not all −inf).
// Every thread gets both.
__device__ inline int32_t row_max(const float* row, int64_t V, float* max_out, float* scratch_f, int* scratch_i) {
  float max = -INFINITY;
  int bad = 0;
  for (int64_t j = threadIdx.x; j < V; j += kThreads) {
    const float l = row[j];
    bad |= (isnan(l) || l == INFINITY) ? 1 : 0;
    max = fmaxf(max, l);
  }
  max = block_max(max, scratch_f, -INFINITY);
  bad = block_max(bad, scratch_i, 0);
  *max_out = max;
  if (bad) return kSampleBadLogit;
  if (max == -INFINITY) return kSampleAllNegativeInfinity;
  return kSampleOk;
}

__global__ void sample_kernel(const float* logits, int64_t V, const SampleRow* rows, int64_t width, int32_t* tokens,
                              float* logprobs, int32_t* status) {
  extern __shared__ double prefix[];  // [chunks + 1]
  __shared__ float scratch_f[32];
  __shared__ int scratch_i[32];
  __shared__ int64_t scratch_l[32];
  const int64_t r = blockIdx.x;
  const float* row = logits + r * V;
  const SampleRow spec = rows[r];
  float max;
  int32_t state = row_max(row, V, &max, scratch_f, scratch_i);
  if (state == kSampleOk && !(spec.temperature >= 0.0f)) state = kSampleBadTemperature;
  if (state != kSampleOk) {
    if (threadIdx.x == 0) status[r] = state;
    return;
  }
  if (spec.temperature == 0.0f) {
    // Greedy: the first index of the maximum, log-prob 0.
    int64_t first = V;
    for (int64_t j = threadIdx.x; j < V; j += kThreads) {
      if (row[j] == max) {
        first = j;
        break;
      }
    }
    first = block_min(first, scratch_l, int64_t(V));
    for (int i = threadIdx.x; i < spec.num_draws; i += kThreads) {
      tokens[r * width + i] = int32_t(first);
      logprobs[r * width + i] = 0.0f;
    }
    if (threadIdx.x == 0) status[r] = kSampleOk;
    return;
  }
  const int64_t chunks = ops::sample_chunks(V);
  for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
    double running = 0.0;
    const int64_t end = min(V, (c + 1) * ops::kSampleChunk);
    for (int64_t j = c * ops::kSampleChunk; j < end; j++) running += ops::sample_weight(row[j], max, spec.temperature);
    prefix[c + 1] = running;  // the chunk's total, turned into the prefix below
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    prefix[0] = 0.0;
    for (int64_t c = 0; c < chunks; c++) prefix[c + 1] = prefix[c] + prefix[c + 1];
  }
  __syncthreads();
  const double total = prefix[chunks];
  for (int i = threadIdx.x; i < spec.num_draws; i += kThreads) {
    const double target = double(philox_uniform(spec.seed, spec.token_index, uint32_t(i), kSamplingStream)) * total;
    const int64_t c = ops::sample_find_chunk(prefix, chunks, target);
    const int64_t token = ops::sample_find_in_chunk(row, c * ops::kSampleChunk, min(V, (c + 1) * ops::kSampleChunk),
                                                    prefix[c], target, max, spec.temperature);
    tokens[r * width + i] = int32_t(token);
    logprobs[r * width + i] = ops::sample_logprob(row[token], max, spec.temperature, total);
  }
  if (threadIdx.x == 0) status[r] = kSampleOk;
}

__global__ void logprob_kernel(const float* logits, int64_t V, const int32_t* targets, float* logprobs, int32_t* status) {
  __shared__ float scratch_f[32];
  __shared__ int scratch_i[32];
  __shared__ double scratch_d[32];
  const int64_t r = blockIdx.x;
  const float* row = logits + r * V;
  float max;
  const int32_t state = row_max(row, V, &max, scratch_f, scratch_i);
  if (state != kSampleOk) {
    if (threadIdx.x == 0) status[r] = state;
    return;
  }
  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < V; j += kThreads) sum += exp(double(row[j]) - double(max));
  sum = block_sum(sum, scratch_d);
  if (threadIdx.x == 0) {
    logprobs[r] = float(double(row[targets[r]]) - double(max) - log(sum));
    status[r] = kSampleOk;
  }
}

}  // namespace

void sample_rows(const float* logits, int64_t R, int64_t V, const SampleRow* rows, int64_t width, int32_t* tokens,
                 float* logprobs, int32_t* status, cudaStream_t stream) {
  if (R == 0) return;
  const size_t shared = size_t(ops::sample_chunks(V) + 1) * sizeof(double);
  sample_kernel<<<unsigned(R), kThreads, shared, stream>>>(logits, V, rows, width, tokens, logprobs, status);
  check_launch("sample_rows", {{"R", R}, {"V", V}, {"width", width}});
}

void token_logprobs(const float* logits, int64_t R, int64_t V, const int32_t* targets, float* logprobs, int32_t* status,
                    cudaStream_t stream) {
  if (R == 0) return;
  logprob_kernel<<<unsigned(R), kThreads, 0, stream>>>(logits, V, targets, logprobs, status);
  check_launch("token_logprobs", {{"R", R}, {"V", V}});
}

}  // namespace s3::cuda
