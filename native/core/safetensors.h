// safetensors.h: checkpoints in the safetensors format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}, and
// optionally "__metadata__": {string: string}}, then the tensor bytes. Reading maps the file and
// validates every field before handing out a pointer, so a corrupt or hostile file is refused
// with a SafetensorsError instead of being read out of bounds. Also: sharded checkpoints
// (model.safetensors.index.json) and the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"

namespace s3 {

// The message always names the file, the tensor when there is one, and the problem.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest header accepted, as in the reference implementation (100 MB).
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100000000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // empty for a scalar
  const uint8_t* data = nullptr;  // inside the mapping; as aligned as the file's layout makes it
  size_t nbytes = 0;              // numel() × dtype_size(dtype)

  size_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`: header length ≤ file size − 8 and ≤ 100 MB; valid JSON; every
  // entry has exactly dtype, shape and data_offsets; known dtype; non-negative integer shape
  // whose byte size does not overflow; 0 ≤ begin ≤ end ≤ data size and end − begin equal to
  // the byte size; no two non-empty tensors overlap; no duplicate names.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return mapping_.path(); }
  const MappedFile& mapping() const { return mapping_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  const std::vector<std::string>& names() const { return names_; }  // sorted
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  // Throws SafetensorsError naming the file and tensor when there is no such tensor.
  const TensorInfo& info(const std::string& name) const;

 private:
  MappedFile mapping_;
  std::map<std::string, std::string> metadata_;
  std::vector<TensorInfo> tensors_;  // header order
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> index_;  // name → position in tensors_
};

// One view over a checkpoint directory: model.safetensors.index.json (its "weight_map" maps
// each tensor to a shard file in the same directory) or, without an index, model.safetensors.
// The index is authoritative: every listed tensor must exist in its shard; tensors a shard holds
// but the index does not list are not part of the view.
class SafetensorsIndex {
 public:
  static SafetensorsIndex open(const std::string& directory);

  const std::vector<SafetensorsFile>& shards() const { return shards_; }
  const std::vector<std::string>& names() const { return names_; }  // sorted
  bool has(const std::string& name) const { return tensor_shard_.count(name) != 0; }
  // Throws SafetensorsError naming the directory and tensor when there is no such tensor.
  const TensorInfo& info(const std::string& name) const;

 private:
  std::string directory_;
  std::vector<SafetensorsFile> shards_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> tensor_shard_;  // name → position in shards_
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // numel × dtype_size(dtype) bytes
};

// Writes a canonical safetensors file through write_file_atomic: the header JSON
// ({"__metadata__" first when non-empty, then the tensors in data order}) padded with spaces to
// a multiple of 8 bytes, then the tensor bytes contiguously. Data order is the reference
// implementation's (huggingface/safetensors `prepare`): by dtype, larger elements first
// (I64, F32, I32, BF16, F16, F8_E4M3, U8, BOOL), then by name, which keeps every tensor aligned
// to its element size without padding. Throws SafetensorsError naming the path and tensor for an
// invalid name (empty is allowed; duplicates, "__metadata__" and invalid UTF-8 are not) or a
// negative dimension; I/O errors surface as AtomicWriteError.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace s3
