// Available host memory (core/host_memory.h): on Linux a positive figure no larger than the
// machine's physical memory. (How it moves with this process's own pages is the kernel's accounting,
// which sandboxed kernels only approximate: not asserted.)
#include <unistd.h>

#include <fstream>

#include "core/host_memory.h"
#include "tests/test_framework.h"

TEST(available_host_memory_is_positive_and_within_physical_memory) {
  if (!std::ifstream("/proc/meminfo").good()) return;  // not Linux: the sysconf fallback may report 0
  const size_t available = s3::available_host_memory_bytes();
  const size_t physical = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
  CHECK(available > 0);
  CHECK(available <= physical);
}
