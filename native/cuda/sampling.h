// sampling.h: the CUDA twin of cpu/sampling.h for the rows the engine samples and scores. A row's
// draws use the CPU's keys (seed, token index, draw index, sampling stream) and core/ops/sampling.h's
// chunked inverse CDF, so given the same logits they are the CPU's tokens (up to exp's last bit; see
// there). Pointers are device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace s3::cuda {

// How one row is drawn from (cpu::sample_forward's arguments).
struct SampleRow {
  float temperature;
  uint64_t seed;
  uint64_t token_index;
  int32_t num_draws;  // 1 + K, ≤ the width of the output
};

// What went wrong in a row: the CPU sampler's refusals, reported per row.
enum SampleStatus : int32_t { kSampleOk = 0, kSampleBadLogit = 1, kSampleAllNegativeInfinity = 2, kSampleBadTemperature = 3 };

// logits: [R × V] f32; rows: [R]; tokens, logprobs: [R × width], row r's first rows[r].num_draws
// written; status: [R].
void sample_rows(const float* logits, int64_t R, int64_t V, const SampleRow* rows, int64_t width, int32_t* tokens,
                 float* logprobs, int32_t* status, cudaStream_t stream);

// logprobs[r] = log softmax(logits[r])[targets[r]] (in double, as cpu::token_logprob); status as above.
void token_logprobs(const float* logits, int64_t R, int64_t V, const int32_t* targets, float* logprobs, int32_t* status,
                    cudaStream_t stream);

}  // namespace s3::cuda
