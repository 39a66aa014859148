// ops/online_softmax.h: merging partial softmax states (flash attention's online softmax, split-KV
// decoding's log-sum-exp merge), shared by the CUDA attention kernels and the CPU tests that check
// the merge rule. A state over a set of keys is (m, l, o): the largest scaled score m, l = Σ e^(s−m)
// and o = Σ e^(s−m)·v (unnormalized); a state with no keys is (−inf, 0, 0).
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace s3::ops {

// The factors that bring two states to their common maximum: the merged state is
// (max(m_a, m_b), l_a·f_a + l_b·f_b, o_a·f_a + o_b·f_b). An empty side gets factor 0.
struct SoftmaxMergeFactors {
  float m;    // the merged maximum
  float f_a;  // e^(m_a − m)
  float f_b;  // e^(m_b − m)
};

S3_HOST_DEVICE inline SoftmaxMergeFactors softmax_merge_factors(float m_a, float m_b) {
  const float m = m_a > m_b ? m_a : m_b;
  if (m == -INFINITY) return {m, 0.0f, 0.0f};
  return {m, m_a == -INFINITY ? 0.0f : expf(m_a - m), m_b == -INFINITY ? 0.0f : expf(m_b - m)};
}

}  // namespace s3::ops
