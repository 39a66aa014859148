// atomic_file.cpp: the write-temporary, fsync, rename, fsync-directory sequence (POSIX).
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace s3 {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& step) {
  throw AtomicWriteError("cannot write '" + path + "': " + step + " failed: " + std::strerror(errno));
}

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void write_all(int fd, const std::string& path, const void* bytes, size_t size) {
  const uint8_t* cursor = static_cast<const uint8_t*>(bytes);
  while (size > 0) {
    // Linux writes at most about 2 GiB per call; the loop also resumes short writes.
    size_t piece = std::min<size_t>(size, size_t(1) << 30);
    ssize_t written = ::write(fd, cursor, piece);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail(path, "write");
    }
    cursor += written;
    size -= size_t(written);
  }
}

void fsync_directory(const std::string& path) {
  int dir_fd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail(path, "opening its directory to fsync the rename");
  if (::fsync(dir_fd) != 0) {
    int saved = errno;
    ::close(dir_fd);
    errno = saved;
    fail(path, "fsync of its directory");
  }
  ::close(dir_fd);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(const ByteSink& sink)>& produce) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  // O_TRUNC rather than O_EXCL: a leftover with our pid can only come from a crashed process
  // whose pid was reused, and it is ours to replace.
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "creating temporary '" + temporary + "'");
  try {
    ByteSink sink = [&](const void* bytes, size_t size) { write_all(fd, path, bytes, size); };
    produce(sink);
    if (::fsync(fd) != 0) fail(path, "fsync");
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0) fail(path, "close");
    if (::rename(temporary.c_str(), path.c_str()) != 0) fail(path, "rename from '" + temporary + "'");
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  fsync_directory(path);
}

void write_file_atomic(const std::string& path, const void* bytes, size_t size) {
  write_file_atomic(path, [&](const ByteSink& sink) { sink(bytes, size); });
}

}  // namespace s3
