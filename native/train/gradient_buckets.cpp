// gradient_buckets.cpp: the implementation of train/gradient_buckets.h.
#include "train/gradient_buckets.h"

#include <stdexcept>

#include "train/trainer_compute.h"

namespace s3::train {

std::vector<GradientBucket> gradient_buckets(const model::Qwen3ParamLayout& layout) {
  std::vector<GradientBucket> buckets;
  const size_t L = layout.layers.size();
  // A layer's parameters are contiguous, from its input_layernorm to the next layer's (or the final norm).
  auto layer_end = [&](size_t l) { return l + 1 < L ? layout.layers[l + 1].input_layernorm : layout.norm; };
  for (size_t l = L; l-- > 0;) {
    const size_t begin = layout.layers[l].input_layernorm;
    buckets.push_back({int64_t(l), {{begin, layer_end(l) - begin}}});
  }
  GradientBucket rest{-1, {}};
  const size_t first_layer = L > 0 ? layout.layers[0].input_layernorm : layout.norm;
  rest.ranges.push_back({layout.embed, first_layer - layout.embed});
  rest.ranges.push_back({layout.norm, layout.total - layout.norm});
  buckets.push_back(rest);
  return buckets;
}

OverlappedGradientSum::OverlappedGradientSum(Collective& group, TrainerCompute& compute, const model::Qwen3ParamLayout& layout)
    : group_(group), compute_(compute), buckets_(gradient_buckets(layout)), thread_([this] { run(); }) {}

OverlappedGradientSum::~OverlappedGradientSum() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OverlappedGradientSum::layer_done(int64_t layer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queued_ >= buckets_.size() || buckets_[queued_].layer != layer) {
      throw std::logic_error("OverlappedGradientSum: layer " + std::to_string(layer) + " finished out of order");
    }
    queued_ += 1;
  }
  changed_.notify_all();
}

void OverlappedGradientSum::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  queued_ = buckets_.size();
  changed_.notify_all();
  changed_.wait(lock, [&] { return done_ == buckets_.size() || error_ != nullptr; });
  if (error_ != nullptr) std::rethrow_exception(error_);
}

void OverlappedGradientSum::run() {
  for (size_t next = 0; next < buckets_.size(); next++) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return next < queued_ || closing_; });
      if (next >= queued_) return;  // closed before everything was queued
    }
    try {
      for (const GradientRange& range : buckets_[next].ranges) compute_.all_reduce_gradient_range(group_, range.offset, range.count);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
      return;  // the group has failed: every later bucket would fail too
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = next + 1;
    }
    changed_.notify_all();
  }
}

}  // namespace s3::train
