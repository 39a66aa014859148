// N-API binding of the data-parallel collectives (core/collective.h): class Collective, one rank's
// membership in a host ring (core/host_ring.h) or an NCCL group (cuda/nccl_collective.h), and
// ncclUniqueId() for rank 0 to hand the others through the rendezvous.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "core/collective.h"

namespace s3::napi {

void register_collective(Napi::Env env, Napi::Object exports);

// A connected collective taken for one operation on another thread: `in_use` is set while it runs
// (close() and other operations are refused meanwhile); the operation clears it when done.
struct CollectiveLease {
  std::shared_ptr<Collective> collective;
  std::shared_ptr<std::atomic<bool>> in_use;
  void release() const { *in_use = false; }
};

// Leases the connected collective wrapped by `value` (an object of the addon's Collective class);
// a JS TypeError naming `what` for any other value, a JS Error while it is not connected or in use.
CollectiveLease lease_connected_collective(Napi::Env env, Napi::Value value, const char* what);

}  // namespace s3::napi
