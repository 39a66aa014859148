// nccl_abi_check.cpp: our declarations of NCCL (native/cuda/nccl_api.h, written without the header so
// CI builds need no NCCL) against the official nccl.h of the library that will run: every constant we
// pass, the unique id's size, the config fields we set, and each function's type. Compiled (never run)
// by scripts/gpu-check.sh where an nccl.h is found (PyTorch's nvidia-nccl wheel ships one):
//   g++ -std=c++17 -fsyntax-only -Inative -I<dir of nccl.h> -I<CUDA include> scripts/gpu-check/nccl_abi_check.cpp
#include <nccl.h>

#include <cstddef>
#include <type_traits>

#include "cuda/nccl_api.h"

namespace nc = s3::cuda::nccl;

static_assert(nc::kSuccess == ncclSuccess && nc::kInProgress == ncclInProgress);
static_assert(nc::kUint8 == ncclUint8 && nc::kFloat32 == ncclFloat32 && nc::kBfloat16 == ncclBfloat16);
static_assert(nc::kSum == ncclSum);
// The magic as the header's own initializer writes it: NCCL_API_MAGIC is not defined by every
// release (the H200 machine's nccl.h lacked it, 2026-12-04), NCCL_CONFIG_INITIALIZER is.
constexpr ncclConfig_t kOfficialInit = NCCL_CONFIG_INITIALIZER;
static_assert(nc::kApiMagic == kOfficialInit.magic && nc::kConfigUndefInt == NCCL_CONFIG_UNDEF_INT);
static_assert(sizeof(nc::UniqueId) == sizeof(ncclUniqueId));
static_assert(offsetof(nc::Config, size) == offsetof(ncclConfig_t, size));
static_assert(offsetof(nc::Config, magic) == offsetof(ncclConfig_t, magic));
static_assert(offsetof(nc::Config, version) == offsetof(ncclConfig_t, version));
static_assert(offsetof(nc::Config, blocking) == offsetof(ncclConfig_t, blocking));
static_assert(offsetof(nc::Config, cga_cluster_size) == offsetof(ncclConfig_t, cgaClusterSize));
static_assert(offsetof(nc::Config, min_ctas) == offsetof(ncclConfig_t, minCTAs));
static_assert(offsetof(nc::Config, max_ctas) == offsetof(ncclConfig_t, maxCTAs));
static_assert(offsetof(nc::Config, net_name) == offsetof(ncclConfig_t, netName));
static_assert(offsetof(nc::Config, split_share) == offsetof(ncclConfig_t, splitShare));
static_assert(sizeof(nc::Config) <= sizeof(ncclConfig_t));

// The official prototypes, which our table's entries restate with int for the enums and void* for
// the communicator (the sizes below make those stand-ins exact).
static_assert(std::is_same_v<ncclResult_t (*)(int*), decltype(&ncclGetVersion)>);
static_assert(std::is_same_v<ncclResult_t (*)(ncclUniqueId*), decltype(&ncclGetUniqueId)>);
static_assert(std::is_same_v<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*), decltype(&ncclCommInitRankConfig)>);
static_assert(std::is_same_v<ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t),
                             decltype(&ncclAllReduce)>);
static_assert(std::is_same_v<ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t),
                             decltype(&ncclBroadcast)>);
static_assert(std::is_same_v<ncclResult_t (*)(ncclComm_t, ncclResult_t*), decltype(&ncclCommGetAsyncError)>);
static_assert(std::is_same_v<const char* (*)(ncclComm_t), decltype(&ncclGetLastError)>);
static_assert(sizeof(ncclResult_t) == sizeof(nc::Result) && sizeof(ncclDataType_t) == sizeof(nc::DataType));
static_assert(sizeof(ncclRedOp_t) == sizeof(nc::RedOp) && sizeof(ncclComm_t) == sizeof(nc::Comm));
