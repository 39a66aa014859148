// host_memory.h: how much host memory the kernel could hand this process now, for buffers sized
// to the machine rather than to a constant (the CPU trainer's saved activations).
#pragma once

#include <cstddef>

namespace s3 {

// Linux's MemAvailable (/proc/meminfo: free memory plus the page cache and reclaimable slabs it
// could drop without swapping); elsewhere the free physical pages sysconf reports; 0 when neither
// can be read.
size_t available_host_memory_bytes();

}  // namespace s3
