// ops/sampling.h: the inverse-CDF step of temperature sampling, shared by cpu/sampling and
// cuda/sampling so both draw the same token from the same logits. The vocabulary is cut into
// chunks of kSampleChunk ids; the cumulative weight of id j in chunk c is P_c + r_j, where
// r_j = Σ of the chunk's weights up to j (summed in id order, double) and P_c = Σ of the earlier
// chunks' totals (summed in chunk order). A GPU sums the chunks in parallel and gets the very
// numbers the CPU gets; the CUDA and glibc exp may still differ in a double's last bit, which moves
// a draw only when u·total lands within that of a boundary.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace s3::ops {

constexpr int64_t kSampleChunk = 1024;

S3_HOST_DEVICE inline int64_t sample_chunks(int64_t V) { return (V + kSampleChunk - 1) / kSampleChunk; }

// e^((logit − max) / temperature) in double: id j's weight in the row.
S3_HOST_DEVICE inline double sample_weight(float logit, float max, float temperature) {
  return exp((double(logit) - double(max)) / double(temperature));
}

// The chunk holding the draw: the first c < n with prefix[c + 1] > target, where prefix[0] = 0 and
// prefix[c + 1] = prefix[c] + (chunk c's total); n − 1 when none is (target at the very top).
S3_HOST_DEVICE inline int64_t sample_find_chunk(const double* prefix, int64_t n, double target) {
  for (int64_t c = 0; c < n; c++) {
    if (prefix[c + 1] > target) return c;
  }
  return n - 1;
}

// Within the chunk [begin, end) whose earlier chunks sum to `base`: the first id j with
// base + r_j > target (end − 1 when none is).
S3_HOST_DEVICE inline int64_t sample_find_in_chunk(const float* logits, int64_t begin, int64_t end, double base,
                                                   double target, float max, float temperature) {
  double running = 0.0;
  for (int64_t j = begin; j < end; j++) {
    running += sample_weight(logits[j], max, temperature);
    if (base + running > target) return j;
  }
  return end - 1;
}

// log-prob of id j's draw under softmax(logits / temperature): z_j − log(total).
S3_HOST_DEVICE inline float sample_logprob(float logit, float max, float temperature, double total) {
  return float((double(logit) - double(max)) / double(temperature) - log(total));
}

}  // namespace s3::ops
