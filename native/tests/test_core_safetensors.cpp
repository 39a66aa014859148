// test_core_safetensors.cpp: the safetensors reader, writer and sharded index, and the file layer
// beneath them (MappedFile, write_file_atomic). Every malformed case must be refused with a
// SafetensorsError whose message names the file and, where one is involved, the tensor.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/mapped_file.h"
#include "core/safetensors.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string length_prefix(uint64_t length) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; i++) bytes[i] = char(length >> (8 * i));
  return bytes;
}

// A safetensors file with the given header text and data section.
std::string raw_file(const std::string& header, const std::string& data) {
  return length_prefix(header.size()) + header + data;
}

// Runs `open` and requires a SafetensorsError whose message contains every fragment.
template <typename Open>
void expect_refusal(int line, Open open, std::initializer_list<std::string> fragments) {
  try {
    open();
  } catch (const SafetensorsError& error) {
    std::string message = error.what();
    for (const std::string& fragment : fragments) {
      if (message.find(fragment) == std::string::npos) {
        s3test::fail(__FILE__, line, "message \"" + message + "\" lacks \"" + fragment + "\"");
      }
    }
    return;
  }
  s3test::fail(__FILE__, line, "no SafetensorsError was thrown");
}

// Writes header + data to <dir>/name and requires opening it to fail naming name and fragments.
void expect_file_refused(int line, const s3test::TempDir& dir, const std::string& name, const std::string& bytes,
                         std::initializer_list<std::string> fragments) {
  std::string path = dir.file(name);
  write_bytes(path, bytes);
  expect_refusal(line, [&] { SafetensorsFile::open(path); }, {path});
  expect_refusal(line, [&] { SafetensorsFile::open(path); }, fragments);
}

const std::string kFourFloats(16, '\x01');

bool leftover_temporaries(const std::string& directory) {
  DIR* dir = opendir(directory.c_str());
  bool found = false;
  while (dirent* entry = readdir(dir)) {
    if (std::strstr(entry->d_name, ".tmp.") != nullptr) found = true;
  }
  closedir(dir);
  return found;
}

}  // namespace

TEST(safetensors_round_trip_every_dtype) {
  s3test::TempDir dir;
  std::mt19937 rng(11);
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F8_E4M3,
                          DType::I32, DType::I64, DType::U8, DType::BOOL};
  const std::vector<std::vector<int64_t>> shapes = {{3, 5}, {7}, {}, {0, 4}, {2, 3, 1}};
  std::vector<TensorToWrite> tensors;
  std::vector<std::string> payloads;
  payloads.reserve(64);
  for (DType dtype : dtypes) {
    for (size_t s = 0; s < shapes.size(); s++) {
      TensorToWrite tensor;
      tensor.name = std::string(dtype_name(dtype)) + ".t" + std::to_string(s);
      tensor.dtype = dtype;
      tensor.shape = shapes[s];
      size_t numel = 1;
      for (int64_t dim : tensor.shape) numel *= size_t(dim);
      std::string payload(numel * dtype_size(dtype), '\0');
      for (char& byte : payload) byte = char(rng());
      payloads.push_back(payload);
      tensor.data = payloads.back().data();
      tensors.push_back(tensor);
    }
  }
  tensors[0].name = "model.layers.0.self_attn.q_proj.weight \xE2\x9C\x93 \"quoted\"";
  std::map<std::string, std::string> metadata = {{"format", "pt"}, {"step", "12"}};
  std::string path = dir.file("round.safetensors");
  write_safetensors(path, tensors, metadata);
  CHECK(!leftover_temporaries(dir.path()));

  SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.metadata() == metadata);
  CHECK_EQ(file.names().size(), tensors.size());
  CHECK(std::is_sorted(file.names().begin(), file.names().end()));
  size_t total_bytes = 0;
  for (size_t i = 0; i < tensors.size(); i++) {
    const TensorInfo& info = file.info(tensors[i].name);
    CHECK(info.dtype == tensors[i].dtype);
    CHECK(info.shape == tensors[i].shape);
    CHECK_EQ(info.nbytes, payloads[i].size());
    CHECK_EQ(info.numel() * dtype_size(info.dtype), info.nbytes);
    CHECK_EQ(std::string(reinterpret_cast<const char*>(info.data), info.nbytes), payloads[i]);
    CHECK_EQ(reinterpret_cast<uintptr_t>(info.data) % dtype_size(info.dtype), uintptr_t(0));  // aligned
    total_bytes += info.nbytes;
  }
  // The header is padded to 8 bytes and the data is contiguous: nothing else is in the file.
  uint64_t header_length = 0;
  std::memcpy(&header_length, file.mapping().data(), 8);
  CHECK_EQ(header_length % 8, uint64_t(0));
  CHECK_EQ(file.mapping().size(), size_t(8 + header_length + total_bytes));
  CHECK(file.has("U8.t1"));
  CHECK(!file.has("nope"));
  expect_refusal(__LINE__, [&] { file.info("nope"); }, {path, "\"nope\""});
}

