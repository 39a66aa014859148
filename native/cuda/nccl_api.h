// nccl_api.h: the part of NVIDIA's NCCL API s3 calls, declared here because the library is opened at
// run time (cuda/nccl.h) and its header is not installed on build machines. Only the types,
// prototypes and values we use, from nccl.h of NCCL 2.30.7 (the nvidia-nccl-cu13 wheel);
// scripts/gpu-check/nccl_abi_check.cpp static-asserts them against the header of the library that
// runs. The communicator config is the 2.18 layout (the fields up to splitShare), which newer NCCL
// accepts: it reads as many fields as `size` and `version` say.
#pragma once

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace s3::cuda::nccl {

using Result = int;  // ncclResult_t
constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;  // a non-blocking call still running

using Comm = void*;  // ncclComm_t

struct UniqueId {  // ncclUniqueId: NCCL_UNIQUE_ID_BYTES
  char internal[128];
};

using DataType = int;  // ncclDataType_t
constexpr DataType kUint8 = 1;
constexpr DataType kFloat32 = 7;
constexpr DataType kBfloat16 = 9;

using RedOp = int;  // ncclRedOp_t
constexpr RedOp kSum = 0;

constexpr unsigned int kApiMagic = 0xcafebeef;  // NCCL_API_MAGIC
constexpr int kConfigUndefInt = INT_MIN;         // NCCL_CONFIG_UNDEF_INT
constexpr unsigned int kConfigVersion = 21800;   // the layout below: NCCL 2.18's ncclConfig_t

struct Config {  // ncclConfig_t's first fields (NCCL ≥ 2.18)
  size_t size = sizeof(Config);
  unsigned int magic = kApiMagic;
  unsigned int version = kConfigVersion;
  int blocking = kConfigUndefInt;
  int cga_cluster_size = kConfigUndefInt;
  int min_ctas = kConfigUndefInt;
  int max_ctas = kConfigUndefInt;
  const char* net_name = nullptr;
  int split_share = kConfigUndefInt;
};

// The functions, as the table cuda/nccl.cpp fills with dlsym.
struct Functions {
  Result (*GetVersion)(int* version);
  const char* (*GetErrorString)(Result);
  const char* (*GetLastError)(Comm);
  Result (*GetUniqueId)(UniqueId* id);
  Result (*CommInitRankConfig)(Comm* comm, int nranks, UniqueId id, int rank, Config* config);
  Result (*CommDestroy)(Comm);
  Result (*CommAbort)(Comm);
  Result (*CommGetAsyncError)(Comm, Result* async_error);
  Result (*AllReduce)(const void* send, void* recv, size_t count, DataType type, RedOp op, Comm, cudaStream_t stream);
  Result (*Broadcast)(const void* send, void* recv, size_t count, DataType type, int root, Comm, cudaStream_t stream);
  Result (*GroupStart)();
  Result (*GroupEnd)();
};

}  // namespace s3::cuda::nccl
