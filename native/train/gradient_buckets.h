// gradient_buckets.h: how a data-parallel rank sums its gradients with the others (train::Trainer
// all_reduce_gradients, or accumulate with a group): in buckets, one per decoder layer from the last
// to the first, then one for the rest (the embedding, the final norm, an untied LM head). Every rank
// sums the same buckets in the same order, so the group's collectives pair up whatever each rank
// computed. OverlappedGradientSum runs the buckets on a thread of its own: a layer's bucket starts as
// soon as the backward has finished that layer (the CPU) or queued it (CUDA: the sum waits on the
// device for an event recorded there, on a stream of its own), while the backward goes on with the
// layers below; the rest waits for finish().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/collective.h"
#include "model/qwen3_param_layout.h"

namespace s3::train {

class TrainerCompute;

struct GradientRange {
  size_t offset = 0, count = 0;
};

struct GradientBucket {
  int64_t layer = -1;  // the decoder layer, or −1 for the rest
  std::vector<GradientRange> ranges;
};

// The buckets in the order every rank sums them: layers L−1 … 0, then the rest.
std::vector<GradientBucket> gradient_buckets(const model::Qwen3ParamLayout& layout);

// Sums each bucket of `compute`'s gradients over `group`, in bucket order, on its own thread.
class OverlappedGradientSum {
 public:
  OverlappedGradientSum(Collective& group, TrainerCompute& compute, const model::Qwen3ParamLayout& layout);
  ~OverlappedGradientSum();  // joins the thread (finish() first, or the error is lost)
  OverlappedGradientSum(const OverlappedGradientSum&) = delete;
  OverlappedGradientSum& operator=(const OverlappedGradientSum&) = delete;

  // Layer `layer`'s gradients are final: its bucket may be summed now. Layers come last to first.
  void layer_done(int64_t layer);
  // Queues every bucket not yet queued, in order, waits for all, and rethrows the first failure.
  void finish();

 private:
  void run();
  Collective& group_;
  TrainerCompute& compute_;
  std::vector<GradientBucket> buckets_;
  size_t queued_ = 0;  // buckets [0, queued_) are released to the thread
  size_t done_ = 0;
  bool closing_ = false;
  std::exception_ptr error_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
};

}  // namespace s3::train
