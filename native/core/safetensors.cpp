// safetensors.cpp: header validation for the reader, the sharded index, and the writer. Every
// number in a header is untrusted: it is checked for overflow and against the mapped size
// before any pointer is formed from it.
#include "core/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <set>

#include "core/atomic_file.h"
#include "core/json.h"

namespace s3 {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  throw SafetensorsError(file + ": " + problem);
}

[[noreturn]] void fail_tensor(const std::string& file, const std::string& tensor, const std::string& problem) {
  throw SafetensorsError(file + ": tensor " + json_quote(tensor) + ": " + problem);
}

std::string supported_dtype_list() {
  std::string list;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F8_E4M3, DType::I32, DType::I64, DType::U8,
                      DType::BOOL}) {
    list += list.empty() ? "" : ", ";
    list += dtype_name(dtype);
  }
  return list;
}

// numel × element size, or false on overflow (the product must fit in size_t).
bool byte_size(const std::vector<int64_t>& shape, DType dtype, size_t* bytes) {
  uint64_t total = dtype_size(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(total, uint64_t(dim), &total)) return false;
  }
  if (total > std::numeric_limits<size_t>::max()) return false;
  *bytes = size_t(total);
  return true;
}

// The reference writer orders tensors by its Dtype enum, descending, then by name; its enum lists
// BOOL, U8, ..., F8_E4M3, ..., F16, BF16, I32, ..., F32, ..., I64, so larger elements come first
// and every tensor starts aligned to its element size. Matching it makes our files (without
// metadata) byte-identical to what safetensors 0.8's serialize writes for the same tensors.
int layout_rank(DType dtype) {
  switch (dtype) {
    case DType::BOOL: return 0;
    case DType::U8: return 1;
    case DType::F8_E4M3: return 2;
    case DType::F16: return 3;
    case DType::BF16: return 4;
    case DType::I32: return 5;
    case DType::F32: return 6;
    case DType::I64: return 7;
  }
  return 0;
}

uint64_t read_u64_le(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; i--) value = (value << 8) | bytes[i];
  return value;
}

bool is_regular_file(const std::string& path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

void parse_metadata(const std::string& path, const JsonValue& value, std::map<std::string, std::string>& metadata) {
  if (!value.is_object()) fail(path, std::string("\"__metadata__\" is a ") + value.kind_name() + ", expected an object");
  for (const JsonValue::Member& member : value.as_object()) {
    if (!member.second.is_string()) {
      fail(path, "\"__metadata__\" key " + json_quote(member.first) + " maps to a " + member.second.kind_name() +
                     ", expected a string");
    }
    metadata[member.first] = member.second.as_string();
  }
}

// Validates one header entry against a data section of data_size bytes starting at data_start.
TensorInfo parse_tensor_entry(const std::string& path, const std::string& name, const JsonValue& entry,
                              const uint8_t* data_start, size_t data_size) {
  if (!entry.is_object()) {
    fail_tensor(path, name, std::string("entry is a ") + entry.kind_name() +
                                ", expected an object with dtype, shape and data_offsets");
  }
  for (const JsonValue::Member& member : entry.as_object()) {
    if (member.first != "dtype" && member.first != "shape" && member.first != "data_offsets") {
      fail_tensor(path, name, "unexpected key " + json_quote(member.first) +
                                  " (an entry has exactly dtype, shape and data_offsets)");
    }
  }
  const JsonValue* dtype_value = entry.find("dtype");
  const JsonValue* shape_value = entry.find("shape");
  const JsonValue* offsets_value = entry.find("data_offsets");
  if (!dtype_value || !shape_value || !offsets_value) {
    fail_tensor(path, name, "entry lacks dtype, shape or data_offsets");
  }

  TensorInfo tensor;
  tensor.name = name;
  if (!dtype_value->is_string()) fail_tensor(path, name, "dtype is not a string");
  std::optional<DType> dtype = parse_dtype(dtype_value->as_string());
  if (!dtype) {
    fail_tensor(path, name, "unknown dtype " + json_quote(dtype_value->as_string()) + " (s3 reads " +
                                supported_dtype_list() + ")");
  }
  tensor.dtype = *dtype;

  if (!shape_value->is_array()) fail_tensor(path, name, "shape is not an array");
  for (const JsonValue& dim : shape_value->as_array()) {
    std::optional<uint64_t> extent = dim.as_uint64();
    if (!extent || *extent > uint64_t(std::numeric_limits<int64_t>::max())) {
      fail_tensor(path, name, "shape must hold non-negative integers");
    }
    tensor.shape.push_back(int64_t(*extent));
  }
  if (!byte_size(tensor.shape, tensor.dtype, &tensor.nbytes)) {
    fail_tensor(path, name, "shape's byte size overflows 64 bits");
  }

  if (!offsets_value->is_array() || offsets_value->as_array().size() != 2) {
    fail_tensor(path, name, "data_offsets must be an array [begin, end]");
  }
  std::optional<uint64_t> begin = offsets_value->as_array()[0].as_uint64();
  std::optional<uint64_t> end = offsets_value->as_array()[1].as_uint64();
  if (!begin || !end) fail_tensor(path, name, "data_offsets must hold non-negative integers");
  if (*begin > *end) {
    fail_tensor(path, name, "data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) +
                                "] end before they begin");
  }
  if (*end > data_size) {
    fail_tensor(path, name, "data_offsets end " + std::to_string(*end) + " lies past the data section of " +
                                std::to_string(data_size) + " bytes (file truncated?)");
  }
  if (*end - *begin != tensor.nbytes) {
    fail_tensor(path, name, "data_offsets span " + std::to_string(*end - *begin) + " bytes but dtype " +
                                dtype_name(tensor.dtype) + " and the shape need " + std::to_string(tensor.nbytes));
  }
  tensor.data = data_start + *begin;
  return tensor;
}

std::string byte_range(const TensorInfo& tensor, const uint8_t* data_start) {
  size_t begin = size_t(tensor.data - data_start);
  return "[" + std::to_string(begin) + ", " + std::to_string(begin + tensor.nbytes) + ")";
}

void reject_overlaps(const std::string& path, const std::vector<TensorInfo>& tensors, const uint8_t* data_start) {
  std::vector<const TensorInfo*> by_start;
  for (const TensorInfo& tensor : tensors) {
    if (tensor.nbytes > 0) by_start.push_back(&tensor);  // empty tensors occupy no bytes
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->data < b->data; });
  for (size_t i = 1; i < by_start.size(); i++) {
    const TensorInfo& previous = *by_start[i - 1];
    const TensorInfo& current = *by_start[i];
    if (previous.data + previous.nbytes > current.data) {
      fail(path, "tensors " + json_quote(previous.name) + " " + byte_range(previous, data_start) + " and " +
                     json_quote(current.name) + " " + byte_range(current, data_start) + " overlap in the data section");
    }
  }
}

}  // namespace

