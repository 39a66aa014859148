// weight_link.h: one weights version sent from a trainer to an inference engine over a two-rank
// Collective (core/collective.h), the sender rank 0: `swarm train --inference-servers …
// --weight-transfer tcp`, where the servers need no filesystem shared with the trainer. What travels
// is what the version's checkpoint folder would hold: the config.json text and every tensor as
// stored (a trainer's f32 parameters, or a checkpoint's bf16 or FP8 matrices with their scales), so
// the engine ends with exactly the weights Engine.loadWeights would give it from that folder.
//
// The exchange: a fixed header (sizes, the model's shape); every rank says whether it goes on, so an
// engine of another shape refuses before anything large moves and the link stays usable; the
// config text and the tensor table; the tensor bytes in buckets of at most kWeightBucketBytes; and a
// last word from every rank on whether the weights could be built, so the sender knows too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/dtype.h"
#include "core/huge_pages.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"

namespace s3::model {

// A transfer the receiver refused or could not use; the link stays usable.
class WeightLinkRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SnapshotTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;  // where its bytes lie in the payload
};

// One weights version as its checkpoint would hold it, kept by the sender so a server that restarts
// can be given that version again after the trainer has moved on.
struct WeightsSnapshot {
  std::string config_json;
  Qwen3Config config;
  std::vector<SnapshotTensor> tensors;
  std::shared_ptr<const ZeroedPages> payload;  // fresh pages (huge where the kernel grants them)
};

// f32 parameters in qwen3_param_layout.h's order (a trainer's), named as Trainer::save names them.
WeightsSnapshot snapshot_of_params(const std::string& config_json, const float* params);
// The checkpoint folder's config.json and tensors as stored (norms widened to f32, as loading does).
WeightsSnapshot snapshot_of_checkpoint(const std::string& directory);

constexpr size_t kWeightBucketBytes = size_t(64) << 20;

struct WeightTransfer {
  size_t bytes = 0;    // tensor bytes sent or received
  double seconds = 0;  // the whole exchange
};

// Rank 0 of `link`: sends `snapshot` to every other rank. Every rank must use the same bucket size.
WeightTransfer send_weights(Collective& link, const WeightsSnapshot& snapshot, size_t bucket_bytes = kWeightBucketBytes);

struct ReceivedWeights {
  // Views into the received bytes (no second copy), which live as long as the weights do.
  std::shared_ptr<const Qwen3Weights> weights;
  WeightTransfer transfer;
};

// A rank other than 0: receives the sender's weights, refusing (WeightLinkRefused, on every rank) a
// model whose shape differs from `engine_config`'s or tensors that do not make a Qwen3 model.
ReceivedWeights receive_weights(Collective& link, const Qwen3Config& engine_config, size_t bucket_bytes = kWeightBucketBytes);

}  // namespace s3::model
