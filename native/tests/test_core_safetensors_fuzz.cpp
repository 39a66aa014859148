// test_core_safetensors_fuzz.cpp: seeded mutations of valid safetensors files (truncation, flipped
// bytes in the length, header and data, edited numbers and dtypes, broken brackets, spliced
// header text). Every case must either load, with every tensor inside the mapping and every
// byte readable, or be refused with SafetensorsError: nothing else, and no crash. Built with
// AddressSanitizer and UBSan, an out-of-bounds read fails the run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

constexpr int kMutations = 6000;

struct ValidFile {
  std::string bytes;
  size_t header_length;
};

std::string read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// A handful of valid files, written by write_safetensors, with varied dtypes and shapes
// (scalars, empty tensors), metadata, and names that need escaping.
std::vector<ValidFile> make_valid_files(const s3test::TempDir& dir, std::mt19937_64& rng) {
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F8_E4M3,
                          DType::I32, DType::I64, DType::U8, DType::BOOL};
  const std::vector<std::vector<int64_t>> shapes = {{4}, {2, 3}, {}, {0}, {3, 0, 2}, {1, 1, 5}, {17}};
  const char* names[] = {"w", "model.embed_tokens.weight", "layers.0.mlp.up_proj.weight", "b\\\"q",
                         "\xC3\xA9t\xC3\xA9", "scale_inv", "norm", "x\ny"};
  std::vector<ValidFile> files;
  std::vector<uint8_t> payload(4096);
  for (uint8_t& byte : payload) byte = uint8_t(rng());
  for (int f = 0; f < 6; f++) {
    std::vector<TensorToWrite> tensors;
    size_t count = 1 + rng() % 6;
    for (size_t t = 0; t < count; t++) {
      tensors.push_back({names[(f + t) % 8], dtypes[rng() % 8], shapes[rng() % shapes.size()], payload.data()});
    }
    std::map<std::string, std::string> metadata;
    if (f % 2 == 0) metadata = {{"format", "pt"}, {"note", "fuzz \"base\" " + std::to_string(f)}};
    std::string path = dir.file("base" + std::to_string(f) + ".safetensors");
    write_safetensors(path, tensors, metadata);
    std::string bytes = read_bytes(path);
    uint64_t header_length = 0;
    for (int i = 7; i >= 0; i--) header_length = (header_length << 8) | uint8_t(bytes[i]);
    files.push_back({bytes, size_t(header_length)});
  }
  return files;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  size_t below(size_t bound) { return bound == 0 ? 0 : size_t(rng_() % bound); }

  // Mutates header text in place (numbers, dtypes, tensor positions, structure, splices).
  void edit_header(std::string& header) {
    switch (below(5)) {
      case 0: replace_number(header); break;
      case 1: replace_dtype(header); break;
      case 2: shift_offsets(header); break;
      case 3: {
        const char structural[] = "{}[]\",:";
        size_t position = below(header.size() + 1);
        if (below(2) == 0 && !header.empty()) {
          header.erase(std::min(position, header.size() - 1), 1);
        } else {
          header.insert(position, 1, structural[below(7)]);
        }
        break;
      }
      default: {  // copy a random slice elsewhere: duplicated entries, keys and brackets
        size_t begin = below(header.size());
        std::string slice = header.substr(begin, 1 + below(48));
        header.insert(below(header.size() + 1), slice);
      }
    }
  }

  std::string mutate(const ValidFile& valid) {
    std::string bytes = valid.bytes;
    size_t header_length = valid.header_length;  // of the header text, as edits change it
    size_t header_end = 8 + header_length;
    int rounds = below(4) == 0 ? 2 + int(below(2)) : 1;
    for (int round = 0; round < rounds; round++) {
      switch (below(6)) {
        case 0:  // truncation
          bytes.resize(below(bytes.size()));
          break;
        case 1:  // flipped bits anywhere in the header text
          flip_bytes(bytes, 8, std::min(header_end, bytes.size()));
          break;
        case 2:  // flipped bits in the data section (must still load)
          flip_bytes(bytes, std::min(header_end, bytes.size()), bytes.size());
          break;
        case 3:  // a damaged length prefix
          if (below(2) == 0) {
            flip_bytes(bytes, 0, std::min<size_t>(8, bytes.size()));
          } else if (bytes.size() >= 8) {
            uint64_t length = below(2) == 0 ? rng_() : valid.header_length + below(17) - 8;
            for (int i = 0; i < 8; i++) bytes[i] = char(length >> (8 * i));
          }
          break;
        default: {  // edited header text, usually with the length prefix kept consistent
          if (bytes.size() < header_end) break;
          std::string header = bytes.substr(8, header_length);
          edit_header(header);
          uint64_t length = below(5) == 0 ? header_length : header.size();
          std::string prefix(8, '\0');
          for (int i = 0; i < 8; i++) prefix[i] = char(length >> (8 * i));
          bytes = prefix + header + bytes.substr(header_end);
          header_length = header.size();
          header_end = 8 + header_length;
        }
      }
    }
    return bytes;
  }

 private:
  void flip_bytes(std::string& bytes, size_t begin, size_t end) {
    if (begin >= end) return;
    size_t flips = 1 + below(4);
    for (size_t i = 0; i < flips; i++) bytes[begin + below(end - begin)] ^= char(1 + below(255));
  }

  void replace_number(std::string& header) {
    std::vector<size_t> starts;
    for (size_t i = 0; i < header.size(); i++) {
      bool digit = header[i] >= '0' && header[i] <= '9';
      bool previous_digit = i > 0 && header[i - 1] >= '0' && header[i - 1] <= '9';
      if (digit && !previous_digit) starts.push_back(i);
    }
    if (starts.empty()) return;
    size_t begin = starts[below(starts.size())];
    size_t end = begin;
    while (end < header.size() && header[end] >= '0' && header[end] <= '9') end++;
    uint64_t original = 0;  // wraps for over-long digit runs, which earlier edits may have made
    for (size_t i = begin; i < end; i++) original = original * 10 + uint64_t(header[i] - '0');
    const std::string replacements[] = {"0", "1", std::to_string(original + 1), std::to_string(original - 1),
                                        std::to_string(original * 2), "4294967296", "9223372036854775807",
                                        "18446744073709551615", "18446744073709551616", "99999999999999999999999",
                                        "-1", "1e3", "2.0", "", std::to_string(original + 8)};
    header.replace(begin, end - begin, replacements[below(sizeof replacements / sizeof replacements[0])]);
  }

  // Moves one tensor's [begin, end] by the same amount, keeping its size: overlaps and
  // out-of-range positions that pass the size check.
  void shift_offsets(std::string& header) {
    size_t position = header.find("\"data_offsets\":[");
    for (size_t skip = below(4); position != std::string::npos && skip > 0; skip--) {
      size_t next = header.find("\"data_offsets\":[", position + 1);
      if (next == std::string::npos) break;
      position = next;
    }
    if (position == std::string::npos) return;
    size_t open = position + 16;
    size_t close = header.find(']', open);
    size_t comma = header.find(',', open);
    if (close == std::string::npos || comma == std::string::npos || comma > close) return;
    uint64_t begin = 0, end = 0;
    for (size_t i = open; i < comma; i++) begin = begin * 10 + uint64_t(header[i] - '0');
    for (size_t i = comma + 1; i < close; i++) end = end * 10 + uint64_t(header[i] - '0');
    uint64_t shift = below(2) == 0 ? below(24) : uint64_t(0) - below(24);
    header.replace(open, close - open, std::to_string(begin + shift) + "," + std::to_string(end + shift));
  }

  void replace_dtype(std::string& header) {
    size_t position = header.find("\"dtype\":\"");
    size_t skip = below(4);
    while (position != std::string::npos && skip-- > 0) {
      size_t next = header.find("\"dtype\":\"", position + 1);
      if (next == std::string::npos) break;
      position = next;
    }
    if (position == std::string::npos) return;
    size_t begin = position + 9;
    size_t end = header.find('"', begin);
    if (end == std::string::npos) return;
    const char* dtypes[] = {"F32", "F16", "BF16", "F8_E4M3", "I32", "I64", "U8", "BOOL", "F64", "bf16", "", "F8_E5M2"};
    header.replace(begin, end - begin, dtypes[below(12)]);
  }

  std::mt19937_64 rng_;
};

}  // namespace

