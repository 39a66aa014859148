// mapped_file.h: a read-only memory map of a whole file (RAII, move-only). Checkpoint tensors are
// used straight from the mapping, so loading costs no copy and pages come in on first touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace s3 {

class MappedFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MappedFile {
 public:
  // Maps `path` read-only. Throws MappedFileError naming the path and the reason (missing,
  // unreadable, not a regular file, mmap failure). An empty file maps to data() == nullptr.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void unmap();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace s3