size_t TensorInfo::numel() const {
  size_t count = 1;
  for (int64_t dim : shape) count *= size_t(dim);
  return count;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  try {
    file.mapping_ = MappedFile::open(path);
  } catch (const MappedFileError& error) {
    fail(path, error.what());
  }
  const uint8_t* bytes = file.mapping_.data();
  size_t size = file.mapping_.size();
  if (size < 8) fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  uint64_t header_length = read_u64_le(bytes);
  if (header_length > kSafetensorsMaxHeaderBytes) {
    fail(path, "header length " + std::to_string(header_length) + " exceeds the limit of " +
                   std::to_string(kSafetensorsMaxHeaderBytes) + " bytes");
  }
  if (header_length > size - 8) {
    fail(path, "header length " + std::to_string(header_length) + " runs past the end of the " +
                   std::to_string(size) + "-byte file (file truncated?)");
  }

  JsonValue header;
  try {
    header = parse_json(std::string_view(reinterpret_cast<const char*>(bytes + 8), size_t(header_length)));
  } catch (const JsonError& error) {
    fail(path, "header is not valid JSON at byte " + std::to_string(8 + error.offset()) + " of the file: " +
                   error.problem());
  }
  if (!header.is_object()) fail(path, std::string("header is a JSON ") + header.kind_name() + ", expected an object");

  const uint8_t* data_start = bytes + 8 + header_length;
  size_t data_size = size - 8 - size_t(header_length);
  for (const JsonValue::Member& member : header.as_object()) {
    if (member.first == "__metadata__") {
      parse_metadata(path, member.second, file.metadata_);
    } else {
      file.tensors_.push_back(parse_tensor_entry(path, member.first, member.second, data_start, data_size));
    }
  }
  reject_overlaps(path, file.tensors_, data_start);

  for (size_t i = 0; i < file.tensors_.size(); i++) {
    file.index_.emplace(file.tensors_[i].name, i);
    file.names_.push_back(file.tensors_[i].name);
  }
  std::sort(file.names_.begin(), file.names_.end());
  return file;
}

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto found = index_.find(name);
  if (found == index_.end()) fail_tensor(path(), name, "no such tensor in this file");
  return tensors_[found->second];
}