TEST(safetensors_fuzz_mutations_load_or_refuse) {
  s3test::TempDir dir;
  std::mt19937_64 rng(20250601);
  std::vector<ValidFile> valid_files = make_valid_files(dir, rng);
  Mutator mutator(0x5AFE7E45);
  std::string path = dir.file("mutant.safetensors");
  int loaded = 0, refused = 0;
  uint64_t checksum = 0;
  for (int iteration = 0; iteration < kMutations; iteration++) {
    std::string bytes = mutator.mutate(valid_files[size_t(iteration) % valid_files.size()]);
    {
      // A fresh file each time: truncating a just-written one makes ext4 flush it to disk.
      std::remove(path.c_str());
      std::ofstream out(path, std::ios::binary);
      out.write(bytes.data(), std::streamsize(bytes.size()));
    }
    try {
      SafetensorsFile file = SafetensorsFile::open(path);
      const uint8_t* mapping_begin = file.mapping().data();
      const uint8_t* mapping_end = mapping_begin + file.mapping().size();
      for (const std::string& name : file.names()) {
        const TensorInfo& info = file.info(name);
        CHECK_EQ(info.numel() * dtype_size(info.dtype), info.nbytes);
        CHECK(info.data >= mapping_begin + 8 && info.data <= mapping_end);
        CHECK(info.nbytes <= size_t(mapping_end - info.data));
        for (size_t i = 0; i < info.nbytes; i++) checksum += info.data[i];
      }
      loaded++;
    } catch (const SafetensorsError&) {
      refused++;
    }
  }
  std::printf("  %d mutations: %d loaded, %d refused (checksum %llu)\n", kMutations, loaded, refused,
              static_cast<unsigned long long>(checksum));
  CHECK_EQ(loaded + refused, kMutations);
  CHECK(loaded > kMutations / 20);   // the mutations keep some files valid (data flips, benign edits)
  CHECK(refused > kMutations / 2);   // and break most headers
}