TEST(safetensors_writer_layout_is_canonical) {
  s3test::TempDir dir;
  float floats[2] = {1.0f, 2.0f};
  int32_t ints[2] = {3, 4};
  int64_t longs[1] = {5};
  uint16_t halves[3] = {1, 2, 3};
  uint8_t byte = 9;
  std::string path = dir.file("order.safetensors");
  // Byte for byte what huggingface/safetensors 0.8 serializes for the same tensors (checked).
  write_safetensors(path, {{"b_half", DType::BF16, {3}, halves}, {"z_byte", DType::U8, {1}, &byte},
                           {"a_half", DType::F16, {3}, halves}, {"y_float", DType::F32, {2}, floats},
                           {"x_int", DType::I32, {2}, ints}, {"w_long", DType::I64, {}, longs}});
  std::string bytes = read_bytes(path);
  std::string header = bytes.substr(8, bytes.find_last_of('}') - 7);
  CHECK_EQ(header,
           std::string("{\"w_long\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
                       "\"y_float\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                       "\"x_int\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[16,24]},"
                       "\"b_half\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[24,30]},"
                       "\"a_half\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[30,36]},"
                       "\"z_byte\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[36,37]}}"));
  CHECK_EQ(bytes.size(), 8 + header.size() + (8 - header.size() % 8) % 8 + 37);
  write_safetensors(path, {});
  CHECK_EQ(read_bytes(path), length_prefix(8) + "{}      ");
  CHECK(SafetensorsFile::open(path).names().empty());
}

TEST(safetensors_writer_refuses_invalid_tensors) {
  s3test::TempDir dir;
  std::string path = dir.file("bad.safetensors");
  float value = 0;
  expect_refusal(__LINE__, [&] { write_safetensors(path, {{"w", DType::F32, {1}, &value}, {"w", DType::F32, {1}, &value}}); },
                 {path, "\"w\"", "two tensors"});
  expect_refusal(__LINE__, [&] { write_safetensors(path, {{"__metadata__", DType::F32, {1}, &value}}); },
                 {path, "__metadata__", "reserved"});
  expect_refusal(__LINE__, [&] { write_safetensors(path, {{"neg", DType::F32, {2, -1}, &value}}); },
                 {path, "\"neg\"", "negative"});
  expect_refusal(__LINE__, [&] { write_safetensors(path, {{"null", DType::F32, {1}, nullptr}}); },
                 {path, "\"null\"", "null"});
  expect_refusal(__LINE__, [&] { write_safetensors(path, {{"bad\xFF", DType::F32, {1}, &value}}); },
                 {path, "UTF-8"});
  expect_refusal(__LINE__, [&] { write_safetensors(path, {}, {{"k", "\xC0"}}); }, {path, "\"k\"", "UTF-8"});
  CHECK(access(path.c_str(), F_OK) != 0);  // nothing was written
}

TEST(safetensors_refuses_truncation_and_bad_lengths) {
  s3test::TempDir dir;
  std::string header = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  std::string valid = raw_file(header, kFourFloats);
  expect_file_refused(__LINE__, dir, "truncated.safetensors", valid.substr(0, valid.size() - 3),
                      {"\"w\"", "past the data section"});
  expect_file_refused(__LINE__, dir, "short.safetensors", valid.substr(0, 5), {"too short"});
  expect_file_refused(__LINE__, dir, "empty.safetensors", "", {"0 bytes"});
  expect_file_refused(__LINE__, dir, "header_past_end.safetensors", length_prefix(1000) + header,
                      {"header length 1000", "runs past the end"});
  expect_file_refused(__LINE__, dir, "header_huge.safetensors", length_prefix(200000000) + header,
                      {"exceeds the limit"});
  expect_file_refused(__LINE__, dir, "header_max.safetensors", length_prefix(UINT64_MAX) + header,
                      {"exceeds the limit"});
  std::string missing = dir.file("missing.safetensors");
  expect_refusal(__LINE__, [&] { SafetensorsFile::open(missing); }, {missing, "No such file"});
  expect_refusal(__LINE__, [&] { SafetensorsFile::open(dir.path()); }, {dir.path(), "not a regular file"});
}