SafetensorsIndex SafetensorsIndex::open(const std::string& directory) {
  SafetensorsIndex index;
  index.directory_ = directory;
  std::string index_path = directory + "/model.safetensors.index.json";
  std::string single_path = directory + "/model.safetensors";

  if (!is_regular_file(index_path)) {
    if (!is_regular_file(single_path)) {
      fail(directory, "holds neither model.safetensors.index.json nor model.safetensors");
    }
    index.shards_.push_back(SafetensorsFile::open(single_path));
    index.names_ = index.shards_[0].names();
    for (const std::string& name : index.names_) index.tensor_shard_.emplace(name, 0);
    return index;
  }

  JsonValue root;
  try {
    MappedFile text = MappedFile::open(index_path);
    root = parse_json(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  } catch (const std::runtime_error& error) {  // MappedFileError or JsonError
    fail(index_path, error.what());
  }
  const JsonValue* weight_map = root.find("weight_map");
  if (!weight_map || !weight_map->is_object()) fail(index_path, "lacks a \"weight_map\" object");

  std::map<std::string, std::vector<std::string>> tensors_by_shard;
  for (const JsonValue::Member& member : weight_map->as_object()) {
    if (!member.second.is_string()) fail_tensor(index_path, member.first, "weight_map value is not a file name");
    const std::string& shard = member.second.as_string();
    if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos) {
      fail_tensor(index_path, member.first, "shard " + json_quote(shard) + " is not a plain file name in the directory");
    }
    tensors_by_shard[shard].push_back(member.first);
  }

  for (const auto& [shard, tensors] : tensors_by_shard) {
    std::string shard_path = directory + "/" + shard;
    try {
      index.shards_.push_back(SafetensorsFile::open(shard_path));
    } catch (const SafetensorsError& error) {
      fail_tensor(index_path, tensors[0], "its shard " + json_quote(shard) + " cannot be read: " + error.what());
    }
    const SafetensorsFile& file = index.shards_.back();
    for (const std::string& name : tensors) {
      if (!file.has(name)) fail_tensor(index_path, name, "weight_map puts it in " + json_quote(shard) + ", which lacks it");
      index.tensor_shard_.emplace(name, index.shards_.size() - 1);
      index.names_.push_back(name);
    }
  }
  std::sort(index.names_.begin(), index.names_.end());
  return index;
}

const TensorInfo& SafetensorsIndex::info(const std::string& name) const {
  auto found = tensor_shard_.find(name);
  if (found == tensor_shard_.end()) fail_tensor(directory_, name, "no such tensor in this checkpoint");
  return shards_[found->second].info(name);
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<size_t> nbytes(tensors.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < tensors.size(); i++) {
    const TensorToWrite& tensor = tensors[i];
    if (tensor.name == "__metadata__") fail_tensor(path, tensor.name, "the name is reserved for metadata");
    if (!is_valid_utf8(tensor.name)) fail_tensor(path, tensor.name, "the name is not valid UTF-8");
    if (!seen.insert(tensor.name).second) fail_tensor(path, tensor.name, "two tensors have this name");
    if (!byte_size(tensor.shape, tensor.dtype, &nbytes[i])) {
      fail_tensor(path, tensor.name, "shape has a negative dimension or its byte size overflows");
    }
    if (nbytes[i] > 0 && tensor.data == nullptr) fail_tensor(path, tensor.name, "data pointer is null");
  }
  for (const auto& [key, value] : metadata) {
    if (!is_valid_utf8(key) || !is_valid_utf8(value)) fail(path, "metadata key " + json_quote(key) + " or its value is not valid UTF-8");
  }

  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    int rank_a = layout_rank(tensors[a].dtype), rank_b = layout_rank(tensors[b].dtype);
    return rank_a != rank_b ? rank_a > rank_b : tensors[a].name < tensors[b].name;
  });

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) {
      header += (header.back() == '{' ? "" : ",") + json_quote(key) + ":" + json_quote(value);
    }
    header += "}";
  }
  size_t offset = 0;
  for (size_t i : order) {
    const TensorToWrite& tensor = tensors[i];
    header += header.size() == 1 ? "" : ",";
    header += json_quote(tensor.name) + ":{\"dtype\":\"" + dtype_name(tensor.dtype) + "\",\"shape\":[";
    for (size_t d = 0; d < tensor.shape.size(); d++) header += (d ? "," : "") + std::to_string(tensor.shape[d]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + nbytes[i]) + "]}";
    offset += nbytes[i];
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned

  uint8_t length_bytes[8];
  for (int i = 0; i < 8; i++) length_bytes[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  write_file_atomic(path, [&](const ByteSink& sink) {
    sink(length_bytes, sizeof length_bytes);
    sink(header.data(), header.size());
    for (size_t i : order) sink(tensors[i].data, nbytes[i]);
  });
}

}  // namespace s3
