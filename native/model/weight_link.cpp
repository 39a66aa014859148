// weight_link.cpp: the implementation of model/weight_link.h.
#include "model/weight_link.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/mapped_file.h"
#include "model/qwen3_param_layout.h"
#include "model/weight_rebuild.h"

namespace s3::model {
namespace {

constexpr char kMagic[8] = {'s', '3', 'w', 'l', 'i', 'n', 'k', '2'};
constexpr uint64_t kMaxConfigBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxTableBytes = uint64_t(64) << 20;

// What the sender announces first; fixed size, so every rank receives it whole.
struct Header {
  char magic[8];
  uint64_t config_bytes, table_bytes, payload_bytes;
  uint64_t shape_bytes;
  char shape[216];
};
static_assert(sizeof(Header) == 256, "the header is 256 bytes on every build");

std::string header_shape(const Header& h) { return std::string(h.shape, size_t(std::min<uint64_t>(h.shape_bytes, sizeof(h.shape)))); }

// Every rank says whether it goes on (0) or refuses (1); all see the sum.
bool every_rank_accepts(Collective& link, bool accept) {
  float refusals = accept ? 0.0f : 1.0f;
  link.all_reduce_sum(&refusals, 1);
  return refusals == 0.0f;
}

void broadcast_buckets(Collective& link, void* data, size_t bytes, size_t bucket_bytes) {
  if (bucket_bytes == 0) throw std::invalid_argument("weight link: buckets of 0 bytes");
  auto* p = static_cast<uint8_t*>(data);
  for (size_t at = 0; at < bytes; at += bucket_bytes) link.broadcast(p + at, std::min(bucket_bytes, bytes - at), 0);
}

// The table: per tensor, u32 name length, the name, u32 dtype, u32 rank, i64 dims, u64 offset, u64 bytes.
template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

std::vector<uint8_t> encode_table(const std::vector<SnapshotTensor>& tensors) {
  std::vector<uint8_t> out;
  put<uint32_t>(out, uint32_t(tensors.size()));
  for (const SnapshotTensor& t : tensors) {
    put<uint32_t>(out, uint32_t(t.name.size()));
    out.insert(out.end(), t.name.begin(), t.name.end());
    put<uint32_t>(out, uint32_t(t.dtype));
    put<uint32_t>(out, uint32_t(t.shape.size()));
    for (int64_t d : t.shape) put<int64_t>(out, d);
    put<uint64_t>(out, t.offset);
    put<uint64_t>(out, t.bytes);
  }
  return out;
}

class TableReader {
 public:
  TableReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T get() {
    if (size_ - at_ < sizeof(T)) throw WeightLinkRefused("the sender's tensor table ends early");
    T value;
    std::memcpy(&value, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::string text(size_t n) {
    if (size_ - at_ < n) throw WeightLinkRefused("the sender's tensor table ends early");
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

std::vector<NamedTensor> decode_table(const uint8_t* table, size_t table_bytes, const ZeroedPages& payload) {
  TableReader read(table, table_bytes);
  const uint32_t count = read.get<uint32_t>();
  std::vector<NamedTensor> tensors;
  for (uint32_t i = 0; i < count; i++) {
    NamedTensor t;
    t.name = read.text(read.get<uint32_t>());
    const uint32_t dtype = read.get<uint32_t>();
    if (dtype > uint32_t(DType::BOOL)) throw WeightLinkRefused("tensor " + t.name + ": unknown dtype code " + std::to_string(dtype));
    t.dtype = DType(dtype);
    const uint32_t rank = read.get<uint32_t>();
    if (rank > 8) throw WeightLinkRefused("tensor " + t.name + ": " + std::to_string(rank) + " dimensions");
    uint64_t numel = 1;
    for (uint32_t d = 0; d < rank; d++) {
      const int64_t dim = read.get<int64_t>();
      if (dim < 0 || (dim > 0 && numel > (uint64_t(1) << 48) / uint64_t(dim))) throw WeightLinkRefused("tensor " + t.name + ": bad dimension");
      numel *= uint64_t(dim);
      t.shape.push_back(dim);
    }
    const uint64_t offset = read.get<uint64_t>(), bytes = read.get<uint64_t>();
    if (bytes != numel * dtype_size(t.dtype) || offset > payload.size() || bytes > payload.size() - offset ||
        offset % dtype_size(t.dtype) != 0) {
      throw WeightLinkRefused("tensor " + t.name + ": its bytes do not fit its shape or the payload");
    }
    t.data = payload.data() + offset;
    tensors.push_back(std::move(t));
  }
  return tensors;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A tensor to copy into the payload.
struct TensorSource {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t bytes;
};

// Lays the tensors out one after another (each at a 64-byte boundary) in fresh pages and copies them in.
void fill_snapshot(WeightsSnapshot& s, const std::vector<TensorSource>& sources) {
  uint64_t end = 0;
  for (const TensorSource& t : sources) {
    const uint64_t offset = (end + 63) / 64 * 64;
    s.tensors.push_back({t.name, t.dtype, t.shape, offset, t.bytes});
    end = offset + t.bytes;
  }
  auto payload = std::make_shared<ZeroedPages>(size_t(end));
  for (size_t i = 0; i < sources.size(); i++) std::memcpy(payload->data() + s.tensors[i].offset, sources[i].data, sources[i].bytes);
  s.payload = std::move(payload);
}

}  // namespace

WeightsSnapshot snapshot_of_params(const std::string& config_json, const float* params) {
  WeightsSnapshot s;
  s.config_json = config_json;
  s.config = parse_qwen3_config(config_json, "the trainer's config.json");
  const Qwen3ParamLayout layout = Qwen3ParamLayout::make(s.config);
  std::vector<TensorSource> sources;
  for (const auto& e : layout.entries) {
    size_t numel = 1;
    for (int64_t d : e.shape) numel *= size_t(d);
    sources.push_back({e.name, DType::F32, e.shape, params + e.offset, numel * sizeof(float)});
  }
  fill_snapshot(s, sources);
  return s;
}

WeightsSnapshot snapshot_of_checkpoint(const std::string& directory) {
  const Qwen3Weights weights = Qwen3Weights::load(directory);
  WeightsSnapshot s;
  const MappedFile config_file = MappedFile::open(directory + "/config.json");
  s.config_json.assign(reinterpret_cast<const char*>(config_file.data()), config_file.size());
  s.config = weights.config();
  WeightRebuild stored;
  stored.matrix = [](std::vector<RebuiltTensor>& out, const std::string& name, const cpu::MatrixView& w, MatrixRole) {
    add_stored_matrix(out, name, w);
  };
  const std::vector<RebuiltTensor> tensors = rebuild_tensors(weights, stored);
  std::vector<TensorSource> sources;
  for (const RebuiltTensor& t : tensors) sources.push_back({t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
  fill_snapshot(s, sources);
  return s;
}

WeightTransfer send_weights(Collective& link, const WeightsSnapshot& snapshot, size_t bucket_bytes) {
  if (link.rank() != 0) throw std::invalid_argument("send_weights: the sender is rank 0 of the link, not rank " + std::to_string(link.rank()));
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> blob(snapshot.config_json.begin(), snapshot.config_json.end());
  const std::vector<uint8_t> table = encode_table(snapshot.tensors);
  blob.insert(blob.end(), table.begin(), table.end());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.config_bytes = snapshot.config_json.size();
  h.table_bytes = table.size();
  h.payload_bytes = snapshot.payload->size();
  const std::string shape = qwen3_shape_text(snapshot.config);
  h.shape_bytes = std::min(shape.size(), sizeof(h.shape));
  std::memcpy(h.shape, shape.data(), size_t(h.shape_bytes));
  link.broadcast(&h, sizeof(h), 0);
  if (!every_rank_accepts(link, true)) {
    throw WeightLinkRefused("the receiver refused the weights before they were sent: its model is not " + shape);
  }
  link.broadcast(blob.data(), blob.size(), 0);
  broadcast_buckets(link, const_cast<uint8_t*>(snapshot.payload->data()), snapshot.payload->size(), bucket_bytes);  // only read on rank 0
  if (!every_rank_accepts(link, true)) throw WeightLinkRefused("the receiver could not make a model of the weights sent (its error says why)");
  return {snapshot.payload->size(), seconds_since(start)};
}

ReceivedWeights receive_weights(Collective& link, const Qwen3Config& engine_config, size_t bucket_bytes) {
  if (link.rank() == 0) throw std::invalid_argument("receive_weights: rank 0 of the link is the sender");
  const auto start = std::chrono::steady_clock::now();
  Header h{};
  link.broadcast(&h, sizeof(h), 0);
  const std::string want = qwen3_shape_text(engine_config);
  std::string refusal;
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) {
    refusal = "the sender's header is not an s3 weight link's (another program, or another s3 version, on the link)";
  } else if (h.config_bytes > kMaxConfigBytes || h.table_bytes > kMaxTableBytes) {
    refusal = "the sender's config or tensor table is implausibly large";
  } else if (header_shape(h) != want) {
    refusal = "the sender's model is " + header_shape(h) + "; this engine's is " + want;
  }
  if (!every_rank_accepts(link, refusal.empty())) throw WeightLinkRefused(refusal.empty() ? "another receiver refused the weights" : refusal);
  std::vector<uint8_t> blob(size_t(h.config_bytes + h.table_bytes));
  link.broadcast(blob.data(), blob.size(), 0);
  auto payload = std::make_shared<ZeroedPages>(size_t(h.payload_bytes));
  broadcast_buckets(link, payload->data(), payload->size(), bucket_bytes);
  ReceivedWeights received;
  try {
    const std::string config_text(reinterpret_cast<const char*>(blob.data()), size_t(h.config_bytes));
    const Qwen3Config config = parse_qwen3_config(config_text, "the sender's config.json");
    if (qwen3_shape_text(config) != want) throw WeightLinkRefused("the sender's config.json is " + qwen3_shape_text(config) + "; this engine's " + want);
    const std::vector<NamedTensor> tensors = decode_table(blob.data() + h.config_bytes, size_t(h.table_bytes), *payload);
    auto* weights = new Qwen3Weights(
        Qwen3Weights::from_tensors(config, tensors, Qwen3Weights::Storage::Borrow, "the weights received over the link"));
    received.weights = std::shared_ptr<const Qwen3Weights>(weights, [payload](const Qwen3Weights* w) { delete w; });
  } catch (const std::exception& e) {
    refusal = e.what();
  }
  if (!every_rank_accepts(link, refusal.empty())) {
    throw WeightLinkRefused(refusal.empty() ? "another receiver could not use the weights" : refusal);
  }
  received.transfer = {payload->size(), seconds_since(start)};
  return received;
}

}  // namespace s3::model
