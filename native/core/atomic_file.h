// atomic_file.h: replace a file so that readers (and a crash at any moment) see either the old
// contents or the complete new contents, never a torn write. Checkpoints and run files go
// through here.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace s3 {

class AtomicWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends bytes to the file being written; throws AtomicWriteError on an I/O failure.
using ByteSink = std::function<void(const void* bytes, size_t size)>;

// Writes `path.tmp.<pid>` in the target's directory by calling produce(sink) (which may call
// sink any number of times, so large files are never assembled in memory), fsyncs it, renames
// it over `path`, then fsyncs the directory so the rename itself is durable.
// On failure the temporary is removed: I/O errors throw AtomicWriteError naming the path and the
// system error; an exception thrown by `produce` is rethrown unchanged.
void write_file_atomic(const std::string& path, const std::function<void(const ByteSink& sink)>& produce);

// The same for bytes already in memory.
void write_file_atomic(const std::string& path, const void* bytes, size_t size);

}  // namespace s3