TEST(safetensors_refuses_malformed_headers) {
  s3test::TempDir dir;
  auto refused = [&](int line, const std::string& name, const std::string& header, const std::string& data,
                     std::initializer_list<std::string> fragments) {
    expect_file_refused(line, dir, name + ".safetensors", raw_file(header, data), fragments);
  };
  refused(__LINE__, "bad_json", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]})", kFourFloats,
          {"not valid JSON", "byte"});
  refused(__LINE__, "not_object", R"([1,2])", "", {"header is a JSON array"});
  refused(__LINE__, "overlap",
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
          kFourFloats, {"\"a\"", "\"b\"", "overlap"});
  refused(__LINE__, "same_range",
          R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
          kFourFloats, {"\"a\"", "\"b\"", "overlap"});
  refused(__LINE__, "out_of_range", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[4,20]}})", kFourFloats,
          {"\"w\"", "past the data section"});
  refused(__LINE__, "begin_after_end", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", kFourFloats,
          {"\"w\"", "end before they begin"});
  refused(__LINE__, "bytes_mismatch", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "span 16 bytes", "need 12"});
  refused(__LINE__, "unknown_dtype", R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "unknown dtype \"F64\""});
  refused(__LINE__, "dtype_not_string", R"({"w":{"dtype":4,"shape":[4],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "dtype"});
  refused(__LINE__, "duplicate",
          R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
          kFourFloats, {"duplicate key \"w\""});
  refused(__LINE__, "negative_dim", R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "non-negative integers"});
  refused(__LINE__, "fractional_dim", R"({"w":{"dtype":"F32","shape":[4.0],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "non-negative integers"});
  refused(__LINE__, "overflow_dims",
          R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "overflows"});
  refused(__LINE__, "shape_not_array", R"({"w":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})", kFourFloats,
          {"\"w\"", "shape is not an array"});
  refused(__LINE__, "three_offsets", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16,16]}})", kFourFloats,
          {"\"w\"", "[begin, end]"});
  refused(__LINE__, "negative_offset", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[-1,-1]}})", kFourFloats,
          {"\"w\"", "non-negative integers"});
  refused(__LINE__, "huge_offset",
          R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551616]}})",
          kFourFloats, {"\"w\"", "non-negative integers"});
  refused(__LINE__, "extra_key",
          R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"offset":0}})", kFourFloats,
          {"\"w\"", "unexpected key \"offset\""});
  refused(__LINE__, "missing_key", R"({"w":{"dtype":"F32","shape":[4]}})", kFourFloats,
          {"\"w\"", "lacks dtype, shape or data_offsets"});
  refused(__LINE__, "entry_not_object", R"({"w":[1]})", kFourFloats, {"\"w\"", "entry is a array"});
  refused(__LINE__, "metadata_number", R"({"__metadata__":{"step":3}})", "", {"\"step\"", "expected a string"});
  refused(__LINE__, "metadata_list", R"({"__metadata__":["a"]})", "", {"__metadata__", "expected an object"});
}

TEST(safetensors_accepts_empty_tensors_and_gaps) {
  s3test::TempDir dir;
  std::string path = dir.file("edges.safetensors");
  // A zero-sized tensor may sit anywhere (it occupies nothing); unused bytes between tensors are
  // tolerated; header padding with spaces is whitespace.
  write_bytes(path, raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("empty":{"dtype":"BF16","shape":[0,5],"data_offsets":[4,4]},)"
                             R"("end":{"dtype":"U8","shape":[0],"data_offsets":[16,16]},)"
                             R"("b":{"dtype":"U8","shape":[2],"data_offsets":[12,14]},)"
                             R"("__metadata__":{}}    )",
                             kFourFloats));
  SafetensorsFile file = SafetensorsFile::open(path);
  CHECK_EQ(file.names().size(), size_t(4));
  CHECK_EQ(file.info("empty").nbytes, size_t(0));
  CHECK_EQ(file.info("empty").numel(), size_t(0));
  CHECK_EQ(file.info("b").data - file.info("a").data, ptrdiff_t(12));
  CHECK(file.metadata().empty());
}

