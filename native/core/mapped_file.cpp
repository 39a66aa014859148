// mapped_file.cpp: open + fstat + mmap(PROT_READ, MAP_PRIVATE); the descriptor is closed right
// after mapping (the mapping keeps the file alive).
#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace s3 {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw MappedFileError("cannot map '" + path + "': " + problem);
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(path, std::strerror(errno));
  struct stat status;
  if (::fstat(fd.get(), &status) != 0) fail(path, std::string("fstat failed: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) fail(path, "not a regular file");

  MappedFile file;
  file.path_ = path;
  file.size_ = size_t(status.st_size);
  if (file.size_ == 0) return file;  // mmap refuses length 0; an empty file has nothing to map
  void* address = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) fail(path, std::string("mmap failed: ") + std::strerror(errno));
  file.data_ = static_cast<const uint8_t*>(address);
  return file;
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace s3