TEST(safetensors_sharded_index) {
  s3test::TempDir dir;
  float a[2] = {1, 2}, b[3] = {3, 4, 5};
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), {{"a", DType::F32, {2}, a}, {"extra", DType::F32, {1}, a}});
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), {{"b", DType::F32, {3}, b}});
  std::string index_path = dir.file("model.safetensors.index.json");
  write_bytes(index_path, R"({"metadata":{"total_size":20},"weight_map":{)"
                          R"("a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})");
  SafetensorsIndex index = SafetensorsIndex::open(dir.path());
  CHECK(index.names() == (std::vector<std::string>{"a", "b"}));  // the index is authoritative
  CHECK_EQ(index.shards().size(), size_t(2));
  CHECK(index.has("b") && !index.has("extra"));
  CHECK_EQ(reinterpret_cast<const float*>(index.info("b").data)[2], 5.0f);
  CHECK_EQ(reinterpret_cast<const float*>(index.info("a").data)[1], 2.0f);
  expect_refusal(__LINE__, [&] { index.info("extra"); }, {dir.path(), "\"extra\""});

  write_bytes(index_path, R"({"weight_map":{"a":"model-00001-of-00002.safetensors","c":"model-00003-of-00003.safetensors"}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); },
                 {index_path, "\"c\"", "model-00003-of-00003.safetensors", "No such file"});
  write_bytes(index_path, R"({"weight_map":{"a":"model-00002-of-00002.safetensors"}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); },
                 {index_path, "\"a\"", "model-00002-of-00002.safetensors", "lacks it"});
  write_bytes(index_path, R"({"weight_map":{"a":"../model-00001-of-00002.safetensors"}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); }, {index_path, "\"a\"", "plain file name"});
  write_bytes(index_path, R"({"weight_map":{"a":7}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); }, {index_path, "\"a\""});
  write_bytes(index_path, R"({"metadata":{}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); }, {index_path, "weight_map"});
  write_bytes(index_path, R"({"weight_map":)");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); }, {index_path, "JSON error at byte 14"});
  write_bytes(dir.file("model-00002-of-00002.safetensors"), "garbage!");
  write_bytes(index_path, R"({"weight_map":{"b":"model-00002-of-00002.safetensors"}})");
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); },
                 {index_path, "\"b\"", dir.file("model-00002-of-00002.safetensors"), "header length"});
}

TEST(safetensors_single_file_directory) {
  s3test::TempDir dir;
  expect_refusal(__LINE__, [&] { SafetensorsIndex::open(dir.path()); }, {dir.path(), "neither"});
  float w[1] = {7};
  write_safetensors(dir.file("model.safetensors"), {{"w", DType::F32, {1}, w}});
  SafetensorsIndex index = SafetensorsIndex::open(dir.path());
  CHECK(index.names() == std::vector<std::string>{"w"});
  CHECK_EQ(*reinterpret_cast<const float*>(index.info("w").data), 7.0f);
}

TEST(mapped_file_maps_and_refuses) {
  s3test::TempDir dir;
  write_bytes(dir.file("data"), "hello");
  MappedFile file = MappedFile::open(dir.file("data"));
  CHECK_EQ(file.size(), size_t(5));
  CHECK_EQ(std::string(reinterpret_cast<const char*>(file.data()), 5), std::string("hello"));
  MappedFile moved = std::move(file);
  CHECK(file.data() == nullptr && file.size() == 0);
  CHECK_EQ(moved.path(), dir.file("data"));
  CHECK_EQ(moved.data()[4], uint8_t('o'));
  write_bytes(dir.file("empty"), "");
  MappedFile empty = MappedFile::open(dir.file("empty"));
  CHECK(empty.size() == 0 && empty.data() == nullptr);
  try {
    MappedFile::open(dir.file("absent"));
    CHECK(false);
  } catch (const MappedFileError& error) {
    CHECK(std::string(error.what()).find(dir.file("absent")) != std::string::npos);
  }
  CHECK_THROWS(MappedFileError, MappedFile::open(dir.path()));
}

TEST(atomic_file_replaces_or_leaves_the_old_file) {
  s3test::TempDir dir;
  std::string path = dir.file("state.json");
  write_file_atomic(path, "first", 5);
  CHECK_EQ(read_bytes(path), std::string("first"));
  write_file_atomic(path, [](const ByteSink& sink) {
    sink("sec", 3);
    sink("ond", 3);
    sink(nullptr, 0);
  });
  CHECK_EQ(read_bytes(path), std::string("second"));
  CHECK(!leftover_temporaries(dir.path()));

  // A producer that fails leaves the old contents and no temporary; its exception passes through.
  CHECK_THROWS(std::logic_error, write_file_atomic(path, [](const ByteSink& sink) {
    sink("partial", 7);
    throw std::logic_error("producer failed");
  }));
  CHECK_EQ(read_bytes(path), std::string("second"));
  CHECK(!leftover_temporaries(dir.path()));

  std::string unreachable = dir.file("no/such/dir/file");
  try {
    write_file_atomic(unreachable, "x", 1);
    CHECK(false);
  } catch (const AtomicWriteError& error) {
    CHECK(std::string(error.what()).find(unreachable) != std::string::npos);
  }
  // Renaming onto a directory fails after the temporary was written: it must be cleaned up.
  CHECK_EQ(mkdir(dir.file("occupied").c_str(), 0755), 0);
  CHECK_THROWS(AtomicWriteError, write_file_atomic(dir.file("occupied"), "x", 1));
  CHECK(!leftover_temporaries(dir.path()));
}
